import { renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { definePlugin } from '../../../lib/sdk.js';
import { buildOpenApiDocument } from '../../../plugins/api/openapi-document.js';
import metricsPlugin from '../../../plugins/metrics/index.js';
import stats from '../../../plugins/stats/index.js';
import type { HistorySlice } from '../../../plugins/stats/model/history.js';
import type { TokensSlice } from '../../../plugins/tokens/model.js';
import { journalFiles } from '../../support/stored.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';

/** One public route to count, limit and log, without the api plugin's collector behind it. */
const hello = definePlugin({
  name: 'hello',
  description: 'A public route for the tests.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  start({ http }) {
    http.route({
      method: 'GET',
      path: '/api/hello/',
      name: 'hello',
      tier: 'public',
      summary: 'Hello',
      handler: () => ({ body: { hello: 'world' } }),
    });
  },
});

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[];
}

/** The metrics plugin (allowing `allow`) with the tokens plugin's rate limits and a public route to count. */
function withMetrics(config: Record<string, unknown> = {}, allow: string[] = ['127.0.0.1']): HarnessOptions {
  return {
    registry: [hello, tokensPlugin, metricsPlugin] as PluginDefinition<never>[],
    plugins: {
      hello: {},
      tokens: {
        rate_limit: { public: { capacity: 3, refill_per_second: 0.01 }, token: { capacity: 50, refill_per_second: 1 } },
      },
      metrics: { allow },
    },
    admins: ['boss'],
    config,
  };
}

/** A GET from the client at `ip`. */
function get(bot: Harness, path: string, ip: string, headers: Record<string, string> = {}) {
  return bot.from({ ip }).inject('GET', path, headers);
}

async function scrape(bot: Harness): Promise<Map<string, Family>> {
  const answer = await get(bot, '/metrics', '127.0.0.1');
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}: ${answer.text}`);
  return new Map((parsePrometheusTextFormat(answer.text) as Family[]).map((family) => [family.name, family]));
}

function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = families
    .get(name)
    ?.metrics.find((metric) => Object.entries(labels).every(([key, wanted]) => metric.labels?.[key] === wanted));
  return found?.value === undefined ? undefined : Number(found.value);
}

t.test(
  '/healthz and /readyz: alive at once, ready only when connected and synced; never cached or limited',
  async (t) => {
    const bot = await startHarness(t, withMetrics({}, []));
    const { model } = bot.host;
    model.connectionLost();
    const alive = await get(bot, '/healthz', '192.0.2.1');
    t.equal(alive.status, 200);
    t.equal((alive.body as { status: string }).status, 'alive');
    t.equal(alive.headers['cache-control'], 'no-store');

    const down = await get(bot, '/readyz', '192.0.2.1');
    t.equal(down.status, 503, 'not ready while disconnected');
    t.match(down.body, {
      error: { status: 503, code: 'not_ready', details: [{ field: 'irc', message: 'not connected to IRC' }] },
    });
    t.equal(down.headers['cache-control'], 'no-store');

    model.connectionOpened('rfc1459');
    const syncing = await get(bot, '/readyz', '192.0.2.1');
    t.equal(syncing.status, 503);
    t.match(syncing.body, { error: { details: [{ field: 'sync' }] } }, 'connected, not synced yet');

    model.markSynced(true, 1200);
    const ready = await get(bot, '/readyz', '192.0.2.1');
    t.equal(ready.status, 200);
    t.match(ready.body, { status: 'ready', irc: 'connected', store: 'writable', synced_at: String });

    // The public bucket holds 3: twenty probes from one address are all answered.
    const statuses = new Set<number>();
    for (let round = 0; round < 20; round++) statuses.add((await get(bot, '/healthz', '192.0.2.1')).status);
    t.same([...statuses], [200], 'no probe was rate limited');
    for (let round = 0; round < 3; round++) t.equal((await get(bot, '/api/hello/', '192.0.2.1')).status, 200);
    const limited = await get(bot, '/api/hello/', '192.0.2.1');
    t.equal(limited.status, 429, 'while the public API from the same address is');
    const document = buildOpenApiDocument(bot.host.http.routes(), { title: 'test', version: '1' }) as {
      paths: Record<string, unknown>;
    };
    t.ok('/api/hello/' in document.paths);
    for (const path of ['/healthz', '/readyz', '/metrics'])
      t.notOk(path in document.paths, `${path} is not in the OpenAPI document`);
  },
);

t.test('trust_proxy: the client a trusted proxy names gets its own rate-limit bucket and log line', async (t) => {
  const bot = await startHarness(t, withMetrics({ http: { trust_proxy: 'loopback' } }));
  const through = (client: string) => get(bot, '/api/hello/', '127.0.0.1', { 'x-forwarded-for': client });
  for (let round = 0; round < 3; round++) t.equal((await through('198.51.100.1')).status, 200);
  t.equal((await through('198.51.100.1')).status, 429, 'the first client used its bucket up');
  t.equal((await through('198.51.100.2')).status, 200, 'the second client behind the same proxy has its own');

  // A peer that is not a trusted proxy cannot pick an address: its own bucket counts.
  const spoof = (i: number) => get(bot, '/api/hello/', '203.0.113.5', { 'x-forwarded-for': `198.51.100.${50 + i}` });
  const statuses = [];
  for (let round = 0; round < 4; round++) statuses.push((await spoof(round)).status);
  t.same(statuses, [200, 200, 200, 429], 'a spoofed X-Forwarded-For is ignored');

  const lines = bot.logs.filter((line) => line.includes('[http] GET /api/hello/'));
  t.ok(
    lines.some((line) => / ip=198\.51\.100\.2( |$)/.test(line)),
    'the access log names the client behind the proxy',
  );
  t.ok(
    lines.some((line) => / ip=203\.0\.113\.5( |$)/.test(line)),
    'and the spoofing peer by its own address',
  );
  t.ok(lines.length > 0 && lines.every((line) => / route=hello( |$)/.test(line)), 'with the route name');
  t.notOk(
    lines.some((line) => line.includes('198.51.100.5')),
    'no spoofed address was believed',
  );
});

t.test('access_log false: no line per request', async (t) => {
  const bot = await startHarness(t, withMetrics({ http: { access_log: false } }));
  await get(bot, '/healthz', '127.0.0.1');
  t.notOk(bot.logs.some((line) => line.includes('[http] GET /healthz')));
});

t.test('/metrics behind a proxy: the client forges the header the proxy does not write, to no effect', async (t) => {
  const allowInside = ['10.0.0.0/8'];
  const xff = await startHarness(t, withMetrics({ http: { trust_proxy: 'loopback' } }, allowInside));
  // nginx appends X-Forwarded-For and passes on the Forwarded the client wrote.
  const forgedForwarded = { 'x-forwarded-for': '198.51.100.7', forwarded: 'for=10.1.2.3' };
  t.equal((await get(xff, '/metrics', '127.0.0.1', forgedForwarded)).status, 401, 'x-forwarded-for: Forwarded ignored');
  t.equal((await get(xff, '/metrics', '127.0.0.1', { 'x-forwarded-for': '10.1.2.3' })).status, 200, 'inside: 200');

  const forwarded = await startHarness(
    t,
    withMetrics({ http: { trust_proxy: 'loopback', proxy_header: 'forwarded' } }, allowInside),
  );
  const forgedXff = { forwarded: 'for=198.51.100.7', 'x-forwarded-for': '10.1.2.3' };
  t.equal((await get(forwarded, '/metrics', '127.0.0.1', forgedXff)).status, 401, 'forwarded: X-Forwarded-For ignored');
  t.equal((await get(forwarded, '/metrics', '127.0.0.1', { forwarded: 'for=10.1.2.3' })).status, 200, 'inside: 200');
});

t.test('/metrics: allowed addresses and approved tokens only; the network, the bot and the process', async (t) => {
  const bot = await startHarness(t, withMetrics());
  const { model } = bot.host;
  model.connectionOpened('rfc1459');
  model.updateStats({ users: 4210, channels: 733, operators: 7, servers: 2, maxUsers: 5002 });
  model.servers.upsert('hub.example.net', { users: 3000, latencyMs: 12 });
  model.servers.upsert('leaf.example.net', { users: 1210, latencyMs: 40 });
  let families = await scrape(bot);
  t.equal(value(families, 'irc_bot_model_users'), undefined, 'no model before the first sync');
  t.equal(value(families, 'irc_bot_model_channels', { visibility: 'public' }), undefined);
  t.equal(value(families, 'irc_bot_sync_duration_seconds'), undefined, 'a number not known yet is left out, not 0');
  t.equal(value(families, 'irc_users'), 4210, 'one known is there');
  for (const nick of ['ann', 'bob', 'cy']) model.upsertUser(nick);
  model.upsertChannel('#open', { hidden: false, users: 2 });
  model.upsertChannel('#hush', { hidden: true, users: 1 });
  model.upsertChannel('#new', { hidden: true, users: 1 });
  model.markSynced(true, 2500);
  await get(bot, '/api/hello/', '192.0.2.9');

  const outsider = await get(bot, '/metrics', '192.0.2.9');
  t.equal(outsider.status, 401, 'an address not allowed, without a token');
  t.equal(outsider.headers['cache-control'], 'no-store');

  const answer = await get(bot, '/metrics', '127.0.0.1');
  t.equal(answer.status, 200);
  t.match(answer.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  families = await scrape(bot);
  t.equal(value(families, 'irc_connected'), 1);
  t.equal(value(families, 'irc_bot_model_users'), 3, "the model's own counts");
  t.equal(value(families, 'irc_bot_model_channels', { visibility: 'public' }), 1);
  t.equal(value(families, 'irc_bot_model_channels', { visibility: 'hidden' }), 2);
  t.equal(value(families, 'irc_users'), 4210);
  t.equal(value(families, 'irc_channels'), 733);
  t.equal(value(families, 'irc_operators'), 7);
  t.equal(value(families, 'irc_servers'), 2);
  t.equal(value(families, 'irc_users_max'), 5002);
  t.equal(value(families, 'irc_server_users', { server: 'leaf.example.net' }), 1210);
  t.equal(value(families, 'irc_latency_seconds', { server: 'hub.example.net' }), 0.012);
  t.equal(value(families, 'irc_server_up', { server: 'hub.example.net' }), 1);
  t.equal(value(families, 'irc_bot_sync_duration_seconds'), 2.5);
  t.ok(value(families, 'irc_bot_last_sync_timestamp_seconds')! > 1.7e9);
  t.equal(value(families, 'http_requests_total', { route: 'hello', status: '200' }), 1, 'requests by route');
  t.equal(value(families, 'http_requests_total', { route: 'metrics', status: '401' }), 1);
  t.ok(families.get('http_request_duration_seconds'), 'the duration histogram');
  t.ok(value(families, 'irc_bot_lines_received_total', { command: '001' })! >= 1, 'IRC lines by command');
  t.ok(families.has('process_resident_memory_bytes'), "prom-client's process metrics");
  t.ok(families.has('nodejs_eventloop_lag_p99_seconds'), 'and the event loop');
  t.equal(value(families, 'irc_bot_rate_limited_total', { bucket: 'public' }), undefined, 'nothing limited yet');

  // A server that split stays, as down; one rate-limited answer is counted.
  model.removeServer('leaf.example.net');
  for (let round = 0; round < 4; round++) await get(bot, '/api/hello/', '192.0.2.77');
  families = await scrape(bot);
  t.equal(value(families, 'irc_server_up', { server: 'leaf.example.net' }), 0, 'a split server is down');
  t.equal(value(families, 'irc_bot_rate_limited_total', { bucket: 'public' }), 1);

  // A token approved for the metrics endpoint reads them from anywhere; one without the grant may not.
  const created = await bot.say('alice', 'alice', 'TOKEN CREATE scraper');
  const secret = /created: (ntd_\S+)$/.exec(created[0] ?? '')?.[1];
  t.ok(secret, 'a token');
  const withToken = { authorization: `Token ${secret}` };
  t.equal((await get(bot, '/metrics', '192.0.2.9', withToken)).status, 403, 'not approved yet');
  t.match(await bot.say('boss', 'boss', 'TOKEN GRANT 1 metrics'), [/may now call metrics/]);
  const scraped = await get(bot, '/metrics', '192.0.2.9', withToken);
  t.equal(scraped.status, 200, 'approved');
  t.match(scraped.text, /^irc_users 4210$/m);
});

t.test('a wrong metrics.allow entry stops the start, naming the key', async (t) => {
  await t.rejects(
    startHarness(t, withMetrics({}, ['nonsense'])),
    /plugins\.metrics\.allow must name addresses or CIDR ranges: invalid IP address: nonsense/,
  );
});

t.test("the stats plugin's records and CTCP queue; the store's writes, their size and a failing one", async (t) => {
  const bot = await startHarness(t, {
    registry: [stats, tokensPlugin, metricsPlugin] as PluginDefinition<never>[],
    plugins: { stats: {}, tokens: {}, metrics: { allow: ['127.0.0.1'] } },
    admins: ['boss'],
    // The size of the durable file on disk, and writes that fail there.
    store: 'files',
  });
  const history = bot.host.model.slices().find((slice) => slice.name === 'history') as HistorySlice;
  const now = Date.now();
  for (const [ago, users, channels] of [
    [3_600_000, 1234, 300],
    [60_000, 999, 410],
  ] as const) {
    history.add({ time: now - ago, users, channels, operators: 2, servers: 2, maxUsers: 1300 });
  }
  // A token made over IRC: its durable write is measured.
  t.match(await bot.say('alice', 'alice', 'TOKEN CREATE measured'), [/created: ntd_/]);
  const families = await scrape(bot);
  t.equal(value(families, 'irc_users_record'), 1234, 'the most users the history holds');
  t.equal(value(families, 'irc_channels_record'), 410, 'and channels, each its own most');
  bot.host.model.updateStats({ users: 1500 });
  t.equal(value(await scrape(bot), 'irc_users_record'), 1500, 'or the count now, when it is higher');
  t.equal(value(families, 'irc_bot_ctcp_version_queue'), 0, 'nobody waits for a CTCP VERSION');
  // Histograms are read from the text: the parser keeps only one labelled series of a histogram.
  const countOf = (text: string, labels: string): number =>
    Number(new RegExp(`^irc_bot_store_write_duration_seconds_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  const text = (await get(bot, '/metrics', '127.0.0.1')).text;
  t.ok(countOf(text, 'file="journal",result="ok"') >= 1, "the durable change's append to the journal is counted");
  const blocked = /^irc_bot_store_write_blocked_seconds_count\{file="journal"\} (\d+)$/m.exec(text);
  t.ok(Number(blocked?.[1]) >= 1, 'and how long it held the event loop');
  const size = value(families, 'irc_bot_store_size_bytes', { file: 'journal' })!;
  const journal = journalFiles(bot.host.store.path).reduce((sum, file) => sum + statSync(file).size, 0);
  t.ok(size > 100 && size === journal, `the journal's size (${size} bytes)`);

  // The store's folder turns into a file: writes fail, and the bot is not ready until they succeed again.
  const folder = path.dirname(bot.host.store.path);
  const aside = `${folder}.aside`;
  renameSync(folder, aside);
  writeFileSync(folder, 'not a folder');
  bot.host.store.markDirty('history');
  await t.rejects(bot.host.store.flush());
  bot.slice<TokensSlice>('tokens').create('alice', 'unsaved', { account: 'alice', via: 'irc' });
  await t.rejects(bot.host.store.persisted());
  bot.host.model.connectionOpened('rfc1459');
  bot.host.model.markSynced(true, 10);
  const notReady = await get(bot, '/readyz', '127.0.0.1');
  t.equal(notReady.status, 503, 'not ready while the store cannot be written');
  t.match(notReady.body, {
    error: {
      code: 'not_ready',
      details: [{ field: 'store', message: "the store's last write failed (the bot's log says why)" }],
    },
  });
  t.notMatch(notReady.text, folder, 'the public answer names no path');
  t.notMatch(notReady.text, /ENOTDIR|EEXIST|ENOENT/, 'nor the system error');
  t.ok(
    bot.logs.some((line) => line.includes(`could not save the store ${folder}`) && /ENOTDIR|EEXIST|ENOENT/.test(line)),
    'the log has the file and the reason',
  );
  const after = (await get(bot, '/metrics', '127.0.0.1')).text;
  t.ok(
    countOf(after, 'file="store",result="failed"') >= 1 && countOf(after, 'file="journal",result="failed"') >= 1,
    'the failed writes are counted',
  );
  unlinkSync(folder);
  renameSync(aside, folder);
  await bot.host.store.persisted();
  await bot.host.store.flush();
  t.equal((await get(bot, '/readyz', '127.0.0.1')).status, 200, 'ready again once the writes succeeded');
});
