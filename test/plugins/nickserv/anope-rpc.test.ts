/** The Anope 2.1 RPC backend against a fake JSON-RPC server answering as rpc_user documents. */
import t, { type Test } from 'tap';
import { anopeBackend } from '../../../plugins/nickserv/backends/anope-rpc.js';
import { startFakeRpc, type RpcCall, type RpcReply } from './fixtures/fake-rpc.js';

const signal = new AbortController().signal;

function anopeLike(call: RpcCall): RpcReply {
  if (call.method !== 'anope.checkCredentials') return { error: { code: -32601, message: 'Method not found' } };
  const [nick, password] = call.params as string[];
  switch (nick?.toLowerCase()) {
    case 'alice':
    case 'alicealt':
      return password === 'pw-alice'
        ? { result: { account: 'Alice', confirmed: true, uniqueid: 11085415958920757000 } }
        : { error: { code: -32098, message: 'Invalid password' } };
    case 'banned':
      return { error: { code: -32097, message: 'Account suspended' } };
    default:
      return { error: { code: -32099, message: 'No such account' } };
  }
}

async function setup(t: Test, answer: (call: RpcCall) => RpcReply | Promise<RpcReply> = anopeLike, token?: string) {
  const rpc = await startFakeRpc(answer);
  t.teardown(() => rpc.close());
  const backend = anopeBackend({ url: new URL(rpc.url), timeoutMs: 500, token });
  const check = (nick: string, password: string) => backend.check({ nick, password, sourceIp: '127.0.0.1', signal });
  return { rpc, check };
}

t.test('anope.checkCredentials: valid names the account, also for a grouped nick', async (t) => {
  const { rpc, check } = await setup(t);
  t.same(await check('alice', 'pw-alice'), { valid: true, account: 'Alice' });
  t.same(await check('alicealt', 'pw-alice'), { valid: true, account: 'Alice' });
  t.same(rpc.calls[0]!.params, ['alice', 'pw-alice']);
  t.type(rpc.calls[0]!.id, 'string');
  t.equal(rpc.calls[0]!.headers.authorization, undefined, 'no Authorization without a token');
});

t.test('-32098 and -32099 are invalid; -32097 is invalid because suspended', async (t) => {
  const { check } = await setup(t);
  t.same(await check('alice', 'wrong'), { valid: false, reason: null });
  t.same(await check('nobody', 'x'), { valid: false, reason: null });
  t.same(await check('banned', 'x'), { valid: false, reason: 'suspended' });
});

t.test('a configured token is sent as a bearer token', async (t) => {
  const { rpc, check } = await setup(t, anopeLike, 'rpc-secret');
  await check('alice', 'pw-alice');
  t.equal(rpc.calls[0]!.headers.authorization, 'Bearer rpc-secret');
});

const unavailableCases: [string, (call: RpcCall) => RpcReply | Promise<RpcReply>, RegExp][] = [
  ['rpc_user not loaded', () => ({ error: { code: -32601, message: 'Method not found' } }), /error -32601/],
  ['a result without an account', () => ({ result: { confirmed: true } }), /without an account name/],
  ['HTTP 401', () => ({ status: 401, text: 'no' }), /HTTP 401/],
  ['no answer in time', () => new Promise<RpcReply>(() => undefined), /within 500 ms/],
];

for (const [name, answer, message] of unavailableCases) {
  t.test(`unavailable, never invalid: ${name}`, async (t) => {
    const { check } = await setup(t, answer);
    await t.rejects(check('alice', 'pw-alice'), { name: 'ServiceUnavailableError', message });
  });
}
