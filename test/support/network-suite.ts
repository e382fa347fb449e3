/**
 * The network-facing checks, run on each kind of test network (test/integration/networks-*.test.ts): the
 * bot logs in (and IDENTIFYs once at most where the server has no SASL), opers up, its numbers equal the
 * IRC server's own (LUSERS, LIST, LINKS, an operator's WHO), it follows joins and quits, lists the services'
 * commands, makes and grants tokens over IRC, and checks passwords with the credential backend that fits.
 */
import type { Test } from 'tap';
import { anopeBackend } from '../../plugins/nickserv/backends/anope-rpc.js';
import { athemeBackend } from '../../plugins/nickserv/backends/atheme-jsonrpc.js';
import { NO_SASL_MESSAGE, saslBackend } from '../../plugins/nickserv/backends/sasl.js';
import { isOnline } from '../../lib/irc/presence.js';
import { askBot, eventually, startBot, synced, type TestBot } from './bot.js';
import { IrcClient, type IrcMessage } from './irc-client.js';
import { networkParts, registerAccount, startTestNetwork, type NetworkKind, type TestNetwork } from './testnet.js';

/** Whether a kind's IRC server offers SASL (the others log in with IDENTIFY). */
function offersSasl(kind: NetworkKind): boolean {
  const { ircd } = networkParts(kind);
  return ircd === 'inspircd' || ircd === 'unreal' || ircd === 'solanum';
}

/** The credential backend each kind is checked with: SASL where the server offers it, else the services' RPC. */
function nickservConfig(network: TestNetwork): Record<string, unknown> {
  if (offersSasl(network.network)) return { backend: 'sasl' };
  return { backend: network.rpcProtocol, url: network.rpcUrl };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

export function networkSuite(t: Test, kind: NetworkKind): void {
  const tag = Math.random().toString(36).slice(2, 6);
  const accounts = {
    bot: { account: `nb${tag}`, password: 'bot-pass-1' },
    // Characters each backend must carry whole: XML's and JSON's specials (Anope 2.0's XML-RPC unescapes
    // only some entities), a semicolon after an ampersand.
    alice: { account: `alice${tag}`, password: `al&amp;<ce>"p'1` },
    boss: { account: `boss${tag}`, password: 'boss-pass-1' },
  };
  const publicChannel = `#pub${tag}`;
  const secretChannel = `#sec${tag}`;
  let network: TestNetwork;
  let bot: TestBot;
  let loggedInAt = 0;
  const clients: IrcClient[] = [];

  const connect = async (nick: string, port: number): Promise<IrcClient> => {
    const client = new IrcClient({ port, nick });
    clients.push(client);
    await client.connect();
    const result = await client.register();
    if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
    return client;
  };
  /** IDENTIFY over PRIVMSG, as on every services package; resolves on NickServ's yes. */
  const identify = async (client: IrcClient, account: string, password: string): Promise<void> => {
    const yes = client.waitFor(
      (message) =>
        message.command === '900' ||
        (message.command === 'NOTICE' &&
          message.nick === 'NickServ' &&
          /identified|recognized|accepted/i.test(message.params.at(-1) ?? '')),
      { timeout: 15000, what: `NickServ's answer to IDENTIFY ${account}` },
    );
    client.send(`PRIVMSG NickServ :IDENTIFY ${account} ${password}`);
    await yes;
  };
  const get = async (path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(bot.url + path, { headers });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const results = (answer: Answer): Record<string, unknown>[] =>
    answer.status === 200 ? (answer.body.results as Record<string, unknown>[]) : [];
  const numeric = (lines: IrcMessage[], code: string): IrcMessage | undefined =>
    lines.find((line) => line.command === code);

  t.before(async () => {
    network = await startTestNetwork({ network: kind });
    await Promise.all(Object.values(accounts).map((account) => registerAccount(network, account)));
    const [alice, boss, first, second, secret, hidden] = await Promise.all([
      connect(`al${tag}`, network.leafPort),
      connect(`bs${tag}`, network.hubPort),
      connect(`one${tag}`, network.hubPort),
      connect(`two${tag}`, network.leafPort),
      connect(`three${tag}`, network.leafPort),
      connect(`four${tag}`, network.hubPort),
    ]);
    await identify(alice, accounts.alice.account, accounts.alice.password);
    await identify(boss, accounts.boss.account, accounts.boss.password);
    await first.request(`JOIN ${publicChannel}`, '366');
    await first.request(`TOPIC ${publicChannel} :the public one`, 'TOPIC');
    await second.request(`JOIN ${publicChannel}`, '366');
    await secret.request(`JOIN ${secretChannel}`, '366');
    await secret.request(`MODE ${secretChannel} +s`, 'MODE');
    // Invisible: set, then asked (UnrealIRCd makes every user +i at connect, and then says nothing to +i).
    hidden.send(`MODE four${tag} +i`);
    await hidden.request(`MODE four${tag}`, '221');
    bot = await startBot(network, {
      echo: process.env.NETWORK_SUITE_ECHO === '1',
      sasl: accounts.bot,
      admins: [accounts.boss.account],
      plugins: {
        stats: { refresh_seconds: 600, join: '*' },
        api: {},
        tokens: {},
        nickserv: nickservConfig(network),
      },
    });
    await synced(bot);
  });

  t.teardown(async () => {
    await Promise.all(clients.map((client) => client.quit().catch(() => undefined)));
    await bot?.stop();
    await network?.stop();
  });

  t.test('logged in and opered; the public channel joined in the first sync', async (t) => {
    await eventually(() => bot.host.irc.state.account === accounts.bot.account, 'the login', 20000);
    loggedInAt = Date.now();
    t.equal(bot.host.irc.state.account, accounts.bot.account);
    t.ok(bot.host.irc.state.isOperator, 'opered');
    // The next sync is 600 s away: where LIST shows no modes (ngircd), the first sync must ask them and join.
    await eventually(
      () => bot.host.model.channels.get(publicChannel)?.joined === true,
      `the bot in ${publicChannel}`,
      10000,
    );
    t.equal(bot.host.model.channels.get(secretChannel)?.joined ?? false, false, 'not the secret one');
  });

  t.test("the numbers are the server's: LUSERS, LIST, LINKS, an operator's WHO", async (t) => {
    const oracle = await connect(`orc${tag}`, network.hubPort);
    await oracle.request(`OPER ${network.operName} ${network.operPass}`, '381');
    const boss = clients[1]!;
    // A sync now, after everyone is in place (the oracle included).
    const syncReplies = await askBot(boss, bot, 'SYNC', /./);
    t.match(syncReplies.join(' '), /^Synced at/, 'SYNC by an administrator');
    // ircu sends no 265/266: its count is 251's, visible and invisible users together.
    const lusers = await oracle.request('LUSERS', network.ircd === 'ircu' ? '255' : '266');
    const global = numeric(lusers, '266');
    const usersOf251 = (text: string): number => {
      const [, visible, invisible] = /There are (\d+) users and (\d+) invisible/i.exec(text)!;
      return Number(visible) + Number(invisible);
    };
    const globalUsers = !global
      ? usersOf251(numeric(lusers, '251')!.params.at(-1)!)
      : global.params.length >= 4
        ? Number(global.params[1])
        : Number(/global users:?\s*(\d+)/i.exec(global.params.at(-1)!)![1]);
    const stats = await get('/api/irc/stats/');
    t.equal(stats.body.users, globalUsers, 'users as LUSERS counts them');

    // As the bot asks: Solanum's plain LIST hides channels under 3 users.
    const listed = (await oracle.request(network.ircd === 'solanum' ? 'LIST >0' : 'LIST', '323'))
      .filter((line) => line.command === '322')
      .map((line) => line.params[1]!)
      .filter((name) => !name.startsWith('&') && name !== secretChannel);
    const channels = results(await get('/api/irc/channels/?limit=100')).map((channel) => channel.name);
    t.same([...channels].sort(), [...new Set(listed)].sort(), 'public channels as LIST shows them');
    t.ok(channels.includes(publicChannel));
    t.notOk(channels.includes(secretChannel), 'the secret channel is not public');
    t.notOk(
      channels.some((name) => String(name).startsWith('&')),
      'no server-local channel',
    );

    const links = (await oracle.request('LINKS', '365'))
      .filter((line) => line.command === '364')
      .map((line) => line.params[1]!);
    const servers = results(await get('/api/irc/servers/')).map((server) => server.name);
    t.same([...servers].sort(), [...links].sort(), 'servers as LINKS shows them');

    // Everyone an operator may see, in each server's words: Solanum's `0`, ircu's `x` flag for invisible users.
    const everyone = network.ircd === 'solanum' ? 'WHO 0' : network.ircd === 'ircu' ? 'WHO * x' : 'WHO *';
    const who = (await oracle.request(everyone, '315', 20000))
      .filter((line) => line.command === '352')
      .map((line) => bot.host.model.fold(line.params[5]!));
    const known = [...bot.host.model.users.all()].map((user) => bot.host.model.fold(user.nick));
    // The bot itself too, which the oracle may not see: matrix-org-irc registers with `USER … 8 …` (+i on ircu).
    who.push(bot.host.model.fold(bot.host.irc.state.nick));
    t.same([...known].sort(), [...new Set(who)].sort(), "users as an operator's WHO shows them");
    if (['hybrid', 'ngircd', 'solanum'].includes(network.ircd)) {
      // ircd-hybrid's, ngircd's and Solanum's (without operspy) WHO never list an invisible user outside the asker's
      // channels, even to an operator (docs/compatibility.md): LUSERS counts them, the users list cannot name them.
      // (ircu's does with its `x` flag, which the bot asks as an operator.)
      t.notOk(
        known.includes(bot.host.model.fold(`four${tag}`)),
        `${network.ircd} hides the invisible user in no channel`,
      );
    } else {
      t.ok(known.includes(bot.host.model.fold(`four${tag}`)), 'the invisible user in no channel too');
    }
  });

  t.test('latency of both IRC servers', async (t) => {
    let servers: Record<string, unknown>[] = [];
    await eventually(
      async () => {
        servers = results(await get('/api/irc/servers/'));
        return servers.filter((server) => server.is_services !== true).every((server) => server.latency_ms !== null);
      },
      'latency measured',
      20000,
    );
    for (const server of servers) {
      if (server.is_services === true) {
        t.comment(`${String(server.name)} (services): latency_ms ${String(server.latency_ms)}`);
        continue;
      }
      t.type(server.latency_ms, 'number', `${String(server.name)} answers`);
    }
  });

  t.test('joins and quits are followed as they happen', async (t) => {
    await eventually(
      () => bot.host.model.channels.get(publicChannel)?.joined === true,
      `the bot in ${publicChannel}`,
      20000,
    );
    const before = (await get(`/api/irc/channels/${encodeURIComponent(publicChannel)}/`)).body.users as number;
    const comer = await connect(`five${tag}`, network.leafPort);
    await comer.request(`JOIN ${publicChannel}`, '366');
    await eventually(
      async () => (await get(`/api/irc/channels/${encodeURIComponent(publicChannel)}/`)).body.users === before + 1,
      'the join counted',
    );
    t.ok(bot.host.model.users.get(`five${tag}`), 'the newcomer is known');
    await comer.quit('leaving');
    await eventually(() => bot.host.model.users.get(`five${tag}`) === undefined, 'the quit seen');
    t.equal((await get(`/api/irc/channels/${encodeURIComponent(publicChannel)}/`)).body.users, before);
  });

  t.test("the services' commands, SET's sub-commands among them", async (t) => {
    let lists: Record<string, unknown>[] = [];
    await eventually(
      async () => {
        lists = results(await get('/api/irc/commands/?limit=100'));
        return lists.some((list) => list.service === 'ChanServ') && lists.some((list) => list.service === 'NickServ');
      },
      'the catalogue',
      30000,
    );
    const names = (service: string): string[] =>
      ((lists.find((list) => list.service === service)?.commands ?? []) as { name: string }[]).map((c) => c.name);
    t.ok(names('NickServ').includes('SET EMAIL'), 'NickServ SET EMAIL');
    t.ok(names('ChanServ').includes('FLAGS'), 'ChanServ FLAGS');
    if (network.services === 'anope' || network.services === 'anope21') {
      t.ok(names('ChanServ').length >= 40, `Anope's ChanServ lists its 40 commands (${names('ChanServ').length})`);
    }
  });

  t.test('tokens over IRC, then the credential check with the backend that fits', async (t) => {
    const [alice, boss] = [clients[0]!, clients[1]!];
    const created = await askBot(alice, bot, 'TOKEN CREATE integration', /Copy it now|created/);
    const match = /Token #(\d+).* created: (ntd_\S+)/.exec(created.join('\n'));
    t.ok(match, `a token (${created.join(' / ')})`);
    const [, id, secret] = match!;
    const granted = await askBot(boss, bot, `TOKEN GRANT #${id} irc.check_credentials`, /may now call|Permission/);
    t.match(granted.join('\n'), /may now call/, 'the administrator, known by account, grants it');

    const check = async (password: string): Promise<Answer> => {
      const response = await fetch(bot.url + '/api/irc/check-credentials/', {
        method: 'POST',
        headers: { Authorization: `Token ${secret!}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ nick: accounts.alice.account, password }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    t.match(await check(accounts.alice.password), { status: 200, body: { valid: true } }, 'the right password');
    t.match(await check('wrong-password'), { status: 200, body: { valid: false } }, 'a wrong one');

    if (network.services === 'anope21') {
      // Anope 2.1's own JSON-RPC, beside SASL: it swaps its codes for a wrong password and an unknown account
      // (-32099 "Invalid account" for the one, -32098 "Invalid password" for the other), and its uniqueid is
      // beyond 2^53. Both are no account, whatever the code; the account is the answer's, never a number.
      const raw = await fetch(network.rpcUrl, {
        method: 'POST',
        body: JSON.stringify({
          jsonrpc: '2.0',
          method: 'anope.checkCredentials',
          params: [accounts.alice.account, accounts.alice.password],
          id: 'raw',
        }),
      });
      const text = await raw.text();
      const uniqueid = /"uniqueid":(\d+)/.exec(text)?.[1];
      t.match(uniqueid, /^\d+$/, 'Anope 2.1 answers with a uniqueid');
      // Random 64-bit: above 2^53 but for one account in 2,048, which a test run then names.
      if (BigInt(uniqueid ?? 0) > BigInt(Number.MAX_SAFE_INTEGER)) t.pass(`its uniqueid ${uniqueid} is beyond 2^53`);
      else t.comment(`this account's uniqueid ${uniqueid} happens to be below 2^53`);
      const rpc = anopeBackend({ url: new URL(network.rpcUrl), timeoutMs: 10000 });
      const checkWith = (nick: string, password: string) =>
        rpc.check({ nick, password, sourceIp: '127.0.0.1', signal: new AbortController().signal });
      t.same(await checkWith(accounts.alice.account.toUpperCase(), accounts.alice.password), {
        valid: true,
        account: accounts.alice.account,
      });
      t.same(await checkWith(accounts.alice.account, 'wrong'), { valid: false, reason: null }, 'a wrong password');
      t.same(await checkWith(`nobody${tag}`, 'x'), { valid: false, reason: null }, 'an unknown account');
    }
    if (network.services === 'atheme' && offersSasl(network.network)) {
      // Atheme's JSON-RPC too, beside SASL (where the server has none, it is the backend the bot was checked with).
      const rpc = athemeBackend({ url: new URL(network.rpcUrl), timeoutMs: 10000 });
      const checkWith = (nick: string, password: string) =>
        rpc.check({ nick, password, sourceIp: '127.0.0.1', signal: new AbortController().signal });
      t.match(await checkWith(accounts.alice.account, accounts.alice.password), { valid: true }, 'atheme-jsonrpc');
      t.same(await checkWith(accounts.alice.account, 'wrong'), { valid: false, reason: null }, 'a wrong password');
      t.same(await checkWith(`nobody${tag}`, 'x'), { valid: false, reason: null }, 'an unknown account');
    }
    if (!offersSasl(network.network)) {
      // The sasl backend on a server without SASL says so, and names the backends that work.
      const sasl = saslBackend({
        host: network.host,
        port: network.hubPort,
        tls: false,
        tlsVerify: false,
        timeoutMs: 10000,
        servicesOnline: () => isOnline(bot.host.irc, 'NickServ'),
      });
      await t.rejects(
        sasl.check({ nick: 'x', password: 'y', sourceIp: '127.0.0.1', signal: new AbortController().signal }),
        { message: NO_SASL_MESSAGE },
      );
    }
  });

  t.test('IDENTIFY: none after SASL, one where the server has no SASL, never a loop', async (t) => {
    // The old loop sent IDENTIFY every 5 s to a server without SASL: 12 s after the login shows it gone.
    const since = Date.now() - loggedInAt;
    if (since < 12000) await new Promise((resolve) => setTimeout(resolve, 12000 - since));
    const identifies = bot.sent.filter((line) => /^PRIVMSG NickServ :?IDENTIFY /i.test(line)).length;
    const hasSasl = offersSasl(kind);
    t.equal(identifies, hasSasl ? 0 : 1, `${identifies} IDENTIFY sent over the whole run`);
    t.equal(bot.host.irc.state.account, accounts.bot.account, 'still logged in');
  });
}
