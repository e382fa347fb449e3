/**
 * The benchmarks that need no IRC network (ingest, memory, store, durable, web, nginx, answer-cpu), at their smoke sizes: each runs
 * to the end and reports its figures, so a change to the model or the store cannot leave
 * `npm run bench` broken until someone runs it. The figures of a smoke run are not comparable with
 * the targets, so only their presence and form are checked here.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RESULT_PREFIX, type BenchResult } from '../../bench/common.js';

const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench');

function runSmoke(file: string, nodeArgs: string[] = []): { status: number | null; result: BenchResult | null } {
  const run = spawnSync(process.execPath, [...nodeArgs, path.join(benchDir, file), '--smoke'], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  const line = run.stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_PREFIX));
  return { status: run.status, result: line ? (JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult) : null };
}

function figure(result: BenchResult, name: string): string {
  return result.figures.find((candidate) => candidate.name === name)?.value ?? '';
}

t.test('ingest: all three sides run, end in the same state, and the ratios are numbers', async (t) => {
  const { status, result } = runSmoke('ingest.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  t.match(figure(result, 'parse only'), /^[\d,]+ lines\/s$/);
  t.match(figure(result, 'parse + model'), /^[\d,]+ lines\/s$/);
  t.equal(figure(result, 'users tracked at the end'), '20,000', 'a quit is followed by a new user, so the count holds');
  t.match(figure(result, 'parse only, per line / one uncached memory read'), /^[\d,]+ ns \/ [\d,]+ ns /);
  const ratio = Number.parseFloat(figure(result, 'ratio full ÷ parse only'));
  // A ratio, not a target: at smoke size one timing hiccup can tip either side, and figures are the bench's.
  t.ok(ratio > 0 && Number.isFinite(ratio), `a ratio (${ratio}×)`);
  // The bench itself stops if the minimal collector ends in another state than the full one.
  t.match(figure(result, 'parse + minimal collector'), /^[\d,]+ lines\/s$/);
  const minimal = Number.parseFloat(figure(result, 'ratio minimal ÷ parse only'));
  t.ok(minimal > 0 && Number.isFinite(minimal), `a ratio (${minimal}×)`);
});

t.test('memory: a size per user for each model size', async (t) => {
  const { status, result } = runSmoke('memory.js', ['--expose-gc']);
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  t.ok(result.figures.length >= 1, 'at least one model size');
  for (const { name, value } of result.figures) t.match(value, /^[\d.]+ KB per user$/, name);
});

t.test('store: a flush, a file and a load', async (t) => {
  const { status, result } = runSmoke('store.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  t.match(figure(result, 'flush time'), /^[\d.]+ ms \(first flush [\d.]+ ms\)$/);
  t.match(figure(result, 'file size'), /^[\d.,]+ MB$/);
  t.match(figure(result, 'longest event-loop block'), /^[\d.]+ ms/);
  t.match(figure(result, 'load at startup (read + parse / restore)'), /^[\d.]+ ms \/ [\d.]+ ms$/);
});

t.test('durable: a confirmed change at each size of the audit log, and the whole-file comparison', async (t) => {
  const { status, result } = runSmoke('durable.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  const sizes = result.figures.filter((candidate) => candidate.name.endsWith('audit entries: confirmed change'));
  t.equal(sizes.length, 3, 'three sizes of the audit log');
  for (const { name, value } of sizes) {
    t.match(value, /^p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms; durable file [\d,]+ KB; \d+ compaction/, name);
    t.match(value, /a compaction's snapshot holds the loop [\d.]+ ms$/, name);
  }
  const whole = result.figures.filter((candidate) => candidate.name.endsWith('(before the journal)'));
  t.equal(whole.length, 3, 'each compared with the file written whole');
  t.match(figure(result, '1,000 audit entries, while the store file is written'), /^p50 [\d.]+ ms, p99 /);
});

t.test('web: every page answers, with its p50, p99 and size', async (t) => {
  const { status, result } = runSmoke('web.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  const pages = result.figures.filter((candidate) => / \/ p99 \(/.test(candidate.name));
  t.equal(pages.length, 10, 'ten pages measured');
  for (const { name, value } of pages) t.match(value, /^[\d.]+ ms \/ [\d.]+ ms$/, name);
  t.match(figure(result, 'status page with its assets'), /^[\d,]+ KB$/);
});

t.test('nginx: a public GET direct and through nginx with its cache, both answered under load', async (t) => {
  const { status, result } = runSmoke('nginx.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  t.match(figure(result, 'status data, direct: req/s'), /^[\d,]+$/);
  t.match(figure(result, 'status data, through nginx with cache: req/s'), /^[\d,]+$/);
  t.match(figure(result, 'status data, through nginx with cache: p50 / p99'), /^[\d.]+ ms \/ [\d.]+ ms$/);
  t.match(figure(result, 'through nginx ÷ direct (req/s)'), /^[\d.]+×$/);
});

t.test('answer CPU: ours and raw node:http measured side by side on each cached path', async (t) => {
  const { status, result } = runSmoke('answer-cpu.js');
  t.equal(status, 0);
  if (!result) return t.fail('no result line');
  for (const label of ['stats', 'channels page', 'website status data']) {
    t.match(figure(result, `${label}: CPU per answer ours / raw`), /^[\d,.]+ µs \/ [\d,.]+ µs$/);
    const ratio = Number.parseFloat(figure(result, `${label}: CPU ratio ours ÷ raw`));
    t.ok(ratio > 0 && Number.isFinite(ratio), `a ratio (${ratio}×)`);
  }
});
