/**
 * No one locks the bot out: someone holds the bot's nick before it starts. The bot registers with another
 * nick, logs in to its account (SASL), collects and answers meanwhile, and takes its nick back through
 * NickServ (Atheme's REGAIN here), saying so in the log. On the real network, on each client library.
 */
import t from 'tap';
import { startBot } from '../support/bot.js';
import { IrcClient } from '../support/irc-client.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

let network: TestNetwork;

t.before(async () => {
  network = await startTestNetwork();
});
t.teardown(() => network?.stop());

/** Resolves once `check` holds, polling; rejects naming `what` after `ms`. */
async function eventually(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test('a squatter on the nick: the bot registers with another, works, and takes its nick back', async (t) => {
  const nick = `Held${Math.random().toString(36).slice(2, 6)}`;
  const password = 'held-bot-password';
  await registerAccount(network, { account: nick, password });
  // Someone takes the bot's nick first, and is not logged in to its account.
  // (The client that registered the account may hold the nick a moment longer on a busy machine: 433, again.)
  let squatter = new IrcClient({ port: network.hubPort, nick });
  for (let attempt = 1; ; attempt++) {
    await squatter.connect();
    const registered = await squatter.register();
    if (registered.ok || registered.last.command !== '433' || attempt === 20) {
      t.ok(registered.ok, `the squatter holds the nick (${registered.last.raw})`);
      break;
    }
    squatter.destroy();
    await new Promise((resolve) => setTimeout(resolve, 250));
    squatter = new IrcClient({ port: network.hubPort, nick });
  }
  t.teardown(() => squatter.destroy());

  const bot = await startBot(network, {
    nick,
    sasl: { account: nick, password },
    oper: true,
    plugins: { stats: { refresh_seconds: 600 }, api: {} },
  });
  t.teardown(() => bot.stop());
  t.ok(
    bot.logs.some((line) => new RegExp(`the nick is taken: registering with another.* instead=${nick}_`).test(line)),
    'the log says the nick was taken, and which one the bot took instead',
  );
  t.equal(bot.host.irc.state.account, nick, 'logged in to its account under the other nick');
  await eventually(() => bot.host.model.ready, 'the first sync');
  const stats = await fetch(`${bot.url}/api/irc/stats/`);
  t.equal(stats.status, 200, 'the API answers from the synced model meanwhile');

  await eventually(() => bot.host.irc.state.nick === nick, `the bot's nick back to ${nick}`);
  t.pass('the bot has its nick back');
  // The test network's Atheme has GHOST, not REGAIN (a module it does not load): the bot goes on to it.
  const how = bot.logs.find((line) => line.includes('took the nick back'));
  t.match(how, new RegExp(`took the nick back nick=${nick} with=(REGAIN|RECOVER|GHOST)$`), 'the log says how');
  t.comment(`the squatter was ${squatter.closed ? 'disconnected' : 'renamed'} by services`);

  // Commands reach it under its own nick.
  const user = new IrcClient({ port: network.leafPort, nick: `u${nick}` });
  await user.connect();
  await user.register();
  t.teardown(() => user.destroy());
  const answer = user.waitFor((message) => message.command === 'NOTICE' && message.nick === nick, { timeout: 15000 });
  user.send(`PRIVMSG ${nick} :HELP`);
  t.ok(await answer, 'a command sent to the nick is answered');
});
