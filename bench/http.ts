/**
 * HTTP: autocannon against the real host (stats, api and tokens plugins, a fake
 * IRC transport) over a model of 50,000 users and 5,000 channels, and against a
 * raw node:http server that answers the same bytes. Both servers run in one
 * child process (`--serve`), so the load generator has a core of its own; the
 * rounds alternate raw, ours, raw, ours, ... and the ratio is the median of the
 * per-round ratios.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../lib/config.js';
import { Host } from '../lib/host.js';
import { createLogger } from '../lib/logger.js';
import type { TokensSlice } from '../lib/model/tokens.js';
import { builtinPlugins } from '../plugins/index.js';
import { FakeTransport } from '../test/support/fake-irc.js';
import type { Result } from 'autocannon';
import { formatCount, formatMs, formatRatio, isSmoke, load, median, runBench, type Figure } from './common.js';
import { populate } from './model.js';

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
  const storeDir = mkdtempSync(path.join(tmpdir(), 'bench-http-'));
  const config = parseConfig(
    JSON.stringify({
      irc: { host: '127.0.0.1', port: 6667, nick: 'DataBot' },
      http: { host: '127.0.0.1', port: 0 },
      store: { path: path.join(storeDir, 'store.json') },
      admins: [],
      log: { level: 'error' },
      // Rate limits would answer 429 to a load test: they are measured elsewhere, not here.
      plugins: { stats: {}, api: {}, tokens: { rate_limit: { enabled: false } } },
    }),
    'bench config',
    {},
  );
  const logger = createLogger({ level: 'error', sink: () => undefined });
  // The fake connection never registers; without this it would give up after the registration timeout,
  // and the disconnect would empty the model under load.
  const transport = new FakeTransport({ registrationTimeoutMs: 24 * 60 * 60 * 1000 });
  const host = new Host({ config, logger, plugins: builtinPlugins, transport });
  await host.start();
  // The fake connection never registers, so the collector never syncs over the model built here.
  populate(host.model, { users, channels });
  const tokens = host.model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
  const actor = { account: 'bench', via: 'irc' as const };
  const { token, secret } = tokens.create('bench', 'benchmark', actor);
  tokens.grant(token, ['irc.users'], actor);

  const bodies = new Map<string, Buffer>();
  for (const endpoint of ENDPOINTS) {
    const response = await fetch(`${host.url}${endpoint.path}`, {
      headers: endpoint.token ? { Authorization: `Token ${secret}` } : {},
    });
    if (response.status !== 200)
      throw new Error(`${endpoint.path} answered ${response.status}: ${await response.text()}`);
    bodies.set(endpoint.path, Buffer.from(await response.arrayBuffer()));
  }
  const raw = http.createServer((request, response) => {
    const body = bodies.get(request.url ?? '');
    if (!body) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  const served: Served = { ours: host.url!, raw: rawUrl, token: secret };
  process.send!(served);
  process.on('disconnect', () => {
    raw.close();
    void host.stop().finally(() => {
      rmSync(storeDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

function startServers(users: number, channels: number): Promise<{ child: ChildProcess; served: Served }> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', String(users), String(channels)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (served) => resolve({ child, served: served as Served }));
    child.once('exit', (code) => reject(new Error(`the HTTP server process exited with ${code} before serving`)));
  });
}

async function main() {
  const smoke = isSmoke();
  const users = smoke ? 2000 : 50_000;
  const channels = smoke ? 200 : 5000;
  const rounds = smoke ? 1 : 5;
  const seconds = smoke ? 1 : 4;
  const connections = 50;
  const { child, served } = await startServers(users, channels);
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
      'node:http answering the same bytes. Both servers share one process; the load generator runs in another.',
    figures,
  };
}

if (process.argv[2] === '--serve') {
  serve(Number(process.argv[3]), Number(process.argv[4])).catch((error: unknown) => {
    process.stderr.write(`HTTP bench server failed: ${String(error)}\n`);
    process.exit(1);
  });
} else {
  runBench('HTTP API', main);
}
