import t, { type Test } from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import { clientVersions } from '../../../scripts/crowd.js';
import type { IrcPort } from '../../../lib/irc/port.js';
import {
  cleanReply,
  MAX_CLIENT_LENGTH,
  MAX_VERSION_LENGTH,
  parseVersionReply,
  RENAMED_ANSWER_MS,
  VersionAsker,
  versionReplyText,
} from '../../../plugins/stats/clients.js';
import { FakeTransport } from '../../support/fake-irc.js';

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
  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  const messages: string[] = [];
  irc.on('message', (message) => messages.push(String(versionReplyText(message))));
  irc.connect();
  irc.receive(
    ':a!u@h NOTICE DataBot :\x01VERSION irssi v1\x01',
    ':a!u@h NOTICE DataBot :\x01VERSION\x01',
    ':a!u@h NOTICE DataBot :\x01PING 123\x01',
    ':a!u@h PRIVMSG DataBot :\x01VERSION\x01',
    ':a!u@h NOTICE DataBot :VERSION irssi',
  );
  t.same(messages, ['irssi v1', '', 'null', 'null', 'null']);
});

/** @param port what the asker sends through, the transport itself unless given */
function setup(t: Test, port?: (irc: FakeTransport) => IrcPort) {
  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  const model = new NetworkModel();
  irc.connect();
  irc.register();
  model.connectionOpened('rfc1459');
  model.upsertServer('services.test.net', { isServices: true });
  let now = 1_000_000;
  const asker = new VersionAsker({
    irc: port ? port(irc) : irc,
    model,
    services: ['NickServ', 'ChanServ'],
    retryMs: 60_000,
    clock: () => now,
  });
  const versionRequests = () => irc.sent.filter((line) => line.includes('\x01VERSION\x01'));
  /** Feed a server line; whether the asker took it as an answer. */
  const reply = (line: string): boolean => {
    let taken = false;
    const off = irc.on('message', (message) => (taken = asker.handleReply(message)));
    irc.receive(line);
    off();
    return taken;
  };
  return { irc, model, asker, versionRequests, reply, advance: (ms: number) => (now += ms) };
}

t.test('each new user is asked once, one per tick; never the bot or services', async (t) => {
  const { irc, model, asker, versionRequests } = setup(t);
  for (const nick of ['alice', 'bob', 'DataBot', 'NickServ', 'OperServ']) model.upsertUser(nick);
  model.upsertUser('OperServ', { server: 'services.test.net' });
  for (const nick of ['alice', 'bob', 'DataBot', 'NickServ', 'OperServ', 'alice', 'nobody']) asker.consider(nick);
  t.equal(asker.waiting, 2, 'alice and bob, once each');
  t.equal(asker.tick(), 'alice');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(versionRequests(), ['PRIVMSG alice \x01VERSION\x01']);
  model.renameUser('bob', 'bobby');
  t.equal(asker.tick(), 'bobby', 'bob, queued before he changed nick, is asked under the new one');
  asker.consider('bobby');
  t.equal(asker.waiting, 0, 'and not queued again');
  t.equal(asker.tick(), null, 'nothing left');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(versionRequests().length, 2);
  t.notOk(
    irc.sent.some((line) => /PRIVMSG (DataBot|NickServ|OperServ) /.test(line)),
    'not the bot, not services',
  );
});

t.test(
  'replies: only from users asked, first one wins; unknown clients asked again after the retry time',
  async (t) => {
    const { irc, model, asker, advance } = setup(t);
    model.upsertUser('alice');
    model.upsertUser('mallory');
    asker.consider('alice');
    asker.tick();
    const replies: boolean[] = [];
    irc.on('message', (message) => replies.push(asker.handleReply(message)));
    irc.receive(':mallory!m@h NOTICE DataBot :\x01VERSION mIRC v7.76\x01');
    t.equal(model.users.get('mallory')!.client, null, 'an unasked reply is ignored');
    irc.receive(':alice!a@h NOTICE DataBot :\x01VERSION WeeChat 4.1.1 (Dec  3 2023)\x01');
    t.match(model.users.get('alice'), { client: 'WeeChat', clientVersion: '4.1.1' });
    irc.receive(':alice!a@h NOTICE DataBot :\x01VERSION mIRC v7.76\x01');
    t.equal(model.users.get('alice')!.client, 'WeeChat', 'a second reply changes nothing');
    t.same(replies, [false, true, false]);
    asker.consider('alice');
    t.equal(asker.waiting, 0, 'a known client is not asked again');

    asker.consider('mallory');
    t.equal(asker.tick(), 'mallory');
    asker.consider('mallory');
    t.equal(asker.waiting, 0, 'no answer yet, and not due again');
    advance(60_000);
    asker.consider('mallory');
    t.equal(asker.tick(), 'mallory', 'still unknown after the retry time: asked again');
    asker.reset();
    irc.receive(':mallory!m@h NOTICE DataBot :\x01VERSION mIRC v7.76\x01');
    t.equal(model.users.get('mallory')!.client, null, 'a reply to a question of the last connection is ignored');
  },
);

t.test(
  'considerUser: the user object as the change listener has it, queued once, never with a known client',
  async (t) => {
    const { model, asker } = setup(t);
    const alice = model.upsertUser('Alice');
    const bob = model.upsertUser('bob', { client: 'irssi' });
    asker.considerUser(alice);
    asker.considerUser(alice);
    asker.considerUser(bob);
    asker.considerUser(model.upsertUser('DataBot'));
    t.equal(asker.waiting, 1, 'alice once; not bob, whose client is known; not the bot');
    t.equal(asker.tick(), 'Alice');
    asker.considerUser(alice);
    t.equal(asker.waiting, 0, 'asked, and not due again before the retry time');
  },
);

t.test('a user whose client stays unknown is asked again by the tick alone once the retry time is over', async (t) => {
  const { irc, model, asker, versionRequests, advance } = setup(t);
  for (const nick of ['mallory', 'quitter', 'renamed', 'answers']) asker.consider(model.upsertUser(nick).nick);
  t.same(
    [asker.tick(), asker.tick(), asker.tick(), asker.tick(), asker.tick()],
    ['mallory', 'quitter', 'renamed', 'answers', null],
  );
  irc.on('message', (message) => asker.handleReply(message));
  irc.receive(':answers!a@h NOTICE DataBot :\x01VERSION irssi v1.4.5\x01');
  model.removeUser('quitter');
  model.renameUser('renamed', 'Renamed_');
  // A sync sees them again with nothing new: no change, so nobody considers them.
  model.upsertUser('mallory');
  advance(59_999);
  t.equal(asker.tick(), null, 'not before the retry time');
  advance(1);
  t.equal(asker.tick(), 'mallory', 'still unknown: asked again, with nothing else happening to them');
  t.equal(asker.tick(), 'Renamed_', 'a renamed user, under the new nick');
  t.equal(asker.tick(), null, 'not a user who quit, nor one who answered');
  advance(60_000);
  t.same([asker.tick(), asker.tick(), asker.tick()], ['mallory', 'Renamed_', null], 'and again after each retry time');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(versionRequests().length, 8);

  asker.reset();
  advance(60_000);
  t.equal(asker.tick(), null, 'a new connection forgets the questions of the last one');
});

t.test('a user asked again because they changed is not asked twice for one retry time', async (t) => {
  const { model, asker, advance } = setup(t);
  asker.consider(model.upsertUser('alice').nick);
  t.equal(asker.tick(), 'alice');
  advance(60_000);
  asker.considerUser(model.upsertUser('alice', { away: true }));
  t.equal(asker.tick(), 'alice', 'due, and queued by the change');
  t.equal(asker.tick(), null, "the first question's retry is done with: she was asked since");
  advance(59_999);
  t.equal(asker.tick(), null);
  advance(1);
  t.equal(asker.tick(), 'alice');
});

t.test("an answer after a nick change the bot saw is the asked user's", async (t) => {
  const { model, asker, reply } = setup(t);
  const alice = model.upsertUser('alice', { ident: 'a', host: 'h.example' });
  model.addMember('#chat', 'alice');
  asker.considerUser(alice);
  t.equal(asker.tick(), 'alice');
  model.renameUser('alice', 'alice_');
  t.ok(reply(':alice_!a@h.example NOTICE DataBot :\x01VERSION WeeChat 4.1.1 (Dec  3 2023)\x01'));
  t.match(model.users.get('alice_'), { client: 'WeeChat', clientVersion: '4.1.1' });
});

t.test('an answer from the new nick of a user who changed it out of sight counts once a sync shows them', async (t) => {
  const { model, asker, reply, advance } = setup(t);
  asker.considerUser(model.upsertUser('carol', { ident: 'c', host: 'Home.Example' }));
  t.equal(asker.tick(), 'carol');
  // carol is in none of the bot's channels: it does not see her become carol_, whose answer comes from that nick.
  t.ok(reply(':carol_!c@home.example NOTICE DataBot :\x01VERSION irssi v1.4.5 - running on Linux\x01'), 'taken');
  t.equal(model.users.get('carol_'), undefined, 'nobody the model has yet');
  asker.syncCompleted();
  // The next sync: WHO shows carol_ and no longer carol.
  model.removeUser('carol');
  asker.considerUser(model.upsertUser('carol_', { ident: 'c', host: 'home.example' }));
  t.match(model.users.get('carol_'), { client: 'irssi', clientVersion: '1.4.5' }, 'her answer is hers');
  t.equal(asker.tick(), null, 'and she is not asked again');

  asker.considerUser(model.upsertUser('dave', { ident: 'd', host: 'h.example' }));
  t.equal(asker.tick(), 'dave');
  t.ok(reply(':dave_!d@h.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'));
  asker.syncCompleted();
  asker.syncCompleted();
  asker.considerUser(model.upsertUser('dave_', { ident: 'd', host: 'h.example' }));
  t.equal(model.users.get('dave_')!.client, null, 'an answer no sync placed in two is dropped');
  t.equal(asker.tick(), 'dave_', 'and the user is asked');

  asker.considerUser(model.upsertUser('erin', { ident: 'e', host: 'h.example' }));
  t.equal(asker.tick(), 'erin');
  t.ok(reply(':erin_!e@h.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'));
  asker.considerUser(model.upsertUser('erin_', { ident: 'other', host: 'h.example' }));
  t.equal(model.users.get('erin_')!.client, null, 'not for someone else under that nick');
  advance(RENAMED_ANSWER_MS);
  t.notOk(
    reply(':erin__!e@h.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'),
    'not once the question is older than the time a renamed answer is taken in',
  );
});

t.test('an answer from another nick is not taken where a nick change cannot explain it', async (t) => {
  const { model, asker, reply } = setup(t);
  const seen = model.upsertUser('frank', { ident: 'f', host: 'h.example' });
  model.addMember('#chat', 'frank');
  asker.considerUser(seen);
  const answered = model.upsertUser('grace', { ident: 'g', host: 'h.example' });
  asker.considerUser(answered);
  t.same([asker.tick(), asker.tick()], ['frank', 'grace']);
  t.ok(reply(':grace!g@h.example NOTICE DataBot :\x01VERSION HexChat 2.16.2\x01'));
  const other = model.upsertUser('heidi', { ident: 'f', host: 'h.example' });
  t.notOk(
    reply(':heidi!f@h.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'),
    'frank shares a channel with the bot: it would have seen him change nick; heidi is someone else from his place',
  );
  t.notOk(reply(':grace_!g@h.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'), 'grace has answered');
  t.notOk(reply(':ivan!x@elsewhere.example NOTICE DataBot :\x01VERSION mIRC v7.76\x01'), 'nobody asked there');
  t.equal(other.client, null);
  t.notOk(reply(':NickServ!s@services.test.net NOTICE DataBot :\x01VERSION Atheme\x01'), 'never a service');
});

t.test('an answer after a sync replaced the asked user with a new one under the same nick counts', async (t) => {
  const { model, asker, reply } = setup(t);
  asker.considerUser(model.upsertUser('judy', { ident: 'j', host: 'h.example' }));
  t.equal(asker.tick(), 'judy');
  model.removeUser('judy');
  const again = model.upsertUser('judy', { ident: 'j', host: 'h.example' });
  asker.considerUser(again);
  t.ok(reply(':judy!j@h.example NOTICE DataBot :\x01VERSION The Lounge 4.4.3 -- https://thelounge.chat/\x01'));
  t.match(again, { client: 'The Lounge', clientVersion: '4.4.3' });
  t.equal(asker.tick(), null, 'the new user is not asked: the answer is theirs');
});

t.test('due retries and new users take turns', async (t) => {
  const { model, asker, advance } = setup(t);
  for (const nick of ['alice', 'bob']) asker.considerUser(model.upsertUser(nick));
  t.same([asker.tick(), asker.tick()], ['alice', 'bob']);
  advance(60_000);
  for (const nick of ['carol', 'dave', 'erin']) asker.considerUser(model.upsertUser(nick));
  t.same(
    [asker.tick(), asker.tick(), asker.tick(), asker.tick(), asker.tick(), asker.tick()],
    ['alice', 'carol', 'bob', 'dave', 'erin', null],
    'a retry that is due waits for one new user at most',
  );
});

t.test('a question waits for the one before it to leave the send queue', async (t) => {
  const waiting: { target: string; sent: () => void }[] = [];
  const { model, asker } = setup(
    t,
    (irc) =>
      ({
        state: irc.state,
        casefold: (name: string) => irc.casefold(name),
        ctcpRequest: (target: string, _type: string, _text?: string, onSent?: () => void) =>
          waiting.push({ target, sent: onSent ?? (() => undefined) }),
      }) as unknown as IrcPort,
  );
  for (const nick of ['alice', 'bob']) asker.considerUser(model.upsertUser(nick));
  t.equal(asker.tick(), 'alice');
  t.equal(asker.tick(), null, "alice's question is still queued");
  t.equal(asker.waiting, 1);
  waiting[0]!.sent();
  t.equal(asker.tick(), 'bob');
  asker.reset();
  asker.considerUser(model.upsertUser('carol'));
  t.equal(asker.tick(), 'carol', 'a new connection does not wait for a line the last one dropped');
  waiting[1]!.sent();
  t.equal(asker.tick(), null, "bob's question leaving late frees nothing on the new connection");
});
