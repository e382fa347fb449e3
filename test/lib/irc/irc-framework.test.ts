/**
 * What irc-framework itself is handed on the bot's own connection: the bot gets every line, the library only
 * what it needs to keep the connection (registration, PING), not the bulk replies it would cache until their
 * end nor the traffic it would turn into events nobody listens to.
 */
import t from 'tap';
import type IrcFramework from 'irc-framework';
import { IrcFrameworkTransport } from '../../../lib/irc/irc-framework.js';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { createLogger } from '../../../lib/logger.js';
import { fakeOptions } from '../../../testing/fake-irc.js';
import { ScriptedIrcServer } from './fixtures/scripted-server.js';

t.test('the bot gets WHO, LIST and chat lines; the library caches none of them and still answers PING', async (t) => {
  const server = await ScriptedIrcServer.start({ caps: 'multi-prefix' });
  const transport = new IrcFrameworkTransport(
    { ...fakeOptions, port: server.port },
    createLogger({ sink: () => undefined }),
  );
  t.teardown(async () => {
    await transport.quit('test over');
    await server.close();
  });
  const seen: IrcMessage[] = [];
  transport.on('message', (message) => seen.push(message));
  const ready = new Promise<void>((resolve) => transport.on('ready', resolve));
  transport.connect();
  await ready;
  // The library's own events for these lines: each fires only if its handlers were given the line.
  const client = (transport as unknown as { client: IrcFramework.Client }).client;
  const libraryEvents: string[] = [];
  for (const name of ['channel list', 'channel list end', 'wholist', 'privmsg', 'join', 'quit'])
    client.on(name, () => libraryEvents.push(name));
  // Every line the library parses is announced as `raw` first.
  const parsedByLibrary: string[] = [];
  client.on('raw', (event) => {
    const { line, from_server: fromServer } = event as { line: string; from_server: boolean };
    if (fromServer) parsedByLibrary.push(line);
  });

  const connection = await server.connection(0);
  const rows = Array.from({ length: 60 }, (_, index) => `:irc.test 322 DataBot #c${index} 3 :[+nt] topic ${index}`);
  connection.send(
    ':irc.test 321 DataBot Channel :Users Name',
    ...rows,
    ':irc.test 323 DataBot :End of /LIST',
    ':irc.test 354 DataBot 101 #c0 ident host.example irc.test alice H acct :Alice',
    ':irc.test 315 DataBot a* :End of /WHO list.',
    ':bob!b@h JOIN #c0',
    ':bob!b@h PRIVMSG #c0 :hello',
    ':bob!b@h QUIT :bye',
    'PING :still-there',
  );
  await connection.waitFor(/^PONG :?still-there/);
  t.equal(seen.filter((message) => message.command === '322').length, 60, 'the bot got every LIST row');
  for (const command of ['321', '323', '354', '315', 'JOIN', 'PRIVMSG', 'QUIT'])
    t.ok(
      seen.some((message) => message.command === command),
      `the bot got ${command}`,
    );
  t.same(libraryEvents, [], 'the library gathered and announced none of them');
  t.same(parsedByLibrary, ['PING :still-there'], 'nor even parsed them: only the PING went to the library');
});

t.test('rows the library is spared still count as signs of life for its ping timeout', async (t) => {
  const server = await ScriptedIrcServer.start({ caps: 'multi-prefix' });
  const transport = new IrcFrameworkTransport(
    { ...fakeOptions, port: server.port },
    createLogger({ sink: () => undefined }),
    { pingAfterMs: 200, deadAfterMs: 800 },
  );
  t.teardown(async () => {
    await transport.quit('test over');
    await server.close();
  });
  const ready = new Promise<void>((resolve) => transport.on('ready', resolve));
  let disconnectedAt: number | undefined;
  transport.on('disconnected', () => (disconnectedAt ??= Date.now()));
  transport.connect();
  await ready;
  const connection = await server.connection(0);
  // A server holding back its PONGs (a penalty for the bot's big requests) while WHO rows come: 2 s of rows
  // is two and a half ping timeouts of the library.
  connection.silence();
  const started = Date.now();
  for (let row = 0; Date.now() - started < 2000; row++) {
    connection.send(`:irc.test 354 DataBot 101 #c0 ident host${row}.example irc.test u${row} H 0 :User`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(disconnectedAt, undefined, 'still connected while rows come');
  const quiet = Date.now();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (disconnectedAt !== undefined || Date.now() - quiet > 3000) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  t.ok(disconnectedAt !== undefined && disconnectedAt - quiet < 2500, 'a server that falls silent is still dropped');
});
