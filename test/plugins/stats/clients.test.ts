/**
 * CTCP VERSION: how the replies of real clients read, and the collector asking each user once, one per tick of
 * `version_requests_per_second`, again after `version_retry_seconds` while the client stays unknown, and taking
 * an answer only from whom it asked (or from their new nick).
 */
import t, { type Test } from 'tap';
import { parseLine } from '../../../lib/irc/line-parser.js';
import {
  cleanReply,
  MAX_CLIENT_LENGTH,
  MAX_VERSION_LENGTH,
  parseVersionReply,
  RENAMED_ANSWER_MS,
  versionReplyText,
} from '../../../plugins/stats/clients.js';
import { clientVersions } from '../../../scripts/crowd.js';
import { fakeNetwork, type FakeUser } from '../../../testing/fake-network.js';
import type { Harness } from '../../../testing/harness.js';
import { INSPIRCD_ISUPPORT, startCollector } from './support.js';

/** CTCP VERSION replies as real clients send them, and what the collector makes of them. */
const REAL_WORLD: [reply: string, client: string, version: string | null][] = [
  ['irssi v1.4.5 - running on Linux x86_64', 'irssi', '1.4.5'],
  ['irssi v1.2.3-1ubuntu4 - running on Linux x86_64', 'irssi', '1.2.3-1ubuntu4'],
  ['WeeChat 4.1.1 (Dec  3 2023)', 'WeeChat', '4.1.1'],
  ['WeeChat 3.8 (Jan 28 2023)', 'WeeChat', '3.8'],
  ['HexChat 2.16.2 [x64] / Windows 10 [3.4GHz]', 'HexChat', '2.16.2'],
  ['HexChat 2.16.1 / Linux 6.1.0-13-amd64 [x86_64/2.50GHz/SMP]', 'HexChat', '2.16.1'],
  ['xchat 2.8.8 Linux 3.2.0-4-amd64 [x86_64/800.00MHz]', 'XChat', '2.8.8'],
  ['mIRC v7.76 Khaled Mardam-Bey', 'mIRC', '7.76'],
  ['AdiIRC 4.4 Beta Build (2023/02/15) 64 Bit', 'AdiIRC', '4.4'],
  ['Textual 7.2.3 (macOS 14.4)', 'Textual', '7.2.3'],
  ['Textual IRC Client: www.textualapp.com — v7.1.8', 'Textual', '7.1.8'],
  ['The Lounge 4.4.3 -- https://thelounge.chat/', 'The Lounge', '4.4.3'],
  ['thelounge v4.4.1 -- https://thelounge.chat/', 'The Lounge', '4.4.1'],
  ['KiwiIRC 1.7.1', 'KiwiIRC', '1.7.1'],
  ['Kiwi IRC 2.0.0-alpha.1', 'KiwiIRC', '2.0.0-alpha'],
  ['Quassel IRC v0.14.0 (dist-git) -- https://quassel-irc.org', 'Quassel', '0.14.0'],
  ['ZNC 1.9.0 - https://znc.in', 'ZNC', '1.9.0'],
  ['znc 1.8.2', 'ZNC', '1.8.2'],
  ['Konversation 23.08.4', 'Konversation', '23.08.4'],
  ['Konversation 1.7.7 (C) 2002-2020 by the Konversation team', 'Konversation', '1.7.7'],
  ['IRCCloud', 'IRCCloud', null],
  ['Halloy 2024.12', 'Halloy', '2024.12'],
  ['senpai v0.3.0', 'senpai', '0.3.0'],
  ['gamja', 'gamja', null],
  ['goguma 0.6.0', 'goguma', '0.6.0'],
  ["KVIrc 5.0.0 'Aria' 20190118 - build 2019-01-18 13:58:26 UTC - platform Linux", 'KVIrc', '5.0.0'],
  ['LimeChat for Mac 2.46', 'LimeChat', '2.46'],
  ['Colloquy 2.4 (6234) - iPhone OS 7.0 (ARM) - http://colloquy.mobi', 'Colloquy', '2.4'],
  ['Revolution IRC 0.5.4 - https://github.com/MCMrARM/revolution-irc', 'Revolution IRC', '0.5.4'],
  ['AndroIRC - Android IRC Client (4.8 - Build 20190218) - http://www.androirc.com', 'AndroIRC', '4.8'],
  ['ERC 5.4 (IRC client for GNU Emacs 27.1)', 'ERC', '5.4'],
  ['Circe: Client for IRC in Emacs, version 2.11', 'Circe', '2.11'],
  ['BitchX-1.2.1 by panasync - Linux 5.10 : Keep it to yourself!', 'BitchX', '1.2.1'],
  ['EPIC5-2.1.2[1935] - Linux 5.4.0 - Accept no limitations.', 'EPIC', '2.1.2'],
  ['ircII 20190117 Linux 4.19.0 - ircii.warped.com', 'ircII', '20190117'],
  ['Smuxi 1.1 - http://www.smuxi.org', 'Smuxi', '1.1'],
  ['ChatZilla 0.9.93 [Firefox 52.0/20170303022339]', 'ChatZilla', '0.9.93'],
  ['Limnoria 2021.07.21', 'Limnoria', '2021.07.21'],
  ['Sopel 7.1.9 (https://sopel.chat)', 'Sopel', '7.1.9'],
  ['eggdrop v1.9.5', 'Eggdrop', '1.9.5'],
  ['Polari 42.1', 'Polari', '42.1'],
  // Unknown clients are named by the start of their reply.
  ['FooChat 3.2 on Plan 9', 'FooChat', '3.2'],
  ['My Cool Client v2', 'My Cool Client', '2'],
  ['ChatApp/1.0.4 (Android)', 'ChatApp', '1.0.4'],
];

t.test('real-world VERSION replies give client and version', async (t) => {
  for (const [reply, client, version] of REAL_WORLD) {
    t.same(parseVersionReply(reply), { client, version }, reply);
  }
});

t.test("the crowd's replies are all known clients", async (t) => {
  for (const { client, version } of clientVersions) t.equal(parseVersionReply(version)?.client, client, version);
});

t.test('hostile replies are cleaned and cut short', async (t) => {
  t.same(parseVersionReply('\x02\x0304,01irssi\x0f v1.4\x1f.5'), { client: 'irssi', version: '1.4.5' }, 'formatting');
  const long = parseVersionReply('A'.repeat(100000));
  t.equal(long?.client, 'A'.repeat(MAX_CLIENT_LENGTH), 'a long name is cut');
  const longVersion = parseVersionReply(`WeeChat ${'9.'.repeat(300)}9`);
  t.equal(longVersion?.version?.length, MAX_VERSION_LENGTH, 'a long version is cut');
  t.same(parseVersionReply('\u202Egnirts\u202C evil\x07\x00\x1b[31m 1.0'), {
    client: 'gnirts evil',
    version: '1.0',
  });
  t.equal(parseVersionReply('\x03\x02\x1d\x1f\x16\x0f   '), null, 'nothing left');
  t.equal(parseVersionReply('1.2.3'), null, 'no name');
  t.equal(parseVersionReply(''), null);
  const emoji = parseVersionReply('é😀'.repeat(40));
  t.equal(emoji?.client, 'é😀'.repeat(MAX_CLIENT_LENGTH / 2), 'cut between characters, not inside a surrogate pair');
  t.equal(parseVersionReply('😀😀'), null, 'a name needs a letter');
  t.equal(cleanReply('a\ud800b\udc00c'), 'abc', 'lone surrogates go');
  t.equal(cleanReply('<script>alert(1)</script>'), '<script>alert(1)</script>', 'markup is text; JSON carries it');
  t.equal(cleanReply('\x04ff0000,00ff00red\x04 text'), 'red text', 'hex colours');
});

t.test('only CTCP VERSION replies are read', async (t) => {
  const texts = [
    ':a!u@h NOTICE DataBot :\x01VERSION irssi v1\x01',
    ':a!u@h NOTICE DataBot :\x01VERSION\x01',
    ':a!u@h NOTICE DataBot :\x01PING 123\x01',
    ':a!u@h PRIVMSG DataBot :\x01VERSION\x01',
    ':a!u@h NOTICE DataBot :VERSION irssi',
  ].map((line) => String(versionReplyText(parseLine(line)!)));
  t.same(texts, ['irssi v1', '', 'null', 'null', 'null']);
});

/** The retry time of these tests: `version_retry_seconds`. */
const RETRY_MS = 60_000;

const onHub = (nick: string, user: Partial<FakeUser> = {}): FakeUser => ({
  nick,
  ident: nick.toLowerCase(),
  host: 'h.example',
  server: 'hub.test.net',
  ...user,
});

/**
 * The collector, synced, in #chat (unless `inChannel` is false), asking one user a second (a tick) and again after a minute; the network has
 * the bot, NickServ on the services' server and `users`. Syncs are an hour apart unless the test says.
 */
async function askerOn(
  t: Test,
  users: FakeUser[] = [],
  options: { operator?: boolean; stats?: Record<string, unknown>; pacing?: object; inChannel?: boolean } = {},
): Promise<Harness> {
  const bot = await startCollector(t, {
    stats: {
      services: ['NickServ', 'ChanServ'],
      version_retry_seconds: RETRY_MS / 1000,
      refresh_seconds: 3600,
      whois_per_second: 0,
      join: [],
      ...options.stats,
    },
    network: fakeNetwork({
      servers: [{ name: 'hub.test.net' }, { name: 'services.test.net', uplink: 'hub.test.net' }],
      users: [
        onHub('DataBot'),
        { nick: 'NickServ', ident: 's', host: 'services.test.net', server: 'services.test.net' },
        ...users,
      ],
      channels: [{ name: '#chat', users: 1, modes: '+nt' }],
    }),
    version: 'InspIRCd-3',
    isupport: INSPIRCD_ISUPPORT,
    operator: options.operator ?? false,
    ...(options.pacing ? { config: { irc: { pacing: options.pacing } } } : {}),
  });
  await bot.synced();
  if (options.inChannel === false) return bot;
  bot.irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
  );
  return bot;
}

/** `nicks` join #chat (from `ident@h.example`, their nick in lower case). */
function join(bot: Harness, ...nicks: string[]): void {
  bot.irc.receive(...nicks.map((nick) => `:${nick}!${nick.toLowerCase()}@h.example JOIN #chat`));
}

/** The nicks the bot asked its VERSION, in order. */
const asked = (bot: Harness): string[] =>
  bot.irc.sentMatching(/^PRIVMSG \S+ :?\x01VERSION\x01$/).map((line) => line.split(' ')[1]!);

/** One tick (a second); the nicks asked in it. */
async function tick(bot: Harness, ms = 1000): Promise<string[]> {
  const before = asked(bot).length;
  await bot.clock.advance(ms);
  return asked(bot).slice(before);
}

/** `source` (nick!ident@host) answers the bot's VERSION with `version`. */
function answer(bot: Harness, source: string, version: string): void {
  bot.irc.receive(`:${source} NOTICE DataBot :\x01VERSION ${version}\x01`);
}

const clientOf = (bot: Harness, nick: string) => bot.host.model.users.get(nick)?.client ?? null;

t.test('each new user is asked once, one per tick; never the bot or services', async (t) => {
  const bot = await askerOn(t, [{ nick: 'OperServ', ident: 's', host: 's', server: 'services.test.net' }]);
  join(bot, 'alice', 'bob');
  t.same(await tick(bot), ['alice']);
  bot.irc.receive(':bob!bob@h.example NICK :bobby');
  t.same(await tick(bot), ['bobby'], 'bob, queued before he changed nick, is asked under the new one');
  bot.irc.receive(':bobby!bob@h.example AWAY :lunch');
  t.same(await tick(bot), [], 'and not queued again');
  t.same(await tick(bot), [], 'nothing left');
  t.same(asked(bot), ['alice', 'bobby'], 'not the bot, not services (NickServ; OperServ on their server)');
});

t.test(
  'replies: only from users asked, first one wins; unknown clients asked again after the retry time',
  async (t) => {
    const bot = await askerOn(t, [onHub('alice', { host: 'h' }), onHub('mallory', { ident: 'm', host: 'h' })]);
    t.same(await tick(bot), ['alice']);
    answer(bot, 'mallory!m@h', 'mIRC v7.76');
    t.equal(clientOf(bot, 'mallory'), null, 'an unasked reply is ignored');
    answer(bot, 'alice!a@h', 'WeeChat 4.1.1 (Dec  3 2023)');
    t.match(bot.host.model.users.get('alice'), { client: 'WeeChat', clientVersion: '4.1.1' });
    answer(bot, 'alice!a@h', 'mIRC v7.76');
    t.equal(clientOf(bot, 'alice'), 'WeeChat', 'a second reply changes nothing');
    bot.irc.receive(':alice!a@h AWAY :lunch');
    t.same(await tick(bot), ['mallory'], 'a known client is not asked again');

    bot.irc.receive(':mallory!m@h AWAY :lunch');
    t.same(await tick(bot), [], 'no answer yet, and not due again');
    t.same(await tick(bot, RETRY_MS - 2000), [], 'nor before the retry time');
    t.same(await tick(bot), ['mallory'], 'still unknown after the retry time: asked again');
    await bot.reconnect();
    await bot.synced();
    answer(bot, 'mallory!m@h', 'mIRC v7.76');
    t.equal(clientOf(bot, 'mallory'), null, 'a reply to a question of the last connection is ignored');
  },
);

t.test('a user who changes is queued once; never with a known client', async (t) => {
  const bot = await askerOn(t, [onHub('Alice'), onHub('bob')]);
  t.same(await tick(bot), ['Alice']);
  t.same(await tick(bot), ['bob']);
  answer(bot, 'bob!bob@h.example', 'irssi v1.4.5');
  bot.irc.receive(':Alice!alice@h.example AWAY :lunch', ':Alice!alice@h.example AWAY');
  bot.irc.receive(':bob!bob@h.example AWAY :lunch');
  t.same(await tick(bot), [], 'Alice asked, and not due again before the retry time; not bob, whose client is known');
  t.same(asked(bot), ['Alice', 'bob'], 'and not the bot');
});

t.test('a user whose client stays unknown is asked again by the tick alone once the retry time is over', async (t) => {
  const bot = await askerOn(t, [onHub('mallory')]);
  join(bot, 'quitter', 'renamed', 'answers');
  t.same(
    [await tick(bot), await tick(bot), await tick(bot), await tick(bot), await tick(bot)],
    [['mallory'], ['quitter'], ['renamed'], ['answers'], []],
  );
  answer(bot, 'answers!answers@h.example', 'irssi v1.4.5');
  bot.irc.receive(':quitter!quitter@h.example QUIT :Quit: bye', ':renamed!renamed@h.example NICK :Renamed_');
  // mallory was asked at the first tick: her retry time is over at the 61st.
  t.same(await tick(bot, RETRY_MS - 5000), [], 'not before the retry time');
  t.same(await tick(bot), ['mallory'], 'still unknown: asked again, with nothing else happening to them');
  t.same(await tick(bot), [], 'not a user who quit');
  t.same(await tick(bot), ['Renamed_'], 'a renamed user, under the new nick');
  t.same(await tick(bot), [], 'nor one who answered');
  t.same(await tick(bot, RETRY_MS - 4000), [], 'not again before the next retry time');
  t.same([await tick(bot), await tick(bot), await tick(bot)], [['mallory'], [], ['Renamed_']], 'and again after it');
  t.equal(asked(bot).length, 8);

  await bot.reconnect();
  await bot.synced();
  t.same(await tick(bot), ['mallory'], 'a new connection asks anew');
  t.same(await tick(bot, RETRY_MS - 1000), [], 'the questions of the last one are forgotten: nobody is due');
});

t.test('a user asked again because they changed is not asked twice for one retry time', async (t) => {
  const bot = await askerOn(t, [onHub('alice')]);
  t.same(await tick(bot), ['alice']);
  // Just before the tick that asks her again; the real time since the question (ms) makes her due already.
  t.same(await tick(bot, RETRY_MS - 1), [], 'asked again at the tick the retry time is over, not before');
  bot.irc.receive(':alice!alice@h.example AWAY :lunch');
  t.same(await tick(bot, 1), ['alice'], 'due, and queued by the change');
  t.same(await tick(bot), [], "the first question's retry is done with: she was asked since");
  t.same(await tick(bot, RETRY_MS - 2000), []);
  t.same(await tick(bot), ['alice']);
});

t.test("an answer after a nick change the bot saw is the asked user's", async (t) => {
  const bot = await askerOn(t);
  join(bot, 'alice');
  t.same(await tick(bot), ['alice']);
  bot.irc.receive(':alice!alice@h.example NICK :alice_');
  answer(bot, 'alice_!alice@h.example', 'WeeChat 4.1.1 (Dec  3 2023)');
  t.match(bot.host.model.users.get('alice_'), { client: 'WeeChat', clientVersion: '4.1.1' });
});

t.test('an answer from the new nick of a user who changed it out of sight counts once a sync shows them', async (t) => {
  const carol = onHub('carol', { ident: 'c', host: 'Home.Example' });
  const dave = onHub('dave', { ident: 'd' });
  const erin = onHub('erin', { ident: 'e' });
  const bot = await askerOn(t, [carol, dave, erin], { stats: { refresh_seconds: 60 } });
  /** The next refresh, at the next whole minute. */
  const refresh = async (): Promise<void> => {
    await bot.clock.advance(60_000 - (bot.clock.elapsed % 60_000));
    await bot.synced();
  };
  t.same([await tick(bot), await tick(bot), await tick(bot)], [['carol'], ['dave'], ['erin']]);
  // None is in the bot's channels: it does not see them change nick, and each answers from the new one. The
  // network's WHO does not show carol_ and dave_ at first (+i, to a bot that is no operator).
  Object.assign(carol, { nick: 'carol_', host: 'home.example', invisible: true });
  Object.assign(dave, { nick: 'dave_', invisible: true });
  answer(bot, 'carol_!c@home.example', 'irssi v1.4.5 - running on Linux');
  answer(bot, 'dave_!d@h.example', 'mIRC v7.76');
  answer(bot, 'erin_!e@h.example', 'mIRC v7.76');
  t.equal(bot.host.model.users.get('carol_'), undefined, 'nobody the model has yet');
  // Someone else under erin_'s nick, from another ident.
  Object.assign(erin, { nick: 'erin_', ident: 'other' });
  await refresh();
  t.notOk(bot.host.model.users.get('carol'), 'a sync that does not show carol_ yet');
  t.equal(clientOf(bot, 'erin_'), null, 'not for someone else under that nick');

  carol.invisible = false;
  await refresh();
  t.match(bot.host.model.users.get('carol_'), { client: 'irssi', clientVersion: '1.4.5' }, 'her answer is hers');
  t.notOk(asked(bot).includes('carol_'), 'and she is not asked again');

  dave.invisible = false;
  await refresh();
  t.equal(clientOf(bot, 'dave_'), null, 'an answer no sync placed in two is dropped');
  // Within two ticks: erin_'s retry may come first, in its turn.
  t.ok([...(await tick(bot)), ...(await tick(bot))].includes('dave_'), 'and the user is asked');

  answer(bot, 'erin__!e@h.example', 'mIRC v7.76');
  bot.server.network!.users.push(onHub('erin__', { ident: 'e' }));
  await refresh();
  t.ok(bot.clock.elapsed - 3000 > RENAMED_ANSWER_MS, "erin's question is older than a renamed answer is taken in");
  t.equal(clientOf(bot, 'erin__'), null, 'so an answer from her place is not taken');
});

t.test('an answer from another nick is not taken where a nick change cannot explain it', async (t) => {
  const grace = onHub('grace', { ident: 'g' });
  const bot = await askerOn(t, [grace], { stats: { refresh_seconds: 60 } });
  join(bot, 'frank');
  t.same([await tick(bot), await tick(bot)], [['grace'], ['frank']]);
  answer(bot, 'grace!g@h.example', 'HexChat 2.16.2');
  t.equal(clientOf(bot, 'grace'), 'HexChat');
  bot.irc.receive(':heidi!f@h.example JOIN #chat');
  answer(bot, 'heidi!f@h.example', 'mIRC v7.76');
  t.equal(
    clientOf(bot, 'heidi'),
    null,
    'frank shares a channel with the bot: it would have seen him change nick; heidi is someone else from his place',
  );
  answer(bot, 'grace_!g@h.example', 'mIRC v7.76');
  answer(bot, 'ivan!x@elsewhere.example', 'mIRC v7.76');
  answer(bot, 'NickServ!s@services.test.net', 'Atheme');
  // The next sync shows grace as grace_ (she changed nick out of sight) and ivan.
  Object.assign(grace, { nick: 'grace_' });
  bot.server.network!.users.push(onHub('ivan', { ident: 'x', host: 'elsewhere.example' }));
  await bot.clock.advance(60_000);
  await bot.synced();
  t.equal(clientOf(bot, 'grace_'), null, 'grace has answered: the answer from her place is not hers again');
  t.equal(clientOf(bot, 'ivan'), null, 'nobody asked there');
  t.equal(clientOf(bot, 'frank'), null);
  t.equal(clientOf(bot, 'NickServ'), null, 'never a service');
});

t.test('an answer after a sync replaced the asked user with a new one under the same nick counts', async (t) => {
  const bot = await askerOn(t, [onHub('judy', { ident: 'j' })], { operator: true });
  t.same(await tick(bot), ['judy']);
  // An operator's notices: judy quit and connected again, out of the bot's channels.
  bot.irc.receive(
    ':hub.test.net NOTICE DataBot :*** QUIT: Client exiting: judy!j@h.example (192.0.2.1) [Quit: bye]',
    ':hub.test.net NOTICE DataBot :*** CONNECT: Client connecting on port 6667 (class main): judy!j@h.example (192.0.2.1) [Judy]',
  );
  const again = bot.host.model.users.get('judy')!;
  answer(bot, 'judy!j@h.example', 'The Lounge 4.4.3 -- https://thelounge.chat/');
  t.match(again, { client: 'The Lounge', clientVersion: '4.4.3' });
  t.same(await tick(bot), [], 'the new user is not asked: the answer is theirs');
});

t.test('due retries and new users take turns', async (t) => {
  const bot = await askerOn(t, [onHub('alice'), onHub('bob')]);
  t.same([await tick(bot), await tick(bot)], [['alice'], ['bob']]);
  await tick(bot, RETRY_MS - 1001);
  join(bot, 'carol', 'dave', 'erin');
  t.same(
    [await tick(bot), await tick(bot), await tick(bot), await tick(bot), await tick(bot), await tick(bot)],
    [['alice'], ['carol'], ['bob'], ['dave'], ['erin'], []],
    'a retry that is due waits for one new user at most',
  );
});

t.test('a question waits for the one before it to leave the send queue', async (t) => {
  const bot = await askerOn(t, [onHub('alice'), onHub('bob'), onHub('carol'), onHub('dave')], {
    // Ten questions a second at most, and one line every 300 ms once the first has gone. The bot's own lines
    // (the MODE of a channel it joins, HELP to the services) would take the send queue's turns.
    stats: { version_requests_per_second: 10, services: [] },
    pacing: { burst: 1, interval_ms: 300 },
    inChannel: false,
  });
  t.same(await tick(bot, 100), ['alice'], 'written at once');
  t.same(await tick(bot, 100), [], "bob's question waits in the send queue");
  t.same(await tick(bot, 100), [], 'and carol is not asked while it does');
  await bot.next(/^PRIVMSG bob /);
  await tick(bot, 100);
  await bot.next(/^PRIVMSG carol /);
  t.same(asked(bot), ['alice', 'bob', 'carol'], 'once it has gone, the next');
  t.same(await tick(bot, 100), [], "dave's question waits in the send queue");
  // dave's question is still in the send queue when the connection drops: the line goes with it.
  await bot.reconnect();
  await bot.synced();
  t.notOk(asked(bot).includes('dave'), 'never written');
  t.same(await tick(bot, 100), ['alice'], 'a new connection does not wait for a line the last one dropped');
});
