/**
 * Handing the host a client that the embedding bot connected itself: the
 * session state is asked for again (CAP LIST, VERSION for ISUPPORT, WHOIS of
 * itself), `ready` follows, a new client of the owner's can be handed over,
 * and quitting lets go of the client without closing it.
 */
import IrcFramework from 'irc-framework';
import { Client } from 'matrix-org-irc';
import t, { type Test } from 'tap';
import { installBotPolicy } from '../../../lib/irc/bot-policy.js';
import { IrcFrameworkTransport } from '../../../lib/irc/irc-framework.js';
import { MatrixIrcTransport } from '../../../lib/irc/matrix-org-irc.js';
import type { IrcEventName, IrcMessage, IrcTransport } from '../../../lib/irc/port.js';
import { createLogger } from '../../../lib/logger.js';
import { fakeOptions } from '../../../testing/fake-irc.js';
import { ScriptedIrcServer, SERVER_NAME, type ScriptedConnection } from './fixtures/scripted-server.js';

function next(transport: IrcTransport, event: IrcEventName, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = transport.on(event, () => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** A server that answers VERSION with ISUPPORT and WHOIS of the client with an account and operator status. */
async function server(t: Test): Promise<ScriptedIrcServer> {
  const scripted = await ScriptedIrcServer.start({
    caps: 'account-notify extended-join',
    answer: (line, connection) => {
      const nick = connection.nick;
      if (line === 'VERSION') {
        return [
          `:${SERVER_NAME} 351 ${nick} test-1.0 ${SERVER_NAME} :`,
          `:${SERVER_NAME} 005 ${nick} CASEMAPPING=ascii PREFIX=(qov)~@+ BOT=B WHOX :are supported by this server`,
        ];
      }
      if (line === `WHOIS ${nick}`) {
        return [
          `:${SERVER_NAME} 311 ${nick} ${nick} ${connection.user} 127.0.0.1 * :Embedding bot`,
          `:${SERVER_NAME} 312 ${nick} ${nick} ${SERVER_NAME} :The test server`,
          `:${SERVER_NAME} 313 ${nick} ${nick} :is an IRC operator`,
          `:${SERVER_NAME} 330 ${nick} ${nick} hostacct :is logged in as`,
          `:${SERVER_NAME} 318 ${nick} ${nick} :End of /WHOIS list.`,
        ];
      }
      return undefined;
    },
  });
  t.teardown(() => scripted.close());
  return scripted;
}

const logger = createLogger({ sink: () => undefined });

/** What both libraries must give after attaching. */
async function checkAdopted(t: Test, transport: IrcTransport, connection: ScriptedConnection, nick: string) {
  t.ok(transport.state.connected);
  t.ok(transport.state.registered);
  t.equal(transport.state.nick, nick, 'the nick of the client');
  t.equal(transport.state.server, SERVER_NAME, 'the server, from WHOIS');
  t.equal(transport.state.account, 'hostacct', 'the account, from WHOIS');
  t.ok(transport.state.isOperator, 'operator status, from WHOIS');
  t.equal(transport.state.casemapping, 'ascii', 'ISUPPORT, sent again after VERSION');
  t.same(
    transport.state.prefixes.map((prefix) => prefix.mode),
    ['q', 'o', 'v'],
  );
  t.ok(transport.state.caps.has('extended-join'), 'capabilities, from CAP LIST');
  t.match(
    transport.state.profile,
    { version: 'test-1.0', whox: true, botMode: 'B' },
    'the server profile, from the VERSION answer and the ISUPPORT sent again',
  );
  await connection.waitFor(new RegExp(`^MODE ${nick} \\+B$`));
  t.pass('bot mode set, as after a registration of its own');
  const seen = new Promise<IrcMessage>((resolve) => transport.on('message', resolve));
  connection.send(`:alice!a@h PRIVMSG ${nick} :hello`);
  t.equal((await seen).params[1], 'hello', 'lines reach the port');
}

t.test('a registered matrix-org-irc client is adopted; quitting lets go of it', async (t) => {
  const scripted = await server(t);
  const client = new Client('127.0.0.1', 'HostBot', { port: scripted.port, autoConnect: false, retryCount: 0 });
  client.on('error', () => undefined);
  t.throws(
    () => MatrixIrcTransport.attach(client, fakeOptions, logger),
    /not registered yet/,
    'refused before the client is registered',
  );
  const registered = new Promise<void>((resolve) => client.once('registered', resolve));
  client.connect();
  await registered;
  const connection = await scripted.connection(0);
  const transport = MatrixIrcTransport.attach(client, fakeOptions, logger);
  // As the host installs it: with the client attached, CTCP is left to its owner.
  installBotPolicy(transport, { version: 'ours', attached: () => transport.attached }, logger);
  t.notOk(transport.state.connected, 'not connected until the host calls connect()');
  const ready = next(transport, 'ready');
  transport.connect();
  await ready;
  await checkAdopted(t, transport, connection, 'HostBot');

  const asked = new Promise<void>((resolve) => transport.on('message', (m) => m.command === 'PRIVMSG' && resolve()));
  connection.send(':alice!a@h PRIVMSG HostBot :\x01VERSION\x01');
  await asked;
  // Anything written in answer was written before this PING, so the server has it when the PONG is back.
  await transport.request({ send: ['PING', 'after-version'], reply: () => false, end: (m) => m.command === 'PONG' });
  t.equal(connection.matching(/^NOTICE alice :\x01VERSION/).length, 0, 'CTCP VERSION is left to the client owner');

  const disconnected = next(transport, 'disconnected');
  await transport.quit('not sent');
  await disconnected;
  t.equal(connection.matching(/^QUIT/).length, 0, 'no QUIT: the client is the owner’s');
  let heard = 0;
  transport.on('message', () => heard++);
  const pong = new Promise<void>((resolve) => client.once('pong', () => resolve()));
  await client.send('PING', 'still-here');
  await pong;
  t.equal(heard, 0, 'the transport no longer listens');
  t.notOk(connection.closed, 'the client is still connected');
  client.disconnect('bye');
});

t.test('an attached matrix-org-irc transport follows the owner to a new client', async (t) => {
  const scripted = await server(t);
  const connectClient = async (nick: string): Promise<Client> => {
    const client = new Client('127.0.0.1', nick, { port: scripted.port, autoConnect: false, retryCount: 0 });
    client.on('error', () => undefined);
    client.on('netError', () => undefined);
    const registered = new Promise<void>((resolve) => client.once('registered', resolve));
    client.connect();
    await registered;
    return client;
  };
  const first = await connectClient('HostBot');
  const transport = MatrixIrcTransport.attach(first, fakeOptions, logger);
  t.throws(
    () => new MatrixIrcTransport(fakeOptions, logger).replaceClient(first),
    /opens its own connections/,
    'only for attached transports',
  );
  const ready = next(transport, 'ready');
  transport.connect();
  await ready;
  const disconnected = next(transport, 'disconnected');
  (await scripted.connection(0)).drop();
  await disconnected;
  t.notOk(transport.state.connected, 'disconnected with the client');
  t.equal(scripted.connections.length, 1, 'the transport opens no connection of its own');

  const second = await connectClient('HostBot2');
  t.teardown(() => {
    void transport.quit('test over');
    second.disconnect();
  });
  const readyAgain = next(transport, 'ready');
  transport.replaceClient(second);
  await readyAgain;
  t.equal(transport.state.nick, 'HostBot2', 'the state of the new client');
  t.equal(transport.state.account, 'hostacct');
  const seen = new Promise<IrcMessage>((resolve) => transport.on('message', resolve));
  (await scripted.connection(1)).send(':alice!a@h PRIVMSG HostBot2 :hello again');
  t.equal((await seen).params[1], 'hello again', 'lines from the new client');
});

t.test('an irc-framework client attached in its registered event, as the docs say, is adopted', async (t) => {
  const scripted = await server(t);
  const client = new IrcFramework.Client();
  t.throws(() => IrcFrameworkTransport.attach(client, fakeOptions, logger), /not connected/, 'refused before connect');
  const attached = new Promise<{ transport: IrcFrameworkTransport; ready: Promise<void>; registered: unknown }>(
    (resolve) => {
      client.on('registered', () => {
        // Synchronously in the event, while the library still has the connection unregistered.
        const registered = client.connection.registered;
        const transport = IrcFrameworkTransport.attach(client, fakeOptions, logger);
        const ready = next(transport, 'ready');
        transport.connect();
        resolve({ transport, ready, registered });
      });
    },
  );
  client.connect({ host: '127.0.0.1', port: scripted.port, nick: 'FwBot', auto_reconnect: false });
  const { transport, ready, registered } = await attached;
  t.equal(registered, false, 'irc-framework had not marked the connection registered in its event');
  await ready;
  await checkAdopted(t, transport, await scripted.connection(0), 'FwBot');
  await transport.quit('not sent');
  client.quit('bye');
});

t.test('a registered irc-framework client is adopted; quitting lets go of it', async (t) => {
  const scripted = await server(t);
  const client = new IrcFramework.Client();
  // The library's `connected` event follows its marking the connection registered.
  const registered = new Promise<void>((resolve) => client.on('connected', () => resolve()));
  client.connect({ host: '127.0.0.1', port: scripted.port, nick: 'FwBot', auto_reconnect: false });
  await registered;
  t.not(client.connection.registered, false, 'registered before the handover');
  const connection = await scripted.connection(0);
  const transport = IrcFrameworkTransport.attach(client, fakeOptions, logger);
  const ready = next(transport, 'ready');
  transport.connect();
  await ready;
  await checkAdopted(t, transport, connection, 'FwBot');

  await transport.quit('not sent');
  t.equal(connection.matching(/^QUIT/).length, 0, 'no QUIT');
  t.ok(client.connected, 'the client is still connected');
  let heard = 0;
  transport.on('message', () => heard++);
  const pong = new Promise<void>((resolve) => client.on('pong', () => resolve()));
  client.raw('PING :still-here');
  await pong;
  t.equal(heard, 0, 'the transport no longer listens');
  client.quit('bye');
});
