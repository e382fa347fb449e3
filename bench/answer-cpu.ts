/**
 * The cached answer path: CPU per answer of a public GET the bot answers from its cache, against node:http
 * sending the same bytes, with the configuration a user starts with (config.example.json's plugins, the access
 * log written, the metrics plugin counting every request, the rate limits on). Both servers run in one child
 * process; the load generator (autocannon, at a fixed rate) runs in this one. The rounds alternate raw, ours,
 * raw, ours, ..., and each round's CPU is the child's own (`process.cpuUsage()`) over that round, divided by the
 * answers it sent: the child serves one server at a time, so its CPU in a round is that server's.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { capture, startRawReplay, type Captured } from './captured.js';
import {
  forkServers,
  httpBenchSizes,
  formatCount,
  formatRatio,
  isSmoke,
  median,
  runBenchOrServe,
  type Figure,
} from './common.js';
import { startBenchHost } from './host.js';
import { populate } from './model.js';

const PATHS = [
  { path: '/api/irc/stats/', label: 'stats' },
  { path: '/api/irc/channels/?limit=100', label: 'channels page' },
  { path: '/network/data/status/', label: 'website status data' },
] as const;

interface Served {
  ours: string;
  raw: string;
}

type ChildRequest = { kind: 'cpu' };

/** The child: the real host as configured by default, and the raw server, on free loopback ports. */
async function serve(users: number, channels: number): Promise<void> {
  // The access log goes to stdout as the bot writes it, and stdout is /dev/null (startServers).
  const bench = await startBenchHost(
    {
      stats: {},
      api: {},
      // On, as by default; its public bucket sized so that one address can load the bot (the default lets a
      // client 60 requests at once and one a second, which would answer 429 here).
      tokens: { rate_limit: { public: { capacity: 1_000_000_000, refill_per_second: 1_000_000 } } },
      web: {},
      metrics: { allow: ['127.0.0.1'] },
    },
    { level: 'info', to: 'stdout' },
  );
  const { host } = bench;
  populate(host.model, { users, channels });
  const answers = new Map<string, Captured>();
  for (const { path } of PATHS) {
    const answer = await capture(`${host.url}${path}`, {});
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.body.toString('utf8')}`);
    answers.set(path, answer);
  }
  const raw = await startRawReplay(answers, () => ({}));
  process.on('message', (message: ChildRequest) => {
    if (message.kind === 'cpu') {
      const usage = process.cpuUsage();
      process.send!({ cpuMicros: usage.user + usage.system });
    }
  });
  process.send!({ ours: host.url!, raw: raw.url } satisfies Served);
  process.on('disconnect', () => {
    raw.close();
    void bench.stop().finally(() => process.exit(0));
  });
}

function startServers(users: number, channels: number): Promise<{ child: ChildProcess; served: Served }> {
  const devNull = openSync('/dev/null', 'w');
  // BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": a profile of the servers' process.
  const execArgv = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const started = forkServers<Served>(fileURLToPath(import.meta.url), users, channels, { stdout: devNull, execArgv });
  closeSync(devNull);
  return started;
}

/** The child's CPU time so far, in µs. */
function childCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (message: { cpuMicros: number }) => resolve(message.cpuMicros));
    child.send({ kind: 'cpu' } satisfies ChildRequest);
  });
}

/** One round at `rate` answers a second: the child's CPU per answer (µs) and the answers per second. */
async function round(
  child: ChildProcess,
  url: string,
  seconds: number,
  rate: number,
): Promise<{ micros: number; rps: number }> {
  const before = await childCpu(child);
  const result = await autocannon({ url, duration: seconds, connections: 10, overallRate: rate });
  const after = await childCpu(child);
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers under load`);
  }
  const answers = result.requests.total;
  return { micros: (after - before) / Math.max(1, answers), rps: result.requests.average };
}

async function main() {
  const smoke = isSmoke();
  const { users, channels, rounds, seconds } = httpBenchSizes(smoke);
  const rate = smoke ? 500 : 4000;
  const { child, served } = await startServers(users, channels);
  const figures: Figure[] = [];
  try {
    for (const { path, label } of PATHS) {
      // Warm both up (JIT, connection pools) before anything counts.
      await round(child, `${served.raw}${path}`, 1, rate);
      await round(child, `${served.ours}${path}`, 1, rate);
      const raws: number[] = [];
      const ours: number[] = [];
      for (let index = 0; index < rounds; index++) {
        raws.push((await round(child, `${served.raw}${path}`, seconds, rate)).micros);
        ours.push((await round(child, `${served.ours}${path}`, seconds, rate)).micros);
      }
      const ratio = median(ours.map((micros, index) => micros / raws[index]!));
      figures.push(
        {
          name: `${label}: CPU per answer ours / raw`,
          value: `${formatCount(median(ours), 1)} µs / ${formatCount(median(raws), 1)} µs`,
        },
        {
          name: `${label}: CPU ratio ours ÷ raw`,
          value: formatRatio(ratio),
          target: '≤ 1.2×',
          pass: ratio <= 1.2,
        },
      );
    }
  } finally {
    child.disconnect();
  }
  return {
    title: 'Cached answer path',
    setup:
      `autocannon at ${formatCount(rate)} requests a second on 10 connections, ${rounds} interleaved rounds of ` +
      `${seconds} s per server and path (medians shown), over ${formatCount(users)} users and ` +
      `${formatCount(channels)} channels. Ours: the plugins of config.example.json that need no services ` +
      '(stats, api, tokens, web, metrics), the access log written to stdout (/dev/null), the metrics counting every ' +
      'request, the rate limits on (the public bucket large enough for one address). Raw: node:http sending the ' +
      'status line, headers and body ours sent. Both in one child process, one at a time; CPU is that ' +
      "process's user and system time over each round, per answer sent.",
    figures,
  };
}

runBenchOrServe('Cached answer path', main, serve);
