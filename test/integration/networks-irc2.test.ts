/**
 * A network without services, as IRCnet runs: two linked ircd 2.11 servers (Debian's ircd-irc2, unpacked by the
 * test kit), and the bot with the config any network gets (irc.sasl, the nickserv plugin). Collection, the public
 * API and its numbers as the servers' own (LUSERS, LIST, LINKS, an operator's WHO), live joins and quits, and
 * latency work; the bot says once that there is nothing to log in to, the nickserv plugin refuses every check
 * saying why, the TOKEN commands point at the command line, and the operator manages tokens with
 * `irc-network-data token …` against the bot's store, which a restarted bot then honours.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { askBot, eventually, startBot, synced, type TestBot, type TestBotOptions } from '../support/bot.js';
import { IrcClient, type IrcMessage } from '../support/irc-client.js';
import { startTestNetwork, type TestNetwork } from '../support/testnet.js';

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../app/main.js');
const tag = Math.random().toString(36).slice(2, 6);
const publicChannel = `#pub${tag}`;
let network: TestNetwork;
let bot: TestBot;
let storeDir: string;
const clients: IrcClient[] = [];

const botOptions = (): TestBotOptions => ({
  storeDir,
  // As an operator would write it for any network: here there is nothing to log in to.
  sasl: { account: `nb${tag}`, password: 'bot-pass-1' },
  admins: ['boss'],
  plugins: {
    stats: { refresh_seconds: 600, join: '*' },
    api: {},
    tokens: {},
    nickserv: { backend: 'sasl' },
  },
});

/** A client of the network; ircd 2.11 refuses more than 10 connections in 2 s from one address: each has its own. */
async function connect(nick: string, port: number): Promise<IrcClient> {
  const client = new IrcClient({ port, nick, localAddress: `127.0.${clients.length + 10}.1` });
  clients.push(client);
  await client.connect();
  const result = await client.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return client;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(bot.url + url, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const results = (answer: { status: number; body: Record<string, unknown> }): Record<string, unknown>[] =>
  answer.status === 200 ? (answer.body.results as Record<string, unknown>[]) : [];

/** `irc-network-data token …` against the bot's store (the bot stopped), as an operator runs it. */
function tokenCommand(...words: string[]): { code: number | null; out: string; err: string } {
  const config = path.join(storeDir, 'cli-config.json');
  // The bot's store and plugins (the endpoints that may be granted are theirs); it never connects.
  writeFileSync(
    config,
    JSON.stringify({
      irc: { host: '127.0.0.1', port: 1, nick: 'DataBot' },
      store: { path: path.join(storeDir, 'store.json') },
      plugins: botOptions().plugins,
    }),
  );
  const ran = spawnSync(process.execPath, [main, 'token', ...words, '--config', config, '--as', 'opal'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30000,
  });
  return { code: ran.status, out: ran.stdout, err: ran.stderr };
}

t.before(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), 'irc2-store-'));
  network = await startTestNetwork({ network: 'irc2' });
  const [first, second, hidden, hiddenHere] = [
    await connect(`one${tag}`, network.hubPort),
    await connect(`two${tag}`, network.leafPort),
    await connect(`four${tag}`, network.leafPort),
    await connect(`six${tag}`, network.hubPort),
  ];
  await first.request(`JOIN ${publicChannel}`, '366');
  await first.request(`TOPIC ${publicChannel} :the public one`, ['TOPIC', '482']);
  await second.request(`JOIN ${publicChannel}`, '366');
  for (const [client, nick] of [
    [hidden, `four${tag}`],
    [hiddenHere, `six${tag}`],
  ] as const) {
    client.send(`MODE ${nick} +i`);
    await client.request(`MODE ${nick}`, '221');
  }
  bot = await startBot(network, botOptions());
  await synced(bot);
});

t.teardown(async () => {
  await Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
  await bot?.stop();
  await network?.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

t.test(
  'opered; nothing to log in to, said once, never tried; the nickserv plugin says why it cannot work',
  async (t) => {
    t.equal(bot.host.irc.state.isOperator, true, 'opered');
    t.equal(bot.host.irc.state.profile.family, 'ircd 2.11');
    t.equal(bot.host.irc.state.account, null);
    // (The services' catalogue asks once whether NickServ is there: WHOIS NickServ, 401.)
    t.same(
      bot.sent.filter((line) => /IDENTIFY|AUTHENTICATE|^CAP REQ :.*sasl|PRIVMSG NickServ/i.test(line)),
      [],
      'no IDENTIFY, no SASL',
    );
    t.match(
      bot.logs.filter((line) => /has no accounts/.test(line)),
      [/ircd 2\.11.*no account services to log in to.*Remove irc\.sasl/],
    );
    t.match(
      bot.logs.filter((line) => /This network has no account services/.test(line)),
      [/plugins\.nickserv cannot work on this network/],
    );
  },
);

t.test("the numbers are the servers': LUSERS, LIST, LINKS, an operator's WHO", async (t) => {
  const [oracle] = clients;
  const lusers = await oracle!.request('LUSERS', '255');
  const there = /There are (\d+) users and \d+ services on (\d+) servers/.exec(
    lusers.find((line) => line.command === '251')?.params.at(-1) ?? '',
  );
  const stats = (await get('/api/irc/stats/')).body;
  t.equal(stats.users, Number(there?.[1]), `users as LUSERS counts them (${there?.[1]})`);
  t.equal(stats.servers, Number(there?.[2]), 'servers');

  const list = (await oracle!.request('LIST', '323')).filter((line: IrcMessage) => line.command === '322');
  const listed = list.map((line) => line.params[1]!).filter((name) => name.startsWith('#'));
  const channels = results(await get('/api/irc/channels/?limit=100')).map((channel) => channel.name);
  t.same([...channels].sort(), [...listed].sort(), "channels as LIST shows them (not the servers' & channels)");

  const links = (await oracle!.request('LINKS', '365')).filter((line) => line.command === '364');
  const servers = results(await get('/api/irc/servers/')).map((server) => server.name);
  t.same([...servers].sort(), links.map((line) => line.params[1]!).sort(), 'servers as LINKS shows them');

  const known = [...bot.host.model.users.all()].map((user) => bot.host.model.fold(user.nick));
  t.ok(known.includes(bot.host.model.fold(`one${tag}`)), 'a user in a channel');
  // ircd 2.11's WHO shows an operator the invisible users of its own server (the bot's is the hub), not the others'.
  t.ok(known.includes(bot.host.model.fold(`six${tag}`)), "an invisible user in no channel, on the bot's server");
  t.notOk(known.includes(bot.host.model.fold(`four${tag}`)), 'not one on the other server');
});

t.test('joins and quits are followed as they happen; both servers answer for latency', async (t) => {
  await eventually(() => bot.host.model.channels.get(publicChannel)?.joined === true, 'the bot in the channel', 20000);
  const channelUrl = `/api/irc/channels/${encodeURIComponent(publicChannel)}/`;
  const before = (await get(channelUrl)).body.users as number;
  const comer = await connect(`five${tag}`, network.leafPort);
  await comer.request(`JOIN ${publicChannel}`, '366');
  await eventually(async () => (await get(channelUrl)).body.users === before + 1, 'the join counted');
  await comer.quit('leaving');
  await eventually(() => bot.host.model.users.get(`five${tag}`) === undefined, 'the quit seen');
  t.equal((await get(channelUrl)).body.users, before);
  await eventually(
    async () => results(await get('/api/irc/servers/')).every((server) => server.latency_ms !== null),
    'latency measured',
    30000,
  );
  t.pass('both servers answer for latency');
});

t.test('TOKEN commands say accounts need services; the command line makes, grants and revokes', async (t) => {
  const [oracle] = clients;
  t.match(
    (await askBot(oracle!, bot, 'TOKEN CREATE', /needs a NickServ account|not logged in/)).at(-1),
    /^TOKEN CREATE needs a NickServ account, and this network has no account services: its IRC server \(ircd 2\.11\) knows no accounts\. API tokens are managed by the bot's operator instead, on its machine: irc-network-data token --help\.$/,
  );

  t.match(
    tokenCommand('create', 'alice', 'irc2'),
    { code: 2, err: /the store is in use by process/ },
    'not beside the bot',
  );
  await bot.stop();
  const created = tokenCommand('create', 'alice', 'irc2');
  t.equal(created.code, 0, created.err);
  const secret = /created: (ntd_\S+)/.exec(created.out)?.[1] ?? '';
  t.match(tokenCommand('grant', '1', 'irc.users', 'irc.check_credentials'), { code: 0, out: /may now call/ });
  bot = await startBot(network, botOptions());
  await synced(bot);
  const auth = { Authorization: `Token ${secret}` };
  const users = await get('/api/irc/users/?limit=100', auth);
  t.equal(users.status, 200, 'the token reaches the endpoint granted on the command line');
  t.ok(results(users).some((user) => user.nick === `one${tag}`));
  const check = await fetch(`${bot.url}/api/irc/check-credentials/`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ nick: 'alice', password: 'x' }),
  });
  t.equal(check.status, 503);
  t.match(await check.json(), { error: { message: /This network has no account services/ } });

  await bot.stop();
  t.match(tokenCommand('revoke', '1'), { code: 0, out: 'Token #1 revoked.\n' });
  t.match(tokenCommand('audit', '1'), {
    code: 0,
    out: /#1 create by opal on the command line\n.*grant.*\n.*revoke by opal/,
  });
  bot = await startBot(network, botOptions());
  await synced(bot);
  t.equal((await get('/api/irc/users/', auth)).status, 401, 'revoked');
});
