/**
 * The event streams benchmark at its smoke size (the scale network of 300 users, 20 streams, four phases of 3 s):
 * the network, the crowd and its churn, the bot with the events plugin, the readers' process with its markers and
 * witness, and the raw control all start, run and stop; every marked event reaches every stream, and every figure
 * is there in its form. The figures themselves are measured by `npm run bench` only.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { RESULT_PREFIX, type BenchResult } from '../../bench/common.js';

const benchFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'events.js');

interface Run {
  status: number | null;
  stderr: string;
  /** A figure's value by name, empty when the run gave no such figure (or no result). */
  figure(name: string): string;
  result: BenchResult | undefined;
}

/** Run the bench at its smoke size with `args`; killed after 110 s. */
function runBench(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [benchFile, '--smoke', ...args], { timeout: 110_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (status) => {
      const line = stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_PREFIX));
      const result = line ? (JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult) : undefined;
      const figure = (name: string) => result?.figures.find((candidate) => candidate.name === name)?.value ?? '';
      resolve({ status, stderr, figure, result });
    });
  });
}

/** Whether `run` exited cleanly with a result line (each is asserted). */
function ranWell(t: Test, run: Run): boolean {
  t.equal(run.status, 0, `the bench exits cleanly${run.status === 0 ? '' : `: ${run.stderr.slice(-2000)}`}`);
  return t.ok(run.result, 'a result line');
}

/** Each stream's events a second in each phase with streams (`what a stream read during the churn`). */
function eventsPerSecond(run: Run): number[] {
  return [...run.figure('what a stream read during the churn').matchAll(/([\d,.]+) events\/s/g)].map((match) =>
    Number(match[1]!.replace(/,/g, '')),
  );
}

// Both at once, on their own networks and ports: the test waits for the longer one only.
const unfiltered = runBench([]);
const filtered = runBench(['--channel-filter']);

t.test('events: streams open, marked events reach each of them, and every figure is measured', async (t) => {
  const run = await unfiltered;
  if (!ranWell(t, run)) return;
  const { figure } = run;

  const ms = '\\d+\\.\\d+ ms';
  const spread = `p50 ${ms}, p99 ${ms}, max ${ms}`;
  // A difference of two reads in one process: the witness's may come after a stream's.
  const signed = `-?${ms}`;
  t.match(figure('network (LUSERS), streams'), /^301 users, 60 channels; 20 public streams, unfiltered/);
  t.match(
    figure('bot CPU during the churn, without / with 20 streams'),
    /^\d+\.\d % \/ \d+\.\d % of a core \(phases in order: [\d.]+, [\d.]+ with, [\d.]+, [\d.]+ with\)$/,
  );
  t.match(figure('bot CPU added by 20 streams'), /^-?\d+\.\d % of a core$/);
  t.match(
    figure('event latency, IRC line → stream reader'),
    new RegExp(`^${spread} \\([\\d,]+ reads: [1-9]\\d* marked events × 20 streams\\)$`),
  );
  t.match(
    figure(
      "the same events, the bot's server → stream reader (the bot's share: from a client on the bot's server reading the line)",
    ),
    new RegExp(`^p50 ${signed}, p99 ${signed}, max ${signed}$`),
  );
  t.match(
    figure("the same events, IRC line → a client on the bot's server (the network's share)"),
    new RegExp(`^${spread}; in the phases without streams ${spread} and ${spread}$`),
  );
  // Correctness, not speed: each marked event reached every stream, and the bot ended none of them.
  const delivered =
    /^([\d,]+) of ([\d,]+); streams ended before the bench closed them: (\d+)(?:; not to every stream: .*)?$/.exec(
      figure('marked events delivered to every stream'),
    );
  t.ok(delivered, 'the delivery figure');
  if (delivered) {
    t.equal(delivered[1], delivered[2], 'every marked event reached every stream');
    t.not(delivered[2], '0', 'marked events were sent');
    t.equal(delivered[3], '0', 'no stream was ended by the bot');
  }
  t.match(
    figure('bot memory per idle stream (RSS after a full GC, the network quiet)'),
    /^-?[\d,.]+ KB \(heap -?[\d,.]+ KB and -?[\d,.]+ KB at the two openings; at the second, RSS grew -?[\d,.]+ KB a stream/,
  );
  t.match(
    figure("bot's event loop during the churn, p99 of its delay: without / with streams"),
    new RegExp(`^${ms} \\(max ${ms}\\), ${ms} \\(max ${ms}\\) / ${ms} \\(max ${ms}\\), ${ms} \\(max ${ms}\\)$`),
  );
  t.match(figure('what a stream read during the churn'), /^[\d,]+ events\/s in [\d,]+ reads\/s, [\d,]+ KB\/s; /);
  t.match(
    figure('raw node:http beside it: 20 streams written to as often, as much each time'),
    /^\d+\.\d % of a core \([\d,.]+ writes\/s of [\d,]+ bytes to each/,
  );
});

t.test("events --channel-filter: each stream reads only the markers' channel, every mark included", async (t) => {
  const [run, whole] = await Promise.all([filtered, unfiltered]);
  if (!ranWell(t, run)) return;
  t.match(
    run.figure('network (LUSERS), streams'),
    /20 public streams, each filtered to the markers' channel \(channel=\)/,
  );
  const delivered = /^([\d,]+) of ([\d,]+);/.exec(run.figure('marked events delivered to every stream'));
  t.ok(delivered && delivered[1] === delivered[2] && delivered[2] !== '0', 'every marked event reached every stream');
  // The other channels' joins, parts and the network's connects and quits are left out by the filter.
  const [mine, all] = [eventsPerSecond(run), eventsPerSecond(whole)];
  t.equal(mine.length, 2, 'events a second in both phases with streams');
  t.ok(
    Math.max(...mine) < Math.min(...all),
    `a filtered stream read fewer events a second (${mine.join(', ')}) than an unfiltered one (${all.join(', ')})`,
  );
});
