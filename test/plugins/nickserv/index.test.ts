/**
 * The endpoint through the real host on the plugin harness (fake IRC, HTTP without a socket), a test token
 * guard and a fake Anope RPC server at the edges: status codes, body checks, brute-force windows, the pool,
 * and secrecy.
 */
import { once } from 'node:events';
import net from 'node:net';
import t, { type Test } from 'tap';
import { compileBodySchema } from '../../../lib/http/body.js';
import type { InjectResponse } from '../../../lib/http/inject.js';
import { builtinPlugins } from '../../../app/builtin-plugins.js';
import { checkResponseSchema } from '../../../plugins/nickserv/route.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';
import { startFakeRpc, type FakeRpcServer, type RpcCall, type RpcReply } from './fixtures/fake-rpc.js';
import { testGuardPlugin } from './fixtures/test-guard.js';

const PASSWORD = 'Tr0ub4dor&3-unique';
const CHECK_PATH = '/api/irc/check-credentials/';
const validateResponse = compileBodySchema(checkResponseSchema);

function anopeLike(call: RpcCall): RpcReply {
  const [nick = '', password] = call.params as string[];
  if (/^banned/i.test(nick)) return { error: { code: -32097, message: 'Account suspended' } };
  if (/^(alice|bob|carol|dave|alicealt)\d*$/i.test(nick)) {
    const account = nick.toLowerCase() === 'alicealt' ? 'alice' : nick.toLowerCase();
    return password === PASSWORD
      ? { result: { account, confirmed: true, uniqueid: 1 } }
      : { error: { code: -32098, message: 'Invalid password' } };
  }
  return { error: { code: -32099, message: 'No such account' } };
}

/** A fake Anope RPC server for the test, closed when it ends. */
async function fakeAnope(
  t: Test,
  answer: (call: RpcCall) => RpcReply | Promise<RpcReply> = anopeLike,
): Promise<FakeRpcServer> {
  const rpc = await startFakeRpc(answer);
  t.teardown(() => rpc.close());
  return rpc;
}

/** The nickserv plugin asking `rpc` (with `nickserv`'s settings), behind the test token guard. */
function withNickserv(rpc: FakeRpcServer, nickserv: Record<string, unknown> = {}): HarnessOptions {
  return {
    registry: [...builtinPlugins, testGuardPlugin],
    plugins: { testguard: {}, nickserv: { backend: 'anope-rpc', url: rpc.url, ...nickserv } },
  };
}

/**
 * POST `body` as JSON to the credential check with `Token <token>` (default token-a); `contentType` null
 * sends none, and `raw` is sent as the body instead.
 */
function check(
  bot: Harness,
  body: unknown,
  options: { token?: string; contentType?: string | null; raw?: string } = {},
): Promise<InjectResponse> {
  const headers: Record<string, string> = { Authorization: `Token ${options.token ?? 'token-a'}` };
  if (options.contentType !== null) headers['Content-Type'] = options.contentType ?? 'application/json';
  return bot.inject('POST', CHECK_PATH, headers, options.raw ?? JSON.stringify(body));
}

function errorOf(response: InjectResponse) {
  return (response.body as { error: { status: number; code: string; message: string; details?: unknown } }).error;
}

function answerOf(t: Test, response: InjectResponse) {
  t.equal(response.status, 200, 'status 200');
  t.equal(response.headers['cache-control'], 'private, no-store', 'never cached');
  const body = response.body as Record<string, unknown>;
  t.same(validateResponse(body), [], 'the body matches the response schema');
  return body;
}

t.test(
  'where the IRC server knows no accounts (ircd 2.11): refused once in the log, every check 503, services never asked',
  async (t) => {
    const rpc = await fakeAnope(t);
    const bot = await startHarness(t, { ...withNickserv(rpc), version: '2.11.2p3', cap: false });
    const refusals = (): string[] => bot.logs.filter((line) => /no account services/.test(line));
    t.match(refusals(), [/ircd 2\.11.*plugins\.nickserv cannot work on this network: remove it from the config/]);
    for (const nick of ['alice', 'nobody']) {
      const response = await check(bot, { nick, password: PASSWORD });
      t.equal(response.status, 503);
      t.match(errorOf(response), {
        code: 'unavailable',
        message: /This network has no account services \(its IRC server, ircd 2\.11, knows no accounts\)/,
      });
    }
    t.equal(rpc.calls.length, 0, 'the RPC endpoint is never called');
    t.equal(refusals().length, 1, 'said once');
  },
);

t.test('"nickserv": {} starts with the sasl backend aimed at the bot’s own server', async (t) => {
  const { host, logs } = await startHarness(t, {
    plugins: { nickserv: {} },
    config: { irc: { host: 'irc.example.net', port: 6697, tls: true } },
    register: false,
  });
  t.match(logs.join('\n'), /credential checks ready backend=sasl target="irc\.example\.net:6697 \(TLS\)"/);
  t.same(
    host.http
      .routes()
      .filter(({ plugin }) => plugin === 'nickserv')
      .map(({ route }) => [route.method, route.path, route.name, route.tier]),
    [['POST', '/api/irc/check-credentials/', 'irc.check_credentials', 'token']],
  );
});

t.test('an RPC backend without a url refuses to start, naming the key', async (t) => {
  await t.rejects(startHarness(t, { plugins: { nickserv: { backend: 'atheme-jsonrpc' } }, register: false }), {
    message: /config\.plugins\.nickserv\.url is required with backend "atheme-jsonrpc"/,
  });
});

t.test('200 answers: valid names the account, invalid has none, suspended says why', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  t.same(answerOf(t, await check(bot, { nick: 'alice', password: PASSWORD })), {
    nick: 'alice',
    valid: true,
    account: 'alice',
    reason: null,
  });
  t.same(answerOf(t, await check(bot, { nick: 'AliceAlt', password: PASSWORD })), {
    nick: 'AliceAlt',
    valid: true,
    account: 'alice',
    reason: null,
  });
  t.same(answerOf(t, await check(bot, { nick: 'alice', password: 'wrong' })), {
    nick: 'alice',
    valid: false,
    account: null,
    reason: null,
  });
  t.same(answerOf(t, await check(bot, { nick: 'nobody', password: 'x' })), {
    nick: 'nobody',
    valid: false,
    account: null,
    reason: null,
  });
  t.same(answerOf(t, await check(bot, { nick: 'banned', password: 'x' })), {
    nick: 'banned',
    valid: false,
    account: null,
    reason: 'suspended',
  });
  t.same(
    answerOf(t, await check(bot, { nick: 'bob', password: PASSWORD, remember: true })),
    { nick: 'bob', valid: true, account: 'bob', reason: null },
    'unknown fields are ignored, as DRF does',
  );
});

t.test('400 invalid_body names /nick and /password and never echoes the password', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  let response = await check(bot, {});
  t.equal(response.status, 400);
  let error = errorOf(response);
  t.equal(error.code, 'invalid_body');
  t.same(error.details, [
    { field: '/nick', message: 'is required' },
    { field: '/password', message: 'is required' },
  ]);

  response = await check(bot, { nick: 42, password: ['x'] });
  error = errorOf(response);
  t.equal(response.status, 400);
  t.same(
    (error.details as { field: string }[]).map((detail) => detail.field),
    ['/nick', '/password'],
  );
  t.match(error.message, /\/nick must be string.*\/password must be string/);

  for (const body of [
    { nick: '', password: PASSWORD },
    { nick: 'ali ce', password: PASSWORD },
    { nick: 'alice', password: '' },
    { nick: 'alice', password: `${PASSWORD}\u0000alice` },
  ]) {
    response = await check(bot, body);
    t.equal(response.status, 400, JSON.stringify(body.nick));
    t.notMatch(response.text, PASSWORD, 'the password is not echoed');
  }

  response = await check(bot, null, { raw: `{"nick": "alice", "password": "${PASSWORD}"` });
  t.equal(response.status, 400, 'broken JSON');
  t.notMatch(response.text, PASSWORD, 'broken JSON is not echoed');
  t.equal(rpc.calls.length, 0, 'no bad body reached services');
});

t.test('415 without JSON, 413 over the body limit, 401 without a token', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  let response = await check(bot, { nick: 'alice', password: PASSWORD }, { contentType: 'text/plain' });
  t.equal(response.status, 415);
  t.equal(errorOf(response).code, 'unsupported_media_type');
  response = await check(bot, { nick: 'alice', password: PASSWORD }, { contentType: null });
  t.equal(response.status, 415, 'no Content-Type at all');
  response = await check(bot, { nick: 'alice', password: 'x'.repeat(20_000) });
  t.equal(response.status, 413);
  t.equal(errorOf(response).code, 'payload_too_large');
  response = await bot.inject(
    'POST',
    CHECK_PATH,
    { 'Content-Type': 'application/json' },
    {
      nick: 'alice',
      password: PASSWORD,
    },
  );
  t.equal(response.status, 401, 'the token tier guard runs first');
});

t.test('503 when services cannot answer, and it counts as no failure', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc, { rate_limit: { max_failures_per_nick: 1 } }));
  await rpc.close();
  for (let i = 0; i < 3; i++) {
    const response = await check(bot, { nick: 'alice', password: PASSWORD });
    t.equal(response.status, 503, `try ${i + 1}`);
    const error = errorOf(response);
    t.equal(error.code, 'unavailable');
    t.match(error.message, /^The nickname service cannot answer: cannot reach/);
  }
});

t.test('the sixth failure for one nick is 429 for that nick only; a success clears the count', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  for (let i = 1; i <= 5; i++) {
    const body = answerOf(t, await check(bot, { nick: 'alice', password: `guess-${i}` }));
    t.equal(body.valid, false, `failure ${i}`);
  }
  const before = rpc.calls.length;
  const response = await check(bot, { nick: 'alice', password: PASSWORD });
  t.equal(response.status, 429, 'the sixth check is refused, even with the right password');
  const retryAfter = Number(response.headers['retry-after']);
  t.ok(retryAfter > 890 && retryAfter <= 900, `Retry-After is the rest of the window (${retryAfter})`);
  const error = errorOf(response);
  t.equal(error.code, 'rate_limited');
  t.match(error.message, /for nick alice with this token; retry after \d+ seconds/);
  t.equal(rpc.calls.length, before, 'a refused check never reaches services');
  t.equal((await check(bot, { nick: 'ALICE', password: 'guess-6' })).status, 429, 'casefolded');
  t.equal(
    answerOf(t, await check(bot, { nick: 'alice', password: PASSWORD }, { token: 'token-b' })).valid,
    true,
    "another token's checks of the nick are its own: the guesser did not lock the owner out",
  );
  t.equal(answerOf(t, await check(bot, { nick: 'bob', password: PASSWORD })).valid, true, 'another nick still works');

  for (let i = 1; i <= 4; i++) await check(bot, { nick: 'carol', password: `guess-${i}` });
  t.equal(answerOf(t, await check(bot, { nick: 'carol', password: PASSWORD })).valid, true);
  for (let i = 1; i <= 5; i++) {
    t.equal(
      (await check(bot, { nick: 'carol', password: `again-${i}` })).status,
      200,
      `after the success, failure ${i} is checked`,
    );
  }
  t.equal((await check(bot, { nick: 'carol', password: PASSWORD })).status, 429);
});

t.test('16 right passwords at once for one nick are all valid, five at a time at services', async (t) => {
  // Services answer only when let go: the first five reach them together, and no sixth comes meanwhile.
  const held: (() => void)[] = [];
  let inFlight = 0;
  let peak = 0;
  let fiveArrived!: () => void;
  const five = new Promise<void>((resolve) => (fiveArrived = resolve));
  const rpc = await fakeAnope(t, async (call) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    if (inFlight === 5) fiveArrived();
    await new Promise<void>((resolve) => held.push(resolve));
    inFlight--;
    return anopeLike(call);
  });
  const bot = await startHarness(t, withNickserv(rpc, { max_connections: 16 }));
  const sent = Promise.all(Array.from({ length: 16 }, () => check(bot, { nick: 'alice', password: PASSWORD })));
  await five;
  t.equal(inFlight, 5, 'five run at once');
  // Let each go in turn; a freed place lets the next one in, never a sixth at once.
  let answered = false;
  void sent.then(() => (answered = true));
  while (!answered) {
    held.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const answers = await sent;
  t.same(
    answers.map((response) => response.status),
    new Array(16).fill(200),
    'none refused',
  );
  for (const response of answers) t.equal(answerOf(t, response).valid, true);
  t.equal(peak, 5, 'never more at once than the nick has failures left');
});

t.test('10 right then 10 wrong at once: the right ones valid, then the limit engages', async (t) => {
  const rpc = await fakeAnope(t, async (call) => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return anopeLike(call);
  });
  const bot = await startHarness(t, withNickserv(rpc, { max_connections: 16 }));
  // The right ones reach the server first: inject hands each request over as it is called, and their
  // bodies are read in that order.
  const right = Array.from({ length: 10 }, () => check(bot, { nick: 'alice', password: PASSWORD }));
  const wrong = Array.from({ length: 10 }, (_, i) => check(bot, { nick: 'alice', password: `guess-${i}` }));
  const outcomes = await Promise.all(
    [...right, ...wrong].map(async (answer) => {
      const response = await answer;
      return response.status === 200 ? (response.body as { valid: boolean }).valid : response.status;
    }),
  );
  t.same(outcomes.slice(0, 10), new Array(10).fill(true), 'every right password is valid');
  const wrongOutcomes = outcomes.slice(10);
  t.ok(
    wrongOutcomes.every((outcome) => outcome === false || outcome === 429),
    `the wrong ones are invalid or refused (${wrongOutcomes.join(' ')})`,
  );
  // A right one that ends after a wrong one clears the nick's failures, so more than five may be judged; but
  // the last right one to end can clear at most four, and five more always reach the limit.
  t.ok(wrongOutcomes.filter((outcome) => outcome === false).length >= 5, 'at least five were judged');
  t.ok(wrongOutcomes.includes(429), 'the limit engaged during the burst');
  const asked = rpc.calls.length;
  t.equal((await check(bot, { nick: 'alice', password: PASSWORD })).status, 429, 'and holds after it');
  t.equal(rpc.calls.length, asked, 'a refused check never reaches services');
});

t.test('client_address: each person behind one token is a caller of their own', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  const from = (client_address: string, password: string) =>
    bot.inject(
      'POST',
      '/api/irc/check-credentials/',
      { Authorization: 'Token token-a' },
      { nick: 'alice', password, client_address },
    );
  for (let i = 1; i <= 5; i++) t.equal((await from('198.51.100.66', `guess-${i}`)).status, 200);
  t.equal((await from('198.51.100.66', PASSWORD)).status, 429, 'the guesser behind the service is limited');
  const owner = await from('203.0.113.7', PASSWORD);
  t.equal(answerOf(t, owner).valid, true, 'the owner behind the same service and token is not');
  const bad = await from('not an address', PASSWORD);
  t.equal(bad.status, 400);
  t.match(errorOf(bad), { code: 'invalid_parameter', message: /client_address/ });
});

t.test('past max_queued_per_nick waiting checks of one nick, 429 with Retry-After', async (t) => {
  const held: (() => void)[] = [];
  const rpc = await fakeAnope(t, async (call) => {
    await new Promise<void>((resolve) => held.push(resolve));
    return anopeLike(call);
  });
  const bot = await startHarness(
    t,
    withNickserv(rpc, { rate_limit: { max_failures_per_nick: 1, max_queued_per_nick: 2 } }),
  );
  // One runs (one failure is all the nick may risk), two wait, and the line is full for the fourth:
  // its refusal is the first answer, as nothing is let go before it.
  const answers = [0, 1, 2, 3].map(() => check(bot, { nick: 'alice', password: PASSWORD }));
  const refused = await Promise.race(answers);
  t.equal(refused.status, 429);
  t.equal(refused.headers['retry-after'], '10');
  t.match(errorOf(refused).message, /are waiting for nick alice with this token; retry after 10 seconds/);
  let answered = false;
  const all = Promise.all(answers).then((responses) => {
    answered = true;
    return responses;
  });
  while (!answered) {
    held.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.same((await all).map((response) => response.status).sort(), [200, 200, 200, 429], 'one refused, three ran');
});

t.test('failures per token are limited across nicks', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc, { rate_limit: { max_failures_per_token: 3 } }));
  for (const nick of ['alice', 'bob', 'carol']) await check(bot, { nick, password: 'wrong' }, { token: 'stuffer' });
  const response = await check(bot, { nick: 'dave', password: PASSWORD }, { token: 'stuffer' });
  t.equal(response.status, 429);
  t.match(errorOf(response).message, /with this token/);
  t.equal(
    (await check(bot, { nick: 'dave', password: PASSWORD }, { token: 'honest' })).status,
    200,
    'other tokens unaffected',
  );
});

t.test('the pool bounds concurrent checks; a full queue is 503 at once', async (t) => {
  const held: (() => void)[] = [];
  let arrived = 0;
  let inFlight = 0;
  let peak = 0;
  const rpc = await fakeAnope(t, async (call) => {
    arrived++;
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise<void>((resolve) => held.push(resolve));
    inFlight--;
    return anopeLike(call);
  });
  const bot = await startHarness(t, withNickserv(rpc, { max_connections: 2, max_queued: 1 }));
  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const nicks = ['alice', 'bob', 'carol'];
  const accepted = nicks.map((nick) => check(bot, { nick, password: PASSWORD }));
  // Two reach services, one waits in the queue: the fourth finds no room.
  await until(() => arrived === 2);
  const refused = await check(bot, { nick: 'dave', password: PASSWORD });
  t.equal(refused.status, 503);
  t.equal(refused.headers['retry-after'], '1');
  t.match(errorOf(refused).message, /2 checks are running and 1 are waiting/);
  held.shift()!();
  await until(() => arrived === 3);
  t.equal(inFlight, 2, 'the queued check took the freed slot');
  for (const release of held.splice(0)) release();
  const answers = await Promise.all(accepted);
  t.same(
    answers.map((response) => response.status),
    [200, 200, 200],
  );
  t.equal(peak, 2, 'never more than max_connections at services');
});

t.test('sasl: while the services server is split off, 503 at once; checks running or queued give up', async (t) => {
  // An IRC server that takes connections and never answers: a check through it waits until told otherwise.
  let connections = 0;
  const silent = net.createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.close();
  });
  const port = (silent.address() as net.AddressInfo).port;
  const rpc = await fakeAnope(t);
  const bot = await startHarness(
    t,
    withNickserv(rpc, {
      backend: 'sasl',
      host: '127.0.0.1',
      port,
      timeout_seconds: 30,
      max_connections: 1,
    }),
  );
  const { host } = bot;
  const { model } = host;
  model.upsertServer('services.test.net', { isServices: true });

  // One check talks to the server; the second waits for the one connection the pool allows.
  const connected = once(silent, 'connection');
  const running = check(bot, { nick: 'alice', password: PASSWORD });
  await connected;
  const queued = check(bot, { nick: 'bob', password: PASSWORD });
  // Its body is read and it waits in the pool's queue.
  await new Promise((resolve) => setImmediate(resolve));
  const split = Date.now();
  model.removeServer('services.test.net');
  for (const [which, answer] of [
    ['running', running],
    ['queued', queued],
  ] as const) {
    const response = await answer;
    t.equal(response.status, 503, `the ${which} check is unavailable`);
    t.match(errorOf(response).message, /the services server services\.test\.net split from the network/);
  }
  t.ok(Date.now() - split < 1000, 'at once, not after timeout_seconds');
  t.equal(connections, 1, 'the queued one never connected');

  const next = await check(bot, { nick: 'alice', password: PASSWORD });
  t.equal(next.status, 503);
  t.match(errorOf(next).message, /services server services\.test\.net is split from the network/);
  t.equal(connections, 1, 'no connection was made for it');

  // Services back, under another server name: checks go to the server again.
  model.upsertServer('services2.test.net', { isServices: true });
  const reconnected = once(silent, 'connection');
  const after = check(bot, { nick: 'alice', password: PASSWORD });
  await reconnected;
  t.equal(connections, 2, 'linked back: checks go to the server again');
  await host.stop();
  t.equal((await after).status, 503, 'stopping the plugin ends it');
});

t.test('the password appears in no log line', async (t) => {
  const rpc = await fakeAnope(t);
  const bot = await startHarness(t, withNickserv(rpc));
  const { logs } = bot;
  await check(bot, { nick: 'alice', password: PASSWORD });
  await check(bot, { nick: 'alice', password: `${PASSWORD}-wrong` });
  await check(bot, { nick: 42, password: PASSWORD });
  t.ok(
    logs.some((line) =>
      /credential check answered nick=alice token=token-a backend=anope-rpc valid=true account=alice/.test(line),
    ),
    'checks are logged, with nick and token',
  );
  t.notOk(
    logs.some((line) => line.includes(PASSWORD) || line.includes('[redacted]')),
    'not even masked: it was never written',
  );
});
