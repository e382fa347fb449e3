/**
 * The scale benchmark at its smoke size (300 users in 60 channels, 5 s of churn): the scale network,
 * the crowd's workers, the bot as its own process, the truth oracle and the HTTP load all start, run
 * and stop, and every figure is there in its form. The figures themselves are measured by
 * `npm run bench` only (the smoke run's sizes say nothing about the targets).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { RESULT_PREFIX, type BenchResult } from '../../bench/common.js';

const benchFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'scale.js');

t.test('scale: network, crowd, churn, bot, truth and HTTP load run end to end', async (t) => {
  const run = spawnSync(process.execPath, [benchFile, '--smoke'], { encoding: 'utf8', timeout: 110_000 });
  const line = run.stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_PREFIX));
  t.equal(run.status, 0, `the bench exits cleanly${run.status === 0 ? '' : `: ${run.stderr.slice(-2000)}`}`);
  if (!line) return t.fail('no result line');
  const result = JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult;
  const figure = (name: string): string =>
    result.figures.find((candidate) => candidate.name === `300: ${name}`)?.value ?? '';

  // The network the crowd built is the one planned: every user and channel, seen from the hub.
  t.match(
    figure('network (LUSERS)'),
    /^301 users \(\+ 4 services' clients\), 60 channels, 4 servers; crowd of 300 in 1 processes/,
  );
  // The regression guard of convergence: after the cold start, after the churn (users by name, every public
  // channel's count against LIST, the bot's channels member by member) and after the restart, the model is the
  // network. Speed is the bench's to judge, not this test's.
  const reached = /^\d+\.\d s/;
  t.match(
    figure('cold start: connect → model equals the truth'),
    reached,
    'the model equals the network after its sync',
  );
  t.match(
    figure('after the churn: until everything equals the truth'),
    reached,
    'the model converges to the network once the churn stops',
  );
  t.match(
    figure(
      'after the churn: until the model equals the network by name (users against WHO, public channels against LIST)',
    ),
    reached,
    'user by user and channel by channel',
  );
  t.match(figure('restart: store load + resync to the truth'), reached, 'and again after a restart');
  t.match(
    figure("the bot's channels: joined after the sync, JOINs the server refused"),
    /^\d+ of the [1-9]\d* biggest \(plugins\.stats\.max_channels\); refused \d+/,
  );
  t.match(figure('RSS after cold sync / after churn (peak)'), /^[\d,.]+ MB \/ [\d,.]+ MB \([\d,.]+ MB\)$/);
  t.match(figure('heap after GC, after cold sync / after churn'), /^[\d,.]+ MB \/ [\d,.]+ MB; [\d.]+ KB per user$/);
  t.match(figure('bot CPU during churn (with HTTP load)'), /^[\d.]+ % of a core \([\d.]+ %\)$/);
  t.match(figure('model users vs LUSERS during churn'), /^worst [\d.]+ % over \d+ checks/);
  t.match(
    figure('model channels vs LUSERS during churn (all it holds, from its metrics)'),
    /^worst [\d.]+ % over \d+ checks \(\d+\/\d+/,
    "the model's count read from its metrics",
  );
  t.match(figure('public channel list vs LUSERS during churn'), /^worst [\d.]+ % over \d+ checks \(\d+\/\d+/);
  t.match(figure("bot's channels vs NAMES during churn"), /^\d+ of [1-9]\d* equal/, 'channels were compared');
  t.match(figure('refreshes completed (`[stats] synced`)'), /^[1-9]\d* of \d+ due/, 'the bot synced');
  t.match(
    figure('store write: its longest hold of the event loop'),
    /^(no write|\d+\.\d ms over [1-9]\d* writes \(.*; of it GC \d+\.\d ms, waiting for a CPU (≤ \d+\.\d ms|unknown), the bot's own work ≥ \d+\.\d ms\))$/,
  );
  t.match(
    figure('event loop held 20 ms or more during the HTTP load (what can make its p99)'),
    /^(never|(once|[1-9]\d* times), longest \d+ ms, \d+ ms in all; of it GC \d+\.\d ms, waiting for a CPU (≤ \d+\.\d ms|unknown), the bot's own work ≥ \d+\.\d ms)$/,
  );
  t.match(
    figure('event loop held while a store write was under way (anything that ran then)'),
    /; elsewhere (none|< 20 ms|\d+ ms) \(probe \d+ ms\); loop delay p99 \d+ ms$/,
  );
  for (const path of ['/api/irc/channels/?limit=100', '/network/data/status/']) {
    const causes = /of the (?:first )?(\d+) answers? .*?, (\d+) came .*?(\d+) during one .*?(\d+) during neither$/.exec(
      figure(`HTTP p99 ${path} at 200 req/s during churn`),
    );
    if (causes) {
      const [slow, bot, self, neither] = causes.slice(1).map(Number) as [number, number, number, number];
      t.equal(bot + self + neither, slow, `each slow answer of ${path} has one cause`);
    }
    t.match(
      figure(`HTTP p99 ${path} at 200 req/s during churn`),
      /^\d+(\.\d)? ms \(p50 \d+(\.\d)? ms, max \d+(\.\d)? ms, [1-9][\d,]* requests(, \d+ sent again after a kept-alive connection was reset, as browsers do)?\)(; of the (first )?(\d+) answers? of 20 ms or more( \(of \d+\))?, (\d+) came during a hold of the bot's loop of 10 ms or more, (\d+) during one of the load generator's own, (\d+) during neither)?; raw node:http beside it, the same bytes at the same moments: p99 \d+(\.\d)? ms, max \d+(\.\d)? ms$/,
    );
  }
  t.match(figure('restart: history kept'), /^(yes|no): [\d,]+ points before, [\d,]+ after$/);
  // The crowd did what it was asked, and the servers dropped none of it.
  t.match(
    figure('crowd: churn done, users dropped by the servers'),
    /^[1-9]\d* reconnects, [1-9]\d* joins, .*; dropped none$/,
  );
});
