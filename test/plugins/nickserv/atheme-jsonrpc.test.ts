/**
 * The Atheme JSON-RPC backend against a fake RPC server that answers as
 * Atheme 7.2 does (faults and texts copied from the test network).
 */
import t, { type Test } from 'tap';
import { athemeBackend } from '../../../plugins/nickserv/backends/atheme-jsonrpc.js';
import { startFakeRpc, type RpcCall, type RpcReply } from './fixtures/fake-rpc.js';

const signal = new AbortController().signal;

/** Accounts with their grouped nicks, as Atheme would hold them. */
const accounts = [
  { account: 'Alice', password: 'pw-alice', nicks: ['alice', 'alicealt'], frozen: false },
  { account: 'cold', password: 'pw-cold', nicks: ['cold'], frozen: true },
];

function athemeLike(call: RpcCall): RpcReply {
  const [first, second] = call.params as string[];
  switch (call.method) {
    case 'atheme.command': {
      const nick = (call.params as string[])[5] ?? '';
      const owner = accounts.find((entry) => entry.nicks.includes(nick.toLowerCase()));
      if (!owner) return { error: { code: 4, message: `${nick} is not registered.` } };
      return { result: `Information on ${nick} (account ${owner.account}):\nRegistered : now\n*** End of Info ***` };
    }
    case 'atheme.login': {
      const owner = accounts.find((entry) => entry.account.toLowerCase() === (first ?? '').toLowerCase());
      if (!owner) return { error: { code: 3, message: 'The account is not registered.' } };
      if (owner.frozen) return { error: { code: 6, message: 'The account has been frozen.' } };
      if (owner.password !== second) return { error: { code: 5, message: 'The password is incorrect.' } };
      return { result: 'cookieabcdef' };
    }
    case 'atheme.logout':
      return { result: 'You are now logged out.' };
    default:
      return { error: { code: 2, message: 'Invalid command' } };
  }
}

async function setup(t: Test, answer: (call: RpcCall) => RpcReply | Promise<RpcReply> = athemeLike) {
  const rpc = await startFakeRpc(answer);
  t.teardown(() => rpc.close());
  const backend = athemeBackend({ url: new URL(rpc.url), timeoutMs: 500 });
  const check = (nick: string, password: string) => backend.check({ nick, password, sourceIp: '203.0.113.9', signal });
  return { rpc, backend, check };
}

t.test('a right password is valid, names the account, and the cookie is logged out', async (t) => {
  const { rpc, check } = await setup(t);
  t.same(await check('alice', 'pw-alice'), { valid: true, account: 'Alice' });
  t.same(
    rpc.calls.map((call) => call.method),
    ['atheme.command', 'atheme.login', 'atheme.logout'],
  );
  const [info, login, logout] = rpc.calls;
  t.same(info!.params, ['.', '*', '203.0.113.9', 'NickServ', 'INFO', 'alice'], 'an anonymous INFO');
  t.same(login!.params, ['Alice', 'pw-alice', '203.0.113.9'], 'login to the account, with the client IP as source');
  t.same(logout!.params, ['cookieabcdef', 'Alice']);
  for (const call of rpc.calls) {
    t.type(call.id, 'string', `${call.method}: the id is a string (Atheme never answers a number)`);
    t.equal(call.headers['content-type'], 'application/json', `${call.method}: JSON content type`);
    t.equal(call.headers.connection, 'close', `${call.method}: a fresh connection`);
  }
  t.equal(rpc.connections, 3, 'one connection per request');
});

t.test('a grouped nick resolves to its account', async (t) => {
  const { check } = await setup(t);
  t.same(await check('alicealt', 'pw-alice'), { valid: true, account: 'Alice' });
});

t.test('wrong password (fault 5), unknown nick and frozen account (fault 6)', async (t) => {
  const { rpc, check } = await setup(t);
  t.same(await check('alice', 'nope'), { valid: false, reason: null });
  t.notOk(
    rpc.calls.some((call) => call.method === 'atheme.logout'),
    'no cookie, no logout',
  );
  rpc.calls.length = 0;
  t.same(await check('stranger', 'x'), { valid: false, reason: null });
  t.same(
    rpc.calls.map((call) => call.method),
    ['atheme.command'],
    'an unregistered nick costs one request',
  );
  t.same(await check('cold', 'pw-cold'), { valid: false, reason: 'suspended' });
});

t.test('when INFO is refused or says nothing usable, the nick itself is tried as the account', async (t) => {
  const { check } = await setup(t, (call) =>
    call.method === 'atheme.command' ? { error: { code: 6, message: 'You are not authorized' } } : athemeLike(call),
  );
  t.same(await check('ALICE', 'pw-alice'), { valid: true, account: 'ALICE' });
  t.same(await check('alicealt', 'pw-alice'), { valid: false, reason: null }, 'fault 3 from login is invalid');
});

t.test('a failed logout does not change the answer', async (t) => {
  const { check } = await setup(t, (call) =>
    call.method === 'atheme.logout' ? { error: { code: 15, message: 'Invalid authcookie' } } : athemeLike(call),
  );
  t.same(await check('alice', 'pw-alice'), { valid: true, account: 'Alice' });
});

const unavailableCases: [string, (call: RpcCall) => RpcReply | Promise<RpcReply>, RegExp][] = [
  [
    'an unexpected fault',
    (call) =>
      call.method === 'atheme.login' ? { error: { code: 1, message: 'Insufficient parameters.' } } : athemeLike(call),
    /fault 1/,
  ],
  ['HTTP 415', () => ({ status: 415, text: 'Unsupported Media Type' }), /HTTP 415/],
  ['not JSON', () => ({ status: 200, text: '<html>' }), /not JSON/],
  [
    'a login without a cookie',
    (call) => (call.method === 'atheme.login' ? { result: '' } : athemeLike(call)),
    /without an authcookie/,
  ],
  [
    'no answer in time',
    () => new Promise<RpcReply>(() => undefined),
    /no answer from http:\/\/127\.0\.0\.1:\d+\/jsonrpc within 500 ms/,
  ],
];

for (const [name, answer, message] of unavailableCases) {
  t.test(`unavailable, never invalid: ${name}`, async (t) => {
    const { check } = await setup(t, answer);
    await t.rejects(check('alice', 'pw-alice'), { name: 'ServiceUnavailableError', message });
  });
}

t.test('Atheme not listening is unavailable', async (t) => {
  const { rpc, backend } = await setup(t);
  await rpc.close();
  await t.rejects(backend.check({ nick: 'alice', password: 'pw-alice', sourceIp: '127.0.0.1', signal }), {
    name: 'ServiceUnavailableError',
    message: /cannot reach .*ECONNREFUSED/,
  });
});
