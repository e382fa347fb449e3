/**
 * The SASL backend against a scripted IRC server on a free port: every SASL
 * result numeric, the CAP negotiation variants, and the ways a connection can
 * fail, each mapped to valid, invalid or unavailable.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { ServiceUnavailableError } from '../../../plugins/nickserv/backends/backend.js';
import {
  NO_SASL_MESSAGE,
  parseLine,
  plainResponseLines,
  saslBackend,
} from '../../../plugins/nickserv/backends/sasl.js';

interface Session {
  /** Lines the checker sent, in order. */
  lines: string[];
  /** Resolves when the checker's connection is closed. */
  closed: Promise<void>;
}

type Reply = (...lines: string[]) => void;
type Script = (line: string, reply: Reply, session: Session, socket: net.Socket) => void;

async function fakeIrc(t: Test, script: Script): Promise<{ port: number; sessions: Session[] }> {
  const sessions: Session[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let closed!: () => void;
    const session: Session = { lines: [], closed: new Promise((resolve) => (closed = resolve)) };
    sessions.push(session);
    socket.on('close', () => {
      sockets.delete(socket);
      closed();
    });
    socket.on('error', () => undefined);
    const reply: Reply = (...lines) => {
      if (socket.writable) socket.write(lines.map((line) => `${line}\r\n`).join(''));
    };
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        session.lines.push(line);
        script(line, reply, session, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, sessions };
}

interface SaslScript {
  /** The CAP LS reply lines (after `:irc.test CAP * LS `). */
  capLs?: string[];
  /** Lines to answer the complete PLAIN response with. */
  verdict?: (authcid: string, password: string) => string[];
  /** Lines to answer AUTHENTICATE PLAIN with, instead of `AUTHENTICATE +`. */
  onMechanism?: string[];
}

const accounts: Record<string, { account: string; password: string }> = {
  alice: { account: 'alice', password: 'right horse battery' },
  alt: { account: 'alice', password: 'right horse battery' },
};

function defaultVerdict(authcid: string, password: string): string[] {
  const entry = accounts[authcid.toLowerCase()];
  if (!entry || entry.password !== password) return [':irc.test 904 * :SASL authentication failed'];
  return [
    `:irc.test 900 * *!*@127.0.0.1 ${entry.account} :You are now logged in as ${entry.account}`,
    ':irc.test 903 * :SASL authentication successful',
  ];
}

/** A server that speaks SASL the way InspIRCd + Atheme do, with knobs for the odd cases. */
function saslScript(options: SaslScript = {}): Script {
  let response = '';
  return (line, reply, _session, socket) => {
    if (line === 'CAP LS 302') {
      reply(
        ...(options.capLs ?? [':multi-prefix sasl=PLAIN,EXTERNAL server-time']).map(
          (caps) => `:irc.test CAP * LS ${caps}`,
        ),
      );
    } else if (line === 'CAP REQ :sasl') {
      reply(':irc.test CAP * ACK :sasl');
    } else if (line === 'AUTHENTICATE PLAIN') {
      reply(...(options.onMechanism ?? ['AUTHENTICATE +']));
    } else if (line.startsWith('AUTHENTICATE ')) {
      const piece = line.slice('AUTHENTICATE '.length);
      if (piece !== '+') response += piece;
      if (piece.length < 400) {
        const [, authcid = '', password = ''] = Buffer.from(response, 'base64').toString('utf8').split('\0');
        reply(...(options.verdict ?? defaultVerdict)(authcid, password));
      }
    } else if (line.startsWith('QUIT')) {
      reply('ERROR :Closing link: (127.0.0.1) [Quit]');
      socket.end();
    }
  };
}

const signal = new AbortController().signal;

function backend(port: number, timeoutMs = 2000) {
  return saslBackend({ host: '127.0.0.1', port, tls: false, tlsVerify: true, timeoutMs });
}

function check(
  port: number,
  nick: string,
  password: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
) {
  return backend(port, options.timeoutMs).check({
    nick,
    password,
    sourceIp: '127.0.0.1',
    signal: options.signal ?? signal,
  });
}

t.test('parseLine reads tags, source, middle and trailing parameters', async (t) => {
  t.same(parseLine('@time=x :irc.test 900 * a!b@c alice :You are now logged in'), {
    command: '900',
    params: ['*', 'a!b@c', 'alice', 'You are now logged in'],
  });
  t.same(parseLine('AUTHENTICATE +'), { command: 'AUTHENTICATE', params: ['+'] });
  t.same(parseLine(':irc.test CAP * LS :'), { command: 'CAP', params: ['*', 'LS', ''] });
  t.same(parseLine('ping :x y'), { command: 'PING', params: ['x y'] });
  t.equal(parseLine(''), null);
});

t.test('the PLAIN response is split into 400-byte pieces, with + after an exact multiple', async (t) => {
  t.same(plainResponseLines('alice', 'pw'), [`AUTHENTICATE ${Buffer.from('\0alice\0pw').toString('base64')}`]);
  // "\0a\0" + 297 bytes = 300 bytes = exactly 400 base64 characters.
  const exact = plainResponseLines('a', 'x'.repeat(297));
  t.equal(exact.length, 2);
  t.equal(exact[0]!.length, 'AUTHENTICATE '.length + 400);
  t.equal(exact[1], 'AUTHENTICATE +');
  const long = plainResponseLines('alice', 'y'.repeat(1000));
  t.ok(
    long.every((line) => line.length <= 'AUTHENTICATE '.length + 400),
    'no piece over 400',
  );
  const joined = long.map((line) => line.slice('AUTHENTICATE '.length)).join('');
  t.equal(Buffer.from(joined, 'base64').toString(), `\0alice\0${'y'.repeat(1000)}`);
});

t.test('903 is valid with the account from 900; the connection never registers', async (t) => {
  const { port, sessions } = await fakeIrc(t, saslScript());
  t.same(await check(port, 'alice', 'right horse battery'), { valid: true, account: 'alice' });
  t.same(
    await check(port, 'alt', 'right horse battery'),
    { valid: true, account: 'alice' },
    'a grouped nick names its account',
  );
  await sessions[0]!.closed;
  const sent = sessions[0]!.lines;
  t.same(sent.slice(0, 3), ['CAP LS 302', 'CAP REQ :sasl', 'AUTHENTICATE PLAIN']);
  t.match(sent.at(-1), /^QUIT/, 'it quits on the result');
  t.notOk(
    sent.some((line) => /^(NICK|USER|CAP END)\b/.test(line)),
    'never NICK, USER or CAP END, so registration cannot complete',
  );
});

t.test('904 is invalid, for a wrong password and an unknown nick alike', async (t) => {
  const { port } = await fakeIrc(t, saslScript());
  t.same(await check(port, 'alice', 'wrong'), { valid: false, reason: null });
  t.same(await check(port, 'nobody', 'whatever'), { valid: false, reason: null });
});

t.test('a long password travels in pieces and still gets its answer', async (t) => {
  const password = 'z'.repeat(700);
  accounts.long = { account: 'long', password };
  t.teardown(() => delete accounts.long);
  const { port, sessions } = await fakeIrc(t, saslScript());
  t.same(await check(port, 'long', password), { valid: true, account: 'long' });
  t.ok(
    sessions[0]!.lines.filter((line) => line.startsWith('AUTHENTICATE ') && line !== 'AUTHENTICATE PLAIN').length > 1,
  );
});

t.test('a multi-line CAP LS is read to its end', async (t) => {
  const { port } = await fakeIrc(t, saslScript({ capLs: ['* :multi-prefix away-notify', ':sasl server-time'] }));
  t.same(await check(port, 'alice', 'right horse battery'), { valid: true, account: 'alice' });
});

t.test('PING before the result is answered', async (t) => {
  const script = saslScript();
  const { port, sessions } = await fakeIrc(t, (line, reply, session, socket) => {
    if (line === 'CAP LS 302') reply('PING :cookie');
    script(line, reply, session, socket);
  });
  t.same(await check(port, 'alice', 'right horse battery'), { valid: true, account: 'alice' });
  t.ok(sessions[0]!.lines.includes('PONG :cookie'));
});

/** Every way the server can fail to judge the credentials, and what the error must say. */
const unavailableCases: [string, SaslScript | Script, RegExp][] = [
  ['no sasl capability (InspIRCd while services are down)', { capLs: [':multi-prefix server-time'] }, /offers no SASL/],
  ['sasl without PLAIN', { capLs: [':sasl=EXTERNAL'] }, /does not accept SASL PLAIN \(it offers: EXTERNAL\)/],
  [
    '908 then 904: PLAIN not supported',
    {
      onMechanism: [
        ':irc.test 908 * EXTERNAL :are available SASL mechanisms',
        ':irc.test 904 * :SASL authentication failed',
      ],
    },
    /does not accept SASL PLAIN/,
  ],
  ['902 ERR_NICKLOCKED', { verdict: () => [':irc.test 902 * :You must use a nick assigned to you'] }, /902/],
  ['905 ERR_SASLTOOLONG', { verdict: () => [':irc.test 905 * :SASL message too long'] }, /905/],
  ['906 ERR_SASLABORTED', { verdict: () => [':irc.test 906 * :SASL authentication aborted'] }, /906/],
  ['907 ERR_SASLALREADY', { verdict: () => [':irc.test 907 * :You have already authenticated'] }, /907/],
  [
    '465 banned',
    (line, reply) => line === 'CAP LS 302' && reply(':irc.test 465 * :You are banned'),
    /bans connections/,
  ],
  [
    '421 no CAP',
    (line, reply) => line === 'CAP LS 302' && reply(':irc.test 421 * CAP :Unknown command'),
    /does not know CAP/,
  ],
  [
    'CAP NAK',
    (line, reply) => {
      if (line === 'CAP LS 302') reply(':irc.test CAP * LS :sasl');
      if (line === 'CAP REQ :sasl') reply(':irc.test CAP * NAK :sasl');
    },
    /CAP NAK/,
  ],
  [
    'ERROR',
    (line, reply) => line === 'CAP LS 302' && reply('ERROR :Closing link: (127.0.0.1) [Too many connections]'),
    /closed the connection: Closing link/,
  ],
  [
    'the server hangs up',
    (line, _reply, _session, socket) => line === 'CAP LS 302' && socket.destroy(),
    /closed the connection before the SASL result/,
  ],
  ['the server says nothing', () => undefined, /no SASL result from the IRC server within 300 ms/],
];

for (const [name, behaviour, message] of unavailableCases) {
  t.test(`unavailable, never invalid: ${name}`, async (t) => {
    const { port, sessions } = await fakeIrc(t, typeof behaviour === 'function' ? behaviour : saslScript(behaviour));
    const password = 'right horse battery';
    const error = await check(port, 'alice', password, { timeoutMs: 300 }).then(
      (outcome) => t.fail(`expected unavailable, got ${JSON.stringify(outcome)}`),
      (error: unknown) => error,
    );
    t.type(error, ServiceUnavailableError);
    t.match((error as Error).message, message);
    t.notMatch((error as Error).message, password, 'the password is not in the message');
    await sessions[0]?.closed;
  });
}

t.test('no sasl in CAP LS: whether NickServ is on the network says why', async (t) => {
  const { port, sessions } = await fakeIrc(t, saslScript({ capLs: [':multi-prefix away-notify'] }));
  const withPresence = (online: boolean) =>
    saslBackend({
      host: '127.0.0.1',
      port,
      tls: false,
      tlsVerify: true,
      timeoutMs: 2000,
      servicesOnline: async () => online,
    }).check({ nick: 'alice', password: 'pw', sourceIp: '127.0.0.1', signal });
  // ircd-hybrid and ngircd have no SASL; their services answer WHOIS all the same.
  await t.rejects(withPresence(true), {
    name: 'ServiceUnavailableError',
    message:
      'this IRC server offers no SASL; choose the atheme-jsonrpc or anope-xmlrpc backend (plugins.nickserv.backend)',
  });
  // InspIRCd withdraws the cap while services are away.
  await t.rejects(withPresence(false), { name: 'ServiceUnavailableError', message: /nickname service is down/ });
  for (const session of sessions) {
    await session.closed;
    t.notOk(
      session.lines.some((line) => line.startsWith('AUTHENTICATE')),
      'nothing is sent after CAP LS but QUIT',
    );
  }
});

t.test('no sasl in CAP LS where the server profile says the software has none: nobody is asked why', async (t) => {
  const { port, sessions } = await fakeIrc(t, saslScript({ capLs: [':multi-prefix away-notify'] }));
  let asked = 0;
  const check = (serverSasl: boolean | null) =>
    saslBackend({
      host: '127.0.0.1',
      port,
      tls: false,
      tlsVerify: true,
      timeoutMs: 2000,
      servicesOnline: async () => {
        asked++;
        return false;
      },
      serverSasl: () => serverSasl,
    }).check({ nick: 'alice', password: 'pw', sourceIp: '127.0.0.1', signal });
  // The services are away, yet the software (ircd-hybrid, ngircd) would have no SASL with them back either.
  await t.rejects(check(false), { name: 'ServiceUnavailableError', message: NO_SASL_MESSAGE });
  t.equal(asked, 0, 'the services were not looked for');
  // Software with SASL whose CAP is gone: the services' presence says why, as without a profile.
  await t.rejects(check(true), { name: 'ServiceUnavailableError', message: /nickname service is down/ });
  await t.rejects(check(null), { name: 'ServiceUnavailableError', message: /nickname service is down/ });
  t.equal(asked, 2);
  for (const session of sessions) await session.closed;
});

t.test('a refused connection is unavailable', async (t) => {
  const { port } = await fakeIrc(t, () => undefined);
  const free = net.createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const closedPort = (free.address() as AddressInfo).port;
  await new Promise((resolve) => free.close(resolve));
  t.not(closedPort, port);
  await t.rejects(check(closedPort, 'alice', 'pw'), { name: 'ServiceUnavailableError', message: /ECONNREFUSED/ });
});

t.test('stopping the plugin cancels a running check at once', async (t) => {
  const { port, sessions } = await fakeIrc(t, () => undefined);
  const stopping = new AbortController();
  const started = Date.now();
  const pending = check(port, 'alice', 'pw', { timeoutMs: 10_000, signal: stopping.signal });
  while (sessions.length === 0) await new Promise((resolve) => setImmediate(resolve));
  stopping.abort();
  await t.rejects(pending, { name: 'ServiceUnavailableError', message: /cancelled/ });
  t.ok(Date.now() - started < 5000, 'well before the timeout');
  await sessions[0]!.closed;
  await t.rejects(
    check(port, 'alice', 'pw', { signal: stopping.signal }),
    { message: /cancelled/ },
    'and refuses new ones',
  );
});
