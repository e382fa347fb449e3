/**
 * The full sync (LUSERS, LINKS, LIST, WHO, STATS P, MAP, the services' servers), the counts and channels between
 * syncs, the channels' modes and the joins: the collector on a fake server that answers for a small network.
 */
import t, { type Test } from 'tap';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { parseLine } from '../../../lib/irc/line-parser.js';
import { buildServerProfile } from '../../../lib/irc/server-profile.js';
import {
  FORMED_QUERIES_IN_FLIGHT,
  FORMED_SETTLE_MS,
  LIST_BY_NAME_LINES_AT_ONCE,
  listQueries,
  namesInLines,
  parseListEntry,
} from '../../../plugins/stats/list.js';
import { REQUESTS_IN_FLIGHT } from '../../../lib/irc/requests.js';
import { parseLinksEntry, parseMapLine } from '../../../plugins/stats/servers.js';
import {
  LIST_COST_SHARE,
  NEW_CHANNELS_EVERY_MS,
  newChannelsDue,
  parseLusers,
  removeUnseenUsers,
  wholeListDue,
  whoSliceRows,
} from '../../../plugins/stats/sync.js';
import {
  parseWhoReply,
  parseWhoxReply,
  WHO_MASKS_IN_FLIGHT,
  WHO_SLICE_ROWS,
  whoMasks,
} from '../../../plugins/stats/who.js';
import { fakeNetwork, networkAnswer, type FakeChannel, type FakeUser } from '../../../testing/fake-network.js';
import { startHarness, type Harness } from '../../../testing/harness.js';
import { irc2Answer, irc2Received } from '../../support/irc2.js';
import { INSPIRCD_ISUPPORT, startCollector } from './support.js';

/** The server profile of a server that said this much of itself (ISUPPORT tokens, RPL_MYINFO's version). */
function profileOf(isupport: [string, string][] = [], version = '') {
  return buildServerProfile({ version, isupport: new Map(isupport), caps: new Set(), offeredCaps: new Set() });
}

/** The last field of WHO and LINKS rows, as most servers write it. */
const GENERIC_HOPS = profileOf().hopsField;

/** The profile of ircd 2.11 as it describes itself (test/fixtures/networks/irc2/01-registration.txt). */
const IRC2_ISUPPORT = irc2Received('01-registration.txt', 'alice')
  .map((line) => parseLine(line)!)
  .filter((line) => line.command === '005')
  .flatMap((line) => line.params.slice(1, -1))
  .join(' ');
const IRC2 = profileOf(
  IRC2_ISUPPORT.split(' ').map((token) => [token.split('=')[0]!, token.split('=')[1] ?? '']),
  '2.11.2p3',
);

/** The MAP lines InspIRCd writes, as its profile reads them. */
const INSPIRCD_MAP = profileOf([], 'InspIRCd-3').mapLine!;

/** The most channels a server whose ISUPPORT has these tokens lets a user be in. */
const channelLimit = (isupport: Map<string, string>) => profileOf([...isupport]).channelLimit;

function message(command: string, params: string[]): IrcMessage {
  return { command, params, source: null, tags: {}, time: new Date() };
}

/** The network's users: alice and the bot are operators and invisible (+i); NickServ is on the services' server. */
function users(): FakeUser[] {
  return [
    {
      nick: 'alice',
      ident: 'al',
      host: 'a.example',
      ip: '192.0.2.1',
      server: 'hub.test.net',
      operator: true,
      invisible: true,
      account: 'alice',
      realname: 'Alice A',
      realHost: 'alice.home.isp.example',
    },
    {
      nick: 'Bob',
      ident: 'bo',
      host: 'b.example',
      ip: '192.0.2.2',
      server: 'leaf.test.net',
      away: true,
      realname: 'Bob B',
    },
    { nick: '[carol]', ident: 'ca', host: 'c.example', ip: '192.0.2.3', server: 'leaf.test.net', realname: 'Carol' },
    {
      nick: 'DataBot',
      ident: 'databot',
      host: 'bot.example',
      ip: '192.0.2.9',
      server: 'hub.test.net',
      operator: true,
      invisible: true,
      realname: 'Data Bot',
    },
    {
      nick: 'NickServ',
      ident: 'NickServ',
      host: 'services.test.net',
      ip: '0.0.0.0',
      server: 'services.test.net',
      realname: 'Nickname Services',
    },
  ];
}

/** The network's channels, as LIST shows them with their modes (`[+knpt key] topic`). */
function channels(): FakeChannel[] {
  return [
    { name: '#public', users: 3, topic: 'hello [world]', modes: '+nt' },
    { name: '#secret', users: 2, topic: 'hush', modes: '+nst' },
    { name: '#private', users: 2, topic: 'private topic', modes: '+knpt key' },
    { name: '#tricky', users: 1, topic: '[+s] not really', modes: '+nt' },
  ];
}

interface SyncOptions {
  operator?: boolean;
  /** The plugin's settings besides the defaults of these tests (no joins). */
  stats?: Record<string, unknown>;
  isupport?: string;
  version?: string;
  /** The network's users; default {@link users}. */
  users?: FakeUser[];
  channels?: FakeChannel[];
  listModes?: boolean;
  /** Whether to wait for the first sync; default true. */
  synced?: boolean;
}

/**
 * The collector as an operator (unless `operator` is false) on a server that says no version, with WHOX and
 * ELIST, on the network of {@link users} and {@link channels}; resolves after its first sync. `boss` is an
 * administrator (SYNC).
 */
async function syncedOn(t: Test, options: SyncOptions = {}): Promise<Harness> {
  const bot = await startCollector(t, {
    stats: { join: [], ...options.stats },
    network: fakeNetwork({
      users: options.users ?? users(),
      channels: options.channels ?? channels(),
      listModes: options.listModes ?? true,
      maxUsers: 7,
    }),
    isupport: options.isupport ?? INSPIRCD_ISUPPORT,
    ...(options.version ? { version: options.version } : {}),
    operator: options.operator ?? true,
    admins: ['boss'],
  });
  if (options.synced !== false) await bot.synced();
  return bot;
}

/** A whole sync now, as the SYNC command asks one; resolves once it is done and answered. */
async function syncNow(bot: Harness): Promise<void> {
  const answer = await bot.say('boss', 'boss', 'SYNC');
  if (!answer.some((line) => line.startsWith('Synced at'))) throw new Error(`SYNC answered ${answer.join(' / ')}`);
  await bot.synced();
}

/** The next refresh (`refresh_seconds`, 60 by default), and what followed it. */
async function refresh(bot: Harness, seconds = 60): Promise<void> {
  await bot.clock.advance(seconds * 1000 - (bot.clock.elapsed % (seconds * 1000)));
  await bot.synced();
}

/** The counts between syncs: a quarter of a second, after which the whole LIST of a small network is due. */
async function countsRefreshed(bot: Harness): Promise<void> {
  await bot.clock.advance(250);
  await bot.settled();
}

/** The bot sits in `channel` with `names` (NAMES in as many lines as it takes). */
function botJoins(bot: Harness, channel: string, names: readonly string[]): void {
  const lines: string[] = [];
  for (let start = 0; start < names.length; start += 60) {
    lines.push(`:hub.test.net 353 DataBot = ${channel} :${names.slice(start, start + 60).join(' ')}`);
  }
  bot.irc.receive(
    `:DataBot!databot@bot.host JOIN ${channel}`,
    ...lines,
    `:hub.test.net 366 DataBot ${channel} :End of /NAMES list.`,
  );
}

/** A notice of InspIRCd's chancreate module: `channel` was formed. */
const formedNotice = (channel: string): string =>
  `:hub.test.net NOTICE DataBot :*** CHANCREATE: Channel ${channel} created by someone!s@h.example`;

const END_OF_LIST = ':hub.test.net 323 DataBot :End of channel list.';

const LUSERS = [
  ':hub.test.net 251 DataBot :There are 3 users and 2 invisible on 3 servers',
  ':hub.test.net 252 DataBot 2 :operator(s) online',
  ':hub.test.net 254 DataBot 4 :channels formed',
  ':hub.test.net 255 DataBot :I have 2 clients and 2 servers',
  ':hub.test.net 265 DataBot :Current local users: 2  Max: 3',
  ':hub.test.net 266 DataBot :Current global users: 5  Max: 7',
];

t.test('LUSERS: InspIRCd text numbers and the numeric-parameter form', async (t) => {
  const parse = (lines: string[]) => parseLusers(lines.map((line) => parseLine(line)!));
  t.same(parse(LUSERS), { users: 5, invisible: 2, servers: 3, operators: 2, channels: 4, maxUsers: 7 });
  t.same(
    parse([
      ':irc.example 251 DataBot :There are 10 users and 90 invisible on 4 servers',
      ':irc.example 266 DataBot 100 150 :Current global users 100, max 150',
    ]),
    { users: 100, invisible: 90, servers: 4, operators: 0, channels: 0, maxUsers: 150 },
    'no 252/254 means none',
  );
});

t.test('parsers of LINKS, MAP, LIST and WHOX lines', async (t) => {
  t.same(parseLinksEntry(message('364', ['me', 'hub.test.net', 'hub.test.net', '0 TestNet hub']), GENERIC_HOPS), {
    name: 'hub.test.net',
    uplink: null,
    hops: 0,
    description: 'TestNet hub',
  });
  t.same(parseMapLine('`-leaf.test.net        1 [12.50%]', INSPIRCD_MAP), { name: 'leaf.test.net', users: 1 });
  t.same(parseMapLine('  |-deep.test.net (003 InspIRCd-3)  12 [1.00%] [Up: 1d]', INSPIRCD_MAP), {
    name: 'deep.test.net',
    users: 12,
  });
  t.equal(parseMapLine('3 servers and 8 users, average 2.67 users per server', INSPIRCD_MAP), null);
  t.same(parseListEntry(message('322', ['me', '#a', '4', '[+knt key] the [topic]'])), {
    name: '#a',
    users: 4,
    topic: 'the [topic]',
    modes: 'knt',
  });
  t.same(parseListEntry(message('322', ['me', '#b', '2', 'plain'])), {
    name: '#b',
    users: 2,
    topic: 'plain',
    modes: null,
  });
  t.equal(parseListEntry(message('322', ['me', '*', '2', ''])), null, 'a private channel shown as * is skipped');
  const nonOperator = parseWhoxReply(
    message('354', ['me', '77', '#c', 'ident', 'host.example', 'leaf.test.net', 'nick', 'G*', 'acct', 'Real Name']),
    'tcuhsnfar',
  );
  // Without %i the reply says nothing of the IP: undefined, so one known from elsewhere (WHOIS) stays.
  t.same(nonOperator, {
    nick: 'nick',
    ident: 'ident',
    host: 'host.example',
    server: 'leaf.test.net',
    away: true,
    isOperator: true,
    account: 'acct',
    realname: 'Real Name',
  });
  t.equal(parseWhoxReply(message('354', ['me', '12', 'x']), 'tn'), null, 'a reply with another token is not ours');
});

t.test("ircd 2.11's recorded answers, parsed: LUSERS without an invisible count, a SID after the hops", async (t) => {
  const parsed = (lines: string[]) => lines.map((line) => parseLine(line)!);
  t.same(
    parseLusers(parsed(irc2Answer('02-lusers.txt', 'alice', 'LUSERS'))),
    { users: 4, invisible: null, servers: 2, operators: 0, channels: 15, maxUsers: 4 },
    '251 counts every user and no invisible one: how many are invisible is not known',
  );
  const withOperators = parsed(irc2Received('05-who.txt', 'ivy')).filter((line) => /^2[56]\d$/.test(line.command));
  t.same(parseLusers(withOperators), {
    users: 7,
    invisible: null,
    servers: 2,
    operators: 2,
    channels: 22,
    maxUsers: 8,
  });

  const links = parsed(irc2Answer('04-links-map.txt', 'alice', 'LINKS')).filter((line) => line.command === '364');
  t.same(
    links.map((line) => parseLinksEntry(line, IRC2.hopsField)),
    [
      { name: 'leaf.test.net', uplink: 'hub.test.net', hops: 1, description: 'TestNet leaf' },
      { name: 'hub.test.net', uplink: null, hops: 0, description: 'TestNet hub' },
    ],
    "the server's SID is no part of its description",
  );
  t.equal(parseLinksEntry(links[0]!, GENERIC_HOPS)!.description, '002A TestNet leaf', 'as it was read before');

  const rows = parsed(irc2Answer('05-who.txt', 'alice', 'WHO 0')).filter((line) => line.command === '352');
  const entries = rows.map((row) => parseWhoReply(row, IRC2.hopsField)!);
  t.same(entries[0], {
    nick: 'ivy',
    ident: '~ivy',
    host: '127.0.0.22',
    server: 'leaf.test.net',
    away: true,
    isOperator: false,
    realname: 'Invisible Ivy',
  });
  t.same(
    entries.map((entry) => [entry.nick, entry.realname, entry.isOperator]),
    [
      ['ivy', 'Invisible Ivy', false],
      ['bob', 'bob test', false],
      ['lope', 'lope test', true],
      ['alice', 'alice test', false],
      ['abcdefghijklmno', 'long test', false],
      ['digitok', 'digit', false],
      ['opal', 'opal test', true],
    ],
    "the realname after the server's SID; `H*` an operator",
  );
  t.equal(parseWhoReply(rows[0]!, GENERIC_HOPS)!.realname, '002A Invisible Ivy', 'as it was read before');

  const list = parsed(irc2Answer('03-list.txt', 'alice', 'LIST')).filter((line) => line.command === '322');
  t.same(
    list.slice(0, 3).map((line) => parseListEntry(line, IRC2.listShowsModes)),
    [
      { name: '&testlocal', users: 1, topic: 'local topic', modes: null },
      { name: '#plain', users: 1, topic: 'plain topic', modes: null },
      { name: '+plus', users: 2, topic: '', modes: null },
    ],
  );
});

/** The collector as an operator on ircd 2.11, its answers those recorded (test/fixtures/networks/irc2/). */
async function syncedOnIrc2(t: Test): Promise<Harness> {
  const bot = await startCollector(t, {
    stats: { join: [] },
    version: '2.11.2p3',
    isupport: IRC2_ISUPPORT,
    cap: false,
    operator: true,
    register: false,
  });
  bot.server
    .answer(/^LUSERS$/, irc2Answer('02-lusers.txt', 'alice', 'LUSERS'))
    .answer(/^LINKS$/, irc2Answer('04-links-map.txt', 'alice', 'LINKS'))
    .answer(/^LIST$/, irc2Answer('03-list.txt', 'opal', 'LIST'))
    .answer(/^WHO 0$/, irc2Answer('05-who.txt', 'opal', 'WHO 0'))
    .answer(/^(TIME \S+)$/, (match) => irc2Answer('09-version-time.txt', 'alice', match[1]!));
  await bot.register();
  await bot.synced();
  return bot;
}

t.test('a sync on ircd 2.11, as an operator, fed its recorded answers', async (t) => {
  const bot = await syncedOnIrc2(t);
  const { model } = bot.host;
  t.same(bot.irc.sentMatching(/^WHO /), ['WHO 0'], 'plain WHO of everyone, ended by `315 me *`');
  t.same(
    bot.irc.sentMatching(/^(STATS|MAP|MODE|WHOIS|PRIVMSG)\b/),
    [],
    'no STATS P (ports), no MAP (no counts), no MODE (LIST hides secret channels from an operator too), no services',
  );
  t.match(model.stats, { users: 4, invisible: null, servers: 2, channels: 15, syncedAsOperator: true });
  t.match(model.servers.get('leaf.test.net'), {
    hops: 1,
    uplink: 'hub.test.net',
    description: 'TestNet leaf',
    users: 2,
  });
  t.match(model.servers.get('hub.test.net'), { hops: 0, description: 'TestNet hub', users: 4 }, "the operator's WHO");
  t.match(model.users.get('bob'), { realname: 'bob test', server: 'leaf.test.net', isOperator: false });
  t.match(model.users.get('lope'), { realname: 'lope test', isOperator: true });
  t.notOk(model.users.get('ivy'), 'the invisible user no WHO of the operator shows');
  for (const name of ['#stats', '#plain', '+plus', '!ZJ8F2events']) {
    t.match(model.channels.get(name), { hidden: false }, `${name} public, as LIST showed it`);
  }
  t.match(model.channels.get('#stats'), { users: 2, topic: 'Stats topic set by alice' });
  t.match(model.channels.get('&ERRORS'), { hidden: true }, "a server's own channel");

  await bot.clock.advance(5000);
  await bot.settled();
  t.same(bot.irc.sentMatching(/^WHOIS /), [], 'no WHOIS to fill users in: it would tell nothing WHO did not');

  // The bot joins the modeless +plus and #stats: only #stats has modes to ask (+plus would answer 477).
  bot.irc.receive(
    ':DataBot!~databot@127.0.0.1 JOIN :+plus',
    ':hub.test.net 353 DataBot = +plus :DataBot bob alice ',
    ':hub.test.net 366 DataBot +plus :End of NAMES list.',
    ':DataBot!~databot@127.0.0.1 JOIN :#stats',
    ':hub.test.net 353 DataBot = #stats :DataBot ivy bob alice ',
    ':hub.test.net 366 DataBot #stats :End of NAMES list.',
  );
  t.same(bot.irc.sentMatching(/^MODE /), ['MODE #stats']);
  t.match(model.channels.get('+plus'), { joined: true, hidden: false, modes: '', users: 3 });
  t.same(
    [...model.channels.get('#stats')!.members.keys()].map((user) => user.nick).sort(),
    ['DataBot', 'alice', 'bob', 'ivy'],
    "NAMES' trailing space is no member",
  );
});

t.test('WHO masks and LIST queries grow into chunks only on a big network', async (t) => {
  t.same(whoMasks(800, 1000), ['*']);
  const masks = whoMasks(10000, 1000);
  t.equal(masks.length, 35, 'one mask per possible first character of a nick');
  t.ok(masks.includes('a*') && masks.includes('[*') && masks.includes('|*'));
  t.same(whoMasks(null, 1000), masks, 'unknown size: chunked, to be safe');
  const byUsers = (elist?: string) => profileOf(elist === undefined ? [] : [['ELIST', elist]]).listsByUsers;
  t.same(listQueries(100, 2000, byUsers('CMNTU')), [['LIST']]);
  t.same(
    listQueries(5000, 2000, byUsers('CMNTU')).map((query) => query[1]),
    ['<2', '>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49'],
  );
  t.same(listQueries(5000, 2000, byUsers()), [['LIST']], 'without ELIST=U there is only the one LIST');
  t.same(listQueries(5000, 2000, byUsers('CMNT')), [['LIST']]);
  t.same(listQueries(100, 2000, byUsers('CTU'), ['>0']), [['LIST', '>0']], "Solanum's LIST of every channel");
});

/** `count` users whose nicks start with `u`, on the hub. */
const manyUsers = (count: number): FakeUser[] =>
  Array.from({ length: count }, (_, index) => ({ nick: `user${index}`, server: 'hub.test.net' }));

t.test('a server that caps its WHO replies is asked per nick initial from that many users on', async (t) => {
  const plainWho = (bot: Harness) => bot.irc.sentMatching(/^WHO /);
  const generic = await syncedOn(t, { users: manyUsers(30) });
  t.same(plainWho(generic), ['WHO * %tcuihsnfar,77'], 'the setting (1000), where the server sends every match');
  await generic.stop();
  const ngircd = { version: 'ngircd-26.1', isupport: 'CASEMAPPING=ascii PREFIX=(ov)@+ CHANMODES=beI,k,l,imnst' };
  const capped = await syncedOn(t, { ...ngircd, users: manyUsers(30) });
  t.equal(plainWho(capped).length, 35, "ngIRCd's 25 rows for a mask: a mask per nick initial");
  t.ok(plainWho(capped).includes('WHO u*'));
  t.equal(capped.host.model.users.size, 30);
  await capped.stop();
  const small = await syncedOn(t, { ...ngircd, users: manyUsers(25) });
  t.same(plainWho(small), ['WHO *'], 'as many as one reply gives: one WHO');
});

t.test(
  'on ircd-hybrid a sync asks neither STATS P nor MAP; an operator’s WHO counts the users per server',
  async (t) => {
    const bot = await syncedOn(t, { version: 'ircd-hybrid-1:8.2.43+dfsg.1-1' });
    const { model } = bot.host;
    t.same(bot.irc.sentMatching(/^(STATS|MAP)\b/), [], 'its STATS P lists ports, its MAP lines are worded otherwise');
    t.ok(model.ready);
    t.match(model.servers.get('hub.test.net'), { users: 2 });
    t.match(model.users.get('alice'), { isOperator: true }, "WHO's flags still say who is an operator");
  },
);

t.test('a full sync as an operator', async (t) => {
  // Left from before: a user gone from the network since, and one who shares a channel with the bot.
  const bot = await syncedOn(t, { users: [...users(), { nick: 'ghost', server: 'leaf.test.net' }] });
  botJoins(bot, '#mine', ['DataBot', 'invisiblefriend']);
  bot.server.network!.users = users();
  await bot.settled();
  bot.irc.sent.length = 0;
  await syncNow(bot);
  const { model } = bot.host;

  t.same(bot.irc.sentMatching(/^WHO /), ['WHO * %tcuihsnfar,77'], 'one WHO with the IP field, as an operator');
  t.match(model.stats, {
    users: 5,
    invisible: 2,
    channels: 4,
    operators: 2,
    servers: 3,
    maxUsers: 7,
    syncedAsOperator: true,
  });
  t.ok(model.ready);
  t.match(model.users.get('alice'), {
    ident: 'al',
    host: 'a.example',
    ip: '192.0.2.1',
    account: 'alice',
    isOperator: true,
    away: false,
  });
  t.match(model.users.get('bob'), { away: true, account: null, isOperator: false, realname: 'Bob B' });
  t.match(model.users.get('{carol}'), { nick: '[carol]' });
  t.equal(model.users.get('NickServ')!.ip, null, "services' 0.0.0.0 is no IP");
  t.notOk(model.users.get('ghost'), 'a user WHO no longer shows and who shares no channel is forgotten');
  t.ok(model.users.get('invisiblefriend'), 'a user in a channel with the bot stays');

  t.match(model.servers.get('hub.test.net'), { hops: 0, uplink: null, users: 2, isServices: false });
  t.match(model.servers.get('leaf.test.net'), {
    hops: 1,
    uplink: 'hub.test.net',
    users: 2,
    description: 'TestNet leaf',
  });
  t.match(model.servers.get('services.test.net'), { isServices: true, users: 1 });

  t.match(model.channels.get('#public'), { hidden: false, users: 3, topic: 'hello [world]', modes: '+nt' });
  t.match(model.channels.get('#secret'), { hidden: true, modes: '+nst' });
  t.match(model.channels.get('#private'), { hidden: true, modes: '+knpt' });
  t.match(model.channels.get('#tricky'), { hidden: false, topic: '[+s] not really' });
  t.ok(model.channels.get('#mine'), 'a joined channel LIST did not show is kept');
  t.same(bot.irc.sentMatching(/^MODE #/), [], 'modes in LIST need no MODE queries');
});

t.test('chunked WHO on a big network finds everyone once', async (t) => {
  const bot = await syncedOn(t, { stats: { who_chunk_above: 3 } });
  const sent = bot.irc.sentMatching(/^WHO /);
  t.equal(sent.length, 32, 'a mask per first letter; [ and {, ] and }, \\ and | are one letter in rfc1459');
  t.ok(sent.includes('WHO a* n%tcuihsnfar,100'), 'the n flag matches the mask against nicks only; a token per mask');
  t.equal(new Set(sent.map((line) => line.split(',')[1])).size, 32, 'no two masks share a token');
  t.same([...bot.host.model.users.all()].map((user) => user.nick).sort(), [
    'Bob',
    'DataBot',
    'NickServ',
    '[carol]',
    'alice',
  ]);
});

/** The masks of the WHO lines sent that match `pattern`, in order. */
const maskOf = (lines: string[]): string[] => lines.map((line) => line.split(' ')[1]!);
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];

t.test('masks go out several at once, each with its own token', async (t) => {
  const bot = await syncedOn(t, { stats: { who_chunk_above: 3 }, synced: false });
  let sentBeforeFirstEnd: number | null = null;
  bot.irc.on('message', (line) => {
    if (line.command === '315') sentBeforeFirstEnd ??= bot.irc.sentMatching(/^WHO /).length;
  });
  await bot.synced();
  t.equal(sentBeforeFirstEnd, WHO_MASKS_IN_FLIGHT, 'as many masks as may be unanswered, before the first answer');
  t.equal(bot.irc.sentMatching(/ n%/).length, 32, 'and every mask in the end');
});

/** 1,000 users per letter, none of them in the bot's channels: 26,000 in all, more than one slice's 20,000 rows. */
const thousandPerLetter = (suffix: string): FakeUser[] =>
  LETTERS.flatMap((letter) =>
    Array.from({ length: 1000 }, (_, index) => ({ nick: `${letter}${suffix}${index}`, server: 'leaf.test.net' })),
  );

t.test("a refresh's WHO slice takes at most half the refresh interval at the last round's rate", async (t) => {
  t.equal(whoSliceRows(null, 60), WHO_SLICE_ROWS, 'before any round: the whole slice');
  t.equal(whoSliceRows(30_000, 60), WHO_SLICE_ROWS, 'an operator exempt from penalties: as ever');
  // A plain user on InspIRCd: about 100 rows a second (a second of penalty per mask, 5 ms per row).
  t.equal(whoSliceRows(100, 60), 3000, '3,000 rows: 30 s of the 60');
  t.equal(whoSliceRows(100, 300), 15_000);
  t.equal(whoSliceRows(0.01, 60), 1, 'one mask at least, whatever the rate');
});

t.test('a refresh asks the next slice of the masks and judges only the users those list', async (t) => {
  // Known from the first sync: 26,000 users the network no longer has since, an operator among them.
  const bot = await syncedOn(t, {
    stats: { who_chunk_above: 3 },
    users: [...users(), ...thousandPerLetter('gone'), { nick: 'zed', server: 'leaf.test.net', operator: true }],
  });
  const { model } = bot.host;
  // A nick no mask lists (InspIRCd's UID after a collision): left the bot's channel, so the next sync decides.
  botJoins(bot, '#mine', ['DataBot', '0AAAAAAAB']);
  bot.irc.receive(':0AAAAAAAB!u@h PART #mine');
  bot.server.network!.users = users();
  await bot.settled();
  t.equal(model.users.size, 26_007);
  bot.irc.sent.length = 0;
  await refresh(bot);
  const first = LETTERS.slice(0, 20).map((letter) => `${letter}*`);
  t.same(maskOf(bot.irc.sentMatching(/ n%/)), first, 'a..t: 20,004 expected rows, the first past 20,000');
  t.notOk(model.users.get('agone0'), 'a user of the slice WHO did not list is gone');
  t.notOk(model.users.get('tgone999'));
  t.ok(model.users.get('ugone0'), 'a user of a later slice waits for it');
  t.equal(model.users.get('zed')!.isOperator, true, "nor is a later slice's operator flag taken away");
  t.ok(model.users.get('0AAAAAAAB'), 'a nick no mask lists waits for the end of the cycle');
  t.ok(model.users.get('alice')!.isOperator, 'STATS P and WHO flags set as before');

  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(
    maskOf(bot.irc.sentMatching(/ n%/)),
    [...LETTERS.slice(20).map((letter) => `${letter}*`), '[*', ']*', '\\*', '`*', '_*', '^*'],
    'the rest of the cycle: u..z and the other first characters, each folded one once',
  );
  t.notOk(model.users.get('ugone0'));
  t.notOk(model.users.get('zed'));
  t.notOk(model.users.get('0AAAAAAAB'), 'judged at the end of the cycle');
  t.same(
    [...model.users.all()].map((user) => user.nick).sort(),
    ['Bob', 'DataBot', 'NickServ', '[carol]', 'alice'],
    'the network as it is',
  );

  // The 26,000 again, seen by a whole sync, then gone: the next whole one asks every mask and forgets them all.
  bot.server.network!.users = [...users(), ...thousandPerLetter('gone')];
  await syncNow(bot);
  t.equal(model.users.size, 26_005);
  bot.server.network!.users = users();
  bot.irc.sent.length = 0;
  await syncNow(bot);
  t.equal(bot.irc.sentMatching(/ n%/).length, 32, 'a whole sync (the SYNC command, a link) asks every mask');
  t.equal(model.users.size, 5);
});

/** InspIRCd 3's RPL_MYINFO version: an operator there asks WHO with flag x for real hosts. */
const INSPIRCD = 'InspIRCd-3';

t.test('real hosts are asked a slice per sync, from where the last stopped', async (t) => {
  const bot = await syncedOn(t, { version: INSPIRCD, stats: { who_chunk_above: 3 } });
  const { model } = bot.host;
  t.equal(model.users.get('alice')!.realHost, 'alice.home.isp.example', 'taken as the rows came');
  // 26,000 users in the bot's channel, whose real hosts the server does not list (they stay missing).
  botJoins(
    bot,
    '#mine',
    LETTERS.flatMap((letter) => Array.from({ length: 1000 }, (_, index) => `${letter}x${index}`)),
  );
  await bot.settled();
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(
    maskOf(bot.irc.sentMatching(/ n?x%/)),
    LETTERS.slice(0, 20).map((letter) => `${letter}*`),
    'a..t at the first sync that knows them',
  );
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(
    maskOf(bot.irc.sentMatching(/ n?x%/)),
    LETTERS.slice(20).map((letter) => `${letter}*`),
    'the next sync goes on from u, with the initials still missing one',
  );
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(maskOf(bot.irc.sentMatching(/ n?x%/)).slice(0, 2), ['a*', 'b*'], 'and then from the start again');
});

t.test('an operator on InspIRCd asks WHO again with flag x for the hosts behind cloaks', async (t) => {
  const bot = await syncedOn(t, { version: INSPIRCD, stats: { who_chunk_above: 3 }, synced: false });
  const { model } = bot.host;
  let askedBeforeSynced: string[] | null = null;
  model.on('change', (change) => {
    if (change.kind === 'synced') askedBeforeSynced ??= bot.irc.sentMatching(/ n?x%/);
  });
  await bot.synced();
  t.same(askedBeforeSynced, [], 'the model is complete (synced) before real hosts are asked');
  t.equal(bot.irc.sentMatching(/ n%/).length, 32, 'WHO per first letter');
  t.same(
    bot.irc.sentMatching(/ n?x%/),
    [
      ['a', 200],
      ['b', 201],
      ['d', 203],
      ['n', 213],
      ['[', 226],
    ].map(([initial, token]) => `WHO ${initial}* nx%tihn,${token}`),
    "then again with x, for the first letters of the model's nicks only ([ and { are one letter: asked once)",
  );
  t.match(model.users.get('alice'), { host: 'a.example', realHost: 'alice.home.isp.example' });
  t.match(model.users.get('bob'), { host: 'b.example', realHost: 'b.example' }, 'no cloak: the same host');
  t.equal(model.users.get('NickServ')!.realHost, 'services.test.net', 'services (IP 0.0.0.0) too');
  t.equal(model.users.size, 5, 'the second WHO adds nobody');

  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(bot.irc.sentMatching(/ n?x%/), [], 'the next sync: everyone has one, and a real host does not change');
  bot.server.network!.users.push({ nick: 'bea', ident: 'be', host: 'bea.example', server: 'leaf.test.net' });
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(bot.irc.sentMatching(/ n?x%/), ['WHO b* nx%tihn,201'], 'only the letter of a nick still without one');
  t.equal(model.users.get('bea')!.realHost, 'bea.example');

  // alice told the bot her client (it asked in the minutes before); then she quit and someone else took the nick,
  // out of the bot's sight: WHO shows another IP and ident.
  bot.irc.receive(':alice!al@a.example NOTICE DataBot :\x01VERSION irssi v1.4.5\x01');
  const before = model.users.get('alice')!;
  t.equal(before.client, 'irssi');
  Object.assign(bot.server.network!.users[0]!, { ident: 'new', ip: '192.0.2.77', realHost: 'newcomer.isp.example' });
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.not(model.users.get('alice'), before, 'a new user under the old nick');
  t.equal(model.users.get('alice')!.client, null, "not the previous person's client");
  t.same(
    bot.irc.sentMatching(/ n?x%/),
    ['WHO a* nx%tihn,200'],
    'a nick behind which WHO shows someone else: asked again',
  );
  t.match(model.users.get('alice'), { ident: 'new', ip: '192.0.2.77', realHost: 'newcomer.isp.example' });
  await bot.stop();

  const small = await syncedOn(t, { version: INSPIRCD });
  t.same(small.irc.sentMatching(/^WHO /), ['WHO * %tcuihsnfar,77', 'WHO * x%tihn,78'], 'a small network: * twice');
  t.equal(small.host.model.users.get('alice')!.realHost, 'alice.home.isp.example');
});

t.test('an operator without users/auspex: the host x shows is not taken for a real one', async (t) => {
  const bot = await syncedOn(t, { version: INSPIRCD, stats: { who_chunk_above: 3 }, synced: false });
  // What InspIRCd answers such an operator: the shown host, and every IP but its own hidden.
  bot.server.answer(/^WHO (\S+) nx%tihn,(\d+)$/, (match) => [
    ...users()
      .filter((user) => user.nick.toLowerCase().startsWith(match[1]!.slice(0, 1)))
      .map(
        (user) =>
          `:hub.test.net 354 DataBot ${match[2]} ${user.nick === 'DataBot' ? user.ip : '255.255.255.255'} ${user.host} ${user.nick}`,
      ),
    `:hub.test.net 315 DataBot ${match[1]} :End of /WHO list.`,
  ]);
  await bot.synced();
  const { model } = bot.host;
  t.same(
    bot.irc.sentMatching(/ n?x%/),
    ['WHO a* nx%tihn,200', 'WHO b* nx%tihn,201', 'WHO d* nx%tihn,203', 'WHO n* nx%tihn,213', 'WHO [* nx%tihn,226'],
    'asked a few at once',
  );
  t.same(
    [...model.users.all()].map((user) => user.realHost),
    [null, null, null, null, null],
    'not the cloaks, and nothing from a round the server refused',
  );
  bot.irc.sent.length = 0;
  await refresh(bot);
  t.same(bot.irc.sentMatching(/ n?x%/), [], 'not asked again on this connection');
});

t.test(
  'no WHO for real hosts as a non-operator, without WHOX, or on a server that is not InspIRCd 3 or 4',
  async (t) => {
    for (const [operator, version, isupport] of [
      [false, 'InspIRCd-3', undefined],
      [true, 'InspIRCd-3', 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst ELIST=CMNTU'],
      [true, 'InspIRCd-2.0', undefined],
      [true, 'UnrealIRCd-6.1.0', undefined],
      [true, 'solanum-1.0', undefined],
    ] as const) {
      const bot = await syncedOn(t, { operator, version, ...(isupport ? { isupport } : {}) });
      const who = `${operator ? 'an operator' : 'a user'} on ${version}${isupport ? ' without WHOX' : ''}`;
      t.same(bot.irc.sentMatching(/ n?x%/), [], who);
      t.equal(bot.host.model.users.get('alice')?.realHost ?? null, null);
      await bot.stop();
    }
  },
);

t.test("ircu: an operator's WHO asks for invisible users with its x flag; a user's does not", async (t) => {
  const isupport = 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,imnpst WHOX';
  for (const operator of [true, false]) {
    const bot = await syncedOn(t, { operator, version: 'u2.10.12.19', isupport });
    const who = bot.irc.sentMatching(/^WHO \* /)[0] ?? 'no WHO *';
    t.match(who, operator ? /^WHO \* x%t\S*i\S*,77$/ : /^WHO \* %t[^i\s]*,77$/, who);
    await bot.stop();
  }
});

t.test('as a non-operator: no IP asked, LIST is taken as it is, operators from STATS P', async (t) => {
  const bot = await syncedOn(t, { operator: false, synced: false });
  bot.server.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #public 3 :hello',
    ':hub.test.net 322 DataBot * 2 :',
    END_OF_LIST,
  ]);
  await bot.synced();
  const { model } = bot.host;
  t.same(
    bot.irc.sentMatching(/^WHO /),
    ['WHO * %tcuhsnfar,77'],
    'InspIRCd hides everybody else from a non-operator who asks %i',
  );
  t.equal(model.stats.syncedAsOperator, false);
  t.match(model.channels.get('#public'), { hidden: false });
  t.equal(model.channels.size, 1, 'the private channel LIST shows as * is not recorded');
  t.match(
    model.users.get('alice'),
    { isOperator: true, ident: 'al', host: 'a.example' },
    'STATS P shows the invisible operator, whom WHO does not show a non-operator',
  );
  t.equal(model.users.get('bob')!.ip, null);
  t.same(bot.irc.sentMatching(/^MODE #/), []);
});

/** The MODE queries of channels the bot wrote, in order. */
const modeQueries = (bot: Harness): string[] => bot.irc.sentMatching(/^MODE [#&]/);

/** The server's answer to `MODE channel`. */
const modesOf = (channel: string, modes: string): string => `:hub.test.net 324 DataBot ${channel} ${modes}`;

t.test('a channel a notice says was formed: in the model at once, public once its modes are known', async (t) => {
  // An operator on InspIRCd: its notices tell of every channel formed (chancreate, snomasks j and J).
  const bot = await syncedOn(t, { version: INSPIRCD });
  const { model } = bot.host;
  t.ok(FORMED_QUERIES_IN_FLIGHT <= REQUESTS_IN_FLIGHT, 'never more than the request lane lets out');
  // The first ones are answered by hand below, so that the next one's turn can be seen.
  const first = ['#fresh', '#hush', '#more', '#most', '#five', '#six', '#seven', '#eight'];
  t.equal(first.length, FORMED_QUERIES_IN_FLIGHT);
  bot.server
    .answer(/^MODE #(fresh|hush|more|most|five|six|seven|eight)$/, [])
    .answer(/^MODE #brief$/, [':hub.test.net 403 DataBot #brief :No such channel']);
  bot.irc.sent.length = 0;
  bot.irc.receive(...[...first, '#brief'].map(formedNotice));
  t.match(model.channels.get('#fresh'), { users: 1, hidden: true }, 'at once, hidden until its modes are known');
  t.same(modeQueries(bot), [], "asked only once the creator's and the services' modes have come");
  await bot.next(/^MODE #eight$/);
  await bot.settled();
  t.same(
    modeQueries(bot),
    first.map((name) => `MODE ${name}`),
    'as many at a time as may be in flight',
  );
  bot.irc.receive(
    modesOf('#fresh', '+nt'),
    modesOf('#hush', '+nst'),
    ...first.slice(2).map((name) => modesOf(name, '+n')),
  );
  await bot.settled();
  t.same(modeQueries(bot).slice(first.length), ['MODE #brief'], 'then the next');
  t.match(model.channels.get('#fresh'), { hidden: false, modes: '+nt' });
  t.match(model.channels.get('#hush'), { hidden: true, modes: '+nst' }, 'a secret one stays hidden');
  t.notOk(model.channels.get('#brief'), 'one gone before its answer is forgotten');

  // The services' mode lock made #fresh secret just after its first answer: it is asked again.
  bot.server
    .answer(/^MODE #fresh$/, [modesOf('#fresh', '+nst')])
    .answer(/^MODE (#more|#most|#five|#six|#seven|#eight)$/, (match) => [modesOf(match[1]!, '+n')]);
  bot.irc.sent.length = 0;
  await bot.next(/^MODE #eight$/);
  await bot.settled();
  t.same(
    modeQueries(bot).sort(),
    ['MODE #eight', 'MODE #five', 'MODE #fresh', 'MODE #more', 'MODE #most', 'MODE #seven', 'MODE #six'],
    'the public ones are asked once more, a while later',
  );
  t.match(model.channels.get('#fresh'), { hidden: true, modes: '+nst' }, 'and a secret one is hidden');
  bot.irc.sent.length = 0;
  await new Promise((resolve) => setTimeout(resolve, 2500));
  t.same(modeQueries(bot), [], 'only once');

  // Formed again after it emptied, before a LIST found it gone: nothing of the old one holds.
  bot.irc.receive(formedNotice('#public'));
  t.match(model.channels.get('#public'), { users: 1, hidden: true, topic: '' }, 'the old one formed again');
  bot.irc.receive(formedNotice('&local'));
  await bot.next(/^MODE #public$/);
  await bot.settled();
  t.same(modeQueries(bot), ['MODE #public'], 'a server-local channel is not asked');
  t.match(model.channels.get('#public'), { hidden: false, modes: '+nt' });
  t.notOk(model.channels.get('&local'));

  // Formed while a LIST is under way and after the server answered it: the LIST's pass must keep it, and a row
  // of a LIST the server answered after the channel formed is still taken.
  bot.server.answerOnce(/^LIST$/, [
    formedNotice('#during'),
    formedNotice('#listed'),
    ':hub.test.net 322 DataBot #public 3 :[+nt] hello',
    ':hub.test.net 322 DataBot #listed 5 :[+nt] topic',
    END_OF_LIST,
  ]);
  bot.server.network!.channels = [
    { name: '#public', users: 3, topic: 'hello', modes: '+nt' },
    { name: '#during', users: 1, modes: '+nt' },
    { name: '#listed', users: 5, topic: 'topic', modes: '+nt' },
  ];
  await syncNow(bot);
  t.ok(model.channels.get('#during'), 'not taken as gone by a LIST asked before it formed');
  t.match(model.channels.get('#listed'), { users: 5, topic: 'topic' }, "the LIST's row is taken");
  t.notOk(model.channels.get('#hush'), 'while one that LIST no longer lists is gone');
  bot.server.network!.channels = [{ name: '#public', users: 3, topic: 'hello', modes: '+nt' }];
  await syncNow(bot);
  t.notOk(model.channels.get('#during'), 'the next LIST judges it');
});

t.test("a LIST during a formed channel's wait does not ask its modes sooner", async (t) => {
  const bot = await syncedOn(t, {
    version: INSPIRCD,
    listModes: false,
    channels: [{ name: '#open', users: 3, topic: 'hello', modes: '+nt' }],
  });
  const { model } = bot.host;
  t.same(modeQueries(bot), ['MODE #open'], 'LIST shows no modes (InspIRCd to an operator): they are asked');
  const noticed = performance.now();
  bot.irc.receive(formedNotice('#new'));
  // Listed (without modes) by the LISTs of two syncs.
  bot.server.network!.channels.push({ name: '#new', users: 1, modes: '+nt' });
  bot.irc.sent.length = 0;
  await syncNow(bot);
  await syncNow(bot);
  t.same(
    modeQueries(bot).filter((line) => line === 'MODE #new'),
    [],
    'not asked before its wait is over',
  );
  t.match(model.channels.get('#new'), { users: 1, hidden: true }, 'listed, and hidden');
  await bot.next(/^MODE #new$/);
  t.ok(performance.now() - noticed >= FORMED_SETTLE_MS - 50, 'asked once it is over');
  await bot.settled();
  t.match(model.channels.get('#new'), { hidden: false, modes: '+nt' });
  bot.irc.sent.length = 0;
  await countsRefreshed(bot);
  t.same(
    modeQueries(bot).filter((line) => line === 'MODE #new'),
    [],
    'a later LIST takes it as known',
  );
});

t.test("nothing asks a formed channel's modes before its latest wait is over", async (t) => {
  const bot = await syncedOn(t, { version: INSPIRCD });
  const { model } = bot.host;
  bot.server.network!.channels.push(
    { name: '#chosen', users: 2, modes: '+nt' },
    { name: '#shown', users: 1, modes: '+nt' },
    { name: '#again', users: 1, modes: '+nt' },
  );
  // Chosen to be asked (a LIST without its modes), then formed again before its turn came.
  bot.server.answerOnce(/^LIST$/, [':hub.test.net 322 DataBot #chosen 2 :', formedNotice('#chosen'), END_OF_LIST]);
  bot.irc.sent.length = 0;
  await syncNow(bot);
  t.same(modeQueries(bot), [], 'a list chosen before its notice does not ask it');

  // A LIST that shows modes lists it during its wait: its row is taken, it stays hidden, and it is still asked.
  bot.irc.receive(formedNotice('#shown'), formedNotice('#again'));
  bot.server.answerOnce(/^LIST$/, [
    ':hub.test.net 322 DataBot #shown 1 :[+nt] ',
    ':hub.test.net 322 DataBot #chosen 1 :[+nt] ',
    END_OF_LIST,
  ]);
  await syncNow(bot);
  t.match(model.channels.get('#shown'), { modes: '+nt', hidden: true }, 'hidden until its own query');

  // Formed, emptied and formed again within the wait: asked once the second wait is over, not at the first's end.
  await new Promise((resolve) => setTimeout(resolve, FORMED_SETTLE_MS / 2));
  bot.irc.receive(formedNotice('#again'));
  const formedAgain = performance.now();
  await bot.next(/^MODE #shown$/);
  await bot.settled();
  t.same(
    modeQueries(bot).filter((line) => line === 'MODE #again'),
    [],
    'not at the end of the first wait',
  );
  t.same(modeQueries(bot).sort(), ['MODE #chosen', 'MODE #shown'], 'the others at theirs');
  t.match(model.channels.get('#shown'), { hidden: false, modes: '+nt' });
  await bot.next(/^MODE #again$/);
  t.ok(performance.now() - formedAgain >= FORMED_SETTLE_MS - 50, 'at the end of the second');
});

t.test('an operator on a network that hides modes in LIST asks MODE, and hides until answered', async (t) => {
  const bot = await syncedOn(t, {
    listModes: false,
    channels: [
      { name: '#open', users: 3, topic: 'hello', modes: '+nt' },
      { name: '#hush', users: 2, modes: '+nst' },
      { name: '#gone', users: 1, modes: '+nt' },
    ],
    synced: false,
  });
  const { model } = bot.host;
  bot.server.answer(/^MODE #gone$/, [':hub.test.net 403 DataBot #gone :No such channel']);
  const observed: string[] = [];
  model.on('change', (change) => {
    if (change.name === '#open' && change.kind === 'upsert') observed.push(String(model.channels.get('#open')?.hidden));
  });
  await bot.synced();
  t.equal(observed[0], 'true', 'the channel was hidden before its modes were known');
  t.same(modeQueries(bot).sort(), ['MODE #gone', 'MODE #hush', 'MODE #open']);
  t.match(model.channels.get('#open'), { hidden: false, modes: '+nt' });
  t.match(model.channels.get('#hush'), { hidden: true });
  t.notOk(model.channels.get('#gone'));

  const network = bot.server.network!;
  network.channels = network.channels.filter((channel) => channel.name !== '#gone');
  bot.irc.sent.length = 0;
  await syncNow(bot);
  t.match(model.channels.get('#open'), { hidden: false }, 'a channel whose modes are known stays as they said');
  t.same(modeQueries(bot).sort(), ['MODE #hush', 'MODE #open'], 'known channels are checked again');

  network.channels.push({ name: '#fresh', users: 1, modes: '+n' });
  bot.irc.sent.length = 0;
  await countsRefreshed(bot);
  t.same(modeQueries(bot), ['MODE #fresh'], 'between syncs only a channel formed since is asked');
  t.match(model.channels.get('#fresh'), { hidden: false, modes: '+n' }, 'and is public before the next sync');
});

t.test('LIST without modes (ngircd): the first sync asks the modes, then joins the public channels', async (t) => {
  const bot = await syncedOn(t, {
    stats: { join: '*' },
    listModes: false,
    channels: [
      { name: '#open', users: 3, topic: 'hello', modes: '+nt' },
      { name: '#hush', users: 2, modes: '+nst' },
      // ngircd lists its server-local channel; it is one server's, not the network's.
      { name: '&SERVER', users: 1, topic: 'Server Messages', modes: '+nt' },
    ],
  });
  const { sent } = bot.irc;
  t.same(modeQueries(bot).sort(), ['MODE #hush', 'MODE #open'], 'a local channel is not asked');
  const modesAt = sent.findIndex((line) => line.startsWith('MODE #'));
  const joinAt = sent.findIndex((line) => line.startsWith('JOIN '));
  t.equal(sent[joinAt], 'JOIN #open', 'the public channel is joined in the first sync, the rest not');
  t.ok(modesAt < joinAt, 'after its modes were known');
  t.match(bot.host.model.channels.get('&SERVER'), { hidden: true, users: 1 });
});

t.test('plain WHO (ngircd) keeps the IP and account a WHOIS gave', async (t) => {
  const bot = await syncedOn(t, {
    isupport: 'CASEMAPPING=ascii PREFIX=(ov)@+ CHANMODES=beI,k,l,imnst',
    stats: { whois_per_second: 0 },
    users: [{ nick: 'alice', ident: '~alice', host: '127.0.0.1', server: 'leaf.test.net', realname: 'Alice' }],
  });
  t.ok(bot.irc.sent.includes('WHO *'), 'a plain WHO');
  bot.irc.receive(
    ':hub.test.net 311 DataBot alice ~alice 127.0.0.1 * :Alice',
    ':hub.test.net 330 DataBot alice alice :is logged in as',
    ':hub.test.net 338 DataBot alice 81.2.69.142 :actually using host',
    ':hub.test.net 318 DataBot alice :End of /WHOIS list.',
  );
  await syncNow(bot);
  t.match(bot.host.model.users.get('alice'), { ident: '~alice', ip: '81.2.69.142', account: 'alice' });
});

/** A big network (by LUSERS) with ELIST U: LIST is asked in bands of user counts. */
const BANDS = ['<2', '>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49'];

t.test('LIST in bands of user counts on a big network', async (t) => {
  const bot = await syncedOn(t, { stats: { list_chunk_above: 2 }, synced: false });
  const band = (query: string, lines: string[]) =>
    bot.server.answer(new RegExp(`^LIST ${query}$`), [...lines, END_OF_LIST]);
  band('<2', [':hub.test.net 322 DataBot #one 1 :[+nt] ']);
  band('>1,<3', [
    ':hub.test.net 322 DataBot #two 2 :[+nt] ',
    // A channel that grew between two bands is listed twice.
    ':hub.test.net 322 DataBot #one 2 :[+nt] ',
  ]);
  for (const query of BANDS.slice(2)) band(query, []);
  await bot.synced();
  t.same(bot.irc.sentMatching(/^LIST/).length, 6);
  t.same([...bot.host.model.channels.all()].map((channel) => channel.name).sort(), ['#one', '#two']);
});

t.test('a channel a band round missed is asked by name: kept if it is there, gone if not', async (t) => {
  const bot = await syncedOn(t, {
    stats: { list_chunk_above: 2 },
    channels: [
      { name: '#shrank', users: 3, modes: '+nt' },
      { name: '#emptied', users: 1, modes: '+nt' },
      { name: '#one', users: 1, modes: '+nt' },
    ],
  });
  const { model } = bot.host;
  t.ok(model.channels.get('#shrank') && model.channels.get('#emptied'), 'known from the first sync');
  // #shrank went from 3 users to 2 after the 2-user band was answered, so no band lists it; #emptied is gone.
  bot.server.answer(/^LIST <2$/, [':hub.test.net 322 DataBot #one 1 :[+nt] ', END_OF_LIST]);
  for (const query of BANDS.slice(1)) bot.server.answer(new RegExp(`^LIST ${query}$`), [END_OF_LIST]);
  bot.server.answer(/^LIST #[^ ]+$/, [':hub.test.net 322 DataBot #shrank 2 :[+nt] still here', END_OF_LIST]);
  await syncNow(bot);
  t.same(
    bot.irc.sentMatching(/^LIST #/).map((line) => line.split(' ')[1]!.split(',').sort()),
    [['#emptied', '#shrank']],
    'the missed ones, by name, in one line',
  );
  t.match(model.channels.get('#shrank'), { users: 2, topic: 'still here' }, 'kept, with what LIST says now');
  t.notOk(model.channels.get('#emptied'), 'a channel LIST by name does not show is gone');
  t.ok(model.channels.get('#one'));
  const names = Array.from({ length: 60 }, (_, index) => `#channel-${String(index).padStart(3, '0')}`);
  const lines = namesInLines(names);
  t.equal(lines.length, 2, '30 names of 12 characters to a line');
  t.ok(
    lines.every((group) => group.join(',').length <= 400),
    'no line longer than 400 characters',
  );
  t.same(lines.flat(), names, 'every name once, in order');
});

/** The JOIN and PART lines the bot wrote since the last look, and forget them. */
function joinsAndParts(bot: Harness): string[] {
  const lines = bot.irc.sentMatching(/^(JOIN|PART) /);
  bot.irc.sent.length = 0;
  return lines;
}

/** The bot sits in each of `channels`, with as many members as the network says (itself among them). */
function sitIn(bot: Harness, ...channels: FakeChannel[]): void {
  for (const { name, users: count } of channels) {
    const members = Array.from({ length: count - 1 }, (_, index) => `${name.slice(1)}${index}`);
    botJoins(bot, name, ['DataBot', ...members]);
  }
}

/** The members of `channel` other than the bot (as {@link sitIn} named them) leave it. */
function empty(bot: Harness, channel: FakeChannel): void {
  const members = Array.from({ length: channel.users - 1 }, (_, index) => `${channel.name.slice(1)}${index}`);
  bot.irc.receive(...members.map((nick) => `:${nick}!u@h PART ${channel.name}`));
}

/** Half an hour and a minute: a channel that refused the bot is tried again after 30 minutes. */
const AFTER_REFUSAL_MS = 31 * 60 * 1000;

t.test('which channels to join and leave', async (t) => {
  const network = [
    { name: '#big', users: 50, modes: '+nt' },
    { name: '#medium', users: 10, modes: '+nt' },
    { name: '#small', users: 2, modes: '+nt' },
    { name: '#secret', users: 90, modes: '+nst' },
  ];
  const bot = await syncedOn(t, { stats: { join: '*', max_channels: 2 }, channels: network });
  t.same(joinsAndParts(bot), ['JOIN #big,#medium'], 'the biggest public channels, up to max_channels');
  // Left alone in one; another turned secret.
  botJoins(bot, '#abandoned', ['DataBot']);
  botJoins(bot, '#turned-secret', ['DataBot', 'alice']);
  bot.irc.receive(':alice!al@a.example MODE #turned-secret +s');
  joinsAndParts(bot);
  await syncNow(bot);
  t.same(joinsAndParts(bot), ['PART #abandoned,#turned-secret :Channel no longer collected', 'JOIN #big,#medium']);
  await bot.stop();

  const listed = await syncedOn(t, { stats: { join: ['#small', '#abandoned'] }, channels: network });
  t.same(joinsAndParts(listed), ['JOIN #small,#abandoned'], 'the configured ones');
  botJoins(listed, '#abandoned', ['DataBot']);
  joinsAndParts(listed);
  await syncNow(listed);
  t.same(joinsAndParts(listed), ['JOIN #small'], 'the configured ones the bot is not in; none left');
});

t.test('a channel that grew past one the bot sits in waits for room: never more than max_channels', async (t) => {
  const one = { name: '#one', users: 6, modes: '+nt' };
  const two = { name: '#two', users: 5, modes: '+nt' };
  const grown = [
    { name: '#grown', users: 40, modes: '+nt' },
    { name: '#grown-too', users: 30, modes: '+nt' },
  ];
  const sitting = async (maxChannels: number): Promise<Harness> => {
    const bot = await syncedOn(t, { stats: { join: '*', max_channels: maxChannels }, channels: [one, two] });
    t.same(joinsAndParts(bot), ['JOIN #one,#two']);
    sitIn(bot, one, two);
    // Bigger now than both the bot's channels.
    bot.server.network!.channels.push(...grown);
    joinsAndParts(bot);
    await syncNow(bot);
    return bot;
  };
  const full = await sitting(2);
  t.same(joinsAndParts(full), [], 'full: nothing joined, nothing left');
  // One of the bot's channels empties: its place goes to the biggest.
  empty(full, two);
  joinsAndParts(full);
  await syncNow(full);
  t.same(
    joinsAndParts(full),
    ['PART #two :Channel no longer collected', 'JOIN #grown'],
    'the empty one left, the biggest joined',
  );
  await full.stop();
  const roomy = await sitting(3);
  t.same(joinsAndParts(roomy), ['JOIN #grown'], 'room for one');
});

t.test('the bot leaves before it joins in a channel’s place, and learns its limit from a 405', async (t) => {
  const channels = [
    { name: '#one', users: 6, modes: '+nt' },
    { name: '#two', users: 5, modes: '+nt' },
    { name: '#three', users: 4, modes: '+nt' },
  ];
  const bot = await syncedOn(t, { stats: { join: '*', max_channels: 3, refresh_seconds: 3600 }, channels });
  t.same(joinsAndParts(bot), ['JOIN #one,#two,#three']);
  sitIn(bot, ...channels);
  bot.server.network!.channels.push({ name: '#grown', users: 40, modes: '+nt' });
  empty(bot, channels[2]!);
  joinsAndParts(bot);
  await syncNow(bot);
  t.same(joinsAndParts(bot), ['PART #three :Channel no longer collected', 'JOIN #grown'], 'the PART first');

  // The server allows two: a 405 while the bot sits in two stops the joins, not the parts, and caps it at two.
  bot.irc.receive(
    ':DataBot!databot@bot.host PART #three',
    ':hub.test.net 405 DataBot #grown :You are on too many channels',
  );
  empty(bot, channels[1]!);
  await syncNow(bot);
  t.same(joinsAndParts(bot), ['PART #two :Channel no longer collected'], 'full: still leaves what emptied');
  await bot.clock.jump(AFTER_REFUSAL_MS);
  await syncNow(bot);
  t.same(
    joinsAndParts(bot),
    ['PART #two :Channel no longer collected', 'JOIN #grown'],
    'later: joins again, within the two',
  );
});

t.test('joins skip channels that refused the bot, invite-only and keyed ones, and respect CHANLIMIT', async (t) => {
  const channels = [
    { name: '#a', users: 9, modes: '+nt' },
    { name: '#banned', users: 8, modes: '+nt' },
    { name: '#invite', users: 7, modes: '+int' },
    { name: '#keyed', users: 6, modes: '+knt key' },
    { name: '#b', users: 5, modes: '+nt' },
    { name: '#c', users: 4, modes: '+nt' },
  ];
  const stats = { join: '*', max_channels: 10, refresh_seconds: 3600 };
  const bot = await syncedOn(t, { stats, channels });
  t.same(joinsAndParts(bot), ['JOIN #a,#banned,#b,#c'], 'neither invite-only nor keyed channels');
  bot.irc.receive(
    ':hub.test.net 474 DataBot #Banned :Cannot join channel (you are banned)',
    ':hub.test.net 366 DataBot #a :End of /NAMES list.',
  );
  t.same(
    bot.logs.filter((line) => /join refused/.test(line)).map((line) => / channel=(\S+)/.exec(line)![1]),
    ['#Banned'],
    'the channel refused; the end of a NAMES is no refusal',
  );
  await syncNow(bot);
  t.same(joinsAndParts(bot), ['JOIN #a,#b,#c']);
  await bot.clock.jump(AFTER_REFUSAL_MS);
  await syncNow(bot);
  t.same(joinsAndParts(bot), ['JOIN #a,#banned,#b,#c'], 'tried again later');
  bot.irc.receive(':hub.test.net 405 DataBot #c :You are on too many channels');
  await syncNow(bot);
  t.same(joinsAndParts(bot), [], 'too many channels: no more joins for a while');
  await bot.stop();

  const limited = await syncedOn(t, {
    stats,
    channels,
    operator: false,
    isupport: `${INSPIRCD_ISUPPORT} CHANLIMIT=#:2`,
  });
  t.same(joinsAndParts(limited), ['JOIN #a,#banned'], 'no more than CHANLIMIT');

  t.equal(channelLimit(new Map([['CHANLIMIT', '#:100,&:20']])), 20);
  t.equal(channelLimit(new Map()), null);
  t.equal(channelLimit(new Map([['MAXCHANNELS', '20']])), 20, 'the older token');
  t.equal(
    channelLimit(
      new Map([
        ['CHANLIMIT', '#:100'],
        ['MAXCHANNELS', '20'],
      ]),
    ),
    100,
    'CHANLIMIT first',
  );
  t.equal(channelLimit(new Map([['MAXCHANNELS', '']])), null, 'no number: no limit');
});

t.test('between syncs, LUSERS and LIST alone refresh the counts and the channels', async (t) => {
  const bot = await syncedOn(t);
  const { model } = bot.host;
  const usersBefore = model.users.size;
  t.ok(model.channels.get('#tricky'));
  const network = bot.server.network!;
  network.users.push({ nick: 'newcomer', server: 'leaf.test.net' });
  network.channels = [
    { name: '#public', users: 4, topic: 'hello [world]', modes: '+nt' },
    { name: '#new', users: 1, topic: 'just formed', modes: '+nt' },
  ];
  bot.irc.sent.length = 0;
  await countsRefreshed(bot);
  t.same(bot.irc.sent, ['LUSERS', 'LIST'], 'nothing else is asked');
  t.equal(model.stats.users, 6, 'the network’s own count');
  t.match(model.channels.get('#public'), { users: 4 });
  t.match(model.channels.get('#new'), { users: 1, hidden: false });
  t.notOk(model.channels.get('#tricky'), 'a channel no longer listed is gone');
  t.equal(model.users.size, usersBefore, 'the users are left to the syncs and notices');
});

/** `count` public channels of 3 users. */
const manyChannels = (count: number, prefix = '#many'): FakeChannel[] =>
  Array.from({ length: count }, (_, index) => ({ name: `${prefix}${index}`, users: 3, modes: '+nt' }));

t.test('between whole LISTs of a big network, the channels formed in the last minute, every 2 s', async (t) => {
  const due = (now: number, channels: number, costMs = 0, lagged = false): boolean =>
    wholeListDue({ now, listedAt: 0, channels, costMs, lagged });
  t.notOk(due(249, 500), 'a small network: the whole LIST every 250 ms');
  t.ok(due(250, 500));
  t.notOk(due(249, 1000), '1,000 channels: 0.25 ms per channel');
  t.ok(due(250, 1000));
  t.notOk(due(1999, 4000), 'from 2,000 channels on, 0.5 ms per channel');
  t.ok(due(2000, 4000));
  t.notOk(due(999, 2000));
  t.ok(due(1000, 2000));
  t.notOk(due(4999, 10_000), '10,000 channels: 0.5 ms per channel');
  t.ok(due(5000, 10_000));
  t.notOk(
    due(19_999, 10_000, 5000, true),
    'a LIST that cost a server holding the bot’s lines 5 s (a plain user’s penalty) comes after 4 times that',
  );
  t.ok(due(20_000, 10_000, 5000, true));
  t.ok(due(5000, 10_000, 5000, false), 'a server that reads every line at once is asked as often as ever');
  t.equal(LIST_COST_SHARE, 4);
  const fresh = (now: number, channels: number, elist: string | undefined, newListedAt = 0, lagged = false) =>
    newChannelsDue({
      now,
      newListedAt,
      channels,
      listsNewChannels: profileOf(elist === undefined ? [] : [['ELIST', elist]]).listsNewChannels,
      lagged,
    });
  t.notOk(fresh(5000, 2000, 'CMNTU'), 'not on a network whose whole LIST comes as often');
  t.ok(fresh(NEW_CHANNELS_EVERY_MS, 10_000, 'CMNTU'), '10,000 channels: the new ones every 2 s');
  t.notOk(fresh(2999, 10_000, 'CMNTU', 1000), 'and not again sooner');
  t.ok(fresh(3000, 10_000, 'CMNTU', 1000));
  t.notOk(fresh(60_000, 10_000, 'CMNTU', 1000, true), 'never while the server holds the bot’s lines');
  t.notOk(fresh(5000, 10_000, 'MNTU'), 'a server that cannot list channels by age is not asked');
  t.notOk(fresh(5000, 10_000, undefined));

  // 10,000 channels: the whole LIST every 5 s, so 2 s after one the new channels' LIST is due alone.
  const bot = await syncedOn(t, {
    stats: { version_requests_per_second: 0 },
    channels: [...channels(), ...manyChannels(9996)],
  });
  const { model } = bot.host;
  t.ok(model.channels.get('#tricky'), 'known from the sync');
  bot.server.answer(/^LIST C<1$/, [END_OF_LIST]);
  await bot.clock.advance(5000);
  t.ok(bot.irc.sent.includes('LIST C<1') && bot.irc.sent.includes('LIST >49'), 'new channels, then a whole LIST');
  const before = model.channels.size;
  bot.server.answer(/^LIST C<1$/, [
    ':hub.test.net 321 DataBot Channel :Users Name',
    ':hub.test.net 322 DataBot #formed 2 :[+nt] just formed',
    END_OF_LIST,
  ]);
  bot.server.network!.channels.shift();
  bot.irc.sent.length = 0;
  await bot.clock.advance(NEW_CHANNELS_EVERY_MS);
  t.same(bot.irc.sent, ['LIST C<1'], 'one LIST of the new channels, nothing else');
  t.match(model.channels.get('#formed'), { users: 2, topic: 'just formed', hidden: false });
  t.ok(model.channels.get('#public'), 'a channel it does not list stays: only a whole LIST shows what is gone');
  t.equal(model.channels.size, before + 1);
});

t.test('a whole LIST the server held for 3 s is asked again 4 times that later, not every 250 ms', async (t) => {
  const bot = await syncedOn(t, { stats: { version_requests_per_second: 0 } });
  const lists = (): number => bot.irc.sent.filter((line) => line === 'LIST').length;
  // The next whole LIST is answered 3 s into its turn (a plain user's LIST held behind the server's penalty).
  bot.server.answer(/^LIST$/, []);
  bot.irc.sent.length = 0;
  await bot.clock.advance(250);
  await bot.until(() => lists() === 1, 'the whole LIST');
  await bot.clock.advance(3000);
  bot.irc.receive(END_OF_LIST);
  await bot.settled();
  bot.server.answer(/^LIST$/, [END_OF_LIST]);
  await bot.clock.advance(8500);
  t.equal(lists(), 1, 'not again 11.5 s after its asking (it cost 3 s: 12 s, 4 times over)');
  await bot.clock.advance(800);
  await bot.until(() => lists() >= 2, 'the next whole LIST');
  // That one cost nothing: the next ones come every 250 ms, as on any small network.
  await bot.clock.advance(1000);
  t.ok(lists() >= 4, `and back to every 250 ms (${lists()} LISTs)`);
});

t.test("a plain user's refresh is spared a whole LIST the counts took moments before", async (t) => {
  // 10,000 channels: the whole LIST every 5 s between syncs; the refresh comes at 62 s, 2 s after one.
  const bot = await syncedOn(t, {
    operator: false,
    stats: { version_requests_per_second: 0, refresh_seconds: 62 },
    channels: [...channels(), ...manyChannels(9996)],
  });
  bot.server.answer(/^LIST C<1$/, [END_OF_LIST]);
  await bot.clock.advance(61_000);
  const wholeLists = (): string[] => bot.irc.sent.filter((line) => line.startsWith('LIST') && line !== 'LIST C<1');
  t.ok(wholeLists().length > 0, 'the counts took whole LISTs');
  bot.irc.sent.length = 0;
  await refresh(bot, 62);
  t.ok(bot.irc.sent.includes('LUSERS') && bot.irc.sent.some((line) => line.startsWith('WHO')), 'refreshed');
  t.same(wholeLists(), [], 'with no whole LIST of its own');
  bot.irc.sent.length = 0;
  await syncNow(bot);
  t.ok(wholeLists().length > 0, 'a whole sync (SYNC, a split) still lists');
});

t.test('many channels a band round missed are asked by name a few lines at a time, not one by one', async (t) => {
  const missed = Array.from({ length: 250 }, (_, index) => ({
    name: `#missed-${String(index).padStart(3, '0')}`,
    users: 3,
    modes: '+nt',
  }));
  const bot = await syncedOn(t, { stats: { list_chunk_above: 2 }, channels: missed });
  const { model } = bot.host;
  for (const query of BANDS) bot.server.answer(new RegExp(`^LIST ${query}$`), [END_OF_LIST]);
  let written = 0;
  let ended = 0;
  let mostOut = 0;
  bot.irc.on('message', (line) => {
    if (line.command === '323') ended++;
  });
  // The even ones are still there.
  let endedBefore: number | undefined;
  bot.server.answer(/^LIST (#[^ ]+)$/, (match) => {
    // The bands' ends came before.
    endedBefore ??= ended;
    written++;
    mostOut = Math.max(mostOut, written - (ended - endedBefore));
    const here = match[1]!.split(',').filter((name) => Number(name.slice(-3)) % 2 === 0);
    return [...here.map((name) => `:hub.test.net 322 DataBot ${name} 2 :[+nt] here`), END_OF_LIST];
  });
  await syncNow(bot);
  const lines = bot.irc.sentMatching(/^LIST #/);
  t.equal(lines.length, namesInLines(missed.map((channel) => channel.name)).length, 'every missed channel asked once');
  t.ok(lines.length > LIST_BY_NAME_LINES_AT_ONCE, `${lines.length} lines`);
  t.equal(mostOut, LIST_BY_NAME_LINES_AT_ONCE, 'a few lines out at once');
  t.equal(missed.filter((channel) => model.channels.get(channel.name)).length, 125, 'those still there kept');
  t.notOk(model.channels.get('#missed-001'), 'the others gone');
});

t.test(
  'a whole LIST beside a sync waits for the other: one LIST out at a time, and the newer answer stands',
  async (t) => {
    const bot = await syncedOn(t);
    const { model } = bot.host;
    // Just before the refresh: the LIST between syncs comes due at the same moment as the sync's own.
    await bot.clock.advance(59_999);
    let written = 0;
    let ended = 0;
    let mostOut = 0;
    bot.irc.on('message', (line) => {
      if (line.command === '323') ended++;
    });
    const row = (name: string) => `:hub.test.net 322 DataBot ${name} 2 :[+nt] topic`;
    bot.server.answer(/^LIST$/, () => {
      written++;
      mostOut = Math.max(mostOut, written - ended);
      return [
        ':hub.test.net 321 DataBot Channel :Users Name',
        // The first answer big enough to be judged over several slices of time (100,000 rows: tens of ms on any
        // machine), during which the second arrives; #public emptied before the first and formed again before the
        // second.
        ...(written === 1
          ? [row('#tricky'), ...Array.from({ length: 100_000 }, (_, index) => row(`#many${index}`))]
          : [row('#public'), row('#new')]),
        END_OF_LIST,
      ];
    });
    await bot.clock.advance(1);
    await bot.synced();
    await bot.until(() => written === 2 && ended === 2, 'both LISTs answered');
    await bot.settled();
    t.equal(written, 2, 'two whole LISTs');
    t.equal(mostOut, 1, 'never two out at once (their rows and ends name no request)');
    t.ok(model.channels.get('#new'), 'the later answer’s new channel stays');
    t.ok(model.channels.get('#public'), 'the older answer does not remove what the later one lists');
    t.notOk(model.channels.get('#tricky'), 'gone from the later answer');
    t.notOk(model.channels.get('#many0'));
  },
);

t.test('a channel the new channels’ LIST lists between the bands of a whole LIST is not taken for gone', async (t) => {
  // Not an operator: no MODE asked of channels a LIST showed without modes. 5,000 channels: the whole LIST every
  // 2.5 s, the new channels' every 2 s.
  const bot = await syncedOn(t, {
    operator: false,
    stats: { list_chunk_above: 2 },
    channels: [
      { name: '#late', users: 3, modes: '+nt' },
      { name: '#gone', users: 3, modes: '+nt' },
      ...manyChannels(4998),
    ],
  });
  const { model } = bot.host;
  // #late moved from one band to another while the bands were answered: in none of them. The first band's
  // answer waits for the test.
  bot.server.answer(/^LIST <2$/, []);
  for (const query of BANDS.slice(1)) bot.server.answer(new RegExp(`^LIST ${query}$`), [END_OF_LIST]);
  bot.server.answer(/^LIST C<1$/, [':hub.test.net 322 DataBot #late 4 :[+nt] moved', END_OF_LIST]);
  // Asked by name, neither is there any more by then (a LIST a moment later would show #late again).
  bot.server.answer(/^LIST #/, [END_OF_LIST]);
  bot.irc.sent.length = 0;
  const syncing = syncNow(bot);
  await bot.next(/^LIST <2$/);
  // The new channels' LIST comes due meanwhile: it waits for the band out, and goes before the next.
  await bot.clock.advance(NEW_CHANNELS_EVERY_MS);
  bot.irc.receive(END_OF_LIST);
  await syncing;
  const { sent } = bot.irc;
  t.ok(
    sent.indexOf('LIST C<1') > sent.indexOf('LIST <2') && sent.indexOf('LIST C<1') < sent.indexOf('LIST >1,<3'),
    'the new channels were listed between two bands',
  );
  t.match(model.channels.get('#late'), { users: 4 }, 'a channel a later LIST listed stays');
  t.notOk(
    sent.some((line) => line.startsWith('LIST #') && line.includes('#late')),
    'and is not asked by name',
  );
  t.notOk(model.channels.get('#gone'), 'one no LIST listed is gone');
});

t.test('a user the round sees in a notice is not taken for gone at its end', async (t) => {
  // An operator on InspIRCd, whose notices tell of clients connecting; ghost was on the network at the first sync.
  const bot = await syncedOn(t, { version: INSPIRCD, users: [...users(), { nick: 'ghost', server: 'leaf.test.net' }] });
  const { model } = bot.host;
  const network = bot.server.network!;
  network.users = users();
  // Someone connects while the round runs, after their mask was asked: an operator's notice tells.
  bot.server.answerOnce(/^WHO \* %tcuihsnfar,77$/, (match) => [
    ':hub.test.net NOTICE DataBot :*** REMOTECONNECT: Client connecting at leaf.test.net: latecomer!l@l.example (192.0.2.50) [Late]',
    ...networkAnswer(network, match[0], { nick: 'DataBot', isOperator: true })!,
  ]);
  await syncNow(bot);
  t.ok(model.users.get('latecomer'), 'the newcomer stays');
  t.notOk(model.users.get('ghost'), 'a user neither WHO nor a notice showed goes');
});

t.test('the pass that forgets unseen users leaves alone those who came while it ran', async (t) => {
  let now = Date.parse('2026-11-28T00:00:00Z');
  // The model of a host, on a clock of its own.
  const { host } = await startHarness(t, { plugins: {}, registry: [], clock: () => new Date(now) });
  const { model } = host;
  for (let index = 0; index < 60_000; index++) model.upsertUser(`gone${index}`, {});
  model.upsertUser('seen', {});
  now += 1000;
  let done = false;
  const pass = removeUnseenUsers(model, new Set([model.fold('seen')])).then((removed) => {
    done = true;
    return removed;
  });
  // The pass pauses between slices of time: someone connects meanwhile (a notice the round did not see).
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(done, 'the pass was still running');
  now += 5;
  model.upsertUser('latecomer', {});
  t.equal(await pass, 60_000, 'every user the round did not see is forgotten');
  t.ok(model.users.get('seen'));
  t.ok(model.users.get('latecomer'), 'one first seen after the pass began stays');
});
