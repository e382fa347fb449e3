/**
 * HTTP: autocannon against the real host (stats, api and tokens plugins, a fake
 * IRC transport) over a model of 50,000 users and 5,000 channels, and against a
 * raw node:http server that answers the same bytes: the status line, headers and
 * body our server sent for that path, captured once at the start, so the two
 * answers differ only in `Date` (checked before anything is measured). Both
 * servers run in one child process (`--serve`), so the load generator has a core
 * of its own; the rounds alternate raw, ours, raw, ours, ... and the ratio is the
 * median of the per-round ratios.
 */
import { fileURLToPath } from 'node:url';
import type { TokensSlice } from '../plugins/tokens/model.js';
import type { Result } from 'autocannon';
import {
  forkServers,
  httpBenchSizes,
  formatCount,
  formatMs,
  formatRatio,
  isSmoke,
  load,
  median,
  runBenchOrServe,
  type Figure,
} from './common.js';
import { startBenchHost } from './host.js';
import { populate } from './model.js';
import { capture, startRawReplay, type Captured } from './captured.js';

interface Served {
  ours: string;
  raw: string;
  token: string;
}

const ENDPOINTS = [
  { path: '/api/irc/stats/', token: false, label: 'stats' },
  { path: '/api/irc/channels/?limit=100', token: false, label: 'channels page' },
  { path: '/api/irc/users/?limit=100', token: true, label: 'users page (token)' },
] as const;

/** The child: the real host and the raw server, on free loopback ports. */
async function serve(users: number, channels: number): Promise<void> {
  // Rate limits would answer 429 to a load test: they are measured elsewhere, not here.
  const bench = await startBenchHost({ stats: {}, api: {}, tokens: { rate_limit: { enabled: false } } });
  const { host } = bench;
  // The fake connection never registers, so the collector never syncs over the model built here.
  populate(host.model, { users, channels });
  const tokens = host.model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
  const actor = { account: 'bench', via: 'irc' as const };
  const { token, secret } = tokens.create('bench', 'benchmark', actor);
  tokens.grant(token, ['irc.users'], actor);

  const requestHeaders = (token: boolean): Record<string, string> =>
    token ? { Authorization: `Token ${secret}` } : {};
  const answers = new Map<string, Captured>();
  for (const endpoint of ENDPOINTS) {
    const answer = await capture(`${host.url}${endpoint.path}`, requestHeaders(endpoint.token));
    if (answer.status !== 200)
      throw new Error(`${endpoint.path} answered ${answer.status}: ${answer.body.toString('utf8')}`);
    answers.set(endpoint.path, answer);
  }
  const raw = await startRawReplay(answers, (path) => requestHeaders(ENDPOINTS.find((e) => e.path === path)!.token));
  const rawUrl = raw.url;
  const served: Served = { ours: host.url!, raw: rawUrl, token: secret };
  process.send!(served);
  process.on('disconnect', () => {
    raw.close();
    void bench.stop().finally(() => process.exit(0));
  });
}

async function main() {
  const smoke = isSmoke();
  const { users, channels, rounds, seconds } = httpBenchSizes(smoke);
  const connections = 50;
  const { child, served } = await forkServers<Served>(fileURLToPath(import.meta.url), users, channels);
  const figures: Figure[] = [];
  try {
    for (const endpoint of ENDPOINTS) {
      const headers: Record<string, string> = endpoint.token ? { Authorization: `Token ${served.token}` } : {};
      // Warm both up (JIT, connection pools) before anything counts.
      await load(`${served.raw}${endpoint.path}`, headers, 1, connections);
      await load(`${served.ours}${endpoint.path}`, headers, 1, connections);
      const raws: Result[] = [];
      const ours: Result[] = [];
      for (let round = 0; round < rounds; round++) {
        raws.push(await load(`${served.raw}${endpoint.path}`, headers, seconds, connections));
        ours.push(await load(`${served.ours}${endpoint.path}`, headers, seconds, connections));
      }
      const ratio = median(ours.map((result, index) => result.requests.average / raws[index]!.requests.average));
      const oursRps = median(ours.map((result) => result.requests.average));
      const rawRps = median(raws.map((result) => result.requests.average));
      const p50 = median(ours.map((result) => result.latency.p50));
      const p99 = median(ours.map((result) => result.latency.p99));
      const rawP99 = median(raws.map((result) => result.latency.p99));
      figures.push(
        {
          name: `${endpoint.label}: req/s ours / raw`,
          value: `${formatCount(oursRps)} / ${formatCount(rawRps)}`,
        },
        {
          name: `${endpoint.label}: p50 / p99 ours (raw p99)`,
          value: `${formatMs(p50)} / ${formatMs(p99)} (${formatMs(rawP99)})`,
          ...(endpoint.token ? { target: 'p99 ≤ 10 ms', pass: p99 <= 10 } : {}),
        },
        {
          name: `${endpoint.label}: ratio ours ÷ raw`,
          value: formatRatio(ratio),
          target: '≥ 0.85×',
          pass: ratio >= 0.85,
        },
      );
    }
  } finally {
    child.disconnect();
  }
  return {
    title: 'HTTP API',
    setup:
      `autocannon, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s per server and path ` +
      `(medians shown), over ${formatCount(users)} users and ${formatCount(channels)} channels; the raw server is ` +
      'node:http replaying the status line, headers and body our server sent for each path (captured once at the ' +
      'start), so the two answers are the same bytes apart from Date. Both servers share one process; the load ' +
      'generator runs in another.',
    figures,
  };
}

runBenchOrServe('HTTP API', main, serve);
