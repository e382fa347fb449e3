/**
 * Webhooks of the events plugin, against a real receiver on a local port: the events come from the collector's
 * own handlers reading fake IRC lines. Signatures are checked with the test's own implementation of the Standard
 * Webhooks scheme; batches form by count and by time; failures are retried with backoff, redirects are not followed;
 * each endpoint gets only its types and what its view shows; the queue is bounded, and it outlives a restart.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { PluginDefinition } from '../../../lib/plugin.js';
import events from '../../../plugins/events/index.js';
import metricsPlugin from '../../../plugins/metrics/index.js';
import stats from '../../../plugins/stats/index.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';
import { Receiver, verifySignature, type Payload, type Received } from './webhook-support.js';

const SECRET = `whsec_${Buffer.from('the secret of the tests, 32 bytes').toString('base64')}`;

/** One endpoint named `hooks` for join events, gathering for a second, retrying from a second. */
function endpoint(url: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    name: 'hooks',
    url,
    secret: SECRET,
    types: ['join'],
    batch_wait_ms: 1000,
    retry_first_ms: 1000,
    retry_max_seconds: 60,
    ...fields,
  };
  // A field given as undefined is left out.
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

function options(webhooks: Record<string, unknown>[], more: Partial<HarnessOptions> = {}): HarnessOptions {
  return {
    registry: [stats, events, metricsPlugin] as PluginDefinition<never>[],
    plugins: { stats: {}, events: { webhooks }, metrics: { allow: ['127.0.0.1'] } },
    isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst WHOX',
    network: fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] }),
    operator: true,
    version: 'InspIRCd-3',
    ...more,
  };
}

/** The bot with `webhooks`, synced, in `#room` (public) and `#hidden` (secret). */
async function start(t: Test, webhooks: Record<string, unknown>[], more: Partial<HarnessOptions> = {}) {
  const bot = await startHarness(t, options(webhooks, more));
  await bot.synced();
  for (const [channel, modes] of [
    ['#room', '+nt'],
    ['#hidden', '+nst'],
  ] as const) {
    bot.irc.receive(
      `:DataBot!databot@bot.host JOIN ${channel} * :Data Bot`,
      `:hub.test.net 353 DataBot = ${channel} :DataBot @op`,
      `:hub.test.net 366 DataBot ${channel} :End of /NAMES list.`,
      `:hub.test.net 324 DataBot ${channel} ${modes}`,
    );
  }
  await bot.settled();
  return bot;
}

function join(bot: Harness, nick: string, channel = '#room'): void {
  bot.irc.receive(`:${nick}!${nick}@${nick}.example JOIN ${channel} ${nick}acct :${nick} Real`);
}

/** The log lines of the events plugin matching `pattern`. */
function logged(bot: Harness, pattern: RegExp): string[] {
  return bot.logs.filter((line) => line.includes('[events]') && pattern.test(line));
}

/** A field of a log line (`key=value`). */
function field(line: string, key: string): string | undefined {
  return new RegExp(` ${key}=("[^"]*"|\\S+)`).exec(line)?.[1];
}

function payload(request: Received): Payload {
  return JSON.parse(request.body) as Payload;
}

async function metric(
  bot: Harness,
  name: string,
  endpointName = 'hooks',
  result?: string,
): Promise<number | undefined> {
  const answer = await bot.inject('GET', '/metrics');
  const families = parsePrometheusTextFormat(answer.text) as {
    name: string;
    metrics: { value?: string; labels?: Record<string, string> }[];
  }[];
  const found = families
    .find((family) => family.name === name)
    ?.metrics.find(
      (entry) => entry.labels?.endpoint === endpointName && (result === undefined || entry.labels.result === result),
    );
  return found?.value === undefined ? undefined : Number(found.value);
}

t.test('a batch is signed as Standard Webhooks sign it; a changed body, time or key fails the check', async (t) => {
  const receiver = await Receiver.start(t);
  const bot = await start(t, [endpoint(`${receiver.url}/hook`, { batch_events: 3 })]);
  join(bot, 'carol');
  join(bot, 'dave');
  await bot.settled();
  t.same(logged(bot, /webhook attempt/), [], 'two events wait for a third, or for a second to pass');
  await bot.clock.advance(1000);
  const first = await receiver.request(1);
  t.equal(first.path, '/hook');
  t.equal(first.headers['content-type'], 'application/json');
  t.match(first.headers['user-agent'], /^irc-network-data\/\d+\.\d+\.\d+/);
  t.match(first.headers['webhook-id'], /^msg_[A-Za-z0-9_-]{10,}$/);
  const sentAt = Number(first.headers['webhook-timestamp']);
  t.ok(Math.abs(sentAt - Date.now() / 1000) < 5, 'webhook-timestamp: the attempt, in unix seconds');
  t.match(first.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  t.ok(verifySignature(SECRET, first.headers, first.body), 'the signature checks out');
  t.notOk(verifySignature(SECRET, first.headers, first.body.replace('carol', 'mallory')), 'a changed body fails');
  t.notOk(
    verifySignature(SECRET, { ...first.headers, 'webhook-timestamp': String(sentAt + 1) }, first.body),
    'another timestamp fails',
  );
  const otherSecret = `whsec_${Buffer.from('another secret of 32 bytes here!').toString('base64')}`;
  t.notOk(verifySignature(otherSecret, first.headers, first.body), 'another key fails');

  const body = payload(first);
  t.equal(body.type, 'irc.events');
  t.ok(!Number.isNaN(Date.parse(body.timestamp)), 'timestamp: ISO 8601');
  t.equal(body.data.dropped, 0);
  t.same(
    body.data.events.map(({ id: _id, time: _time, ...rest }) => rest),
    [
      { type: 'join', channel: '#room', nick: 'carol' },
      { type: 'join', channel: '#room', nick: 'dave' },
    ],
    'the public view: no identity',
  );
  const [carol, dave] = body.data.events;
  t.match(carol!.id, /^[0-9a-z]+-\d+$/, 'the id the stream gives the event');
  t.equal(Number(dave!.id.split('-')[1]), Number(carol!.id.split('-')[1]) + 1);
  t.ok(!Number.isNaN(Date.parse(carol!.time)));

  for (const nick of ['erin', 'frank', 'gina']) join(bot, nick);
  const second = await receiver.request(2);
  t.same(
    payload(second).data.events.map((event) => event.nick),
    ['erin', 'frank', 'gina'],
    'batch_events waiting: sent at once, without waiting for the clock',
  );
  t.not(second.headers['webhook-id'], first.headers['webhook-id'], 'each batch has its own id');
  t.ok(verifySignature(SECRET, second.headers, second.body));
});

t.test('failures are retried with backoff: the same message, a new timestamp and signature', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.answers.push({ status: 500 }, { status: 500 });
  const bot = await start(t, [endpoint(receiver.url)]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  await receiver.request(1);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 1, 'the first failure');
  const [firstFailure] = logged(bot, /webhook delivery failed/);
  t.equal(field(firstFailure!, 'status'), '500');
  t.equal(field(firstFailure!, 'attempt'), '1');
  const firstWait = Number(field(firstFailure!, 'retry_in_s'));
  t.ok(firstWait >= 0.5 && firstWait <= 1, `the first wait is 0.5 to 1 s (jitter), got ${firstWait}`);

  await bot.clock.advance(499);
  await bot.settled();
  t.equal(logged(bot, /webhook attempt/).length, 1, 'no second attempt before the wait is over');
  await bot.clock.advance(501);
  await receiver.request(2);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 2, 'the second failure');
  const secondWait = Number(field(logged(bot, /webhook delivery failed/)[1]!, 'retry_in_s'));
  t.ok(secondWait >= 1 && secondWait <= 2, `the wait doubles: 1 to 2 s, got ${secondWait}`);
  await bot.clock.advance(2000);
  await receiver.request(3);
  await bot.until(() => logged(bot, /INFO .*webhook delivered/).length === 1, 'the delivery');
  t.equal(field(logged(bot, /webhook delivered/)[0]!, 'attempts'), '3');

  const [one, two, three] = receiver.requests;
  t.equal(two!.headers['webhook-id'], one!.headers['webhook-id'], 'the same webhook-id on every attempt');
  t.equal(three!.headers['webhook-id'], one!.headers['webhook-id']);
  t.equal(three!.body, one!.body, 'the same body');
  t.ok(Number(three!.headers['webhook-timestamp']) > Number(one!.headers['webhook-timestamp']), 'a new timestamp');
  t.not(three!.headers['webhook-signature'], one!.headers['webhook-signature'], 'so a new signature');
  for (const request of receiver.requests) t.ok(verifySignature(SECRET, request.headers, request.body));
  t.equal(receiver.requests.length, 3, 'delivered once it was taken: nothing more is sent');

  t.equal(await metric(bot, 'irc_bot_webhook_deliveries_total', 'hooks', 'failed'), 2);
  t.equal(await metric(bot, 'irc_bot_webhook_deliveries_total', 'hooks', 'delivered'), 1);
  t.equal(await metric(bot, 'irc_bot_webhook_delivered_events_total'), 1);
  t.equal(await metric(bot, 'irc_bot_webhook_queued_events'), 0);
  t.notOk(
    bot.logs.some((line) => line.includes(SECRET.slice(6)) || line.includes(String(one!.headers['webhook-signature']))),
    'neither the secret nor a signature is logged',
  );
});

t.test('a Retry-After longer than the backoff is waited for', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.answers.push({ status: 503, headers: { 'Retry-After': '30' } });
  const bot = await start(t, [endpoint(receiver.url)]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 1, 'the failure');
  t.equal(field(logged(bot, /webhook delivery failed/)[0]!, 'retry_in_s'), '30');
  await bot.clock.advance(29_000);
  await bot.settled();
  t.equal(receiver.requests.length, 1, 'not before the 30 s it asked for');
  await bot.clock.advance(1000);
  await receiver.request(2);
});

t.test('a redirect is not followed: only the configured URL is called', async (t) => {
  const elsewhere = await Receiver.start(t);
  const receiver = await Receiver.start(t);
  receiver.answers.push({ status: 302, headers: { Location: `${elsewhere.url}/stolen` } });
  const bot = await start(t, [endpoint(`${receiver.url}/hook`)]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 1, 'the failure');
  const [failure] = logged(bot, /webhook delivery failed/);
  t.equal(field(failure!, 'status'), '302');
  t.match(failure!, `location=${elsewhere.url}/stolen`);
  t.match(failure!, 'redirect="not followed"');
  t.equal(elsewhere.requests.length, 0, 'the URL it pointed to was not called');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook delivered/).length === 1, 'the delivery on the retry');
  t.same(
    receiver.requests.map((request) => request.path),
    ['/hook', '/hook'],
  );
  t.equal(elsewhere.requests.length, 0);
});

t.test('a refused connection and a receiver that never answers are failures, retried', async (t) => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  const receiver = await Receiver.start(t);
  receiver.answers.push('hang');
  const bot = await start(t, [
    endpoint(`http://127.0.0.1:${port}/`, { name: 'refused' }),
    endpoint(receiver.url, { name: 'silent', timeout_seconds: 1 }),
  ]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 2, 'both failures');
  const failures = logged(bot, /webhook delivery failed/);
  const refused = failures.find((line) => line.includes('endpoint=refused'))!;
  const silent = failures.find((line) => line.includes('endpoint=silent'))!;
  t.match(field(refused, 'error'), /ECONNREFUSED/);
  t.ok(field(refused, 'retry_in_s'), 'retried');
  t.equal(field(silent, 'error'), '"no answer within 1 s"');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook delivered/).length === 1, 'the silent one answers the retry');
  t.equal(await metric(bot, 'irc_bot_webhook_queued_events', 'refused'), 1, 'the refused one still holds its event');
});

t.test('410 Gone: no more deliveries to that endpoint until the bot restarts', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.otherwise = { status: 410 };
  const bot = await start(t, [endpoint(receiver.url)]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  await bot.until(() => logged(bot, /webhook endpoint gone/).length === 1, 'the 410');
  join(bot, 'dave');
  await bot.clock.jump(3_600_000);
  await bot.settled();
  t.equal(receiver.requests.length, 1, 'nothing more sent');
  t.equal(await metric(bot, 'irc_bot_webhook_queued_events'), 2, 'what waits is kept');
});

t.test(
  "each endpoint gets its types, as its view shows them: a hidden channel's never reaches a public one",
  async (t) => {
    const receiver = await Receiver.start(t);
    const bot = await start(t, [
      endpoint(`${receiver.url}/public`, { name: 'public', types: ['join', 'quit'], batch_wait_ms: 0 }),
      endpoint(`${receiver.url}/token`, { name: 'token', view: 'token', batch_wait_ms: 0 }),
      endpoint(`${receiver.url}/full`, { name: 'full', view: 'full', types: undefined, batch_wait_ms: 0 }),
    ]);
    join(bot, 'carol');
    join(bot, 'dave', '#hidden');
    bot.irc.receive(':dave!dave@dave.example ACCOUNT daveacct2');
    bot.irc.receive(':op!op@op.example TOPIC #room :a new topic');
    join(bot, 'zed');
    const arrived = (path: string) => receiver.events(path).some((event) => event.nick === 'zed');
    await receiver.until(() => ['/public', '/token', '/full'].every(arrived), 'the last join everywhere');

    const publicEvents = receiver.events('/public');
    t.same(
      publicEvents.map(({ id: _id, time: _time, ...rest }) => rest),
      [
        { type: 'join', channel: '#room', nick: 'carol' },
        { type: 'join', channel: '#room', nick: 'zed' },
      ],
      'public: joins in public channels only, nobody identified',
    );
    t.notMatch(JSON.stringify(receiver.requests.filter((r) => r.path === '/public')), /hidden|dave/);

    const tokenEvents = receiver.events('/token');
    t.same(
      tokenEvents.map((event) => `${event.type} ${event.channel as string} ${event.nick as string}`),
      ['join #room carol', 'join #hidden dave', 'join #room zed'],
      'token: every channel, only the types asked for',
    );
    t.notOk(
      tokenEvents.some((event) => 'identity' in event),
      'token: nobody identified',
    );

    const fullEvents = receiver.events('/full');
    const dave = fullEvents.find((event) => event.type === 'join' && event.nick === 'dave');
    t.match(dave, { channel: '#hidden', identity: { ident: 'dave', host: 'dave.example', account: 'daveacct' } });
    t.ok(
      fullEvents.some((event) => event.type === 'account'),
      'full: every type, the account change included',
    );
    t.ok(fullEvents.some((event) => event.type === 'topic'));
    const ids = fullEvents.map((event) => Number(/(\d+)$/.exec(event.id)![1]));
    t.ok(
      ids.every((id) => id > 0),
      'each id has a number',
    );
    t.same(
      ids,
      [...ids].sort((a, b) => a - b),
      'in the order they happened',
    );
  },
);

t.test('the queue is bounded: the oldest waiting events are dropped, counted, warned of once', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.otherwise = { status: 503 };
  const bot = await start(t, [endpoint(receiver.url, { batch_wait_ms: 0, batch_events: 2, max_queued_events: 5 })]);
  join(bot, 'n1');
  await receiver.request(1);
  await bot.until(() => logged(bot, /webhook delivery failed/).length === 1, 'the failure');
  for (let index = 2; index <= 11; index++) join(bot, `n${index}`);
  await bot.settled();
  t.equal(await metric(bot, 'irc_bot_webhook_queued_events'), 5, 'the batch on its way and the 4 newest');
  t.equal(await metric(bot, 'irc_bot_webhook_dropped_events_total'), 6);
  t.equal(logged(bot, /webhook queue full/).length, 1, 'one warning for the burst, not one per event');
  t.match(logged(bot, /webhook queue full/)[0]!, /WARN .*max_queued_events=5/);

  receiver.otherwise = { status: 204 };
  await bot.clock.advance(1000);
  await receiver.until(() => receiver.events().filter((event) => event.nick === 'n11').length > 0, 'the last event');
  const delivered = receiver.requests.slice(1).map((request) => {
    const { data } = payload(request);
    return { dropped: data.dropped, nicks: data.events.map((event) => event.nick) };
  });
  t.same(
    delivered,
    [
      { dropped: 0, nicks: ['n1'] },
      { dropped: 6, nicks: ['n8', 'n9'] },
      { dropped: 0, nicks: ['n10', 'n11'] },
    ],
    'the batch on its way kept; the next says how many were dropped before it',
  );
  await bot.until(() => logged(bot, /dropped while the queue was full/).length === 1, 'the end of the burst');
  t.equal(field(logged(bot, /dropped while the queue was full/)[0]!, 'dropped'), '6');
});

t.test('what waits outlives a restart: the same batch again, then the rest, nothing twice', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.otherwise = { status: 503 };
  const hooks = [endpoint(receiver.url, { batch_events: 2, batch_wait_ms: 0 })];
  const first = await start(t, hooks, { store: 'files' });
  for (const nick of ['n1', 'n2', 'n3', 'n4', 'n5']) join(first, nick);
  await receiver.request(1);
  await first.until(() => logged(first, /webhook delivery failed/).length === 1, 'the failure');
  await first.stop();
  const failed = receiver.requests[0]!;
  t.same(
    payload(failed).data.events.map((event) => event.nick),
    ['n1'],
    'batch_wait_ms 0: the first event went alone; the others waited behind it',
  );

  receiver.otherwise = { status: 204 };
  const second = await start(t, hooks, { storeDir: first.storeDir! });
  await receiver.until(() => receiver.events().some((event) => event.nick === 'n5'), 'the last event');
  const again = receiver.requests[1]!;
  t.equal(again.headers['webhook-id'], failed.headers['webhook-id'], 'the batch comes again with its id');
  t.equal(again.body, failed.body, 'and its body');
  t.ok(verifySignature(SECRET, again.headers, again.body));
  t.same(
    receiver.requests.slice(1).map((request) => payload(request).data.events.map((event) => event.nick)),
    [['n1'], ['n2', 'n3'], ['n4', 'n5']],
    'every event, in order, once; those behind it in batches of their own',
  );
  await second.until(() => logged(second, /webhook delivered/).length === 3, 'the three deliveries');
  t.equal(await metric(second, 'irc_bot_webhook_queued_events'), 0);
});

t.test('a stored queue is dropped, with a warning, when its endpoint is gone or shows another view', async (t) => {
  const receiver = await Receiver.start(t);
  receiver.otherwise = { status: 503 };
  const first = await start(t, [endpoint(receiver.url, { batch_wait_ms: 0, types: undefined, view: 'full' })], {
    store: 'files',
  });
  join(first, 'carol', '#hidden');
  await receiver.request(1);
  await first.stop();
  receiver.otherwise = { status: 204 };
  const second = await start(t, [endpoint(receiver.url, { batch_wait_ms: 0 })], { storeDir: first.storeDir! });
  await second.until(() => logged(second, /stored webhook events dropped/).length === 1, 'the warning');
  t.match(
    logged(second, /stored webhook events dropped/)[0]!,
    /endpoint=hooks events=4 why=.*queued for the view .*full.* the endpoint's view is .*public.* now/,
  );
  join(second, 'dave');
  await receiver.until(() => receiver.events().some((event) => event.nick === 'dave'), 'the new event');
  t.notMatch(
    JSON.stringify(receiver.requests.slice(1).map((request) => request.body)),
    /hidden|carol/,
    'what was queued for the full view never reaches the public one',
  );
  await second.stop();
  const third = await start(t, [endpoint(receiver.url, { batch_wait_ms: 0 })], { storeDir: first.storeDir! });
  await third.settled();
  t.same(logged(third, /stored webhook events dropped/), [], 'forgotten: not dropped again at the next start');
});

t.test('bad endpoints stop the start with errors naming their keys, never the secret', async (t) => {
  const shortSecret = `whsec_${Buffer.from('too short').toString('base64')}`;
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ url: 'ftp://example.net/' }, /webhooks\[0\]\.url must be an http:\/\/ or https:\/\/ URL/],
    [
      { url: 'http://exa mple.net/' },
      /webhooks\[0\]\.url must be an http:\/\/ or https:\/\/ URL, got one that does not parse/,
    ],
    [{ secret: 'not-a-secret' }, /webhooks\[0\]\.secret must be a Standard Webhooks secret/],
    [{ secret: 'whsec_not base64!' }, /webhooks\[0\]\.secret must be "whsec_" and base64/],
    [{ secret: shortSecret }, /webhooks\[0\]\.secret must hold 24 to 64 bytes after "whsec_" .*got 9/],
    [{ secret: undefined }, /webhooks\[0\]\.secret is required .*IRC_DATA_WEBHOOK_SECRET_HOOKS/],
    [{ types: ['join', 'jion'] }, /webhooks\[0\]\.types\[1\] must be one of/],
    [{ view: 'everything' }, /webhooks\[0\]\.view must be one of/],
    [{ batch_events: 50, max_queued_events: 10 }, /batch_events \(50\) must not be more than max_queued_events \(10\)/],
    [{ name: 'Hooks!' }, /webhooks\[0\]\.name must be a name of lower-case letters/],
  ];
  for (const [fields, expected] of cases) {
    const failed = await startHarness(t, options([endpoint('http://127.0.0.1:9/', fields)])).then(
      () => null,
      (error: Error) => error.message,
    );
    t.match(failed, expected, JSON.stringify(fields));
    if (typeof fields.secret === 'string') t.notMatch(failed, fields.secret, 'the secret is not shown');
  }
  const twice = await startHarness(
    t,
    options([
      endpoint('http://127.0.0.1:9/'),
      endpoint('http://127.0.0.1:9/'),
      endpoint('http://127.0.0.1:9/', { name: 'a-b' }),
      endpoint('http://127.0.0.1:9/', { name: 'a_b' }),
    ]),
  ).then(
    () => null,
    (error: Error) => error.message,
  );
  t.match(twice, /webhooks\[1\]\.name: "hooks" names another endpoint already/);
  t.match(twice, /webhooks\[3\]\.name: "a_b" and "a-b" would both take their secret from IRC_DATA_WEBHOOK_SECRET_A_B/);
});

t.test('the secret may come from the environment, which wins over the file', async (t) => {
  const fromEnvironment = `whsec_${Buffer.from('a secret from the environment!!!').toString('base64')}`;
  process.env.IRC_DATA_WEBHOOK_SECRET_HOOKS = fromEnvironment;
  t.teardown(() => {
    delete process.env.IRC_DATA_WEBHOOK_SECRET_HOOKS;
  });
  const receiver = await Receiver.start(t);
  const bot = await start(t, [endpoint(receiver.url, { secret: 'whsec_this is overridden' })]);
  join(bot, 'carol');
  await bot.clock.advance(1000);
  const request = await receiver.request(1);
  t.ok(verifySignature(fromEnvironment, request.headers, request.body), 'signed with the secret from the environment');
  t.notOk(verifySignature(SECRET, request.headers, request.body));
});
