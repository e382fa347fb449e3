/**
 * The collector and the public /api/irc/ paths on the real test network, with a
 * crowd of 200 clients over hub and leaf (some through WEBIRC), secret and
 * private channels, invisible users in no channel, and the bot opered and logged
 * in. Every HTTP answer is checked against the OpenAPI document the bot serves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startCrowd, type Crowd } from '../../scripts/crowd.js';
import { eventually, startBot, type TestBot, type TestBotOptions } from '../support/bot.js';
import { IrcClient, type IrcMessage } from '../support/irc-client.js';
import type { ModelChange } from '../../lib/model/slice.js';
import type { TokensSlice } from '../../plugins/tokens/model.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { OpenApiValidator } from '../plugins/api/fixtures/openapi-validator.js';

const tag = Math.random().toString(36).slice(2, 6);
const botAccount = `coll${tag}`;
const botPassword = 'collector-pass';
const secretChannel = `#hush${tag}`;
const privateChannel = `#closed${tag}`;
const crowdChannels = ['#crowd0', '#crowd1', '#crowd2', '#crowd3', '#crowd4', '#crowd5'];

let network: TestNetwork;
let crowd: Crowd | undefined;
let bot: TestBot;
let validator: OpenApiValidator;
const clients: IrcClient[] = [];
/** Every public answer body, with the path asked: none may show a secret or private channel. */
const answers: { path: string; status: number; text: string }[] = [];

type Body = Record<string, unknown> & { results: Record<string, unknown>[] };

async function client(nick: string, port: number, caps?: string[]): Promise<IrcClient> {
  const irc = new IrcClient({ port, nick, ...(caps ? { caps } : {}) });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

/** GET a path of the bot's API; the answer, headers included, must match the OpenAPI document. */
async function get(apiPath: string, init: RequestInit = {}): Promise<{ response: Response; body: Body }> {
  const response = await fetch(bot.url + apiPath, init);
  const text = await response.text();
  const body = text === '' ? undefined : (JSON.parse(text) as unknown);
  const problems = validator.check(init.method ?? 'GET', apiPath, response.status, body, response.headers);
  if (problems.length > 0) throw new Error(`the answer does not match the OpenAPI document: ${problems.join('; ')}`);
  answers.push({ path: apiPath, status: response.status, text });
  return { response, body: body as Body };
}

async function listAll(apiPath: string): Promise<Record<string, unknown>[]> {
  const results: Record<string, unknown>[] = [];
  let next: string | null = `${apiPath}?limit=50`;
  while (next) {
    const { body } = await get(next);
    results.push(...body.results);
    next = body.next as string | null;
  }
  return results;
}

/** Change the servers' shared config in the network's run dir, and make both servers reload it. */
async function reconfigure(from: string, to: string): Promise<void> {
  const file = path.join(network.runDir, 'inspircd-common.conf');
  const config = fs.readFileSync(file, 'utf8');
  if (!config.includes(from)) throw new Error(`${file} no longer has ${from}; adapt this test`);
  fs.writeFileSync(file, config.replace(from, to));
  const oper = await client(`rh${Math.random().toString(36).slice(2, 6)}${tag}`, network.hubPort);
  await oper.request(`OPER ${network.operName} ${network.operPass}`, '381');
  oper.send('REHASH');
  oper.send('REHASH leaf.test.net');
  await oper.waitFor((line) => line.command === 'NOTICE' && /rehashed/i.test(line.params.at(-1) ?? ''));
  await oper.quit();
}

/**
 * A client that sets itself invisible (+i) and joins nothing, so only WHO can find it;
 * through WEBIRC with `ip` when given.
 */
async function invisibleClient(nick: string, port: number, ip?: string): Promise<IrcClient> {
  const irc = new IrcClient({
    port,
    nick,
    ...(ip ? { webirc: { password: network.webircPass, hostname: ip, ip } } : {}),
  });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  await irc.request(`MODE ${nick} +i`, 'MODE');
  return irc;
}

/** The WHOX token of the independent operator's WHO. */
const ORACLE_TOKEN = '91';

/** Every user an independent operator sees with `WHO *`, by folded nick, with server and IP. */
async function whoEveryone(oper: IrcClient): Promise<Map<string, { nick: string; server: string; ip: string }>> {
  const lines = await oper.request(`WHO * %tisn,${ORACLE_TOKEN}`, '315', 20000);
  const users = new Map<string, { nick: string; server: string; ip: string }>();
  for (const line of lines) {
    // WHOX answers in the fixed order t, i, s, n whatever order they were asked in.
    const [, token, ip = '', server = '', nick = ''] = line.params;
    if (line.command !== '354' || token !== ORACLE_TOKEN) continue;
    users.set(bot.host.model.fold(nick), { nick, server, ip });
  }
  return users;
}

/** Resolves after `count` more completed syncs of the collector. */
function syncs(count: number, timeoutMs = 20000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const timer = setTimeout(() => {
      off();
      reject(new Error(`only ${seen} of ${count} syncs completed within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = bot.host.model.on('change', (change: ModelChange) => {
      if (change.kind !== 'synced' || ++seen < count) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** An independent reading of LUSERS, as a client sees it. */
function lusersOf(lines: IrcMessage[]) {
  const text = (code: string) => lines.find((line) => line.command === code)?.params.at(-1) ?? '';
  const param = (code: string) => Number(lines.find((line) => line.command === code)?.params[1] ?? 0);
  const counts = /There are (\d+) users and (\d+) invisible on (\d+) servers/.exec(text('251'))!;
  const global = /Current global users: (\d+)\s+Max: (\d+)/.exec(text('266'))!;
  return {
    users: Number(global[1]),
    invisible: Number(counts[2]),
    channels: param('254'),
    operators: param('252'),
    servers: Number(counts[3]),
    max_users: Number(global[2]),
  };
}

/** LIST as a normal user sees it: name → users, topic, modes (InspIRCd shows "[+modes] topic"). */
function listOf(lines: IrcMessage[]) {
  const channels = new Map<string, { users: number; topic: string; modes: string }>();
  for (const line of lines) {
    if (line.command !== '322' || line.params[1] === '*') continue;
    const match = /^\[\+([a-zA-Z]*)\] ?(.*)$/s.exec(line.params[3] ?? '')!;
    channels.set(line.params[1]!, {
      users: Number(line.params[2]),
      topic: match[2]!,
      modes: match[1] ? `+${[...match[1]].sort().join('')}` : '',
    });
  }
  return channels;
}

/** The bot's options; its store outlives it, so that it can be restarted on it. */
const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'collector-store-'));
const botOptions: TestBotOptions = {
  storeDir,
  nick: botAccount,
  sasl: { account: botAccount, password: botPassword },
  plugins: {
    stats: {
      refresh_seconds: 2,
      latency_seconds: 1,
      commands_refresh_seconds: 3600,
      // Chunked WHO on this small network too, so the path a big network takes runs here.
      who_chunk_above: 50,
      join: '*',
      max_channels: 50,
    },
    api: {},
    // For the token tier's user details; tokens are made on the slice, as TOKEN CREATE would.
    tokens: { rate_limit: { enabled: false } },
  },
};

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: botAccount, password: botPassword });
  // Secret and private channels, each with a second member, made before the bot arrives.
  const hush = await client(`hush${tag}`, network.leafPort);
  await hush.request(`JOIN ${secretChannel}`, '366');
  await hush.request(`MODE ${secretChannel} +s`, 'MODE');
  await hush.request(`TOPIC ${secretChannel} :the secret topic ${tag}`, 'TOPIC');
  const closed = await client(`closed${tag}`, network.hubPort);
  await closed.request(`JOIN ${privateChannel}`, '366');
  await closed.request(`MODE ${privateChannel} +p`, 'MODE');
  const lurker = await client(`lurk${tag}`, network.hubPort);
  lurker.send('MODE lurk' + tag + ' +i');
  await lurker.request(`JOIN ${secretChannel},${privateChannel}`, '366');
  crowd = await startCrowd({
    host: network.host,
    ports: [network.hubPort, network.leafPort],
    clients: 200,
    channels: crowdChannels,
    perClient: 2,
    chatIntervalMs: 0,
    connectGapMs: 10,
    // 25 members connect through WEBIRC with public IPs the operator bot must see.
    webircEvery: 8,
    webircPass: network.webircPass,
  });
  bot = await startBot(network, botOptions);
  const document = (await (await fetch(`${bot.url}/api/openapi.json`)).json()) as Record<string, unknown>;
  validator = new OpenApiValidator(document);
  await eventually(() => bot.host.model.ready, 'the first sync', 30000);
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await crowd?.stop();
  await bot?.stop();
  await network?.stop();
  fs.rmSync(storeDir, { recursive: true, force: true });
});

t.test('the crowd is on both servers', async (t) => {
  const ports = new Set(crowd!.clients.map((member) => member.port));
  t.equal(crowd!.clients.length, 200);
  t.same([...ports].sort(), [network.hubPort, network.leafPort].sort());
});

t.test("/api/irc/stats/ equals the network's LUSERS", async (t) => {
  const observer = await client(`obs${tag}`, network.leafPort);
  let expected: ReturnType<typeof lusersOf> | undefined;
  let actual: Record<string, unknown> | undefined;
  await eventually(
    async () => {
      expected = lusersOf(await observer.request('LUSERS', '266'));
      const { body } = await get('/api/irc/stats/');
      actual = body;
      return Object.entries(expected).every(([key, value]) => body[key] === value);
    },
    'the stats to equal LUSERS',
    15000,
  ).catch(() => undefined);
  t.match(actual, expected, "users, invisible, channels, operators, servers and max users are the network's");
  t.ok(expected!.users >= 200, 'the crowd is counted');
  t.match(actual, { synced_as_operator: true, synced_at: String });
});

t.test('channels equal LIST and members equal NAMES', async (t) => {
  const observer = await client(`view${tag}`, network.hubPort, ['multi-prefix']);
  let list = new Map<string, { users: number; topic: string; modes: string }>();
  let api: Record<string, unknown>[] = [];
  const same = () =>
    api.length === list.size &&
    api.every((channel) => {
      const listed = list.get(channel.name as string);
      return (
        listed && listed.users === channel.users && listed.topic === channel.topic && listed.modes === channel.modes
      );
    });
  await eventually(
    async () => {
      list = listOf(await observer.request('LIST', '323'));
      api = await listAll('/api/irc/channels/');
      return same();
    },
    'the channel list to equal LIST',
    15000,
  ).catch(() => undefined);
  t.same(
    Object.fromEntries(
      api.map((channel) => [channel.name, { users: channel.users, topic: channel.topic, modes: channel.modes }]),
    ),
    Object.fromEntries(list),
    'every public channel with its users, topic and modes',
  );
  t.ok(
    crowdChannels.every((name) => list.has(name)),
    'the crowd channels are listed',
  );

  for (const name of crowdChannels) {
    let names: string[] = [];
    let members: string[] = [];
    await eventually(
      async () => {
        const lines = await observer.request(`NAMES ${name}`, '366');
        names = lines
          .filter((line) => line.command === '353')
          .flatMap((line) => (line.params.at(-1) ?? '').split(' ').filter(Boolean))
          .sort();
        const { body } = await get(`/api/irc/channels/${encodeURIComponent(name)}/`);
        members = (body.members as { nick: string; prefix: string }[])
          .map((member) => member.prefix + member.nick)
          .sort();
        return body.members_known === true && names.join(' ') === members.join(' ');
      },
      `the members of ${name} to equal NAMES`,
      10000,
    ).catch(() => undefined);
    t.same(members, names, `${name}: members and prefixes equal NAMES (${names.length})`);
    t.ok(
      names.some((entry) => entry.startsWith('@')),
      `${name} has an operator, shown with its prefix`,
    );
  }
  const upper = await get('/api/irc/channels/%23CROWD0/');
  t.equal(upper.body.name, '#crowd0', 'a name is found whatever its case');
});

t.test('secret and private channels never appear on public paths', async (t) => {
  const model = bot.host.model;
  t.match(
    model.channels.get(secretChannel),
    { hidden: true, joined: false },
    'the operator bot sees the secret channel',
  );
  t.match(model.channels.get(privateChannel), { hidden: true, joined: false }, 'and the private one');
  for (const name of [secretChannel, privateChannel]) {
    const { response, body } = await get(`/api/irc/channels/${encodeURIComponent(name)}/`);
    t.equal(response.status, 404);
    t.same(body, { error: { status: 404, code: 'channel_not_found', message: `No visible channel named ${name}` } });
  }
  await listAll('/api/irc/channels/');
  await get(`/api/irc/channels/?search=${tag}`);
  // A 404 for a name echoes the name asked for; every other answer (lists, searches) must not name them.
  const echoes = (asked: string, status: number): boolean =>
    status === 404 && [secretChannel, privateChannel].some((name) => asked.includes(encodeURIComponent(name)));
  const leaks = answers.filter(
    ({ path: asked, status, text }) =>
      !echoes(asked, status) &&
      (text.includes(secretChannel) || text.includes(privateChannel) || text.includes(`the secret topic ${tag}`)),
  );
  t.same(leaks, [], 'no answer names them, unless it was a 404 for that very name');
  const lurker = `lurk${tag}`;
  t.notOk(
    answers.some(({ text }) => text.includes(lurker)),
    'nor a user who is only in them',
  );
});

t.test('joins, parts, nick changes and quits show within 2 seconds', async (t) => {
  const channel = crowdChannels[0]!;
  const nick = `live${tag}`;
  const member = await client(nick, network.leafPort);
  const membersNow = async () => {
    const { body } = await get(`/api/irc/channels/${encodeURIComponent(channel)}/`);
    return (body.members as { nick: string }[]).map((entry) => entry.nick);
  };
  const within2s = async (what: string, check: (members: string[]) => boolean) => {
    const started = Date.now();
    await eventually(async () => check(await membersNow()), what, 2000);
    t.ok(Date.now() - started <= 2000, `${what} in ${Date.now() - started} ms`);
  };
  await member.request(`JOIN ${channel}`, '366');
  await within2s('a join', (members) => members.includes(nick));
  const { body: detail } = await get(`/api/irc/channels/${encodeURIComponent(channel)}/`);
  t.equal(detail.users, (detail.members as unknown[]).length, 'the user count follows');

  member.send(`NICK ${nick}x`);
  await member.waitFor((line) => line.command === 'NICK');
  await within2s('a nick change', (members) => members.includes(`${nick}x`) && !members.includes(nick));

  await member.request(`PART ${channel}`, 'PART');
  await within2s('a part', (members) => !members.includes(`${nick}x`));

  await member.request(`JOIN ${channel}`, '366');
  await within2s('a join again', (members) => members.includes(`${nick}x`));
  await member.quit('bye');
  await within2s('a quit', (members) => !members.includes(`${nick}x`));
});

t.test('WHO completeness: every user the network has, invisible ones included, with WEBIRC IPs', async (t) => {
  const model = bot.host.model;
  const oracle = await client(`who${tag}`, network.leafPort);
  await oracle.request(`OPER ${network.operName} ${network.operPass}`, '381');
  // Invisible, in no channel, on both servers, two through WEBIRC (one IPv6): only WHO can find them.
  const hidden = [
    { nick: `inva${tag}`, port: network.hubPort, ip: undefined },
    { nick: `invb${tag}`, port: network.leafPort, ip: undefined },
    { nick: `gwa${tag}`, port: network.hubPort, ip: '198.51.100.7' },
    { nick: `gwb${tag}`, port: network.leafPort, ip: '2001:db8::5' },
  ];
  const connections = await Promise.all(hidden.map(({ nick, port, ip }) => invisibleClient(nick, port, ip)));
  const webircMembers = crowd!.clients.filter((member) => member.ip !== null);
  t.ok(webircMembers.length >= 20, `${webircMembers.length} crowd members came through WEBIRC`);

  /** Compare the model with WHO * and LUSERS, retrying over a few syncs in case one raced a change. */
  const compareWithNetwork = async (when: string) => {
    let truth = new Map<string, { nick: string; server: string; ip: string }>();
    let lusers: ReturnType<typeof lusersOf> | undefined;
    let known: string[] = [];
    const same = () => known.join(' ') === [...truth.keys()].sort().join(' ');
    let syncsWaited = 0;
    do {
      // The second of two syncs surely started after everything before it happened.
      await syncs(2);
      syncsWaited += 2;
      truth = await whoEveryone(oracle);
      lusers = lusersOf(await oracle.request('LUSERS', '266'));
      known = [...model.users.all()].map((user) => model.fold(user.nick)).sort();
    } while (!same() && syncsWaited < 6);
    t.comment(`${when}: compared after ${syncsWaited} syncs`);
    t.same(known, [...truth.keys()].sort(), `${when}: the model holds every user WHO * shows, and no one else`);
    const services = [...truth.values()].filter((entry) => entry.server === 'services.test.net').length;
    t.ok(services >= 4, `${when}: ${services} services pseudo-users`);
    t.equal(
      model.users.size,
      lusers!.users + services,
      `${when}: as many users as LUSERS counts (${lusers!.users}) plus the services' pseudo-users`,
    );
    t.ok(lusers!.invisible >= hidden.length, `${when}: LUSERS counts ${lusers!.invisible} invisible users`);
    return truth;
  };

  const truth = await compareWithNetwork('after a sync');
  for (const { nick, port, ip } of hidden) {
    const user = model.users.get(nick);
    t.match(
      user,
      { server: port === network.hubPort ? 'hub.test.net' : 'leaf.test.net', ip: ip ?? '127.0.0.1' },
      `the invisible ${nick} is in the model, with its server and IP`,
    );
    t.equal(user?.channels.size, 0, `${nick} shares no channel with the bot: WHO found it`);
    t.equal(truth.get(model.fold(nick))?.ip, ip ?? '127.0.0.1', `${nick}: the network agrees on the IP`);
  }
  t.same(
    Object.fromEntries(webircMembers.map((member) => [member.nick, model.users.get(member.nick)?.ip ?? null])),
    Object.fromEntries(webircMembers.map((member) => [member.nick, member.ip])),
    "each WEBIRC member's IP is the one it connected with",
  );
  t.ok(
    crowd!.clients.every((member) => member.ip !== null || model.users.get(member.nick)?.ip === '127.0.0.1'),
    'every other member has the loopback IP it connected from',
  );

  // Between syncs: an invisible WEBIRC user quits (the bot cannot see that QUIT), another one connects.
  const [gone] = hidden.splice(2, 1);
  await connections[2]!.quit('gone');
  const arrival = { nick: `gwc${tag}`, port: network.leafPort, ip: '203.0.113.44' };
  hidden.push(arrival);
  connections.push(await invisibleClient(arrival.nick, arrival.port, arrival.ip));
  await compareWithNetwork('after a re-sync');
  t.notOk(model.users.get(gone!.nick), `${gone!.nick}, who quit, is gone`);
  t.match(model.users.get(arrival.nick), { ip: arrival.ip, server: 'leaf.test.net' }, `${arrival.nick} arrived`);

  await Promise.all(connections.map((irc) => irc.quit('done')));
  await oracle.quit('done');
});

t.test('real hosts: a vhost is the host shown, the host behind it is real_host (an operator sees it)', async (t) => {
  const model = bot.host.model;
  const oper = await client(`vh${tag}`, network.hubPort);
  await oper.request(`OPER ${network.operName} ${network.operPass}`, '381');
  // One WEBIRC member (its real host is the IP it claimed) and one plain member (127.0.0.1) get a vhost.
  const gateway = crowd!.clients.find((member) => member.ip !== null)!;
  const plain = crowd!.clients.find((member) => member.ip === null)!;
  const vhosts = new Map([
    [gateway.nick, `gw-${tag}.vhost.example`],
    [plain.nick, `plain-${tag}.vhost.example`],
  ]);
  for (const [nick, vhost] of vhosts) oper.send(`CHGHOST ${nick} ${vhost}`);
  // The bot shares a channel with both: it sees the CHGHOST (cap chghost) as it happens.
  await eventually(
    () => [...vhosts].every(([nick, vhost]) => model.users.get(nick)?.host === vhost),
    'the vhosts, live',
    10000,
  );
  // The second of two syncs surely started after the vhosts were set.
  await syncs(2);
  t.match(model.users.get(gateway.nick), { host: vhosts.get(gateway.nick), realHost: gateway.ip });
  t.match(model.users.get(plain.nick), { host: vhosts.get(plain.nick), realHost: '127.0.0.1' });
  const others = crowd!.clients.filter((member) => !vhosts.has(member.nick));
  t.same(
    others.filter((member) => model.users.get(member.nick)?.realHost !== (member.ip ?? '127.0.0.1')).map((m) => m.nick),
    [],
    'every other member: the real host is where it connected from',
  );

  const tokens = model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
  const { token, secret } = tokens.create('tester', 'real hosts', { account: 'tester', via: 'irc' });
  tokens.grant(token, ['irc.user'], { account: 'tester', via: 'irc' });
  const { response, body } = await get(`/api/irc/users/${encodeURIComponent(gateway.nick)}/`, {
    headers: { Authorization: `Token ${secret}` },
  });
  t.equal(response.status, 200);
  t.match(body, {
    host: vhosts.get(gateway.nick),
    hostmask: `${gateway.nick}!${model.users.get(gateway.nick)!.ident}@${vhosts.get(gateway.nick)}`,
    real_host: gateway.ip,
    ip: gateway.ip,
  });
  await oper.quit('done');
});

t.test('servers and latency: hub and leaf answer with a number', async (t) => {
  let latency: Record<string, unknown>[] = [];
  await eventually(
    async () => {
      latency = (await get('/api/irc/latency/')).body.results;
      return ['hub.test.net', 'leaf.test.net'].every((name) =>
        latency.some((item) => item.server === name && typeof item.latency_ms === 'number'),
      );
    },
    'numeric latency for hub and leaf',
    10000,
  ).catch(() => undefined);
  for (const name of ['hub.test.net', 'leaf.test.net']) {
    const item = latency.find((entry) => entry.server === name);
    t.type(item?.latency_ms, 'number', `${name} has a latency`);
    t.type(item?.measured_at, 'string');
  }
  const services = latency.find((entry) => entry.server === 'services.test.net');
  t.ok(
    services && (services.latency_ms === null || typeof services.latency_ms === 'number'),
    'services: a number or null',
  );

  const servers = await listAll('/api/irc/servers/');
  t.same(servers.map((server) => server.name).sort(), ['hub.test.net', 'leaf.test.net', 'services.test.net']);
  t.match(
    servers.find((server) => server.name === 'hub.test.net'),
    { hops: 0, uplink: null, is_services: false },
  );
  t.match(
    servers.find((server) => server.name === 'leaf.test.net'),
    { hops: 1, uplink: 'hub.test.net' },
  );
  t.match(
    servers.find((server) => server.name === 'services.test.net'),
    { is_services: true },
  );
  const onServers = servers.reduce((sum, server) => sum + ((server.users as number | null) ?? 0), 0);
  t.ok(onServers >= 200, `MAP counts users per server (${onServers})`);
  const leaf = await get('/api/irc/servers/LEAF.test.net/');
  t.equal(leaf.body.name, 'leaf.test.net');
});

t.test("/api/irc/commands/ lists the services' commands with descriptions", async (t) => {
  let groups: Record<string, unknown>[] = [];
  await eventually(
    async () => {
      const { response, body } = await get('/api/irc/commands/');
      groups = response.status === 200 ? body.results : [];
      return groups.length > 0;
    },
    'the service commands',
    20000,
  );
  const description = (service: string, name: string) =>
    (
      groups.find((group) => group.service === service)?.commands as
        { name: string; description: string | null }[] | undefined
    )?.find((command) => command.name === name)?.description;
  t.match(description('NickServ', 'REGISTER'), /\w/, 'NickServ REGISTER');
  t.match(description('NickServ', 'IDENTIFY'), /\w/, 'NickServ IDENTIFY');
  t.match(description('ChanServ', 'REGISTER'), /\w/, 'ChanServ REGISTER (listed to a logged-in account)');
  t.notOk(
    groups.some((group) => group.service === 'SaslServ'),
    'SaslServ is not asked',
  );
});

t.test('unknown names, HEAD, ETag', async (t) => {
  const channel = await get('/api/irc/channels/%23nope-nothing/');
  t.equal(channel.response.status, 404);
  t.same(channel.body, {
    error: { status: 404, code: 'channel_not_found', message: 'No visible channel named #nope-nothing' },
  });
  const server = await get('/api/irc/servers/nope.test.net/');
  t.same(server.body, {
    error: { status: 404, code: 'server_not_found', message: 'No linked server named nope.test.net' },
  });
  const first = await get('/api/irc/servers/');
  const etag = first.response.headers.get('etag')!;
  const again = await get('/api/irc/servers/', { headers: { 'If-None-Match': etag } });
  t.ok([200, 304].includes(again.response.status), 'a 304 unless a latency probe changed the list meanwhile');
  const head = await get('/api/irc/stats/', { method: 'HEAD' });
  t.equal(head.response.status, 200);
  t.match(head.response.headers.get('cache-control'), /^public, max-age=\d+$/);
});

t.test('a network that shows no modes in LIST: the operator bot asks MODE, secret channels stay hidden', async (t) => {
  await reconfigure('<options ', '<options modesinlist="no" ');
  const lateSecret = `#late${tag}`;
  const lateOpen = `#open${tag}`;
  const owner = await client(`own${tag}`, network.leafPort);
  await eventually(
    async () =>
      (await owner.request('LIST', '323')).every(
        (line) => line.command !== '322' || !/^\[\+/.test(line.params[3] ?? ''),
      ),
    'LIST to show no modes any more',
    10000,
  );
  await owner.request(`JOIN ${lateSecret}`, '366');
  await owner.request(`MODE ${lateSecret} +s`, 'MODE');
  await owner.request(`JOIN ${lateOpen}`, '366');
  await owner.request(`TOPIC ${lateOpen} :opened late`, 'TOPIC');
  await eventually(
    async () => (await listAll('/api/irc/channels/')).some((channel) => channel.name === lateOpen),
    'the new public channel to be listed once MODE said it is public',
    15000,
  );
  t.match(bot.host.model.channels.get(lateSecret), { hidden: true }, 'the secret one is known, and hidden');
  t.equal((await get(`/api/irc/channels/${encodeURIComponent(lateSecret)}/`)).response.status, 404);
  const names = (await listAll('/api/irc/channels/')).map((channel) => channel.name);
  t.notOk(names.includes(lateSecret) || names.includes(secretChannel) || names.includes(privateChannel));
  t.ok(
    crowdChannels.every((name) => names.includes(name)),
    'the crowd channels are still public',
  );
});

t.test('the collector kept up without a failure', async (t) => {
  const syncs = bot.logs.filter((line) => /\[stats\] synced /.test(line));
  t.ok(syncs.length >= 2, `${syncs.length} syncs`);
  const durations = syncs.map((line) => Number(/ ms=(\d+)/.exec(line)?.[1]));
  t.comment(`sync durations (ms): ${durations.join(', ')}`);
  t.same(
    bot.logs.filter((line) => /(WARN|ERROR) +\[stats\]/.test(line)),
    [],
    'no sync, latency or HELP round failed',
  );
});

t.test('after a restart the service commands are served at once, as they were read before', async (t) => {
  const before = await get('/api/irc/commands/');
  t.equal(before.response.status, 200);
  await bot.stop();
  bot = await startBot(network, botOptions);
  // The bot is registered but has not synced, so it has not asked the services yet.
  const after = await get('/api/irc/commands/');
  t.equal(after.response.status, 200, 'the first answer after the restart is 200, not 503');
  t.same(after.body.results, before.body.results, 'the same commands');
  t.equal(after.body.fetched_at, before.body.fetched_at, 'with the time they were read');
});
