/** The Anope 2.1 RPC backend against a fake JSON-RPC server answering as rpc_user documents. */
import { readFileSync } from 'node:fs';
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

t.test("Anope 2.1.15's own answers, as recorded (test/fixtures/networks/anope-2.1/jsonrpc-*.txt)", async (t) => {
  // Recorded by testnet/capture.mjs on unreal+anope21: the response bodies byte for byte. Anope 2.1.15 answers a
  // wrong password with -32099 "Invalid account" and an unknown account with -32098 "Invalid password" (the
  // reverse of its docs/RPC/rpc_user.md), and a random 64-bit uniqueid, beyond 2^53.
  const folder = new URL('../../../../test/fixtures/networks/anope-2.1/', import.meta.url);
  const recorded = (name: string): string => {
    const lines = readFileSync(new URL(`jsonrpc-checkCredentials-${name}.txt`, folder), 'utf8')
      .trimEnd()
      .split('\n');
    return lines.at(-1)!;
  };
  const bodies = { right: recorded('right'), wrong: recorded('wrong'), unknown: recorded('unknown') };
  t.match(bodies.wrong, /"code":-32099,"message":"Invalid account"/);
  t.match(bodies.unknown, /"code":-32098,"message":"Invalid password"/);
  const uniqueid = /"uniqueid":(\d+)/.exec(bodies.right)?.[1] ?? '0';
  t.ok(BigInt(uniqueid) > 2n ** 53n, `the recorded uniqueid ${uniqueid} is beyond 2^53`);
  const { check } = await setup(t, (call) => {
    const [nick, password] = call.params as string[];
    const body = nick === 'alice' ? (password === 's3cret-pass' ? bodies.right : bodies.wrong) : bodies.unknown;
    // The recorded id was the recorder's: the answer names the request it answers.
    return { status: 200, text: body.replace('"id":"capture"', `"id":${JSON.stringify(call.id)}`) };
  });
  t.same(await check('alice', 's3cret-pass'), { valid: true, account: 'alice' }, 'the account, and nothing of the id');
  t.same(await check('alice', 'wrong-pass'), { valid: false, reason: null }, 'a wrong password: invalid');
  t.same(await check('nosuchaccount', 'whatever'), { valid: false, reason: null }, 'an unknown account: invalid');
});
