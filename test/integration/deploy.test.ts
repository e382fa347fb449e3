/**
 * The shipped deployment files, for real: Debian's nginx runs deploy/nginx/irc-network-data.conf (its TLS
 * part swapped for plain HTTP on a free loopback port) in front of the bot on the test network, with the
 * bot trusting it (`http.trust_proxy`). Clients from two loopback addresses get rate-limit buckets of their
 * own; a public GET comes from nginx's cache the second time and is renewed after its max-age; a token
 * path never does; the live event stream passes through unbuffered and uncached, an event reaching the reader
 * at once; /readyz says 503 while the bot is off IRC and 200 once it resynced; /metrics parses as
 * Prometheus text with `irc_users` equal to LUSERS. The systemd unit passes `systemd-analyze verify`.
 *
 * The bot is started through test/support/website.ts, so this file runs once: nothing here depends on
 * the IRC client library.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { ensureDebianPackage } from '../support/browser.js';
import type { TokensSlice } from '../../plugins/tokens/model.js';
import { openEventStream, type StreamEvent } from '../support/event-stream.js';
import { IrcClient } from '../support/irc-client.js';
import { startNginx, type RunningNginx } from '../support/nginx.js';
import { findRepoRoot, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { eventually, startWebsiteBot, type TestBot } from '../support/website.js';

const PUBLIC_BUCKET = 5;
/** Seconds the api plugin lets its public answers be cached: nginx keeps them that long. */
const MAX_AGE = 2;
/** The channel the bot sits in, where a client's JOIN makes an event. */
const EVENTS_CHANNEL = `#deploy${process.pid % 10000}`;
/**
 * How soon an event must reach a reader through nginx: far less than the heartbeat (15 s), the next write
 * that would push out anything nginx held back.
 */
const PROMPT_MS = 2000;

let network: TestNetwork;
let bot: TestBot;
let nginx: RunningNginx;
let oper: IrcClient;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A GET through nginx from `localAddress` (any 127.x.y.z address is this machine's). */
function getFrom(url: string, localAddress = '127.0.0.1', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { localAddress, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
    });
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.before(async () => {
  network = await startTestNetwork();
  bot = await startWebsiteBot(network, {
    http: { trust_proxy: '127.0.0.1' },
    plugins: {
      stats: { refresh_seconds: 600, join: [EVENTS_CHANNEL] },
      api: { cache_seconds: MAX_AGE, reuse_ms: 0 },
      tokens: { rate_limit: { public: { capacity: PUBLIC_BUCKET, refill_per_second: 0.01 } } },
      web: { cache_seconds: MAX_AGE },
      metrics: { allow: ['127.0.0.1'] },
      events: {},
    },
  });
  nginx = await startNginx(Number(new URL(bot.url).port));
  oper = new IrcClient({ port: network.leafPort, nick: `dep${process.pid % 10000}` });
  await oper.connect();
  await oper.register();
  await oper.request(`OPER ${network.operName} ${network.operPass}`, '381');
});

t.teardown(async () => {
  oper?.destroy();
  await nginx?.stop();
  await bot?.stop();
  await network?.stop();
});

t.test('two clients behind nginx have separate rate-limit buckets; a spoofed address is not believed', async (t) => {
  // Each path once, so that none comes from the cache: every request reaches the bot and its bucket.
  const first: number[] = [];
  for (let index = 1; index <= PUBLIC_BUCKET + 1; index++) {
    first.push((await getFrom(`${nginx.url}/api/irc/channels/?limit=${index}`, '127.0.0.2')).status);
  }
  t.same(first, [...Array<number>(PUBLIC_BUCKET).fill(200), 429], 'the first client used its bucket up');
  const second = await getFrom(`${nginx.url}/api/irc/channels/?limit=${PUBLIC_BUCKET + 2}`, '127.0.0.3');
  t.equal(second.status, 200, 'the second client, behind the same proxy, has a bucket of its own');
  // The first client says it is someone else: nginx appends its real address, which the bot takes.
  const spoofed = await getFrom(`${nginx.url}/api/irc/channels/?limit=${PUBLIC_BUCKET + 3}`, '127.0.0.2', {
    'X-Forwarded-For': '198.51.100.99',
  });
  t.equal(spoofed.status, 429, 'a spoofed X-Forwarded-For buys no new bucket');
  const forwarded = await getFrom(`${nginx.url}/api/irc/channels/?limit=${PUBLIC_BUCKET + 4}`, '127.0.0.2', {
    Forwarded: 'for=198.51.100.98;proto=https',
  });
  t.equal(forwarded.status, 429, 'nor does a spoofed RFC 7239 Forwarded (nginx drops it)');
  const lines = bot.logs.filter((line) => line.includes('[http] GET /api/irc/channels/'));
  t.ok(
    lines.some((line) => / ip=127\.0\.0\.2 /.test(line)),
    'the access log names the client behind nginx',
  );
  t.ok(lines.some((line) => / ip=127\.0\.0\.3 /.test(line)));
  t.notOk(
    lines.some((line) => / ip=127\.0\.0\.1 /.test(line)),
    'never nginx itself',
  );
  t.notOk(
    lines.some((line) => /198\.51\.100\.9[89]/.test(line)),
    'nor a spoofed address',
  );
});

t.test("a public GET comes from nginx's cache the second time, and is renewed after max-age", async (t) => {
  const url = `${nginx.url}/network/data/status/`;
  const first = await getFrom(url, '127.0.0.4');
  t.equal(first.status, 200);
  t.equal(first.headers['cache-control'], `public, max-age=${MAX_AGE}`);
  t.equal(first.headers['x-cache-status'], 'MISS');
  t.equal(first.headers['strict-transport-security'], 'max-age=31536000', 'HSTS, as the TLS site sends it');
  const second = await getFrom(url, '127.0.0.4');
  t.equal(second.headers['x-cache-status'], 'HIT', 'the second request is answered by nginx');
  t.equal(second.headers['strict-transport-security'], 'max-age=31536000', 'on a cached answer too');
  t.equal(second.text, first.text, 'the same answer');
  const bodyOf = (answer: Answer) => JSON.parse(answer.text) as { generated_at: string };
  // nginx counts max-age in whole seconds from the second it stored the answer: a second more is past it.
  await sleep(MAX_AGE * 1000 + 1500);
  const renewed = await getFrom(url, '127.0.0.4');
  t.match(
    renewed.headers['x-cache-status'],
    /^(EXPIRED|REVALIDATED|UPDATING|STALE)$/,
    `past max-age, nginx asks again (${String(renewed.headers['x-cache-status'])})`,
  );
  // With background updates the first request past max-age may get the old answer while nginx renews it.
  await eventually(
    async () => {
      const answer = await getFrom(url, '127.0.0.4');
      return answer.headers['x-cache-status'] === 'HIT' && bodyOf(answer).generated_at !== bodyOf(first).generated_at;
    },
    'a renewed answer from the cache',
    5000,
  );
  t.pass('the renewed answer is the one nginx keeps');

  // A reader who signed in on the website carries a session cookie: the same public answer, from the cache.
  const withCookie = await getFrom(url, '127.0.0.4', { Cookie: 'network_session=abc' });
  t.equal(withCookie.headers['x-cache-status'], 'HIT', 'a cookie does not keep a public read from the cache');

  // The website's pages go the same way (the status page's live numbers are these same reads).
  const page = `${nginx.url}/network/`;
  t.equal((await getFrom(page, '127.0.0.4')).headers['x-cache-status'], 'MISS');
  const again = await getFrom(page, '127.0.0.4');
  t.equal(again.headers['x-cache-status'], 'HIT');
  t.match(again.headers['content-type'], /^text\/html/);
});

t.test('a token path is never cached', async (t) => {
  const url = `${nginx.url}/api/irc/users/`;
  // A live token approved for the endpoint: its 200 answers never come from the cache either.
  const tokens = bot.host.model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
  const actor = { account: 'deployer', via: 'irc' } as const;
  const { token, secret } = tokens.create('deployer', 'deploy test', actor);
  tokens.grant(token, ['irc.users'], actor);
  const approved: (string | undefined)[] = [];
  for (let round = 0; round < 3; round++) {
    const answer = await getFrom(url, '127.0.0.7', { Authorization: `Token ${secret}` });
    t.equal(answer.status, 200, 'the approved token is answered');
    t.match(answer.headers['cache-control'], /private, no-store/);
    approved.push(answer.headers['x-cache-status'] as string | undefined);
  }
  t.notOk(approved.includes('HIT'), `its answers never come from the cache (${approved.join(', ')})`);
  // Each from its own address: a 401 draws from the address's public bucket.
  const variants: [string, Record<string, string>][] = [
    ['127.0.0.5', {}],
    ['127.0.0.6', { Authorization: 'Token ntd_' + 'A'.repeat(43) }],
  ];
  for (const [address, headers] of variants) {
    const statuses: (string | undefined)[] = [];
    for (let round = 0; round < 3; round++) {
      const answer = await getFrom(url, address, headers);
      t.equal(answer.status, 401);
      t.match(answer.headers['cache-control'], /no-store/);
      statuses.push(answer.headers['x-cache-status'] as string | undefined);
    }
    t.notOk(statuses.includes('HIT'), `never from the cache (${statuses.join(', ')})`);
  }
});

t.test('the event stream passes through nginx at once: unbuffered, uncached, uncompressed', async (t) => {
  // The bot sits in the channel, and knows it is public (the public stream shows only public channels' events).
  await eventually(() => bot.host.model.channels.get(EVENTS_CHANNEL)?.hidden === false, 'the bot in its channel');
  const url = `${nginx.url}/api/irc/events/?types=join&channel=${encodeURIComponent(EVENTS_CHANNEL)}`;
  const reader = await openEventStream(url, { 'Accept-Encoding': 'gzip' });
  try {
    t.equal(reader.status, 200);
    t.equal(reader.headers['content-type'], 'text/event-stream; charset=utf-8');
    t.equal(reader.headers['cache-control'], 'no-store');
    t.equal(reader.headers['content-encoding'], undefined, 'not compressed, though the client accepts gzip');
    // Under the site's cached location every answer says how the cache took it (MISS for this one); here none.
    t.equal(reader.headers['x-cache-status'], undefined, "not through nginx's cache");
    t.equal(reader.headers['strict-transport-security'], 'max-age=31536000', "the site's headers as elsewhere");
    // The stream's first lines are a few hundred bytes: a buffering proxy would sit on them.
    await reader.next((event) => event.event === 'hello', 'the hello event', PROMPT_MS);
    const nick = `dj${process.pid % 10000}`;
    const joiner = new IrcClient({ port: network.leafPort, nick });
    try {
      await joiner.connect();
      await joiner.register();
      const sentAt = performance.now();
      joiner.send(`JOIN ${EVENTS_CHANNEL}`);
      const joined = await reader.next(
        (event: StreamEvent) => event.event === 'join' && event.data.nick === nick,
        `${nick}'s join through nginx`,
        PROMPT_MS,
      );
      const tookMs = performance.now() - sentAt;
      t.equal(joined.data.channel, EVENTS_CHANNEL);
      t.ok(tookMs < PROMPT_MS, `the join reached the reader ${tookMs.toFixed(0)} ms after the client sent it`);
    } finally {
      joiner.destroy();
    }
  } finally {
    reader.close();
  }
});

t.test('/readyz through nginx: 503 while the bot is off IRC, 200 once it resynced', async (t) => {
  const url = `${nginx.url}/readyz`;
  const ready = await getFrom(url);
  t.equal(ready.status, 200);
  t.equal(ready.headers['cache-control'], 'no-store');
  const nick = bot.config.irc.nick;
  const closed = bot.next('disconnected', 10000);
  oper.send(`KILL ${nick} :readiness test`);
  await closed;
  const down = await getFrom(url);
  t.equal(down.status, 503, 'not ready while disconnected');
  t.match(JSON.parse(down.text), { error: { code: 'not_ready' } });
  t.not(down.headers['x-cache-status'], 'HIT');
  await eventually(async () => (await getFrom(url)).status === 200, 'ready again', 30000);
  t.pass('ready again after the reconnect and resync');
  t.equal((await getFrom(`${nginx.url}/metrics`)).status, 404, 'nginx does not pass /metrics on');
});

t.test('/metrics parses as Prometheus text and irc_users equals LUSERS', async (t) => {
  const lusersUsers = async (): Promise<number> => {
    const global = (await oper.request('LUSERS', '266')).find((line) => line.command === '266')!;
    return global.params.length >= 4
      ? Number(global.params[1])
      : Number(/global users:?\s*(\d+)/i.exec(global.params.at(-1)!)![1]);
  };
  const scrape = async () => {
    const answer = await fetch(`${bot.url}/metrics`);
    t.equal(answer.status, 200);
    const families = parsePrometheusTextFormat(await answer.text());
    return new Map(families.map((family) => [family.name, family]));
  };
  let users = -1;
  let lusers = -2;
  // The bot's number is its last sync's: after the reconnect above it resynced with the network as it is.
  await eventually(
    async () => {
      lusers = await lusersUsers();
      users = Number((await scrape()).get('irc_users')?.metrics[0]?.value);
      return users === lusers;
    },
    'irc_users equal to LUSERS',
    20000,
  );
  t.equal(users, lusers, `irc_users ${users} = LUSERS ${lusers}`);
  const families = await scrape();
  t.equal(families.get('irc_connected')?.metrics[0]?.value, '1');
  t.ok(Number(families.get('irc_bot_reconnects_total')?.metrics[0]?.value) >= 1, 'the reconnect was counted');
  t.ok(families.get('irc_server_up')!.metrics.length >= 2, 'each linked server');
  const requests = families.get('http_requests_total')!.metrics;
  t.ok(
    requests.some((metric) => metric.labels?.route === 'irc.channels' && metric.labels.status === '429'),
    'the rate-limited requests by route and status',
  );
});

t.test('the systemd unit is valid', async (t) => {
  ensureDebianPackage('/usr/bin/systemd-analyze', 'systemd');
  const unit = path.join(findRepoRoot(), 'deploy', 'systemd', 'irc-network-data.service');
  const { stdout, stderr } = await promisify(execFile)('systemd-analyze', ['verify', unit]);
  t.equal(`${stdout}${stderr}`.trim(), '', 'systemd-analyze verify has nothing to say');
});
