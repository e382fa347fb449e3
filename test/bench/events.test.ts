/**
 * The event streams benchmark at its smoke size (the scale network of 300 users, 20 streams, four phases of 3 s):
 * the network, the crowd and its churn, the bot with the events plugin, the readers' process with its markers and
 * witness, and the raw control all start, run and stop; every marked event reaches every stream, and every figure
 * is there in its form. The figures themselves are measured by `npm run bench` only.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RESULT_PREFIX, type BenchResult } from '../../bench/common.js';

const benchFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'events.js');

t.test('events: streams open, marked events reach each of them, and every figure is measured', async (t) => {
  const run = spawnSync(process.execPath, [benchFile, '--smoke'], { encoding: 'utf8', timeout: 110_000 });
  const line = run.stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_PREFIX));
  t.equal(run.status, 0, `the bench exits cleanly${run.status === 0 ? '' : `: ${run.stderr.slice(-2000)}`}`);
  if (!line) return t.fail('no result line');
  const result = JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult;
  const figure = (name: string): string => result.figures.find((candidate) => candidate.name === name)?.value ?? '';

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
