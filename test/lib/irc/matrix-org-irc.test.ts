/**
 * The matrix-org-irc adapter against a scripted server on a real socket:
 * registration and SASL through the library, the capabilities asked for, lines
 * as the server sent them, CTCP VERSION, nick collisions, reconnecting, the
 * keepalive, and a library that throws.
 */
import IrcFramework from 'irc-framework';
import t, { type Test } from 'tap';
import { parseConfig } from '../../../lib/config.js';
import { installBotPolicy } from '../../../lib/irc/bot-policy.js';
import { createTransport } from '../../../lib/irc/create-transport.js';
import { IrcFrameworkTransport, toIrcMessage } from '../../../lib/irc/irc-framework.js';
import { MatrixIrcTransport, type Keepalive } from '../../../lib/irc/matrix-org-irc.js';
import type { IrcEventName, IrcMessage, IrcTransport } from '../../../lib/irc/port.js';
import type { TransportOptions } from '../../../lib/irc/transport.js';
import { createLogger } from '../../../lib/logger.js';
import { fakeOptions } from '../../../testing/fake-irc.js';
import { ScriptedIrcServer, type ScriptedServerOptions } from './fixtures/scripted-server.js';
import { TEST_CERT, TEST_KEY } from './fixtures/self-signed.js';

const OFFERED =
  'account-notify account-tag away-notify batch cap-notify chghost echo-message extended-join invite-notify ' +
  'message-tags multi-prefix sasl=PLAIN server-time userhost-in-names';

function next(transport: IrcTransport, event: IrcEventName, timeoutMs = 5000): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = transport.on(event, (...args: unknown[]) => {
      clearTimeout(timer);
      off();
      resolve(args);
    });
  });
}

interface Started {
  server: ScriptedIrcServer;
  transport: MatrixIrcTransport;
  logs: string[];
}

/** A scripted server and a transport connected to it, ready; both closed at the end of the test. */
async function start(
  t: Test,
  serverOptions: ScriptedServerOptions = {},
  options: Partial<TransportOptions> = {},
  keepalive?: Keepalive,
  waitForReady = true,
): Promise<Started> {
  const server = await ScriptedIrcServer.start({ caps: OFFERED, ...serverOptions });
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', sink: (line) => logs.push(line) });
  const transport = new MatrixIrcTransport({ ...fakeOptions, port: server.port, ...options }, logger, keepalive);
  t.teardown(async () => {
    await transport.quit('test over');
    await server.close();
  });
  const ready = waitForReady ? next(transport, 'ready') : null;
  transport.connect();
  await ready;
  return { server, transport, logs };
}

/** Two PING round trips: whatever the client wrote before them has reached the server. */
async function settle(transport: IrcTransport): Promise<void> {
  for (const token of ['settle-1', 'settle-2']) {
    await transport.request({ send: ['PING', token], reply: () => false, end: (m) => m.command === 'PONG' });
  }
}

t.test('registers through the library with SASL, asking only for capabilities without tags', async (t) => {
  const { server, transport } = await start(
    t,
    { account: { account: 'databot', password: 'secret-pw' } },
    { sasl: { account: 'databot', password: 'secret-pw' }, username: 'ident' },
  );
  const connection = await server.connection(0);
  t.same(
    connection.matching(/^CAP REQ/),
    [
      'CAP REQ :account-notify away-notify cap-notify chghost extended-join invite-notify multi-prefix userhost-in-names',
      'CAP REQ : sasl',
    ],
    'our request first, then the library asks for sasl',
  );
  t.equal(connection.saslPayload, 'databot\0databot\0secret-pw', 'SASL PLAIN with the account');
  t.equal(connection.user, 'databot', 'the library sends the SASL account as the ident');
  t.equal(connection.matching(/^CAP END/).length, 1, 'negotiation ends once');
  t.equal(transport.state.account, 'databot', 'RPL_LOGGEDIN seen');
  t.ok(transport.state.registered);
  t.equal(transport.state.nick, 'DataBot');
  for (const cap of ['sasl', 'extended-join', 'account-notify', 'away-notify', 'chghost', 'multi-prefix']) {
    t.ok(transport.state.caps.has(cap), `${cap} acknowledged`);
  }
  for (const cap of ['account-tag', 'server-time', 'message-tags', 'batch', 'echo-message']) {
    t.notOk(transport.state.caps.has(cap), `${cap} not requested: the library cannot read tags`);
  }
});

t.test('without SASL the ident is the configured username and only our CAP REQ is sent', async (t) => {
  const { server, transport } = await start(t, {}, { username: 'dataident' });
  const connection = await server.connection(0);
  t.equal(connection.user, 'dataident');
  t.equal(connection.matching(/^CAP REQ/).length, 1);
  await settle(transport);
  t.equal(connection.matching(/^CAP END/).length, 1, 'the library does not end negotiation again on our ACK');
  t.equal(transport.state.account, null);
});

t.test('lines reach plugins as the server sent them, with the local time', async (t) => {
  const { server, transport } = await start(t);
  const connection = await server.connection(0);
  const lines = [
    ':irc.test 351 DataBot InspIRCd-3. irc.test :',
    ':alice!ali@host.example PRIVMSG #Chan :Hello World',
    ':alice!ali@host.example TOPIC #Chan :',
    ':W\u00ebird[n]!u@h NOTICE DataBot :odd nick',
    ':irc.test 322 DataBot #Chan 3 :[+nt] the topic',
    ':bob!b@h JOIN #Chan bobacct :Bob Real',
    ':irc.test 401 DataBot nobody :No such nick/channel',
    ':irc.test 005 DataBot CASEMAPPING=ascii :are supported by this server',
  ];
  const received: IrcMessage[] = [];
  const done = new Promise<void>((resolve) => {
    transport.on('message', (message) => {
      if (message.command === 'PING' || message.command === 'PONG') return;
      received.push(message);
      if (received.length === lines.length) resolve();
    });
  });
  const before = Date.now();
  connection.send(...lines);
  await done;
  lines.forEach((line, index) => {
    const expected = toIrcMessage(IrcFramework.ircLineParser(line));
    const { time, ...rest } = received[index]!;
    const { time: _ignored, ...expectedRest } = expected;
    t.same(rest, expectedRest, `as irc-framework reads it: ${line}`);
    t.ok(time.getTime() >= before - 1000 && time.getTime() <= Date.now() + 1000, 'the local time');
  });
  t.same(received[0]!.params, ['DataBot', 'InspIRCd-3.', 'irc.test', ''], 'an empty last parameter is kept');
  t.equal(received[1]!.params[0], '#Chan', 'channel names keep their case');
  t.equal(received[3]!.source?.nick, 'W\u00ebird[n]', 'any nick is read from the prefix');
  t.equal(transport.state.casemapping, 'ascii', 'the session state follows the lines');
});

t.test('answers CTCP VERSION with the configured version, and CTCP PING once: the library does not', async (t) => {
  const { server, transport } = await start(t);
  installBotPolicy(transport, { version: 'irc-network-data 9.9' }, createLogger({ sink: () => undefined }));
  const connection = await server.connection(0);
  const from = connection.lines.length;
  connection.send(':alice!a@h PRIVMSG DataBot :\x01VERSION\x01');
  t.equal(await connection.waitFor(/^NOTICE alice /, from), 'NOTICE alice :\x01VERSION irc-network-data 9.9\x01');
  const channelFrom = connection.lines.length;
  connection.send(':carol!c@h PRIVMSG #chan :\x01version\x01');
  t.equal(
    await connection.waitFor(/^NOTICE carol /, channelFrom),
    'NOTICE carol :\x01VERSION irc-network-data 9.9\x01',
    'also when asked in a channel, as irc-framework does',
  );
  const pingFrom = connection.lines.length;
  connection.send(':bob!b@h PRIVMSG DataBot :\x01PING 12345\x01');
  t.equal(await connection.waitFor(/^NOTICE bob /, pingFrom), 'NOTICE bob :\x01PING 12345\x01');
  await settle(transport);
  t.equal(connection.matching(/^NOTICE bob /).length, 1, 'answered once');
});

t.test('a nick taken at registration: the transport registers with another, the library never picks one', async (t) => {
  const { server, transport } = await start(t, { takenNicks: ['DataBot', 'Taken'] });
  const connection = await server.connection(0);
  t.equal(transport.state.nick, 'DataBot_', "registered under the transport's next nick");
  t.same(
    connection.lines.filter((line) => line.startsWith('NICK')),
    ['NICK DataBot', 'NICK DataBot_'],
    "the library's own choice (DataBot1) never sent",
  );
  const from = connection.lines.length;
  transport.send('NICK', 'Taken');
  await settle(transport);
  t.same(
    connection.lines.slice(from).filter((line) => line.startsWith('NICK')),
    ['NICK Taken'],
    'no NICK of the library after the 433',
  );
  t.equal(transport.state.nick, 'DataBot_');
});

t.test('fallback nicks: nine characters at most, and five tries before the watchdog takes over', async (t) => {
  const long = 'LongNickBot';
  const taken = [long, 'LongNick_', 'LongNic__'];
  const { server, transport } = await start(t, { takenNicks: taken }, { nick: long });
  const connection = await server.connection(0);
  const sent = connection.lines.filter((line) => line.startsWith('NICK')).map((line) => line.slice(5));
  t.same(sent.slice(0, 3), [long, 'LongNick_', 'LongNic__'], 'the configured nick, then two within nine characters');
  t.match(sent[3], /^LongN\d{4}$/, 'then five characters and four digits');
  t.equal(transport.state.nick, sent[3], 'registered under it');

  // Every nick refused: five tries, then nothing more until the registration watchdog reconnects.
  const refusing = await ScriptedIrcServer.start({ caps: OFFERED, takenNicks: () => true });
  t.teardown(() => refusing.close());
  const logs: string[] = [];
  const stuck = new MatrixIrcTransport(
    { ...fakeOptions, port: refusing.port, registrationTimeoutMs: 60_000 },
    createLogger({ level: 'debug', sink: (line) => logs.push(line) }),
  );
  t.teardown(() => stuck.quit('test over'));
  stuck.connect();
  const refused = await refusing.connection(0);
  const deadline = Date.now() + 5000;
  while (!logs.some((line) => line.includes('no nick could be registered')) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(refused.lines.filter((line) => line.startsWith('NICK')).length, 6, 'the configured nick and five others');
  t.ok(
    logs.some((line) =>
      /ERROR .*no nick could be registered; trying again with the next connection .*tries=5/.test(line),
    ),
    'then an error in the log, once',
  );
});

t.test('an error numeric reaches plugins and leaves the connection up', async (t) => {
  const { server, transport } = await start(t);
  const connection = await server.connection(0);
  const seen = new Promise<IrcMessage>((resolve) => {
    transport.on('message', (message) => {
      if (message.command === '482') resolve(message);
    });
  });
  connection.send(":irc.test 482 DataBot #chan :You're not channel operator");
  t.equal((await seen).params[1], '#chan');
  await settle(transport);
  t.ok(transport.state.connected);
});

t.test('reconnects after the server drops the connection, and is ready again', async (t) => {
  const { server, transport, logs } = await start(t);
  const first = await server.connection(0);
  const disconnected = next(transport, 'disconnected');
  const readyAgain = next(transport, 'ready');
  first.drop();
  t.match((await disconnected)[0], /ECONNRESET|closed/, 'disconnected, with the reason');
  t.notOk(transport.state.connected);
  const second = await server.connection(1);
  await readyAgain;
  t.ok(second.registered, 'registered on a new connection');
  t.ok(transport.state.registered);
  t.ok(
    logs.some((line) => /reconnecting/.test(line)),
    'the backoff of the transport reconnected',
  );
});

t.test('quit sends QUIT with the message and does not reconnect', async (t) => {
  const { server, transport } = await start(t);
  const connection = await server.connection(0);
  const disconnected = next(transport, 'disconnected');
  await transport.quit('Maintenance');
  t.ok(
    connection.lines.some((line) => /^QUIT :?Maintenance$/.test(line)),
    'QUIT carries the message',
  );
  await disconnected;
  t.notOk(transport.state.connected);
  // The reconnect backoff here is at most 50 ms: four times that passes without a new connection.
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(server.connections.length, 1, 'no new connection');
});

t.test('a server that refuses sasl: negotiation ends, registration goes on without an account', async (t) => {
  const { server, transport, logs } = await start(
    t,
    { refuse: ['sasl'], caps: 'sasl=PLAIN extended-join' },
    { sasl: { account: 'databot', password: 'secret-pw' } },
  );
  const connection = await server.connection(0);
  t.ok(connection.lines.includes('CAP END'), 'CAP END after the NAK');
  t.equal(transport.state.account, null, 'registered without an account (the host then IDENTIFYs: bot-policy)');
  t.ok(transport.state.registered);
  t.notOk(logs.join('\n').includes('secret-pw'), 'the password is never logged');
});

t.test('a throw inside the library drops the connection, not the process', async (t) => {
  // The library throws when the server offers SASL but not PLAIN.
  const { server, transport, logs } = await start(
    t,
    { caps: 'sasl=EXTERNAL' },
    { sasl: { account: 'databot', password: 'secret-pw' } },
    undefined,
    false,
  );
  const first = await server.connection(0);
  await first.whenClosed();
  await server.connection(1);
  t.ok(
    logs.some((line) => /matrix-org-irc failed on a line/.test(line)),
    'the failure is logged',
  );
  t.notOk(transport.state.registered);
});

t.test('keepalive: a silent server gets a PING, then the connection is dropped and made again', async (t) => {
  const { server, transport } = await start(t, {}, {}, { pingAfterMs: 100, deadAfterMs: 400 });
  const first = await server.connection(0);
  const from = first.lines.length;
  const disconnected = next(transport, 'disconnected');
  first.silence();
  t.match(await first.waitFor(/^PING /, from), /^PING :keepalive-/, 'a PING after silence');
  t.match((await disconnected)[0], /ping timeout/, 'dropped when nothing came back');
  await server.connection(1);
});

t.test('TLS: tls_verify decides whether an untrusted certificate is accepted', async (t) => {
  const { server, transport } = await start(
    t,
    { tls: { key: TEST_KEY, cert: TEST_CERT } },
    { tls: true, tlsVerify: false },
  );
  t.ok((await server.connection(0)).registered, 'registered over TLS without verifying (self-signed, name differs)');
  t.ok(transport.state.registered);

  const { server: strict, logs } = await start(
    t,
    { tls: { key: TEST_KEY, cert: TEST_CERT } },
    { tls: true, tlsVerify: true },
    undefined,
    false,
  );
  const refusals = (): number => logs.filter((line) => /socket error.*self[- ]signed/i.test(line)).length;
  const deadline = Date.now() + 5000;
  while (refusals() < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.ok(refusals() >= 2, 'the certificate is refused, and again after a reconnect');
  t.equal(strict.connections.length, 0, 'no connection gets past the handshake');
});

t.test('createTransport picks the adapter named by irc.client', async (t) => {
  const logger = createLogger({ sink: () => undefined });
  const config = (client?: string) =>
    parseConfig(
      JSON.stringify({ irc: { host: '127.0.0.1', nick: 'DataBot', ...(client ? { client } : {}) } }),
      'test',
      {},
    );
  t.type(await createTransport(config(), logger), IrcFrameworkTransport, 'irc-framework by default');
  t.type(await createTransport(config('matrix-org-irc'), logger), MatrixIrcTransport);
});
