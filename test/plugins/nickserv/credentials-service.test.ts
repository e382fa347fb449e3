/**
 * `nickserv.credentials`, the sign-in's password check, in the real host with a fake Anope RPC server at
 * the edge: one answer for every refusal, the same per-nick window as the HTTP credential check (each
 * counts the other's failures), a window per client address, and "unavailable" when services are down.
 */
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

async function start(t: Test, rateLimit: Record<string, unknown> = {}) {
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

t.test("one window per nick for sign-ins and the HTTP check: each counts the other's failures", async (t) => {
  const { credentials, post } = await start(t, { max_failures_per_nick: 3 });
  const address = '192.0.2.20';
  t.same(await credentials.check({ name: 'alice', password: 'guess-1', address }), { result: 'invalid' });
  t.same(await credentials.check({ name: 'ALICE', password: 'guess-2', address }), { result: 'invalid' });
  t.equal((await post('alice', 'guess-3')).status, 200, 'the third failure, over HTTP');
  const limited = await credentials.check({ name: 'alice', password: PASSWORD, address });
  t.equal(limited.result, 'limited', 'the right password too, once the limit engaged');
  t.ok(limited.result === 'limited' && limited.retryAfterSeconds > 800, `retry after ${JSON.stringify(limited)}`);
  t.equal((await post('alice', PASSWORD)).status, 429, 'and over HTTP');
  t.same(await credentials.check({ name: 'bob', password: PASSWORD, address }), { result: 'valid', account: 'bob' });
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
