/**
 * CTCP PING and VERSION over a real socket, on both transports: the same answers, once each (neither
 * library answers as well), and a flood from one client answered a few times only.
 */
import t from 'tap';
import { IrcFrameworkTransport } from '../../../lib/irc/irc-framework.js';
import { MatrixIrcTransport } from '../../../lib/irc/matrix-org-irc.js';
import type { IrcTransport } from '../../../lib/irc/port.js';
import { CTCP_ANSWERS_PER_CLIENT, installBotPolicy } from '../../../lib/irc/bot-policy.js';
import type { TransportOptions } from '../../../lib/irc/transport.js';
import { createLogger, type Logger } from '../../../lib/logger.js';
import { fakeOptions } from '../../../testing/fake-irc.js';
import { ScriptedIrcServer } from './fixtures/scripted-server.js';

const transports: [string, (options: TransportOptions, logger: Logger) => IrcTransport][] = [
  ['irc-framework', (options, logger) => new IrcFrameworkTransport(options, logger)],
  ['matrix-org-irc', (options, logger) => new MatrixIrcTransport(options, logger)],
];

for (const [library, make] of transports) {
  t.test(`${library}: CTCP PING and VERSION are answered once each, and a flood only a few times`, async (t) => {
    const server = await ScriptedIrcServer.start({ caps: 'multi-prefix' });
    const logger = createLogger({ sink: () => undefined });
    const transport = make({ ...fakeOptions, port: server.port }, logger);
    // As the host does: the bot's behaviour on top of the library's connection.
    installBotPolicy(transport, { version: 'irc-network-data 9.9' }, logger);
    t.teardown(async () => {
      await transport.quit('test over');
      await server.close();
    });
    const ready = new Promise<void>((resolve) => transport.on('ready', resolve));
    transport.connect();
    await ready;
    const connection = await server.connection(0);
    connection.send(
      ':bob!b@h PRIVMSG DataBot :\x01PING 1700000000 123\x01',
      ':carol!c@h PRIVMSG #chan :\x01VERSION\x01',
      ':dave!d@h PRIVMSG DataBot :\x01PING\x01',
    );
    for (let index = 0; index < 10; index++)
      connection.send(`:flood${index}!f@bad.example PRIVMSG DataBot :\x01PING ${index}\x01`);
    // Whatever was written in answer was written before this PING's answer came back.
    await connection.waitFor(/^NOTICE flood/);
    await transport.request({ send: ['PING', 'settled'], reply: () => false, end: (m) => m.command === 'PONG' });
    t.same(connection.matching(/^NOTICE bob /), ['NOTICE bob :\x01PING 1700000000 123\x01'], 'the payload echoed');
    t.same(
      connection.matching(/^NOTICE carol /),
      ['NOTICE carol :\x01VERSION irc-network-data 9.9\x01'],
      'asked in a channel, answered in private',
    );
    t.same(connection.matching(/^NOTICE dave /), ['NOTICE dave \x01PING\x01'], 'no payload, none echoed');
    t.equal(
      connection.matching(/^NOTICE flood/).length,
      CTCP_ANSWERS_PER_CLIENT.capacity,
      'one client flooding under many nicks',
    );
  });
}
