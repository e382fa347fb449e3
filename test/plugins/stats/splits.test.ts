import t from 'tap';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { createLogger } from '../../../lib/logger.js';
import { NetworkModel } from '../../../lib/model/network.js';
import { track } from '../../../plugins/stats/live.js';
import { statsConfigSchema, type StatsConfig } from '../../../plugins/stats/schema.js';
import { burstEndedFrom, isLinkNotice, isNetsplitQuit, TopologyWatch } from '../../../plugins/stats/splits.js';
import { ScriptedTransport } from './fixtures/scripted-irc.js';

const config = Object.fromEntries(
  Object.entries(statsConfigSchema.properties).map(([key, schema]) => [key, schema.default]),
) as unknown as StatsConfig;

/** The network as LINKS shows it; the test changes it. */
let linked = ['hub.test.net', 'leaf.test.net', 'services.test.net'];
/** Users per server, as WHO and LUSERS show them. */
const onServer: Record<string, string[]> = {
  'hub.test.net': ['alice', 'DataBot'],
  'leaf.test.net': ['bob', 'carol'],
  'services.test.net': ['NickServ'],
};

function users(): string[] {
  return linked.flatMap((server) => onServer[server] ?? []);
}

function setup() {
  const irc = new ScriptedTransport();
  const model = new NetworkModel();
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', sink: (line) => lines.push(line) });
  irc.on('message', (line) => track(line, { irc, model }));
  irc.connect();
  irc.register('DataBot', 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,imnpst WHOX');
  irc.receive(':hub.test.net 004 DataBot hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  irc.receive(':hub.test.net 381 DataBot :You are now a NetAdmin');
  model.connectionOpened(irc.state.casemapping);
  irc
    .answer(/^LINKS$/, () => [
      ...linked.map(
        (name) => `:hub.test.net 364 DataBot ${name} hub.test.net :${name === 'hub.test.net' ? 0 : 1} ${name}`,
      ),
      ':hub.test.net 365 DataBot * :End of /LINKS list.',
    ])
    .answer(/^LUSERS$/, () => [
      `:hub.test.net 251 DataBot :There are ${users().length} users and 0 invisible on ${linked.length} servers`,
      `:hub.test.net 266 DataBot :Current global users: ${users().length}  Max: 10`,
    ])
    .answer(/^MAP$/, [':hub.test.net 017 DataBot :End of /MAP'])
    .answer(/^WHOIS NickServ$/, () =>
      linked.includes('services.test.net')
        ? [':hub.test.net 312 DataBot NickServ services.test.net :Services', ':hub.test.net 318 DataBot NickServ :End']
        : [':hub.test.net 401 DataBot NickServ :No such nick', ':hub.test.net 318 DataBot NickServ :End'],
    )
    .answer(/^WHO (\S+) s%(\w+),77$/, (match) => [
      ...(onServer[match[1]!] ?? []).map(
        (nick) => `:hub.test.net 354 DataBot 77 * ~${nick} 127.0.0.1 host ${match[1]} ${nick} H 0 :${nick}`,
      ),
      `:hub.test.net 315 DataBot ${match[1]} :End of /WHO list.`,
    ]);
  const afterChecks: string[] = [];
  const watch = new TopologyWatch({ irc, model, logger, config }, () => afterChecks.push('sync'));
  irc.on('message', (line) => watch.consider(line));
  for (const server of linked) model.upsertServer(server, { isServices: server === 'services.test.net' });
  for (const server of linked) for (const nick of onServer[server]!) model.upsertUser(nick, { server });
  return { irc, model, lines, watch, afterChecks };
}

function parsed(irc: ScriptedTransport, line: string): IrcMessage {
  let message: IrcMessage | undefined;
  const off = irc.on('message', (received) => (message = received));
  irc.receive(line);
  off();
  return message!;
}

t.afterEach(() => {
  linked = ['hub.test.net', 'leaf.test.net', 'services.test.net'];
});

t.test('what says the network changed shape, and what does not', async (t) => {
  const { irc, model } = setup();
  t.ok(isNetsplitQuit(parsed(irc, ':bob!b@h QUIT :hub.test.net leaf.test.net'), model), 'a netsplit QUIT');
  t.notOk(isNetsplitQuit(parsed(irc, ':bob!b@h QUIT :Quit: hub.test.net leaf.test.net'), model), 'a user’s words');
  t.notOk(isNetsplitQuit(parsed(irc, ':bob!b@h QUIT :irc.example.org leaf.test.net'), model), 'an unknown server');
  t.ok(isLinkNotice(parsed(irc, ':hub.test.net NOTICE DataBot :*** LINK: Server leaf.test.net split: Ping timeout')));
  t.ok(
    isLinkNotice(
      parsed(
        irc,
        ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 3 msecs)',
      ),
    ),
  );
  t.notOk(isLinkNotice(parsed(irc, ':alice!a@h NOTICE DataBot :Server leaf.test.net split')), 'a user’s notice');
  t.notOk(isLinkNotice(parsed(irc, ":hub.test.net NOTICE DataBot :*** LINK: Connection to 'leaf.test.net' failed.")));
  t.equal(
    burstEndedFrom(
      parsed(
        irc,
        ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 3 msecs)',
      ),
    ),
    'leaf.test.net',
  );
});

t.test('a split: the server goes with its users at once, and the counts are asked again', async (t) => {
  const { irc, model, lines, watch, afterChecks } = setup();
  linked = ['hub.test.net', 'services.test.net'];
  irc.receive(
    ':bob!b@h QUIT :hub.test.net leaf.test.net',
    ':dave!d@h QUIT :hub.test.net leaf.test.net',
    ':erin!e@h QUIT :hub.test.net leaf.test.net',
  );
  await watch.check();
  t.notOk(model.servers.get('leaf.test.net'), 'the leaf is gone');
  t.notOk(model.users.get('carol'), 'with carol, whose QUIT the bot never saw');
  t.ok(model.users.get('alice'), 'the hub’s users stay');
  t.equal(model.stats.users, 3, 'LUSERS was asked again');
  t.same(afterChecks, ['sync'], 'a sync follows');
  t.match(lines.join('\n'), /topology checked lost=leaf\.test\.net/);
  t.equal(
    irc.sent.filter((line) => line === 'LINKS').length,
    2,
    'the QUITs of one split make one check, and asking during it one more after it',
  );
});

t.test('a services split is known until they link back', async (t) => {
  const { irc, model, watch } = setup();
  linked = ['hub.test.net', 'leaf.test.net'];
  irc.receive(':hub.test.net NOTICE DataBot :*** LINK: Server services.test.net split: Connection closed');
  await watch.check();
  t.same(model.servers.servicesSplit, ['services.test.net']);
  t.notOk(model.users.get('NickServ'));

  linked = ['hub.test.net', 'leaf.test.net', 'services.test.net'];
  irc.receive(
    ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from services.test.net (burst time: 0 msecs)',
  );
  await watch.check();
  t.same(model.servers.servicesSplit, [], 'marked as services again (WHOIS NickServ), so no longer split');
  t.equal(model.users.get('NickServ')?.server, 'services.test.net', 'its users asked with WHO s');
  t.ok(irc.sent.includes('WHO services.test.net s%tcuihsnfar,77'));
});

t.test('a joined server’s users are asked at once, and again when its burst ends', async (t) => {
  const { irc, model, watch } = setup();
  linked = ['hub.test.net', 'services.test.net'];
  await watch.check();
  t.notOk(model.users.get('bob'));
  linked = ['hub.test.net', 'leaf.test.net', 'services.test.net'];
  irc.receive(
    ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 0 msecs)',
  );
  await watch.check();
  t.equal(model.users.get('bob')?.server, 'leaf.test.net');
  t.equal(model.users.get('carol')?.server, 'leaf.test.net');
  t.equal(irc.sentMatching(/^WHO leaf\.test\.net s%/).length, 1);
  irc.receive(
    ':hub.test.net NOTICE DataBot :*** LINK: Received end of netburst from leaf.test.net (burst time: 0 msecs)',
  );
  await watch.check();
  t.equal(irc.sentMatching(/^WHO leaf\.test\.net s%/).length, 2, 'a burst that ended is asked even when known');
});
