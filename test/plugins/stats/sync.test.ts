import t from 'tap';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { REQUESTS_IN_FLIGHT } from '../../../lib/irc/requests.js';
import { createLogger } from '../../../lib/logger.js';
import { NetworkModel } from '../../../lib/model/network.js';
import { buildServerProfile } from '../../../lib/irc/server-profile.js';
import { createJoinState, joinChannels, noteJoinRefusal, planJoins } from '../../../plugins/stats/joins.js';
import {
  checkChannelModes,
  FORMED_QUERIES_IN_FLIGHT,
  FormedChannels,
  LIST_BY_NAME_LINES_AT_ONCE,
  listQueries,
  namesInLines,
  parseListEntry,
} from '../../../plugins/stats/list.js';
import { track } from '../../../plugins/stats/live.js';
import { statsConfigSchema, type StatsConfig } from '../../../plugins/stats/schema.js';
import { parseLinksEntry, parseMapLine } from '../../../plugins/stats/servers.js';
import {
  createSyncState,
  fullSync,
  NEW_CHANNELS_EVERY_MS,
  newChannelsDue,
  parseLusers,
  refreshCounts,
  refreshNewChannels,
  removeUnseenUsers,
  type SyncContext,
  wholeListDue,
} from '../../../plugins/stats/sync.js';
import { parseWhoxReply, WHO_MASKS_IN_FLIGHT, whoChunkAbove, whoMasks } from '../../../plugins/stats/who.js';
import { ScriptedTransport } from './fixtures/scripted-irc.js';

/** The server profile of a server that said this much of itself (ISUPPORT tokens, RPL_MYINFO's version). */
function profileOf(isupport: [string, string][] = [], version = '') {
  return buildServerProfile({ version, isupport: new Map(isupport), caps: new Set(), offeredCaps: new Set() });
}

/** The MAP lines InspIRCd writes, as its profile reads them. */
const INSPIRCD_MAP = profileOf([], 'InspIRCd-3').mapLine!;

/** The most channels a server whose ISUPPORT has these tokens lets a user be in. */
const channelLimit = (isupport: Map<string, string>) => profileOf([...isupport]).channelLimit;

const defaults = Object.fromEntries(
  Object.entries(statsConfigSchema.properties).map(([key, schema]) => [key, schema.default]),
) as unknown as StatsConfig;

function message(command: string, params: string[]): IrcMessage {
  return { command, params, source: null, tags: {}, time: new Date() };
}

interface FakeUser {
  nick: string;
  ident: string;
  host: string;
  ip: string;
  server: string;
  flags: string;
  account: string;
  realname: string;
  /** The host behind the cloak `host` is, when it differs. */
  realHost?: string;
}

const users: FakeUser[] = [
  {
    nick: 'alice',
    ident: 'al',
    host: 'a.example',
    ip: '192.0.2.1',
    server: 'hub.test.net',
    flags: 'H*',
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
    flags: 'G',
    account: '0',
    realname: 'Bob B',
  },
  {
    nick: '[carol]',
    ident: 'ca',
    host: 'c.example',
    ip: '192.0.2.3',
    server: 'leaf.test.net',
    flags: 'H',
    account: '0',
    realname: 'Carol',
  },
  {
    nick: 'DataBot',
    ident: 'databot',
    host: 'bot.example',
    ip: '192.0.2.9',
    server: 'hub.test.net',
    flags: 'H*',
    account: '0',
    realname: 'Data Bot',
  },
  {
    nick: 'NickServ',
    ident: 'NickServ',
    host: 'services.test.net',
    ip: '0.0.0.0',
    server: 'services.test.net',
    flags: 'H',
    account: '0',
    realname: 'Nickname Services',
  },
];

const WHOX_ORDER = 'tcuihsnfdlaor';

/**
 * The WHOX reply a server would give `who` for `mask` (a nick prefix and `*`) with `fields`; with `realHosts`,
 * as InspIRCd answers an operator's WHO with flag `x` (the host behind the cloak, the token 78 asked for).
 */
function whoxLines(
  mask: string,
  fields: string,
  list: readonly FakeUser[] = users,
  realHosts = false,
  token = realHosts ? '78' : '77',
): string[] {
  const prefix = mask.replace(/\*$/, '').toLowerCase().replace('[', '{');
  const matching = list.filter((user) => user.nick.toLowerCase().replace('[', '{').startsWith(prefix));
  return [
    ...matching.map((user) => {
      const values: Record<string, string> = {
        t: token,
        c: '*',
        u: user.ident,
        i: user.ip,
        h: realHosts ? (user.realHost ?? user.host) : user.host,
        s: user.server,
        n: user.nick,
        f: user.flags,
        a: user.account,
        r: user.realname,
      };
      const asked = [...WHOX_ORDER].filter((field) => fields.includes(field));
      const params = asked.map((field) => values[field]!);
      return `:hub.test.net 354 DataBot ${params.slice(0, -1).join(' ')} :${params.at(-1)}`;
    }),
    `:hub.test.net 315 DataBot ${mask} :End of /WHO list.`,
  ];
}

const lusers = [
  ':hub.test.net 251 DataBot :There are 3 users and 2 invisible on 3 servers',
  ':hub.test.net 252 DataBot 2 :operator(s) online',
  ':hub.test.net 254 DataBot 4 :channels formed',
  ':hub.test.net 255 DataBot :I have 2 clients and 2 servers',
  ':hub.test.net 265 DataBot :Current local users: 2  Max: 3',
  ':hub.test.net 266 DataBot :Current global users: 5  Max: 7',
];

const links = [
  ':hub.test.net 364 DataBot services.test.net hub.test.net :1 TestNet Services',
  ':hub.test.net 364 DataBot leaf.test.net hub.test.net :1 TestNet leaf',
  ':hub.test.net 364 DataBot hub.test.net hub.test.net :0 TestNet hub',
  ':hub.test.net 365 DataBot * :End of /LINKS list.',
];

const map = [
  ':hub.test.net 015 DataBot :hub.test.net (001 InspIRCd-3.15.0-debian)           2 [40.00%] [Up: 39s]',
  ':hub.test.net 015 DataBot :|-services.test.net (00A)                          1 [20.00%] [Up: 39s]',
  ':hub.test.net 015 DataBot :`-leaf.test.net (002 InspIRCd-3.15.0-debian)        2 [40.00%] [Up: 38s]',
  ':hub.test.net 018 DataBot :3 servers and 5 users, average 1.67 users per server',
  ':hub.test.net 017 DataBot :End of /MAP',
];

const listWithModes = [
  ':hub.test.net 321 DataBot Channel :Users Name',
  ':hub.test.net 322 DataBot #public 3 :[+nt] hello [world]',
  ':hub.test.net 322 DataBot #secret 2 :[+nst] hush',
  ':hub.test.net 322 DataBot #private 2 :[+knpt key] private topic',
  ':hub.test.net 322 DataBot #tricky 1 :[+nt] [+s] not really',
  ':hub.test.net 323 DataBot :End of channel list.',
];

const statsP = [
  ':hub.test.net 249 DataBot :alice (al@a.example) Idle: 5s',
  ':hub.test.net 249 DataBot :DataBot (databot@bot.example) Idle: 0s',
  ':hub.test.net 249 DataBot :2 OPER(s)',
  ':hub.test.net 219 DataBot P :End of /STATS report',
];

function setup(options: { operator?: boolean; config?: Partial<StatsConfig>; isupport?: string } = {}) {
  const irc = new ScriptedTransport();
  const model = new NetworkModel();
  irc.on('message', (line) => track(line, { irc, model }));
  irc.connect();
  irc.register(
    'DataBot',
    options.isupport ?? 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst ELIST=CMNTU WHOX',
  );
  if (options.operator ?? true) irc.receive(':hub.test.net 381 DataBot :You are now a NetAdmin');
  model.connectionOpened(irc.state.casemapping);
  irc
    .answer(/^LUSERS$/, lusers)
    .answer(/^LINKS$/, links)
    .answer(/^MAP$/, map)
    .answer(/^LIST$/, listWithModes)
    .answer(/^STATS P$/, statsP)
    .answer(/^WHO (\S+) n?%(\w+),(\d+)$/, (match) => whoxLines(match[1]!, match[2]!, users, false, match[3]))
    .answer(/^WHO (\S+) n?x%(\w+),(\d+)$/, (match) => whoxLines(match[1]!, match[2]!, users, true, match[3]))
    .answer(/^WHOIS NickServ$/, [
      ':hub.test.net 311 DataBot NickServ NickServ services.test.net * :Nickname Services',
      ':hub.test.net 312 DataBot NickServ services.test.net :TestNet Services',
      ':hub.test.net 318 DataBot NickServ :End of /WHOIS list.',
    ]);
  const context: SyncContext = {
    irc,
    model,
    logger: createLogger({ sink: () => undefined }),
    config: { ...defaults, join: [], ...options.config },
  };
  return { irc, model, context };
}

t.test('LUSERS: InspIRCd text numbers and the numeric-parameter form', async (t) => {
  const parse = (lines: string[]) => {
    const { irc } = setup();
    const messages: IrcMessage[] = [];
    irc.on('message', (line) => messages.push(line));
    irc.receive(...lines);
    return parseLusers(messages);
  };
  t.same(parse(lusers), { users: 5, invisible: 2, servers: 3, operators: 2, channels: 4, maxUsers: 7 });
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
  t.same(parseLinksEntry(message('364', ['me', 'hub.test.net', 'hub.test.net', '0 TestNet hub'])), {
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
});

t.test('a server that caps its WHO replies is asked per nick initial from that many users on', async (t) => {
  const { irc, context } = setup();
  t.equal(whoChunkAbove(context), 1000, 'the setting, where the server sends every match');
  irc.receive(':hub.test.net 004 DataBot hub.test.net ngircd-26.1 abBcCFiIoqrRswx abehiIklmMnoOPqQrRstvVz');
  t.equal(whoChunkAbove(context), 25, "ngIRCd's 25 rows for a mask");
  t.equal(whoMasks(30, whoChunkAbove(context)).length, 35);
  t.same(whoMasks(25, whoChunkAbove(context)), ['*']);
});

t.test(
  'on ircd-hybrid a sync asks neither STATS P nor MAP; an operator’s WHO counts the users per server',
  async (t) => {
    const { irc, model, context } = setup();
    irc.receive(
      ':hub.test.net 004 DataBot hub.test.net ircd-hybrid-1:8.2.43+dfsg.1-1 BDFGHXRSWZacefgijklnopqrswyz CIKLMNOQRSTVZbcehiklmnoprstvz Ibehklov',
    );
    await fullSync(context, createSyncState());
    t.same(irc.sentMatching(/^(STATS|MAP)\b/), [], 'its STATS P lists ports, its MAP lines are worded otherwise');
    t.ok(model.ready);
    t.match(model.servers.get('hub.test.net'), { users: 2 });
    t.match(model.users.get('alice'), { isOperator: true }, "WHO's flags still say who is an operator");
  },
);

t.test('a full sync as an operator', async (t) => {
  const { irc, model, context } = setup();
  // Left from before: one user gone from the network, one who shares a channel with the bot.
  model.upsertUser('ghost', { server: 'leaf.test.net' });
  model.upsertChannel('#mine', { joined: true });
  model.addMember('#mine', 'DataBot');
  model.addMember('#mine', 'invisiblefriend');
  await fullSync(context, createSyncState());

  t.same(irc.sentMatching(/^WHO /), ['WHO * %tcuihsnfar,77'], 'one WHO with the IP field, as an operator');
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
  t.same(irc.sentMatching(/^MODE #/), [], 'modes in LIST need no MODE queries');
});

t.test('chunked WHO on a big network finds everyone once', async (t) => {
  const { irc, model, context } = setup({ config: { who_chunk_above: 3 } });
  await fullSync(context, createSyncState());
  const sent = irc.sentMatching(/^WHO /);
  t.equal(sent.length, 32, 'a mask per first letter; [ and {, ] and }, \\ and | are one letter in rfc1459');
  t.ok(sent.includes('WHO a* n%tcuihsnfar,100'), 'the n flag matches the mask against nicks only; a token per mask');
  t.equal(new Set(sent.map((line) => line.split(',')[1])).size, 32, 'no two masks share a token');
  t.same([...model.users.all()].map((user) => user.nick).sort(), ['Bob', 'DataBot', 'NickServ', '[carol]', 'alice']);
});

/** The masks of the WHO lines sent that match `pattern`, in order. */
const maskOf = (lines: string[]): string[] => lines.map((line) => line.split(' ')[1]!);
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];

t.test('masks go out several at once, each with its own token', async (t) => {
  const { irc, context } = setup({ config: { who_chunk_above: 3 } });
  let sentBeforeFirstEnd: number | null = null;
  irc.on('message', (line) => {
    if (line.command === '315') sentBeforeFirstEnd ??= irc.sentMatching(/^WHO /).length;
  });
  await fullSync(context, createSyncState());
  t.equal(sentBeforeFirstEnd, WHO_MASKS_IN_FLIGHT, 'as many masks as may be unanswered, before the first answer');
  t.equal(irc.sentMatching(/ n%/).length, 32, 'and every mask in the end');
});

t.test('a refresh asks the next slice of the masks and judges only the users those list', async (t) => {
  const { irc, model, context } = setup({ config: { who_chunk_above: 3 } });
  // 1,000 users per letter the network no longer has (none shares a channel with the bot): 26,000 in all,
  // more than one slice's 20,000 rows.
  for (const letter of LETTERS) for (let i = 0; i < 1000; i++) model.upsertUser(`${letter}gone${i}`, {});
  model.upsertUser('zed', { isOperator: true });
  model.upsertUser('0AAAAAAAB', {});
  const state = createSyncState();
  state.syncs = 1;
  await fullSync(context, state);
  const first = LETTERS.slice(0, 20).map((letter) => `${letter}*`);
  t.same(maskOf(irc.sentMatching(/ n%/)), first, 'a..t: 20,004 expected rows, the first past 20,000');
  t.notOk(model.users.get('agone0'), 'a user of the slice WHO did not list is gone');
  t.notOk(model.users.get('tgone999'));
  t.ok(model.users.get('ugone0'), 'a user of a later slice waits for it');
  t.equal(model.users.get('zed')!.isOperator, true, "nor is a later slice's operator flag taken away");
  t.ok(model.users.get('0AAAAAAAB'), 'a nick no mask lists waits for the end of the cycle');
  t.ok(model.users.get('alice')!.isOperator, 'STATS P and WHO flags set as before');
  t.equal(state.whoNext, 20);

  irc.sent.length = 0;
  await fullSync(context, state);
  t.same(
    maskOf(irc.sentMatching(/ n%/)),
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
  t.equal(state.whoNext, 0, 'the next refresh starts the cycle again');

  for (const letter of LETTERS) for (let i = 0; i < 1000; i++) model.upsertUser(`${letter}gone${i}`, {});
  irc.sent.length = 0;
  await fullSync(context, state, true);
  t.equal(irc.sentMatching(/ n%/).length, 32, 'a whole sync (the SYNC command, a link) asks every mask');
  t.equal(model.users.size, 5);
});

t.test('real hosts are asked a slice per sync, from where the last stopped', async (t) => {
  const { irc, model, context } = setup({ config: { who_chunk_above: 3 } });
  irc.receive(':hub.test.net 004 DataBot hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  // 26,000 users in the bot's channel, whose real hosts the server does not list (they stay missing).
  model.upsertChannel('#mine', { joined: true });
  for (const letter of LETTERS) for (let i = 0; i < 1000; i++) model.addMember('#mine', `${letter}x${i}`);
  const state = createSyncState();
  await fullSync(context, state);
  t.same(
    maskOf(irc.sentMatching(/ n?x%/)),
    LETTERS.slice(0, 20).map((letter) => `${letter}*`),
    'a..t at the first sync',
  );
  t.equal(model.users.get('alice')!.realHost, 'alice.home.isp.example', 'taken as the rows came');
  irc.sent.length = 0;
  await fullSync(context, state);
  t.same(
    maskOf(irc.sentMatching(/ n?x%/)),
    [...LETTERS.slice(20).map((letter) => `${letter}*`), '[*'],
    'the next sync goes on from u, with the initials still missing one',
  );
  irc.sent.length = 0;
  await fullSync(context, state);
  t.same(maskOf(irc.sentMatching(/ n?x%/)).slice(0, 2), ['a*', 'b*'], 'and then from the start again');
});

t.test('an operator on InspIRCd asks WHO again with flag x for the hosts behind cloaks', async (t) => {
  const { irc, model, context } = setup({ config: { who_chunk_above: 3 } });
  irc.receive(':hub.test.net 004 DataBot hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  let askedBeforeSynced: string[] | null = null;
  model.on('change', (change) => {
    if (change.kind === 'synced') askedBeforeSynced = irc.sentMatching(/ n?x%/);
  });
  await fullSync(context, createSyncState());
  t.same(askedBeforeSynced, [], 'the model is complete (synced) before real hosts are asked');
  t.equal(irc.sentMatching(/ n%/).length, 32, 'WHO per first letter');
  t.same(
    irc.sentMatching(/ n?x%/),
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

  irc.sent.length = 0;
  await fullSync(context, createSyncState());
  t.same(irc.sentMatching(/ n?x%/), [], 'the next sync: everyone has one, and a real host does not change');
  model.upsertUser('Bob', { realHost: null });
  irc.sent.length = 0;
  await fullSync(context, createSyncState());
  t.same(irc.sentMatching(/ n?x%/), ['WHO b* nx%tihn,201'], 'only the letter of a nick still without one');
  t.equal(model.users.get('bob')!.realHost, 'b.example');

  // alice quit and someone else took the nick, out of the bot's sight: WHO shows another IP and ident.
  const newcomer = users.map((user) =>
    user.nick === 'alice' ? { ...user, ident: 'new', ip: '192.0.2.77', realHost: 'newcomer.isp.example' } : user,
  );
  irc
    .answer(/^WHO (\S+) n?%(\w+),(\d+)$/, (match) => whoxLines(match[1]!, match[2]!, newcomer, false, match[3]))
    .answer(/^WHO (\S+) n?x%(\w+),(\d+)$/, (match) => whoxLines(match[1]!, match[2]!, newcomer, true, match[3]));
  const before = model.users.get('alice')!;
  model.upsertUser('alice', { client: 'irssi' });
  irc.sent.length = 0;
  await fullSync(context, createSyncState());
  t.not(model.users.get('alice'), before, 'a new user under the old nick');
  t.equal(model.users.get('alice')!.client, null, "not the previous person's client");
  t.same(irc.sentMatching(/ n?x%/), ['WHO a* nx%tihn,200'], 'a nick behind which WHO shows someone else: asked again');
  t.match(model.users.get('alice'), { ident: 'new', ip: '192.0.2.77', realHost: 'newcomer.isp.example' });

  const small = setup();
  small.irc.receive(':hub.test.net 004 DataBot hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  await fullSync(small.context, createSyncState());
  t.same(small.irc.sentMatching(/^WHO /), ['WHO * %tcuihsnfar,77', 'WHO * x%tihn,78'], 'a small network: * twice');
  t.equal(small.model.users.get('alice')!.realHost, 'alice.home.isp.example');
});

t.test('an operator without users/auspex: the host x shows is not taken for a real one', async (t) => {
  const { irc, model, context } = setup({ config: { who_chunk_above: 3 } });
  irc.receive(':hub.test.net 004 DataBot hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  // What InspIRCd answers such an operator: the shown host, and every IP but its own hidden.
  irc.answer(/^WHO (\S+) nx%tihn,(\d+)$/, (match) => [
    ...users
      .filter((user) => user.nick.toLowerCase().startsWith(match[1]!.slice(0, 1)))
      .map(
        (user) =>
          `:hub.test.net 354 DataBot ${match[2]} ${user.nick === 'DataBot' ? user.ip : '255.255.255.255'} ${user.host} ${user.nick}`,
      ),
    `:hub.test.net 315 DataBot ${match[1]} :End of /WHO list.`,
  ]);
  const state = createSyncState();
  await fullSync(context, state);
  t.same(
    irc.sentMatching(/ n?x%/),
    ['WHO a* nx%tihn,200', 'WHO b* nx%tihn,201', 'WHO d* nx%tihn,203', 'WHO n* nx%tihn,213', 'WHO [* nx%tihn,226'],
    'asked a few at once',
  );
  t.same(
    [...model.users.all()].map((user) => user.realHost),
    [null, null, null, null, null],
    'not the cloaks, and nothing from a round the server refused',
  );
  irc.sent.length = 0;
  await fullSync(context, state);
  t.same(irc.sentMatching(/ n?x%/), [], 'not asked again on this connection');
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
      const { irc, model, context } = setup({ operator, ...(isupport ? { isupport } : {}) });
      irc.answer(/^WHO \*$/, whoxLines('*', 'tcuihsnfar').slice(-1));
      irc.receive(`:hub.test.net 004 DataBot hub.test.net ${version} iosw biklmnopstv :bklov`);
      await fullSync(context, createSyncState());
      const who = `${operator ? 'an operator' : 'a user'} on ${version}${isupport ? ' without WHOX' : ''}`;
      t.same(irc.sentMatching(/ n?x%/), [], who);
      t.equal(model.users.get('alice')?.realHost ?? null, null);
    }
  },
);

t.test('as a non-operator: no IP asked, LIST is taken as it is, operators from STATS P', async (t) => {
  const { irc, model, context } = setup({ operator: false });
  irc.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #public 3 :hello',
    ':hub.test.net 322 DataBot * 2 :',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  // What a non-operator's WHO shows: invisible alice is missing.
  irc.answer(/^WHO \* %(\w+),77$/, (match) =>
    whoxLines(
      '*',
      match[1]!,
      users.filter((user) => user.nick !== 'alice'),
    ),
  );
  await fullSync(context, createSyncState());
  t.same(
    irc.sentMatching(/^WHO /),
    ['WHO * %tcuhsnfar,77'],
    'InspIRCd hides everybody else from a non-operator who asks %i',
  );
  t.equal(model.stats.syncedAsOperator, false);
  t.match(model.channels.get('#public'), { hidden: false });
  t.equal(model.channels.size, 1, 'the private channel LIST shows as * is not recorded');
  t.match(
    model.users.get('alice'),
    { isOperator: true, ident: 'al', host: 'a.example' },
    'STATS P shows the invisible operator',
  );
  t.equal(model.users.get('bob')!.ip, null);
  t.same(irc.sentMatching(/^MODE #/), []);
});

/** Turns of the event loop enough for a few scripted answers. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
}

t.test('a channel a notice says was formed: in the model at once, public once its modes are known', async (t) => {
  const { irc, model, context } = setup();
  const state = createSyncState();
  await fullSync(context, state);
  // Four in flight here (the request lane lets out eight), so that the limit is the class's own.
  t.ok(FORMED_QUERIES_IN_FLIGHT <= REQUESTS_IN_FLIGHT, 'never more than the request lane lets out');
  const formed = new FormedChannels(context, () => state.list, { settleMs: 20, recheckMs: 50, inFlight: 4 });
  const waitFor = async (ms: number): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await settle();
  };
  t.teardown(() => formed.clear());
  // The first four are answered by hand below, so that the fifth's turn can be seen.
  irc.answer(/^MODE #brief$/, [':hub.test.net 403 DataBot #brief :No such channel']);
  irc.sent.length = 0;
  for (const name of ['#fresh', '#hush', '#more', '#most', '#brief']) formed.note(name);
  t.match(model.channels.get('#fresh'), { users: 1, hidden: true }, 'at once, hidden until its modes are known');
  t.same(irc.sentMatching(/^MODE #/), [], "asked only once the creator's and the services' modes have come");
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.same(irc.sentMatching(/^MODE #/), ['MODE #fresh', 'MODE #hush', 'MODE #more', 'MODE #most'], 'four at a time');
  irc.receive(
    ':hub.test.net 324 DataBot #fresh +nt',
    ':hub.test.net 324 DataBot #hush +nst',
    ':hub.test.net 324 DataBot #more +n',
    ':hub.test.net 324 DataBot #most +n',
  );
  await settle();
  t.same(irc.sentMatching(/^MODE #/).slice(4), ['MODE #brief'], 'then the next');
  t.match(model.channels.get('#fresh'), { hidden: false, modes: '+nt' });
  t.match(model.channels.get('#hush'), { hidden: true, modes: '+nst' }, 'a secret one stays hidden');
  t.notOk(model.channels.get('#brief'), 'one gone before its answer is forgotten');

  // The services' mode lock made #fresh secret just after its first answer: it is asked again.
  irc
    .answer(/^MODE #fresh$/, [':hub.test.net 324 DataBot #fresh +nst'])
    .answer(/^MODE #more$/, [':hub.test.net 324 DataBot #more +n'])
    .answer(/^MODE #most$/, [':hub.test.net 324 DataBot #most +n']);
  irc.sent.length = 0;
  await new Promise((resolve) => setTimeout(resolve, 80));
  await settle();
  t.same(
    irc.sentMatching(/^MODE #/).sort(),
    ['MODE #fresh', 'MODE #more', 'MODE #most'],
    'the public ones are asked once more, a while later',
  );
  t.match(model.channels.get('#fresh'), { hidden: true, modes: '+nst' }, 'and a secret one is hidden');
  irc.sent.length = 0;
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(irc.sentMatching(/^MODE #/), [], 'only once');

  // Formed again after it emptied, before a LIST found it gone: nothing of the old one holds.
  irc.answer(/^MODE #public$/, [':hub.test.net 324 DataBot #public +nt']);
  formed.note('#public');
  t.match(model.channels.get('#public'), { users: 1, hidden: true, topic: '' }, 'the old one formed again');
  formed.note('&local');
  await waitFor(30);
  t.same(irc.sentMatching(/^MODE/), ['MODE #public'], 'a server-local channel is not asked');
  t.match(model.channels.get('#public'), { hidden: false, modes: '+nt' });
  t.notOk(model.channels.get('&local'));

  // Formed while a LIST is under way and after the server answered it: the LIST's pass must keep it, and a row
  // of a LIST the server answered after the channel formed is still taken.
  irc.answer(/^LIST$/, (): string[] => {
    formed.note('#during');
    formed.note('#listed');
    return [
      ':hub.test.net 322 DataBot #public 3 :[+nt] hello',
      ':hub.test.net 322 DataBot #listed 5 :[+nt] topic',
      ':hub.test.net 323 DataBot :End of channel list.',
    ];
  });
  irc.answer(/^MODE #during$/, [':hub.test.net 324 DataBot #during +nt']);
  irc.answer(/^MODE #listed$/, [':hub.test.net 324 DataBot #listed +nt']);
  await refreshCounts(context, state);
  t.ok(model.channels.get('#during'), 'not taken as gone by a LIST asked before it formed');
  t.match(model.channels.get('#listed'), { users: 5, topic: 'topic' }, "the LIST's row is taken");
  t.notOk(model.channels.get('#hush'), 'while one that LIST no longer lists is gone');
  irc.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #public 3 :[+nt] hello',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  await refreshCounts(context, state);
  t.notOk(model.channels.get('#during'), 'the next LIST judges it');
  await settle();
});

t.test("a LIST during a formed channel's wait does not ask its modes sooner", async (t) => {
  const { irc, model, context } = setup();
  irc.answer(/^LIST$/, [':hub.test.net 322 DataBot #open 3 :hello', ':hub.test.net 323 DataBot :End of channel list.']);
  irc.answer(/^MODE #open$/, [':hub.test.net 324 DataBot #open +nt']);
  const state = createSyncState();
  await fullSync(context, state);
  const formed = new FormedChannels(context, () => state.list, { settleMs: 150, recheckMs: 10_000 });
  t.teardown(() => formed.clear());
  formed.note('#new');
  // Listed (without modes, as InspIRCd lists them to an operator) by the LISTs between syncs and by a sync.
  irc.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #open 3 :hello',
    ':hub.test.net 322 DataBot #new 1 :',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  irc.answer(/^MODE #new$/, [':hub.test.net 324 DataBot #new +nt']);
  irc.sent.length = 0;
  await refreshCounts(context, state);
  await fullSync(context, state);
  t.same(irc.sentMatching(/^MODE #new/), [], 'not asked before its wait is over');
  t.match(model.channels.get('#new'), { users: 1, hidden: true }, 'listed, and hidden');
  await new Promise((resolve) => setTimeout(resolve, 200));
  await settle();
  t.same(irc.sentMatching(/^MODE #new/), ['MODE #new'], 'asked once it is over');
  t.match(model.channels.get('#new'), { hidden: false, modes: '+nt' });
  t.equal(state.list.formedWaiting.size, 0, 'nothing kept once it was asked');
  irc.sent.length = 0;
  await refreshCounts(context, state);
  t.same(irc.sentMatching(/^MODE #new/), [], 'a later LIST takes it as known');
});

t.test("nothing asks a formed channel's modes before its latest wait is over", async (t) => {
  const { irc, model, context } = setup();
  const state = createSyncState();
  await fullSync(context, state);
  const formed = new FormedChannels(context, () => state.list, { settleMs: 150, recheckMs: 10_000 });
  t.teardown(() => formed.clear());
  const pause = async (ms: number): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await settle();
  };
  irc.answer(/^MODE (#again|#shown|#chosen)$/, (match): string[] => [`:hub.test.net 324 DataBot ${match[1]} +nt`]);
  irc.sent.length = 0;
  // Chosen to be asked (a sync's list), then formed again before its turn came.
  model.upsertChannel('#chosen', { users: 2, hidden: false });
  formed.note('#chosen');
  await checkChannelModes(context, state.list, ['#chosen'], 10);
  t.same(irc.sentMatching(/^MODE #chosen/), [], 'a list chosen before its notice does not ask it');

  // A LIST that shows modes lists it during its wait: its row is taken, it stays hidden, and it is still asked.
  formed.note('#shown');
  irc.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #shown 1 :[+nt] ',
    ':hub.test.net 322 DataBot #chosen 1 :[+nt] ',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  await refreshCounts(context, state);
  t.match(model.channels.get('#shown'), { modes: '+nt', hidden: true }, 'hidden until its own query');

  // Formed, emptied and formed again within the wait: asked once the second wait is over, not at the first's end.
  formed.note('#again');
  await pause(100);
  formed.note('#again');
  await pause(80);
  t.same(irc.sentMatching(/^MODE #again/), [], 'not at the end of the first wait');
  t.same(irc.sentMatching(/^MODE #(shown|chosen)/).sort(), ['MODE #chosen', 'MODE #shown'], 'the others at theirs');
  t.match(model.channels.get('#shown'), { hidden: false, modes: '+nt' });
  await pause(100);
  t.same(irc.sentMatching(/^MODE #again/), ['MODE #again'], 'at the end of the second');
  t.equal(state.list.formedWaiting.size, 0, 'nothing kept once each was asked');
});

t.test('an operator on a network that hides modes in LIST asks MODE, and hides until answered', async (t) => {
  const { irc, model, context } = setup();
  irc
    .answer(/^LIST$/, [
      ':hub.test.net 322 DataBot #open 3 :hello',
      ':hub.test.net 322 DataBot #hush 2 :',
      ':hub.test.net 322 DataBot #gone 1 :',
      ':hub.test.net 323 DataBot :End of channel list.',
    ])
    .answer(/^MODE #open$/, [':hub.test.net 324 DataBot #open +nt'])
    .answer(/^MODE #hush$/, [':hub.test.net 324 DataBot #hush +nst'])
    .answer(/^MODE #gone$/, [':hub.test.net 403 DataBot #gone :No such channel']);
  const state = createSyncState();
  const observed: string[] = [];
  model.on('change', (change) => {
    if (change.name === '#open' && change.kind === 'upsert') observed.push(String(model.channels.get('#open')?.hidden));
  });
  await fullSync(context, state);
  t.equal(observed[0], 'true', 'the channel was hidden before its modes were known');
  t.same(irc.sentMatching(/^MODE #/).sort(), ['MODE #gone', 'MODE #hush', 'MODE #open']);
  t.match(model.channels.get('#open'), { hidden: false, modes: '+nt' });
  t.match(model.channels.get('#hush'), { hidden: true });
  t.notOk(model.channels.get('#gone'));

  irc.sent.length = 0;
  irc.answer(/^LIST$/, [
    ':hub.test.net 322 DataBot #open 3 :hello',
    ':hub.test.net 322 DataBot #hush 2 :',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  await fullSync(context, state);
  t.match(model.channels.get('#open'), { hidden: false }, 'a channel whose modes are known stays as they said');
  t.same(irc.sentMatching(/^MODE #/).sort(), ['MODE #hush', 'MODE #open'], 'known channels are checked again');

  irc.sent.length = 0;
  irc
    .answer(/^LIST$/, [
      ':hub.test.net 322 DataBot #open 3 :hello',
      ':hub.test.net 322 DataBot #hush 2 :',
      ':hub.test.net 322 DataBot #fresh 1 :',
      ':hub.test.net 323 DataBot :End of channel list.',
    ])
    .answer(/^MODE #fresh$/, [':hub.test.net 324 DataBot #fresh +n']);
  await refreshCounts(context, state);
  t.same(irc.sentMatching(/^MODE #/), ['MODE #fresh'], 'between syncs only a channel formed since is asked');
  t.match(model.channels.get('#fresh'), { hidden: false, modes: '+n' }, 'and is public before the next sync');
});

t.test('LIST without modes (ngircd): the first sync asks the modes, then joins the public channels', async (t) => {
  const { irc, model, context } = setup({ config: { join: '*' } });
  irc
    .answer(/^LIST$/, [
      ':hub.test.net 322 DataBot #open 3 :hello',
      ':hub.test.net 322 DataBot #hush 2 :',
      // ngircd lists its server-local channel; it is one server's, not the network's.
      ':hub.test.net 322 DataBot &SERVER 1 :Server Messages',
      ':hub.test.net 323 DataBot :End of channel list.',
    ])
    .answer(/^MODE #open$/, [':hub.test.net 324 DataBot #open +nt'])
    .answer(/^MODE #hush$/, [':hub.test.net 324 DataBot #hush +nst']);
  await fullSync(context, createSyncState());
  t.same(irc.sentMatching(/^MODE [#&]/).sort(), ['MODE #hush', 'MODE #open'], 'a local channel is not asked');
  const modesAt = irc.sent.findIndex((line) => line.startsWith('MODE #'));
  const joinAt = irc.sent.findIndex((line) => line.startsWith('JOIN '));
  t.equal(irc.sent[joinAt], 'JOIN #open', 'the public channel is joined in the first sync, the rest not');
  t.ok(modesAt < joinAt, 'after its modes were known');
  t.match(model.channels.get('&SERVER'), { hidden: true, users: 1 });
});

t.test('plain WHO (ngircd) keeps the IP and account a WHOIS gave', async (t) => {
  const { irc, model, context } = setup({ isupport: 'CASEMAPPING=ascii PREFIX=(ov)@+ CHANMODES=beI,k,l,imnst' });
  irc.answer(/^WHO \*$/, [
    ':hub.test.net 352 DataBot * ~alice 127.0.0.1 leaf.test.net alice H :1 Alice',
    ':hub.test.net 315 DataBot * :End of WHO list',
  ]);
  model.upsertUser('alice', { ip: '81.2.69.142', account: 'alice' });
  await fullSync(context, createSyncState());
  t.ok(irc.sent.includes('WHO *'), 'a plain WHO');
  t.match(model.users.get('alice'), { ident: '~alice', ip: '81.2.69.142', account: 'alice' });
});

t.test('LIST in bands of user counts on a big network', async (t) => {
  const { irc, model, context } = setup({ config: { list_chunk_above: 2 } });
  const band = (query: string, lines: string[]) =>
    irc.answer(new RegExp(`^LIST ${query}$`), [...lines, ':hub.test.net 323 DataBot :End of channel list.']);
  band('<2', [':hub.test.net 322 DataBot #one 1 :[+nt] ']).answer(/^LIST >1,<3$/, [
    ':hub.test.net 322 DataBot #two 2 :[+nt] ',
    // A channel that grew between two bands is listed twice.
    ':hub.test.net 322 DataBot #one 2 :[+nt] ',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  for (const query of ['>2,<5', '>4,<10', '>9,<50', '>49']) band(query, []);
  await fullSync(context, createSyncState());
  t.same(irc.sentMatching(/^LIST/).length, 6);
  t.same([...model.channels.all()].map((channel) => channel.name).sort(), ['#one', '#two']);
});

t.test('a channel a band round missed is asked by name: kept if it is there, gone if not', async (t) => {
  const { irc, model, context } = setup({ config: { list_chunk_above: 2 } });
  const end = ':hub.test.net 323 DataBot :End of channel list.';
  // Known from before: #shrank went from 3 users to 2 after the 2-user band was answered, so no band lists
  // it; #emptied is gone from the network.
  model.upsertChannel('#shrank', { users: 3, hidden: false });
  model.upsertChannel('#emptied', { users: 1, hidden: false });
  irc.answer(/^LIST <2$/, [':hub.test.net 322 DataBot #one 1 :[+nt] ', end]);
  for (const query of ['>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49']) irc.answer(new RegExp(`^LIST ${query}$`), [end]);
  irc.answer(/^LIST #[^ ]+$/, [':hub.test.net 322 DataBot #shrank 2 :[+nt] still here', end]);
  await fullSync(context, createSyncState());
  t.same(irc.sentMatching(/^LIST #/), ['LIST #shrank,#emptied'], 'the missed ones, by name, in one line');
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

t.test('which channels to join and leave', async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  model.upsertChannel('#big', { users: 50 });
  model.upsertChannel('#medium', { users: 10 });
  model.upsertChannel('#small', { users: 2 });
  model.upsertChannel('#secret', { users: 90, hidden: true });
  model.upsertChannel('#abandoned', { joined: true });
  model.addMember('#abandoned', 'DataBot');
  model.upsertChannel('#turned-secret', { joined: true, hidden: true });
  model.addMember('#turned-secret', 'DataBot');
  model.addMember('#turned-secret', 'alice');
  const config = { ...defaults, join: '*' as const, max_channels: 2 };
  t.same(planJoins({ model, config }), { join: ['#big', '#medium'], part: ['#abandoned', '#turned-secret'] });
  t.same(planJoins({ model, config: { ...defaults, join: ['#small', '#abandoned'] } }), { join: ['#small'], part: [] });
});

t.test('a channel that grew past one the bot sits in waits for room: never more than max_channels', async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  for (const [name, users] of [
    ['#one', 6],
    ['#two', 5],
  ] as const) {
    model.upsertChannel(name, { joined: true });
    model.addMember(name, 'DataBot');
    model.upsertChannel(name, { users });
  }
  // Bigger now than both the bot's channels; the bot may sit in two.
  model.upsertChannel('#grown', { users: 40 });
  model.upsertChannel('#grown-too', { users: 30 });
  const config = { ...defaults, join: '*' as const, max_channels: 2 };
  t.same(planJoins({ model, config }), { join: [], part: [] }, 'full: nothing joined, nothing left');
  t.same(planJoins({ model, config: { ...config, max_channels: 3 } }), { join: ['#grown'], part: [] }, 'room for one');
  // One of the bot's channels empties: its place goes to the biggest.
  model.upsertChannel('#two', { users: 1 });
  t.same(planJoins({ model, config }), { join: ['#grown'], part: ['#two'] }, 'the empty one left, the biggest joined');
});

t.test('the bot leaves before it joins in a channel’s place, and learns its limit from a 405', async (t) => {
  const { irc, model, context } = setup({ config: { join: '*', max_channels: 3 } });
  for (const [name, users] of [
    ['#one', 6],
    ['#two', 5],
    ['#three', 4],
  ] as const) {
    irc.receive(`:DataBot!d@h JOIN ${name}`);
    model.upsertChannel(name, { users, hidden: false });
  }
  model.upsertChannel('#grown', { users: 40 });
  model.upsertChannel('#three', { users: 1 });
  const state = createJoinState();
  const before = irc.sent.length;
  joinChannels(context, state);
  t.same(irc.sent.slice(before), ['PART #three :Channel no longer collected', 'JOIN #grown'], 'the PART first');

  // The server allows two: a 405 while the bot sits in two stops the joins, not the parts, and caps it at two.
  irc.receive(':DataBot!d@h PART #three');
  t.equal(noteJoinRefusal(refusalOf(irc, '405 DataBot #grown'), state, model, 1000), '#grown');
  t.equal(state.fullAt, 2, 'the channels it sat in then');
  model.upsertChannel('#two', { users: 1 });
  t.same(planJoins(context, state, 2000), { join: [], part: ['#two'] }, 'full: still leaves what emptied');
  t.same(
    planJoins(context, state, 1000 + 31 * 60 * 1000),
    { join: ['#grown'], part: ['#two'] },
    'later: joins again, within the two',
  );
});

/** A server line as the connection hands it on. */
function refusalOf(irc: ScriptedTransport, rest: string): IrcMessage {
  let parsed: IrcMessage | undefined;
  const off = irc.on('message', (message) => (parsed = message));
  irc.receive(`:hub.test.net ${rest} :You are on too many channels`);
  off();
  return parsed!;
}

t.test('joins skip channels that refused the bot, invite-only and keyed ones, and respect CHANLIMIT', async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  model.upsertChannel('#a', { users: 9 });
  model.upsertChannel('#banned', { users: 8 });
  model.upsertChannel('#invite', { users: 7, modes: '+int' });
  model.upsertChannel('#keyed', { users: 6, modes: '+knt' });
  model.upsertChannel('#b', { users: 5 });
  model.upsertChannel('#c', { users: 4 });
  const config = { ...defaults, join: '*' as const, max_channels: 10 };
  const state = createJoinState();
  const refusal = (line: string) => {
    const irc = new ScriptedTransport();
    let parsed: IrcMessage | undefined;
    irc.on('message', (message) => (parsed = message));
    irc.connect();
    irc.receive(line);
    return parsed!;
  };
  t.equal(
    noteJoinRefusal(
      refusal(':hub.test.net 474 DataBot #Banned :Cannot join channel (you are banned)'),
      state,
      model,
      1000,
    ),
    '#Banned',
    'the channel refused',
  );
  t.equal(noteJoinRefusal(refusal(':hub.test.net 366 DataBot #a :End of /NAMES list.'), state, model, 1000), null);
  t.same(planJoins({ model, config }, state, 2000).join, ['#a', '#b', '#c']);
  t.same(planJoins({ model, config, limit: 2 }, state, 2000).join, ['#a', '#b'], 'no more than CHANLIMIT');
  t.same(
    planJoins({ model, config }, state, 1000 + 31 * 60 * 1000).join,
    ['#a', '#banned', '#b', '#c'],
    'tried again later',
  );
  noteJoinRefusal(refusal(':hub.test.net 405 DataBot #c :You are on too many channels'), state, model, 1000);
  t.same(
    planJoins({ model, config }, state, 2000),
    { join: [], part: [] },
    'too many channels: no more joins for a while',
  );
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
  const { irc, model, context } = setup();
  await fullSync(context, createSyncState());
  const usersBefore = model.users.size;
  t.ok(model.channels.get('#tricky'));
  irc
    .answer(
      /^LUSERS$/,
      lusers.map((line) => line.replace('global users: 5', 'global users: 6')),
    )
    .answer(/^LIST$/, [
      ':hub.test.net 321 DataBot Channel :Users Name',
      ':hub.test.net 322 DataBot #public 4 :[+nt] hello [world]',
      ':hub.test.net 322 DataBot #new 1 :[+nt] just formed',
      ':hub.test.net 323 DataBot :End of channel list.',
    ]);
  irc.sent.length = 0;
  await refreshCounts(context, createSyncState());
  t.same(irc.sent, ['LUSERS', 'LIST'], 'nothing else is asked');
  t.equal(model.stats.users, 6, 'the network’s own count');
  t.match(model.channels.get('#public'), { users: 4 });
  t.match(model.channels.get('#new'), { users: 1, hidden: false });
  t.notOk(model.channels.get('#tricky'), 'a channel no longer listed is gone');
  t.equal(model.users.size, usersBefore, 'the users are left to the syncs and notices');
});

t.test('between whole LISTs of a big network, the channels formed in the last minute, every 2 s', async (t) => {
  t.notOk(wholeListDue({ now: 249, listedAt: 0, channels: 500 }), 'a small network: the whole LIST every 250 ms');
  t.ok(wholeListDue({ now: 250, listedAt: 0, channels: 500 }));
  t.notOk(wholeListDue({ now: 249, listedAt: 0, channels: 1000 }), '1,000 channels: 0.25 ms per channel');
  t.ok(wholeListDue({ now: 250, listedAt: 0, channels: 1000 }));
  t.notOk(wholeListDue({ now: 1999, listedAt: 0, channels: 4000 }), 'from 2,000 channels on, 0.5 ms per channel');
  t.ok(wholeListDue({ now: 2000, listedAt: 0, channels: 4000 }));
  t.notOk(wholeListDue({ now: 999, listedAt: 0, channels: 2000 }));
  t.ok(wholeListDue({ now: 1000, listedAt: 0, channels: 2000 }));
  t.notOk(wholeListDue({ now: 4999, listedAt: 0, channels: 10_000 }), '10,000 channels: 0.5 ms per channel');
  t.ok(wholeListDue({ now: 5000, listedAt: 0, channels: 10_000 }));
  const fresh = (now: number, channels: number, elist: string | undefined, newListedAt = 0) =>
    newChannelsDue({
      now,
      newListedAt,
      channels,
      listsNewChannels: profileOf(elist === undefined ? [] : [['ELIST', elist]]).listsNewChannels,
    });
  t.notOk(fresh(5000, 2000, 'CMNTU'), 'not on a network whose whole LIST comes as often');
  t.ok(fresh(NEW_CHANNELS_EVERY_MS, 10_000, 'CMNTU'), '10,000 channels: the new ones every 2 s');
  t.notOk(fresh(2999, 10_000, 'CMNTU', 1000), 'and not again sooner');
  t.ok(fresh(3000, 10_000, 'CMNTU', 1000));
  t.notOk(fresh(5000, 10_000, 'MNTU'), 'a server that cannot list channels by age is not asked');
  t.notOk(fresh(5000, 10_000, undefined));

  const { irc, model, context } = setup();
  await fullSync(context, createSyncState());
  t.ok(model.channels.get('#tricky'), 'known from the sync');
  const before = model.channels.size;
  irc.answer(/^LIST C<1$/, [
    ':hub.test.net 321 DataBot Channel :Users Name',
    ':hub.test.net 322 DataBot #formed 2 :[+nt] just formed',
    ':hub.test.net 323 DataBot :End of channel list.',
  ]);
  irc.sent.length = 0;
  await refreshNewChannels(context, createSyncState());
  t.same(irc.sent, ['LIST C<1'], 'one LIST of the new channels, nothing else');
  t.match(model.channels.get('#formed'), { users: 2, topic: 'just formed', hidden: false });
  t.ok(model.channels.get('#tricky'), 'a channel it does not list stays: only a whole LIST shows what is gone');
  t.equal(model.channels.size, before + 1);
});

t.test('many channels a band round missed are asked by name a few lines at a time, not one by one', async (t) => {
  const { irc, model, context } = setup({ config: { list_chunk_above: 2 } });
  const end = ':hub.test.net 323 DataBot :End of channel list.';
  const missed = Array.from({ length: 250 }, (_, index) => `#missed-${String(index).padStart(3, '0')}`);
  for (const name of missed) model.upsertChannel(name, { users: 3, hidden: false });
  for (const query of ['<2', '>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49'])
    irc.answer(new RegExp(`^LIST ${query}$`), [end]);
  let written = 0;
  let ended = 0;
  let mostOut = 0;
  irc.on('message', (line) => {
    if (line.command === '323') ended++;
  });
  // The even ones are still there.
  let endedBefore: number | undefined;
  irc.answer(/^LIST (#[^ ]+)$/, (match) => {
    // The bands' ends came before.
    endedBefore ??= ended;
    written++;
    mostOut = Math.max(mostOut, written - (ended - endedBefore));
    const here = match[1]!.split(',').filter((name) => Number(name.slice(-3)) % 2 === 0);
    return [...here.map((name) => `:hub.test.net 322 DataBot ${name} 2 :[+nt] here`), end];
  });
  await fullSync(context, createSyncState());
  const lines = irc.sentMatching(/^LIST #/);
  t.equal(lines.length, namesInLines(missed).length, 'every missed channel asked once');
  t.ok(lines.length > LIST_BY_NAME_LINES_AT_ONCE, `${lines.length} lines`);
  t.equal(mostOut, LIST_BY_NAME_LINES_AT_ONCE, 'a few lines out at once');
  t.equal(missed.filter((name) => model.channels.get(name)).length, 125, 'those still there kept');
  t.notOk(model.channels.get('#missed-001'), 'the others gone');
});

t.test(
  'a whole LIST beside a sync waits for the other: one LIST out at a time, and the newer answer stands',
  async (t) => {
    const { irc, model, context } = setup();
    const state = createSyncState();
    await fullSync(context, state);
    let written = 0;
    let ended = 0;
    let mostOut = 0;
    irc.on('message', (line) => {
      if (line.command === '323') ended++;
    });
    const row = (name: string) => `:hub.test.net 322 DataBot ${name} 2 :[+nt] topic`;
    irc.answer(/^LIST$/, () => {
      written++;
      mostOut = Math.max(mostOut, written - ended);
      return [
        ':hub.test.net 321 DataBot Channel :Users Name',
        // The first answer big enough to be judged over several slices of time (100,000 rows: tens of ms on any machine), during which the second
        // arrives; #public emptied before the first and formed again before the second.
        ...(written === 1
          ? [row('#tricky'), ...Array.from({ length: 100_000 }, (_, index) => row(`#many${index}`))]
          : [row('#public'), row('#new')]),
        ':hub.test.net 323 DataBot :End of channel list.',
      ];
    });
    // The sync's own LIST and the one between syncs, due at the same time.
    await Promise.all([fullSync(context, state), refreshCounts(context, state)]);
    t.equal(written, 2, 'two whole LISTs');
    t.equal(mostOut, 1, 'never two out at once (their rows and ends name no request)');
    t.ok(model.channels.get('#new'), 'the later answer’s new channel stays');
    t.ok(model.channels.get('#public'), 'the older answer does not remove what the later one lists');
    t.notOk(model.channels.get('#tricky'), 'gone from the later answer');
    t.notOk(model.channels.get('#many0'));
    t.ok(state.list.listedAt > 0 && state.list.newListedAt >= state.list.listedAt, 'when it was last asked');
  },
);

t.test('a channel the new channels’ LIST lists between the bands of a whole LIST is not taken for gone', async (t) => {
  // Not an operator: no MODE asked of channels a LIST showed without modes.
  const { irc, model, context } = setup({ operator: false, config: { list_chunk_above: 2 } });
  const state = createSyncState();
  const end = ':hub.test.net 323 DataBot :End of channel list.';
  model.upsertChannel('#late', { users: 3, hidden: false });
  model.upsertChannel('#gone', { users: 3, hidden: false });
  irc.answer(/^LUSERS$/, lusers);
  let newChannels: Promise<void> | undefined;
  // #late moved from one band to another while the bands were answered: in none of them.
  irc.answer(/^LIST <2$/, () => {
    // Due now: queued behind this band, before the next one.
    newChannels ??= refreshNewChannels(context, state);
    return [end];
  });
  for (const query of ['>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49']) irc.answer(new RegExp(`^LIST ${query}$`), [end]);
  irc.answer(/^LIST C<1$/, [':hub.test.net 322 DataBot #late 4 :[+nt] moved', end]);
  // Asked by name, neither is there any more by then (a LIST a moment later would show #late again).
  irc.answer(/^LIST #/, [end]);
  irc.sent.length = 0;
  await refreshCounts(context, state);
  await newChannels;
  t.ok(
    irc.sent.indexOf('LIST C<1') > irc.sent.indexOf('LIST <2') &&
      irc.sent.indexOf('LIST C<1') < irc.sent.indexOf('LIST >1,<3'),
    'the new channels were listed between two bands',
  );
  t.match(model.channels.get('#late'), { users: 4 }, 'a channel a later LIST listed stays');
  t.notOk(
    irc.sent.some((line) => line.startsWith('LIST #') && line.includes('#late')),
    'and is not asked by name',
  );
  t.notOk(model.channels.get('#gone'), 'one no LIST listed is gone');
  t.same([...state.list.listedBy.keys()], ['#late'], 'only what a LIST since listed is remembered');
});

t.test('a user the round sees in a notice is not taken for gone at its end', async (t) => {
  const { irc, model, context } = setup();
  const state = createSyncState();
  irc.answer(/^WHO (\S+) n?%(\w+),(\d+)$/, (match) => {
    // Someone connects while the round runs, after their mask was asked: an operator's notice tells.
    if (match[1] === '*') {
      model.upsertUser('latecomer', { server: 'leaf.test.net' });
      state.whoRound?.add(model.fold('latecomer'));
      model.upsertUser('ghost', { server: 'leaf.test.net' });
    }
    return whoxLines(match[1]!, match[2]!, users, false, match[3]);
  });
  await fullSync(context, state);
  t.ok(model.users.get('latecomer'), 'the newcomer stays');
  t.notOk(model.users.get('ghost'), 'a user neither WHO nor a notice showed goes');
  t.equal(state.whoRound, null, 'the round is over');
});

t.test('the pass that forgets unseen users leaves alone those who came while it ran', async (t) => {
  let now = Date.parse('2026-11-28T00:00:00Z');
  const model = new NetworkModel(() => new Date(now));
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
