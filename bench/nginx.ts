/**
 * A public GET straight from the bot and through nginx running the shipped site config
 * (deploy/nginx/irc-network-data.conf, plain HTTP on a free loopback port, as the deployment test runs it)
 * with its cache: the real host (stats, api and tokens plugins, rate limits off, a fake IRC transport)
 * over 5,000 users and 2,000 channels, loaded by autocannon in a process of its own. Rounds alternate
 * direct, nginx, direct, nginx, ...; the medians are shown. Through nginx, the answer comes from its
 * cache for all but one request per max-age.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { startNginx } from '../test/support/nginx.js';
import { formatCount, formatMs, formatRatio, isSmoke, median, runBench, type Figure } from './common.js';
import { startBenchHost } from './host.js';
import { populate } from './model.js';

const PATH = '/network/data/status/';

interface Round {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Requests autocannon counted as failed on the socket (no answer), and the answers it had. */
  errors: number;
  answered: number;
}

/**
 * At most one socket error in this many requests is taken as the connection's end under load (nginx closes a
 * kept-alive connection after `keepalive_requests`, 1,000 by default, and a request already on its way then
 * fails), and counted in the figures; more, or any answer but a 2xx, fails the round.
 */
const ERRORS_TOLERATED_PER = 10_000;

/** autocannon in a child process, so the load generator does not share the bot's or nginx's core. */
async function load(url: string, seconds: number, connections: number, warm = false): Promise<Round> {
  const bin = path.join(
    path.dirname(createRequire(import.meta.url).resolve('autocannon/package.json')),
    'autocannon.js',
  );
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bin, '--json', '-d', String(seconds), '-c', String(connections), url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const result = JSON.parse(stdout) as {
    errors: number;
    non2xx: number;
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
  };
  if (!warm && (result.errors * ERRORS_TOLERATED_PER > result.requests.total || result.non2xx > 0)) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers under load`);
  }
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    answered: result.requests.total,
  };
}

async function main() {
  const smoke = isSmoke();
  const users = smoke ? 500 : 5000;
  const channels = smoke ? 200 : 2000;
  const seconds = smoke ? 1 : 4;
  const rounds = smoke ? 1 : 5;
  const connections = 50;
  const bench = await startBenchHost({ stats: {}, api: {}, tokens: { rate_limit: { enabled: false } } });
  const { host } = bench;
  populate(host.model, { users, channels });
  const nginx = await startNginx(host.httpPort!);
  const figures: Figure[] = [];
  try {
    const direct = `${host.url}${PATH}`;
    const proxied = `${nginx.url}${PATH}`;
    // Warm both (the JIT, nginx's cache and its upstream connections).
    await load(direct, 1, connections, true);
    await load(proxied, 1, connections, true);
    const ours: Round[] = [];
    const cached: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      ours.push(await load(direct, seconds, connections));
      cached.push(await load(proxied, seconds, connections));
    }
    const summary = (list: Round[]) => ({
      requestsPerSecond: median(list.map((round) => round.requestsPerSecond)),
      p50: median(list.map((round) => round.p50)),
      p99: median(list.map((round) => round.p99)),
    });
    const a = summary(ours);
    const b = summary(cached);
    const failed = (list: Round[]) =>
      `${list.reduce((sum, round) => sum + round.errors, 0)} of ${formatCount(list.reduce((sum, round) => sum + round.answered, 0))}`;
    figures.push(
      { name: 'status data, direct: req/s', value: formatCount(a.requestsPerSecond) },
      { name: 'status data, direct: p50 / p99', value: `${formatMs(a.p50)} / ${formatMs(a.p99)}` },
      { name: 'status data, through nginx with cache: req/s', value: formatCount(b.requestsPerSecond) },
      { name: 'status data, through nginx with cache: p50 / p99', value: `${formatMs(b.p50)} / ${formatMs(b.p99)}` },
      { name: 'through nginx ÷ direct (req/s)', value: formatRatio(b.requestsPerSecond / a.requestsPerSecond) },
      { name: 'socket errors, direct / through nginx (all rounds)', value: `${failed(ours)} / ${failed(cached)}` },
    );
  } finally {
    await nginx.stop();
    await bench.stop();
  }
  return {
    title: 'Through nginx',
    setup:
      `GET ${PATH} over ${formatCount(users)} users and ${formatCount(channels)} channels, straight from the bot ` +
      `and through nginx with the shipped site config and its cache (max-age 10 s); autocannon in its own process, ` +
      `${connections} connections, ${rounds} alternating rounds of ${seconds} s (medians). On this 2-core machine ` +
      'the load generator, nginx and the bot share the cores.',
    figures,
  };
}

runBench('Through nginx', main);
