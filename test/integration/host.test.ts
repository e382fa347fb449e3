/**
 * The host on the real test network: SASL login as its account, OPER, HELP over
 * IRC, admin-only commands decided by account (never by nick), and reconnect +
 * re-sync after the hub restarts.
 */
import t from 'tap';
import { IrcClient } from '../support/irc-client.js';
import { askBot, eventually, startBot, synced, type TestBot } from '../support/bot.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const tag = Math.random().toString(36).slice(2, 6);
const botAccount = `databot${tag}`;
const botPassword = 'bot-secret-pass';
const adminAccount = `admin${tag}`;
const adminPassword = 'admin-secret-pass';
const userAccount = `user${tag}`;
const userPassword = 'user-secret-pass';

let network: TestNetwork;
let bot: TestBot;
const clients: IrcClient[] = [];

async function client(
  nick: string,
  options: { sasl?: { account: string; password: string } } = {},
): Promise<IrcClient> {
  const irc = new IrcClient({ port: network.leafPort, nick, ...options });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

const ask = (irc: IrcClient, text: string, last: RegExp): Promise<string[]> => askBot(irc, bot, text, last);

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: botAccount, password: botPassword });
  await registerAccount(network, { account: adminAccount, password: adminPassword });
  await registerAccount(network, { account: userAccount, password: userPassword });
  bot = await startBot(network, {
    nick: botAccount,
    sasl: { account: botAccount, password: botPassword },
    admins: [adminAccount],
  });
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await bot?.stop();
  await network?.stop();
});

t.test('logs in with SASL as its account and opers up', async (t) => {
  t.equal(bot.host.irc.state.account, botAccount, 'RPL_LOGGEDIN named the account');
  t.ok(bot.host.irc.state.isOperator, 'the bot is an operator');
  const observer = await client(`obs${tag}`);
  const whois = await observer.request(`WHOIS ${bot.host.irc.state.nick}`, '318');
  const account = whois.find((line) => line.command === '330');
  t.equal(account?.params[2], botAccount, 'WHOIS 330 shows the account to others');
  t.ok(
    whois.some((line) => line.command === '313'),
    'WHOIS 313 shows the bot as an IRC operator',
  );
});

t.test('the bot synced the network', async (t) => {
  await bot.host.irc.request({ send: ['PING', 'sync-check'], reply: () => false, end: (m) => m.command === 'PONG' });
  await synced(bot);
  t.ok(bot.host.model.ready, 'the model is ready');
  t.ok(bot.host.model.servers.get('leaf.test.net'), 'LINKS put the leaf in the model');
  t.ok(bot.host.model.users.get('NickServ'), 'WHO as an operator sees the services');
  t.equal(bot.host.model.stats.syncedAsOperator, true);
});

t.test('HELP answers over IRC', async (t) => {
  const stranger = await client(`help${tag}`);
  const replies = await ask(stranger, 'HELP', /^\s+HELP \[command\]/);
  t.match(replies[0], /Commands/, 'a header line');
  t.ok(
    replies.some((line) => /^\s*HELP \[command\]/.test(line)),
    'HELP lists itself with usage',
  );
  t.notOk(
    replies.some((line) => /SYNC/.test(line)),
    'admin-only commands are not offered to a stranger',
  );
  const detail = await ask(stranger, 'HELP HELP', /^Lists the commands/);
  t.match(detail.join('\n'), /Usage: HELP \[command\]/);
  const unknown = await ask(stranger, 'FROB', /Unknown command/);
  t.match(unknown.at(-1), /Send HELP/);
});

t.test('admin-only commands go by account, never by nick', async (t) => {
  // Someone takes the administrator's account name as a nick, without logging in.
  const spoofer = await client(adminAccount);
  const spoofed = await ask(spoofer, 'SYNC', /not logged in|Permission denied|Synced/);
  t.match(spoofed.at(-1), /not logged in/, 'a spoofer without an account is refused');

  const user = await client(`u${tag}`, { sasl: { account: userAccount, password: userPassword } });
  const refused = await ask(user, 'SYNC', /not logged in|Permission denied|Synced/);
  t.match(refused.at(-1), /Permission denied/, 'a logged-in non-admin is refused');

  // The real administrator, under some other nick, logged in to the admin account.
  const admin = await client(`boss${tag}`, { sasl: { account: adminAccount, password: adminPassword } });
  const allowed = await ask(admin, 'SYNC', /not logged in|Permission denied|Synced/);
  t.match(allowed.at(-1), /^Synced at .*users/, 'the administrator may run it');
  const help = await ask(admin, 'HELP', /^\s+SYNC/);
  t.ok(
    help.some((line) => /SYNC/.test(line)),
    'HELP shows admin commands to an administrator',
  );
});

t.test('reconnects and re-syncs after the hub restarts', async (t) => {
  const firstSync = bot.host.model.stats.syncedAt;
  let readyWhileDisconnected: boolean | null = null;
  const off = bot.host.model.on('change', (change) => {
    if (change.kind === 'disconnected') readyWhileDisconnected = bot.host.model.ready;
  });
  const disconnected = bot.next('disconnected', 20000);
  const ready = bot.next('ready', 60000);
  await network.restartServer('hub');
  await disconnected;
  off();
  t.equal(readyWhileDisconnected, false, 'the model is not ready while disconnected');
  await ready;
  await synced(bot);
  t.ok(bot.host.model.ready, 'synced again');
  t.not(bot.host.model.stats.syncedAt, firstSync, 'a new sync time');
  // Services come back a little after the hub; the bot logs in again once they do.
  await eventually(() => bot.host.irc.state.account === botAccount, 'the bot to log in again', 30000);
  t.equal(bot.host.irc.state.account, botAccount, 'logged in again to its account');
  t.ok(bot.host.irc.state.isOperator, 'opered again');
  t.ok(
    bot.logs.some((line) => /reconnecting/.test(line)),
    'the reconnect was logged',
  );
});

t.test('no password appears in the log', async (t) => {
  const all = bot.logs.join('\n');
  for (const secret of [botPassword, adminPassword, userPassword, network.operPass]) {
    t.notOk(all.includes(secret), `the log does not contain ${secret.slice(0, 3)}…`);
  }
});
