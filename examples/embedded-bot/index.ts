/**
 * Add the plugins to the bot you already have: your irc-framework client, your event handlers, our plugins
 * over your connection. Run it with a config file in the program's format (config.example.json), whose `irc`
 * section names the server your client connects to:
 *
 *     node index.js config.json
 *
 * Your client connects and registers as it always did; in its `registered` event the host takes its
 * connection over (`IrcFrameworkTransport.attach`), then starts the plugins the config enables: the built-in
 * ones, and those its `plugin_modules` name. Your handlers keep working (here: `!ping` in a channel, and
 * joining `#lobby`); the plugins send through the host's pacing queue and never answer CTCP for you.
 *
 * In this repository it imports the package's entries by their paths (`../../app/...`); in yours, import
 * `irc-network-data` and `irc-network-data/irc-framework` (examples/embedded-bot/README.md).
 */
import IrcFramework from 'irc-framework';
import { Host, transportOptions } from '../../app/index.js';
import { IrcFrameworkTransport } from '../../app/irc-framework.js';
import { setup } from './setup.js';

const { config, plugins, logger } = await setup('index.js');

// Your bot, as it was.
const client = new IrcFramework.Client();
client.on('message', (event) => {
  if (event.type === 'privmsg' && event.target.startsWith('#') && event.message === '!ping') event.reply('pong');
});

let host: Host | null = null;
client.on('registered', () => {
  client.join('#lobby');
  // Your client reconnects by itself (auto_reconnect): the transport follows it, and the host is made once.
  if (host) return;
  const transport = IrcFrameworkTransport.attach(client, transportOptions(config), logger.child('irc'));
  host = new Host({ config, logger, plugins, transport });
  host.start().then(
    () => process.stdout.write(`plugins started; HTTP at ${host?.url ?? '(off)'}\n`),
    (error: unknown) => {
      logger.error('the plugins did not start', { error: String(error) });
      process.exitCode = 1;
      client.quit('Startup failed');
    },
  );
});

client.connect({
  host: config.irc.host,
  port: config.irc.port,
  tls: config.irc.tls,
  nick: config.irc.nick,
  username: config.irc.username,
  gecos: config.irc.realname,
  auto_reconnect: true,
});

// Stop the plugins (which flushes the store), then your client.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void (host?.stop('Shutting down') ?? Promise.resolve()).finally(() => {
      client.quit('Shutting down');
      setTimeout(() => process.exit(0), 500).unref();
    });
  });
}
