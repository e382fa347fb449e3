/**
 * The network statistics on the real test network: a silent crowd whose
 * members send known numbers of lines, connect through WEBIRC from addresses
 * of known countries and answer CTCP VERSION with known clients; an opered
 * bot; a token approved over IRC. Every answer is checked against the OpenAPI
 * document the bot serves, and no public answer may carry an IP or an ident.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startCrowd, type Crowd, type CrowdMember } from '../../scripts/crowd.js';
import { askBot, eventually, startBot, type TestBot } from '../support/bot.js';
import { IrcClient } from '../support/irc-client.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { OpenApiValidator } from '../plugins/api/fixtures/openapi-validator.js';

const tag = Math.random().toString(36).slice(2, 6);
const adminAccount = `nsadm${tag}`;
const password = 'netstats-pass';
const channels = ['#ns0', '#ns1', '#ns2'];

/** The version the collector reads from each crowd client's reply. */
const EXPECTED_VERSIONS: Record<string, string | null> = {
  irssi: '1.4.5',
  WeeChat: '4.1.1',
  HexChat: '2.16.2',
  mIRC: '7.76',
  Textual: '7.2.3',
  'The Lounge': '4.4.3',
  KiwiIRC: '1.7.1',
  Quassel: '0.14.0',
  ZNC: '1.9.0',
  Konversation: '23.08.4',
  IRCCloud: null,
  Halloy: '2024.12',
  senpai: '0.3.0',
  gamja: null,
};

let network: TestNetwork;
let crowd: Crowd | undefined;
let bot: TestBot;
let storeDir: string;
let validator: OpenApiValidator;
let token = '';
const clients: IrcClient[] = [];
/** Every public answer, to look for private data in. */
const publicAnswers: { path: string; text: string }[] = [];
/** The lines the test sent: channel → nick → lines. */
const sent = new Map<string, Map<string, number>>();

type Body = Record<string, unknown> & { results: Record<string, unknown>[] };

/** GET a path of the bot's API; the answer, headers included, must match the OpenAPI document. */
async function get(apiPath: string, init: RequestInit = {}): Promise<{ response: Response; body: Body }> {
  const response = await fetch(bot.url + apiPath, init);
  const text = await response.text();
  const body = JSON.parse(text) as Body;
  const problems = validator.check('GET', apiPath, response.status, body, response.headers);
  if (problems.length > 0) throw new Error(`the answer does not match the OpenAPI document: ${problems.join('; ')}`);
  if (!apiPath.startsWith('/api/')) publicAnswers.push({ path: apiPath, text });
  return { response, body };
}

const withToken = () => ({ headers: { Authorization: `Token ${token}` } });

async function launch(): Promise<void> {
  bot = await startBot(network, {
    storeDir,
    admins: [adminAccount],
    plugins: {
      stats: {
        refresh_seconds: 2,
        latency_seconds: 60,
        commands_refresh_seconds: 3600,
        join: '*',
        history_seconds: 1,
        save_seconds: 1,
        version_requests_per_second: 10,
      },
      api: { cache_seconds: 0 },
      tokens: { rate_limit: { enabled: false } },
    },
  });
  await eventually(() => bot.host.model.ready, 'the first sync', 30000);
  const document = (await (await fetch(`${bot.url}/api/openapi.json`)).json()) as Record<string, unknown>;
  validator = new OpenApiValidator(document);
  await eventually(
    () => channels.every((name) => bot.host.model.channels.get(name)?.joined),
    'the bot to join the crowd channels',
    15000,
  );
}

/** Make `member` say `lines` lines in `channel`, and remember them. */
function say(member: CrowdMember, channel: string, lines: number): void {
  for (let i = 0; i < lines; i++) crowd!.say(member.nick, channel, `line ${i + 1} of ${lines}`);
  const byNick = sent.get(channel) ?? new Map<string, number>();
  byNick.set(member.nick, (byNick.get(member.nick) ?? 0) + lines);
  sent.set(channel, byNick);
}

function fold(nick: string): string {
  return bot.host.model.fold(nick);
}

/** Expected leaderboard: most lines first, ties by folded nick. */
function leaderboard(counts: Map<string, number>): { nick: string; lines: number }[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (fold(a[0]) < fold(b[0]) ? -1 : 1))
    .map(([nick, lines]) => ({ nick, lines }));
}

function totals(): Map<string, number> {
  const byNick = new Map<string, number>();
  for (const counts of sent.values()) {
    for (const [nick, lines] of counts) byNick.set(nick, (byNick.get(nick) ?? 0) + lines);
  }
  return byNick;
}

async function history(): Promise<{ time: string; users: number }[]> {
  return (await get('/network/data/history/?limit=1000')).body.results as { time: string; users: number }[];
}

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: adminAccount, password });
  storeDir = mkdtempSync(path.join(tmpdir(), 'netstats-integration-'));
  crowd = await startCrowd({
    host: network.host,
    ports: [network.hubPort, network.leafPort],
    clients: 60,
    channels,
    perClient: 2,
    chatIntervalMs: 0,
    webircEvery: 2,
    webircPass: network.webircPass,
    connectGapMs: 10,
  });
  await launch();
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await crowd?.stop();
  await bot?.stop();
  await network?.stop();
  if (storeDir) rmSync(storeDir, { recursive: true, force: true });
});

t.test('top users and top channels today: exactly the lines sent, in order, ties by nick', async (t) => {
  const [first, second] = channels as [string, string];
  const inFirst = crowd!.clients.filter((member) => member.channels.includes(first));
  const inSecond = crowd!.clients.filter((member) => member.channels.includes(second) && !inFirst.includes(member));
  t.ok(inFirst.length >= 4 && inSecond.length >= 1, 'enough members to talk');
  // 6, 4, 4 (a tie), 1 in the first channel; 2 in the second from someone else.
  say(inFirst[0]!, first, 1);
  say(inFirst[1]!, first, 4);
  say(inFirst[2]!, first, 6);
  say(inFirst[3]!, first, 4);
  say(inSecond[0]!, second, 2);
  const expectedUsers = leaderboard(totals());
  let status: Body | undefined;
  await eventually(
    async () => {
      status = (await get('/network/data/status/')).body;
      return JSON.stringify(status.top_users_today) === JSON.stringify(expectedUsers);
    },
    'the leaderboard to show the lines sent',
    15000,
  ).catch(() => undefined);
  t.same(status?.top_users_today, expectedUsers, 'nicks and counts, most first, ties by nick');
  t.match(status?.top_channels_today, [
    { name: first, lines: 15, users: Number },
    { name: second, lines: 2, users: Number },
  ]);
  t.equal((status?.top_channels_today as unknown[]).length, 2, 'no other channel had a line');

  const { body: profile } = await get(`/network/data/channel/${encodeURIComponent(first)}/`);
  const hourly = profile.hourly_lines as number[];
  t.equal(hourly.length, 24);
  t.equal(
    hourly.reduce((sum, lines) => sum + lines, 0),
    15,
    'hourly_lines sums to the lines sent in the channel',
  );
  t.equal(hourly[new Date().getUTCHours()], 15, 'all of them in this (UTC) hour');
  t.same(profile.top_users_today, leaderboard(sent.get(first)!));
  const overview = profile.channel as { peak_users: number; record_users: number; record_users_at: string };
  t.ok(overview.peak_users >= inFirst.length, 'the peak counts every member');
  t.ok(overview.record_users >= overview.peak_users, `the record (${overview.record_users}) is at least the peak`);
  t.ok(Date.parse(overview.record_users_at) <= Date.now(), 'reached before now');

  const speaker = inFirst[2]!;
  const { body: user } = await get(`/network/data/user/${encodeURIComponent(speaker.nick)}/`);
  t.equal(
    (user.hourly_activity as number[]).reduce((sum, lines) => sum + lines, 0),
    6,
  );
  t.match(user.user, { nick: speaker.nick, online: true, channels: speaker.channels.slice().sort() });
});

t.test('countries: exactly the WEBIRC members, by the country of their IP', async (t) => {
  const expected = new Map<string, number>();
  for (const member of crowd!.clients) {
    if (member.country) expected.set(member.country, (expected.get(member.country) ?? 0) + 1);
  }
  t.ok(expected.size >= 20 && [...expected.values()].some((users) => users > 1), 'many countries, some twice');
  const asList = (results: Record<string, unknown>[]) =>
    Object.fromEntries(results.map((item) => [item.country_code, item.users]));
  const sorted = (counts: Record<string, unknown>) => JSON.stringify(Object.entries(counts).sort());
  let results: Record<string, unknown>[] = [];
  await eventually(
    async () => {
      results = (await get('/network/data/countries/?limit=1000')).body.results;
      return sorted(asList(results)) === sorted(Object.fromEntries(expected));
    },
    'the country counts',
    15000,
  ).catch(() => undefined);
  t.same(asList(results), Object.fromEntries(expected), 'the country of every WEBIRC member, and no other');
  t.same(
    results.map((item) => item.users),
    [...expected.values()].sort((a, b) => b - a),
    'most users first',
  );
  t.equal(results.find((item) => item.country_code === 'GB')?.country, 'United Kingdom');
  const { body } = await get('/network/data/countries/');
  const plain = crowd!.clients.filter((member) => !member.country).length;
  t.ok((body.unknown as number) >= plain, `the ${plain} members on 127.0.0.1 are unknown`);

  // One channel's members, the same way: the crowd members in it, the bot left out.
  const first = channels[0]!;
  const members = crowd!.clients.filter((member) => member.channels.includes(first));
  const inChannel = new Map<string, number>();
  for (const member of members) {
    if (member.country) inChannel.set(member.country, (inChannel.get(member.country) ?? 0) + 1);
  }
  const { body: profile } = await get(`/network/data/channel/${encodeURIComponent(first)}/?top=100`);
  const shares = profile.member_countries as { results: Record<string, unknown>[] };
  t.same(sorted(asList(shares.results)), sorted(Object.fromEntries(inChannel)), `${first}: its members by country`);
  t.match(shares, { other: 0, unknown: members.filter((member) => !member.country).length, total: members.length });
});

t.test('clients: exactly the CTCP VERSION replies of the crowd', async (t) => {
  const expected = new Map<string, Map<string | null, number>>();
  for (const member of crowd!.clients) {
    const versions = expected.get(member.client) ?? new Map<string | null, number>();
    const version = EXPECTED_VERSIONS[member.client]!;
    versions.set(version, (versions.get(version) ?? 0) + 1);
    expected.set(member.client, versions);
  }
  const wanted = Object.fromEntries(
    [...expected].map(([client, versions]) => [client, [...versions.values()].reduce((a, b) => a + b, 0)]),
  );
  let results: Record<string, unknown>[] = [];
  await eventually(
    async () => {
      results = (await get('/network/data/clients/?limit=1000')).body.results;
      const counts = Object.fromEntries(results.map((item) => [item.client, item.users]));
      return JSON.stringify(Object.entries(counts).sort()) === JSON.stringify(Object.entries(wanted).sort());
    },
    'the client counts',
    20000,
  ).catch(() => undefined);
  t.same(
    Object.fromEntries(results.map((item) => [item.client, item.users])),
    wanted,
    'every crowd member under its client, and no other client',
  );
  for (const item of results) {
    t.same(
      item.versions,
      [...expected.get(item.client as string)!].map(([version, users]) => ({ version, users })),
      `${String(item.client)}: the version read from the reply`,
    );
  }

  // One channel's members by client, the top one and the rest: the crowd members in it, the bot left out.
  const first = channels[0]!;
  const members = crowd!.clients.filter((member) => member.channels.includes(first));
  const inChannel = new Map<string, number>();
  for (const member of members) inChannel.set(member.client, (inChannel.get(member.client) ?? 0) + 1);
  const ranked = [...inChannel].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const { body: profile } = await get(`/network/data/channel/${encodeURIComponent(first)}/?top=1`);
  t.match(profile.member_clients, {
    results: [{ client: ranked[0]![0], users: ranked[0]![1] }],
    other: members.length - ranked[0]![1],
    unknown: 0,
    total: members.length,
  });
  t.equal((profile.member_clients as { results: unknown[] }).results.length, 1, '?top=1: one entry');
});

t.test('history grows by one point per interval', async (t) => {
  const before = await history();
  await eventually(async () => (await history()).length >= before.length + 4, 'four more points', 10000);
  const after = await history();
  const fresh = after.slice(before.length - 1);
  const gaps = fresh.slice(1).map((point, index) => Date.parse(point.time) - Date.parse(fresh[index]!.time));
  t.ok(
    gaps.every((gap) => gap >= 800 && gap <= 1600),
    `one point a second (gaps in ms: ${gaps.join(', ')})`,
  );
  t.ok(
    fresh.every((point) => point.users === null || point.users >= crowd!.clients.length),
    "each point has the network's users",
  );
  const { body } = await get('/network/data/history/?bucket=1h');
  t.equal(body.count, new Set(after.map((point) => point.time.slice(0, 13))).size, 'one point per hour in 1h buckets');
  const bad = await get('/network/data/history/?since=yesterday');
  t.match(bad.body, { error: { status: 400, code: 'invalid_parameter' } });
});

t.test('the token tier: a token approved over IRC gets the same shapes plus the private fields', async (t) => {
  const admin = new IrcClient({ port: network.leafPort, nick: `na${tag}`, sasl: { account: adminAccount, password } });
  clients.push(admin);
  await admin.connect();
  const registered = await admin.register();
  t.equal(registered.sasl, '903', 'the administrator is logged in');
  const ask = (text: string, last: RegExp): Promise<string[]> => askBot(admin, bot, text, last);

  const created = await ask('TOKEN CREATE netstats', /Copy it now|Permission|not logged in/);
  const match = /^Token #(\d+) .*created: (ntd_[A-Za-z0-9_-]{43})$/.exec(created[0] ?? '');
  t.ok(match, 'a token was created');
  token = match![2]!;
  t.equal((await get('/api/netstats/status/', withToken())).response.status, 403, 'not before it is approved');
  const granted = await ask(`TOKEN GRANT #${match![1]} netstats.*`, /may now call|Permission|Nothing/);
  t.match(granted.at(-1), /may now call netstats\.\*/);

  const index = await get('/api/netstats/', withToken());
  t.equal(index.response.status, 200);
  t.equal(index.response.headers.get('cache-control'), 'private, no-store');
  t.same(index.body, (await get('/network/netstats/api/index.json')).body, 'the same index on both tiers');

  const member = crowd!.clients.find((candidate) => candidate.ip)!;
  const { body: user } = await get(`/api/netstats/user/${encodeURIComponent(member.nick)}/`, withToken());
  t.match(user.user, {
    nick: member.nick,
    ip: member.ip,
    country_code: member.country,
    client: member.client,
    hostmask: new RegExp(`^${member.nick}!\\S+@`),
  });
  const publicUser = (await get(`/network/data/user/${encodeURIComponent(member.nick)}/`)).body;
  t.notOk('ip' in (publicUser.user as object), 'the public profile has no IP');

  const operators = (await get('/api/netstats/operators/', withToken())).body.results;
  const self = operators.find((item) => item.nick === bot.host.irc.state.nick);
  t.match(self, { hostmask: String, ip: '127.0.0.1' }, 'the opered bot, with its hostmask and IP');
  for (const name of ['status', 'countries', 'clients', 'history', 'servers']) {
    t.equal((await get(`/api/netstats/${name}/`, withToken())).response.status, 200, name);
  }
  const channel = await get(`/api/netstats/channel/${encodeURIComponent(channels[0]!)}/`, withToken());
  t.match(channel.body.channel, { name: channels[0], hidden: false });
});

t.test('after a restart, today and the history are still there', async (t) => {
  const before = (await get('/network/data/status/')).body;
  const historyBefore = await history();
  await bot.stop();
  const stored = JSON.parse(readFileSync(path.join(storeDir, 'store.json'), 'utf8')) as {
    slices: Record<string, unknown>;
  };
  t.ok(stored.slices.activity && stored.slices.history, 'both are in the store file');
  await launch();
  const after = (await get('/network/data/status/')).body;
  t.same(after.top_users_today, before.top_users_today, "today's top users");
  const linesOf = (body: Body) =>
    (body.top_channels_today as { name: string; lines: number }[]).map(({ name, lines }) => ({ name, lines }));
  t.same(linesOf(after), linesOf(before), "today's top channels");
  const historyAfter = await history();
  t.ok(historyAfter.length >= historyBefore.length, `${historyAfter.length} points, ${historyBefore.length} before`);
  t.same(historyAfter.slice(0, historyBefore.length), historyBefore, 'the points from before the restart');
  const { body: profile } = await get(`/network/data/channel/${encodeURIComponent(channels[0]!)}/`);
  t.equal(
    (profile.hourly_lines as number[]).reduce((sum, lines) => sum + lines, 0),
    15,
  );
});

t.test('public answers carry no IP, ident, host, real name or account of the crowd', async (t) => {
  await get('/network/data/operators/');
  await get('/network/data/servers/');
  for (const member of crowd!.clients.slice(0, 10)) await get(`/network/data/user/${encodeURIComponent(member.nick)}/`);
  t.ok(publicAnswers.length > 20, `${publicAnswers.length} public answers looked at`);
  const model = bot.host.model;
  const forbiddenKeys = new Set(['ident', 'host', 'hostmask', 'ip', 'realname', 'account', 'real_host']);
  const keysOf = (value: unknown): string[] =>
    Array.isArray(value)
      ? value.flatMap(keysOf)
      : typeof value === 'object' && value !== null
        ? Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)])
        : [];
  const leaks: string[] = [];
  for (const { path: asked, text } of publicAnswers) {
    const keys = keysOf(JSON.parse(text)).filter((key) => forbiddenKeys.has(key));
    if (keys.length > 0) leaks.push(`${asked}: fields ${keys.join(', ')}`);
    for (const member of crowd!.clients) {
      const ident = model.users.get(member.nick)?.ident;
      if (member.ip && text.includes(member.ip)) leaks.push(`${asked}: the IP ${member.ip}`);
      if (ident && text.includes(`${ident}@`)) leaks.push(`${asked}: the ident of ${member.nick}`);
    }
    if (text.includes('127.0.0.1')) leaks.push(`${asked}: 127.0.0.1`);
  }
  t.same(leaks, [], 'nothing private');
  t.notOk(
    bot.logs.some((line) => /(WARN|ERROR) +\[(stats|api)\]/.test(line)),
    'the collector and the API logged no failure',
  );
});
