/**
 * `nickserv.credentials`, the sign-in's password check, in the real host with a fake Anope RPC server at
 * the edge: one answer for every refusal, the same per-nick window as the HTTP credential check (each
 * counts the other's failures), a window per client address, and "unavailable" when services are down.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { builtinPlugins } from '../../../app/builtin-plugins.js';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import type { Services } from '../../../lib/sdk.js';
import { startHarness } from '../../../testing/harness.js';
import { startFakeRpc, type RpcCall, type RpcReply } from './fixtures/fake-rpc.js';
import { testGuardPlugin } from './fixtures/test-guard.js';

type Credentials = Services['nickserv.credentials'];
const PASSWORD = 'correct horse battery staple';

function anopeLike(call: RpcCall): RpcReply {
  const [nick = '', password] = call.params as string[];
  if (/^banned$/i.test(nick)) return { error: { code: -32097, message: 'Account suspended' } };
  if (/^(alice|alicealt|bob)$/i.test(nick)) {
    const account = nick.toLowerCase() === 'alicealt' ? 'alice' : nick.toLowerCase();
    return password === PASSWORD
      ? { result: { account, confirmed: true, uniqueid: 1 } }
      : { error: { code: -32098, message: 'Invalid password' } };
  }
  return { error: { code: -32099, message: 'No such account' } };
}

async function start(t: Test, rateLimit: Record<string, unknown> = {}, store: { storeDir?: string } = {}) {
  const rpc = await startFakeRpc(anopeLike);
  t.teardown(() => rpc.close());
  let credentials!: Credentials;
  const probe = definePlugin({
    name: 'probe',
    description: 'uses nickserv.credentials',
    uses: ['nickserv.credentials'],
    configSchema: { type: 'object', properties: {} },
    start({ services }) {
      credentials = services.get('nickserv.credentials');
    },
  });
  const bot = await startHarness(t, {
    registry: [...builtinPlugins, testGuardPlugin, probe as PluginDefinition<never>],
    plugins: {
      testguard: {},
      probe: {},
      nickserv: { backend: 'anope-rpc', url: rpc.url, rate_limit: rateLimit },
      metrics: { allow: ['127.0.0.1'] },
    },
    store: 'files',
    ...(store.storeDir ? { storeDir: store.storeDir } : {}),
  });
  const post = (nick: string, password: string) =>
    bot.inject('POST', '/api/irc/check-credentials/', { Authorization: 'Token api-client' }, { nick, password });
  return { bot, rpc, credentials, post };
}

t.test('right, wrong, unknown, suspended and malformed: valid with the account, or one answer', async (t) => {
  const { bot, rpc, credentials } = await start(t);
  const address = '192.0.2.10';
  t.same(await credentials.check({ name: 'alice', password: PASSWORD, address }), {
    result: 'valid',
    account: 'alice',
  });
  t.same(
    await credentials.check({ name: 'AliceAlt', password: PASSWORD, address }),
    { result: 'valid', account: 'alice' },
    'a grouped nick signs in as its account',
  );
  for (const [name, password] of [
    ['alice', 'wrong'],
    ['nobody', 'wrong'],
    ['banned', PASSWORD],
  ] as const) {
    t.same(await credentials.check({ name, password, address }), { result: 'invalid' }, `${name}: invalid`);
  }
  const asked = rpc.calls.length;
  for (const [name, password] of [
    ['two words', PASSWORD],
    ['alice\0x', PASSWORD],
    ['', PASSWORD],
    ['alice', ''],
    ['alice', 'a\0b'],
    ['alice', 'x'.repeat(1025)],
  ] as const) {
    t.same(await credentials.check({ name, password, address }), { result: 'invalid' });
  }
  t.equal(rpc.calls.length, asked, 'what no account can be never reaches services');
  t.same(rpc.calls[0]!.params, ['alice', PASSWORD], 'services are asked with what was typed');
  const log = bot.logs.join('\n');
  t.notOk(log.includes(PASSWORD), 'no password in the log');
  t.match(
    log,
    /credential check answered nick=alice via=sign-in ip=192\.0\.2\.10 backend=anope-rpc valid=true account=alice/,
  );
});

t.test('a nick has a window per caller: a guesser limits itself, never the owner elsewhere', async (t) => {
  const { credentials, post } = await start(t, { max_failures_per_nick: 3 });
  const guesser = '192.0.2.20';
  t.same(await credentials.check({ name: 'alice', password: 'guess-1', address: guesser }), { result: 'invalid' });
  t.same(await credentials.check({ name: 'ALICE', password: 'guess-2', address: guesser }), { result: 'invalid' });
  t.same(await credentials.check({ name: 'alice', password: 'guess-3', address: guesser }), { result: 'invalid' });
  const limited = await credentials.check({ name: 'alice', password: PASSWORD, address: guesser });
  t.equal(limited.result, 'limited', 'the guesser is refused, the right password too');
  t.ok(limited.result === 'limited' && limited.retryAfterSeconds > 800, `retry after ${JSON.stringify(limited)}`);
  t.same(
    await credentials.check({ name: 'alice', password: PASSWORD, address: '198.51.100.9' }),
    { result: 'valid', account: 'alice' },
    'the owner from another address signs in',
  );
  t.equal((await post('alice', PASSWORD)).status, 200, 'and an API token holder checks it');
  // One holder's IPv6 addresses are one caller: its /64.
  for (const host of ['1', '2', '3']) {
    await credentials.check({ name: 'bob', password: 'guess', address: `2001:db8:1:2::${host}` });
  }
  t.match(
    await credentials.check({ name: 'bob', password: PASSWORD, address: '2001:db8:1:2::ffff' }),
    { result: 'limited' },
    '2001:db8:1:2::/64 is one caller',
  );
  t.same(
    await credentials.check({ name: 'bob', password: PASSWORD, address: '2001:db8:1:3::1' }),
    { result: 'valid', account: 'bob' },
    'another /64 is another',
  );
});

t.test('guesses at one account from everywhere are bounded; the callers it knows still get in', async (t) => {
  const { credentials, post } = await start(t, {
    max_failures_per_nick: 2,
    max_failures_per_account: 6,
    max_failures_per_address: 100,
  });
  // The owner signed in from home before the attack: the nick knows that address.
  t.same(await credentials.check({ name: 'alice', password: PASSWORD, address: '203.0.113.1' }), {
    result: 'valid',
    account: 'alice',
  });
  // Strangers, two guesses from each of three addresses: the account's bound (6) is reached.
  for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
    for (const guess of ['a', 'b']) await credentials.check({ name: 'alice', password: guess, address });
  }
  const stranger = await credentials.check({ name: 'alice', password: 'c', address: '192.0.2.99' });
  t.match(stranger, { result: 'limited' }, 'a fresh address is refused: the account took its guesses for the hour');
  t.ok(stranger.result === 'limited' && stranger.retryAfterSeconds > 3000, 'until the hour is over');
  t.equal((await post('alice', 'guess')).status, 429, 'an API token that never checked it right: refused');
  t.same(
    await credentials.check({ name: 'alice', password: PASSWORD, address: '203.0.113.1' }),
    { result: 'valid', account: 'alice' },
    'the owner, from an address that checked it right before, signs in',
  );
  t.same(await credentials.check({ name: 'bob', password: PASSWORD, address: '192.0.2.99' }), {
    result: 'valid',
    account: 'bob',
  });
});

t.test('a grouped nick counts with its account, and knows its callers', async (t) => {
  const { bot, credentials } = await start(t, {
    max_failures_per_nick: 2,
    max_failures_per_account: 4,
    max_failures_per_address: 100,
  });
  // The owner signed in once with the grouped nick: the bot learns it is alice's.
  t.same(await credentials.check({ name: 'AliceAlt', password: PASSWORD, address: '203.0.113.1' }), {
    result: 'valid',
    account: 'alice',
  });
  // Strangers guess at the account under its own name: its bound (4) is reached.
  for (const address of ['192.0.2.1', '192.0.2.2']) {
    for (const guess of ['a', 'b']) await credentials.check({ name: 'alice', password: guess, address });
  }
  t.match(
    await credentials.check({ name: 'alicealt', password: 'c', address: '192.0.2.3' }),
    { result: 'limited' },
    'a guess under the grouped nick is refused: it counts with the account, not on a window of its own',
  );
  t.same(
    await credentials.check({ name: 'alice', password: PASSWORD, address: '203.0.113.1' }),
    { result: 'valid', account: 'alice' },
    'the owner, known from the grouped nick, signs in under the account name too',
  );
  // Who holds a nick on IRC, logged in to what, is anyone's choice: it does not move the nick to an account.
  bot.host.model.upsertUser('Bob', { account: 'mallory' });
  for (const address of ['192.0.2.4', '192.0.2.5']) {
    for (const guess of ['a', 'b']) await credentials.check({ name: 'mallory', password: guess, address });
  }
  t.same(
    await credentials.check({ name: 'bob', password: PASSWORD, address: '192.0.2.6' }),
    { result: 'valid', account: 'bob' },
    "bob's owner is not refused for guesses at the account whose user holds the nick bob",
  );
});

t.test('failures from one address are limited across accounts; other addresses are not', async (t) => {
  const { credentials } = await start(t, { max_failures_per_address: 3 });
  const address = '198.51.100.7';
  for (const name of ['alice', 'bob', 'nobody']) {
    t.same(await credentials.check({ name, password: 'guess', address }), { result: 'invalid' });
  }
  const limited = await credentials.check({ name: 'carol', password: 'guess', address });
  t.match(limited, { result: 'limited', retryAfterSeconds: Number });
  t.match(
    await credentials.check({ name: 'bob', password: PASSWORD, address }),
    { result: 'limited', retryAfterSeconds: Number },
    'even a right password, from that address',
  );
  t.same(await credentials.check({ name: 'bob', password: PASSWORD, address: '198.51.100.8' }), {
    result: 'valid',
    account: 'bob',
  });
});

t.test('the callers a nick knows are kept across a restart of the bot', async (t) => {
  const limits = { max_failures_per_nick: 2, max_failures_per_account: 4, max_failures_per_address: 100 };
  const first = await start(t, limits);
  t.same(await first.credentials.check({ name: 'alice', password: PASSWORD, address: '203.0.113.1' }), {
    result: 'valid',
    account: 'alice',
  });
  await first.bot.stop();
  const stored = readFileSync(path.join(first.bot.storeDir!, 'store.json'), 'utf8');
  t.notMatch(stored, /203\.0\.113\.1/, 'the address is not written down, only its SHA-256');
  t.match(stored, /"known_callers"/);

  const second = await start(t, limits, { storeDir: first.bot.storeDir! });
  for (const address of ['192.0.2.1', '192.0.2.2']) {
    for (const guess of ['a', 'b']) await second.credentials.check({ name: 'alice', password: guess, address });
  }
  t.match(await second.credentials.check({ name: 'alice', password: 'c', address: '192.0.2.3' }), {
    result: 'limited',
  });
  t.same(
    await second.credentials.check({ name: 'alice', password: PASSWORD, address: '203.0.113.1' }),
    { result: 'valid', account: 'alice' },
    'the owner, known from before the restart, gets in',
  );
});

t.test('services down: unavailable, never invalid, and it counts as no failure', async (t) => {
  const { rpc, credentials } = await start(t, { max_failures_per_nick: 1, max_failures_per_address: 1 });
  await rpc.close();
  for (let attempt = 1; attempt <= 3; attempt++) {
    t.same(
      await credentials.check({ name: 'alice', password: PASSWORD, address: '192.0.2.30' }),
      { result: 'unavailable', retryAfterSeconds: null },
      `attempt ${attempt}`,
    );
  }
});

t.test("every check is counted by result, the API's and the sign-ins' alike", async (t) => {
  const { bot, credentials, post } = await start(t);
  const address = '192.0.2.30';
  t.equal((await post('alice', PASSWORD)).status, 200);
  t.equal((await post('nobody', 'wrong')).status, 200);
  await credentials.check({ name: 'bob', password: PASSWORD, address });
  await credentials.check({ name: 'bob', password: 'wrong', address });
  await credentials.check({ name: 'bob', password: 'wrong', address });
  const text = (await bot.host.http.inject({ method: 'GET', path: '/metrics', ip: '127.0.0.1' })).text;
  const counted = (result: string) =>
    Number(new RegExp(`^irc_bot_credential_checks_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  t.equal(counted('valid'), 2, 'valid: one over HTTP, one sign-in');
  t.equal(counted('invalid'), 3, 'invalid: one over HTTP, two sign-ins');
});
