/**
 * Splits and links as they happen: the QUITs of a netsplit and an operator's link notices make the collector
 * look at once (LINKS, LUSERS, the users of a server that joined), then sync.
 */
import t, { type Test } from 'tap';
import { parseLine } from '../../../lib/irc/line-parser.js';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { burstEndedFrom, isLinkNotice, isNetsplitQuit } from '../../../plugins/stats/splits.js';
import { fakeNetwork, type FakeNetwork, type FakeServerEntry, type FakeUser } from '../../../testing/fake-network.js';
import type { Harness } from '../../../testing/harness.js';
import { irc2Answer, irc2Received } from '../../support/irc2.js';
import { startCollector } from './support.js';

const HUB: FakeServerEntry = { name: 'hub.test.net', description: 'TestNet hub' };
const LEAF: FakeServerEntry = { name: 'leaf.test.net', uplink: 'hub.test.net', description: 'TestNet leaf' };
const SERVICES: FakeServerEntry = { name: 'services.test.net', uplink: 'hub.test.net' };

/** Users per server, as WHO and LUSERS show them. */
const ON_SERVER: Record<string, string[]> = {
  'hub.test.net': ['alice', 'DataBot'],
  'leaf.test.net': ['bob', 'carol'],
  'services.test.net': ['NickServ'],
};

const usersOf = (server: string): FakeUser[] =>
  ON_SERVER[server]!.map((nick) => ({ nick, ident: `~${nick}`, host: 'host', server }));

/** The network with these servers linked, and their users. */
function networkOf(servers: FakeServerEntry[]): FakeNetwork {
  return fakeNetwork({ servers, users: servers.flatMap((server) => usersOf(server.name)) });
}

/** The collector as an operator on InspIRCd, synced with `servers` linked. */
async function operatorOn(t: Test, servers = [HUB, LEAF, SERVICES]): Promise<Harness> {
  const bot = await startCollector(t, {
    network: networkOf(servers),
    version: 'InspIRCd-3',
    isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,imnpst WHOX',
    operator: true,
  });
  await bot.synced();
  return bot;
}

/** The network after `server` split off (with its users) or linked back. */
function relink(bot: Harness, servers: FakeServerEntry[]): void {
  bot.server.network = networkOf(servers);
}

const checks = (bot: Harness, pattern = /topology checked/): number =>
  bot.logs.filter((line) => pattern.test(line)).length;

/** Waits for the `count`th topology check that matches `pattern`. */
const checked = (bot: Harness, count: number, pattern = /topology checked/): Promise<void> =>
  bot.until(() => checks(bot, pattern) >= count, `topology check ${count} (${pattern})`);

const parsed = (line: string): IrcMessage => parseLine(line)!;

t.test('what says the network changed shape, and what does not', async (t) => {
  const { host } = await operatorOn(t);
  const { model } = host;
  t.ok(isNetsplitQuit(parsed(':bob!b@h QUIT :hub.test.net leaf.test.net'), model), 'a netsplit QUIT');
  t.notOk(isNetsplitQuit(parsed(':bob!b@h QUIT :Quit: hub.test.net leaf.test.net'), model), 'a user’s words');
  t.notOk(isNetsplitQuit(parsed(':bob!b@h QUIT :irc.example.org leaf.test.net'), model), 'an unknown server');
  t.ok(isLinkNotice(parsed(':hub.test.net NOTICE DataBot :*** LINK: Server leaf.test.net split: Ping timeout')));
  t.ok(
    isLinkNotice(
      parsed(
        ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 3 msecs)',
      ),
    ),
  );
  t.notOk(isLinkNotice(parsed(':alice!a@h NOTICE DataBot :Server leaf.test.net split')), 'a user’s notice');
  t.notOk(isLinkNotice(parsed(":hub.test.net NOTICE DataBot :*** LINK: Connection to 'leaf.test.net' failed.")));
  t.equal(
    burstEndedFrom(
      parsed(
        ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 3 msecs)',
      ),
    ),
    'leaf.test.net',
  );

  // ircd 2.11's, as recorded (test/fixtures/networks/irc2/): the netsplit QUIT, a quit in quotes, the notices of
  // its `&` channels, and the one it gives every client connecting while it has fewer links than configured.
  const split = irc2Answer('17-split-reconnect.txt', 'opal', 'SQUIT leaf.test.net :testing split');
  t.ok(
    irc2Received('17-split-reconnect.txt', 'alice')
      .slice(0, 2)
      .every((line) => isNetsplitQuit(parsed(line), model)),
    'QUIT :hub.test.net leaf.test.net',
  );
  t.notOk(isNetsplitQuit(parsed(':caroline!~carol@127.0.0.21 QUIT :"caroline quits"'), model));
  const notices = irc2Received('17-split-reconnect.txt', 'opal').map(parsed);
  t.ok(notices.filter((notice) => isLinkNotice(notice)).length >= 4, 'Closing link, SQUIT, Link with, End of burst');
  t.ok(isLinkNotice(parsed(split[1]!)), split[1]!);
  t.equal(burstEndedFrom(notices.find((notice) => /End of burst/.test(notice.params.at(-1)!))!), 'leaf.test.net');
  const splitMode = irc2Received('01-registration.txt', 'alice').at(-1)!;
  t.equal(splitMode, ':hub.test.net NOTICE alice :Server is currently in split-mode.');
  t.notOk(isLinkNotice(parsed(splitMode)), 'split mode tells of no change');
});

t.test('a split: the server goes with its users at once, and the counts are asked again', async (t) => {
  const bot = await operatorOn(t);
  const { model } = bot.host;
  const linksBefore = bot.irc.sentMatching(/^LINKS$/).length;
  relink(bot, [HUB, SERVICES]);
  bot.irc.receive(
    ':bob!b@h QUIT :hub.test.net leaf.test.net',
    ':dave!d@h QUIT :hub.test.net leaf.test.net',
    ':erin!e@h QUIT :hub.test.net leaf.test.net',
  );
  await checked(bot, 1);
  t.notOk(model.servers.get('leaf.test.net'), 'the leaf is gone');
  t.notOk(model.users.get('carol'), 'with carol, whose QUIT the bot never saw');
  t.ok(model.users.get('alice'), 'the hub’s users stay');
  t.equal(model.stats.users, 3, 'LUSERS was asked again');
  t.match(bot.logs.join('\n'), /topology checked lost=leaf\.test\.net/);
  await bot.synced();
  t.equal(bot.logs.filter((line) => /\[stats\] synced/.test(line)).length, 2, 'a sync follows');
  t.equal(checks(bot), 2, 'the QUITs of one split make one check, and asking during it one more after it');
  t.equal(bot.irc.sentMatching(/^LINKS$/).length - linksBefore, 3, 'LINKS: the two checks and the sync after them');
});

t.test('a services split is known until they link back', async (t) => {
  const bot = await operatorOn(t);
  const { model } = bot.host;
  relink(bot, [HUB, LEAF]);
  bot.irc.receive(':hub.test.net NOTICE DataBot :*** LINK: Server services.test.net split: Connection closed');
  await checked(bot, 1);
  t.same(model.servers.servicesSplit, ['services.test.net']);
  t.notOk(model.users.get('NickServ'));
  await bot.synced();

  relink(bot, [HUB, LEAF, SERVICES]);
  bot.irc.receive(
    ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from services.test.net (burst time: 0 msecs)',
  );
  await checked(bot, 1, /topology checked joined=services\.test\.net/);
  t.same(model.servers.servicesSplit, [], 'marked as services again (WHOIS NickServ), so no longer split');
  t.equal(model.users.get('NickServ')?.server, 'services.test.net', 'its users asked with WHO s');
  t.ok(bot.irc.sent.includes('WHO services.test.net s%tcuihsnfar,77'));
});

t.test('a joined server’s users are asked at once, and again when its burst ends', async (t) => {
  const bot = await operatorOn(t, [HUB, SERVICES]);
  const { model } = bot.host;
  t.notOk(model.users.get('bob'));
  relink(bot, [HUB, LEAF, SERVICES]);
  const burstEnded =
    ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 0 msecs)';
  bot.irc.receive(burstEnded);
  await checked(bot, 1);
  t.equal(model.users.get('bob')?.server, 'leaf.test.net');
  t.equal(model.users.get('carol')?.server, 'leaf.test.net');
  t.equal(bot.irc.sentMatching(/^WHO leaf\.test\.net s%/).length, 1);
  await bot.synced();
  bot.irc.receive(burstEnded);
  await checked(bot, 2);
  t.equal(bot.irc.sentMatching(/^WHO leaf\.test\.net s%/).length, 2, 'a burst that ended is asked even when known');
});
