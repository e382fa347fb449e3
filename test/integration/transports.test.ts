/**
 * Where the IRC client libraries differ, the plugins must still get the same
 * data. This file runs under each library (scripts/run-tests.mjs sets
 * TEST_IRC_CLIENT): a sender's account comes from the account tag or, where
 * the library reads no tags (matrix-org-irc), from WHOIS; a line's time from
 * server-time or the local clock; joins, away and account changes from the
 * capabilities that add no tags, on both.
 */
import t from 'tap';
import { versionString } from '../../lib/version.js';
import { IrcFrameworkTransport } from '../../lib/irc/irc-framework.js';
import { MatrixIrcTransport } from '../../lib/irc/matrix-org-irc.js';
import type { IrcMessage } from '../../lib/irc/port.js';
import { eventually, startBot, testIrcClient, type TestBot } from '../support/bot.js';
import { IrcClient } from '../support/irc-client.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const client = testIrcClient();
const tag = Math.random().toString(36).slice(2, 6);
const botAccount = `tbot${tag}`;
const userAccount = `tuser${tag}`;
const password = 'transport-test-pass';
const channel = `#transport${tag}`;

let network: TestNetwork;
let bot: TestBot;
const clients: IrcClient[] = [];

async function user(nick: string, sasl?: { account: string; password: string }): Promise<IrcClient> {
  const irc = new IrcClient({ port: network.leafPort, nick, ...(sasl ? { sasl } : {}) });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

/** The next PRIVMSG from `nick` that reaches the bot's port. */
function nextPrivmsgFrom(nick: string): Promise<IrcMessage> {
  return new Promise((resolve) => {
    const off = bot.host.irc.on('message', (message) => {
      if (message.command === 'PRIVMSG' && message.source?.nick === nick) {
        off();
        resolve(message);
      }
    });
  });
}

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: botAccount, password });
  await registerAccount(network, { account: userAccount, password });
  bot = await startBot(network, {
    nick: botAccount,
    sasl: { account: botAccount, password },
    plugins: { stats: { refresh_seconds: 600, join: [channel] } },
  });
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await bot?.stop();
  await network?.stop();
});

t.test(`the bot runs on ${client}`, async (t) => {
  t.equal(bot.config.irc.client, client);
  t.type(bot.host.irc, client === 'matrix-org-irc' ? MatrixIrcTransport : IrcFrameworkTransport);
  t.equal(bot.host.irc.state.account, botAccount, 'logged in with SASL');
  t.ok(bot.host.irc.state.isOperator, 'opered');
});

t.test('capabilities: the untagged ones on both, the tagged ones only where tags are read', async (t) => {
  const { caps } = bot.host.irc.state;
  for (const cap of ['sasl', 'extended-join', 'account-notify', 'away-notify', 'multi-prefix', 'userhost-in-names']) {
    t.ok(caps.has(cap), `${cap} is on`);
  }
  for (const cap of ['account-tag', 'server-time']) {
    t.equal(caps.has(cap), client === 'irc-framework', `${cap} ${client === 'irc-framework' ? 'is on' : 'is off'}`);
  }
});

t.test('CTCP VERSION is answered with the configured version', async (t) => {
  const asker = await user(`ask${tag}`);
  const answer = asker.waitFor((m) => m.command === 'NOTICE' && m.nick === bot.host.irc.state.nick, {
    timeout: 10000,
  });
  asker.send(`PRIVMSG ${bot.host.irc.state.nick} :\x01VERSION\x01`);
  t.equal((await answer).params[1], `\x01VERSION ${versionString}\x01`, 'the package name and version');
});

t.test('CTCP PING is answered with its payload', async (t) => {
  const asker = await user(`png${tag}`);
  const answer = asker.waitFor((m) => m.command === 'NOTICE' && m.nick === bot.host.irc.state.nick, {
    timeout: 10000,
  });
  asker.send(`PRIVMSG ${bot.host.irc.state.nick} :\x01PING 1700000000 42\x01`);
  t.equal((await answer).params[1], '\x01PING 1700000000 42\x01');
});

t.test("a sender's account is the same from the account tag or from WHOIS, and the time is now", async (t) => {
  const loggedIn = await user(`acct${tag}`, { account: userAccount, password });
  const anonymous = await user(`anon${tag}`);
  const before = Date.now();
  const fromLoggedIn = nextPrivmsgFrom(`acct${tag}`);
  loggedIn.send(`PRIVMSG ${bot.host.irc.state.nick} :hello`);
  const message = await fromLoggedIn;
  t.equal(
    message.tags.account,
    client === 'irc-framework' ? userAccount : undefined,
    client === 'irc-framework' ? 'the account tag' : 'no tags from this library',
  );
  t.equal(await bot.host.commands.accountOf(message), userAccount, 'the account');
  t.ok(Math.abs(message.time.getTime() - before) < 5000, `the time is now (${message.time.toISOString()})`);

  const fromAnonymous = nextPrivmsgFrom(`anon${tag}`);
  anonymous.send(`PRIVMSG ${bot.host.irc.state.nick} :hello`);
  t.equal(await bot.host.commands.accountOf(await fromAnonymous), null, 'no account for a sender not logged in');
});

t.test('joins, away and account changes reach the model the same way', async (t) => {
  const member = await user(`memb${tag}`);
  await member.request(`JOIN ${channel}`, '366');
  await eventually(() => (bot.host.model.users.get(`memb${tag}`)?.channels.size ?? 0) > 0, 'the join', 5000);
  t.equal(bot.host.model.users.get(`memb${tag}`)?.account, null, 'extended-join: not logged in');

  member.send('AWAY :lunch');
  await eventually(() => bot.host.model.users.get(`memb${tag}`)?.away === true, 'away-notify', 5000);
  t.pass('away-notify marked the member away');

  member.send(`PRIVMSG NickServ :IDENTIFY ${userAccount} ${password}`);
  await eventually(() => bot.host.model.users.get(`memb${tag}`)?.account === userAccount, 'account-notify', 10000);
  t.pass('account-notify gave the account');

  const loggedIn = await user(`memc${tag}`, { account: userAccount, password });
  await loggedIn.request(`JOIN ${channel}`, '366');
  await eventually(() => bot.host.model.users.get(`memc${tag}`)?.account === userAccount, 'extended-join', 5000);
  t.pass('extended-join gave the account of a logged-in member');
});
