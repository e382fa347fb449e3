/**
 * The same as index.ts with a matrix-org-irc client (as matrix-appservice-irc has one): your client, your
 * handlers, our plugins over its connection. matrix-org-irc is an optional peer dependency of the package:
 * install it beside it. Run it with a config file in the program's format:
 *
 *     node matrix-org-irc.js config.json
 *
 * matrix-org-irc's own reconnect does not finish registration on a server with CAP: when your client's
 * connection drops, make a new `Client` and hand it over in its `registered` event with
 * `transport.replaceClient(newClient)` (docs/transports.md).
 */
import { Client } from 'matrix-org-irc';
import { Host, transportOptions } from '../../app/index.js';
import { MatrixIrcTransport } from '../../app/matrix-org-irc.js';
import { setup } from './setup.js';

const { config, plugins, logger } = await setup('matrix-org-irc.js');

// Your bot, as it was.
const client = new Client(config.irc.host, config.irc.nick, {
  port: config.irc.port,
  secure: config.irc.tls,
  userName: config.irc.username,
  realName: config.irc.realname,
  autoConnect: false,
  retryCount: 0,
});
client.on('error', (message) => logger.warn('IRC error reply', { command: message.rawCommand }));
client.on('message', (_nick, target, text) => {
  if (target.startsWith('#') && text === '!ping') void client.say(target, 'pong');
});

client.once('registered', () => {
  void client.join('#lobby');
  const transport = MatrixIrcTransport.attach(client, transportOptions(config), logger.child('irc'));
  const host = new Host({ config, logger, plugins, transport });
  host.start().then(
    () => process.stdout.write(`plugins started; HTTP at ${host.url ?? '(off)'}\n`),
    (error: unknown) => {
      logger.error('the plugins did not start', { error: String(error) });
      process.exitCode = 1;
      client.disconnect('Startup failed');
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void host.stop('Shutting down').finally(() => {
        client.disconnect('Shutting down');
        setTimeout(() => process.exit(0), 500).unref();
      });
    });
  }
});
client.connect();
