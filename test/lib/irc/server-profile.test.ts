/**
 * The server profile (lib/irc/server-profile.ts): each family known from a real version string, with the
 * ISUPPORT and CAP lines its servers send (the test networks' transcripts in test/fixtures/networks/, and the
 * registration of public networks for the software the test networks do not run yet), and every question
 * answered by feature first, by family where the server does not say. Then the session keeps it up to date,
 * on both client libraries and for an attached client.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { IrcFrameworkTransport } from '../../../lib/irc/irc-framework.js';
import { parseLine } from '../../../lib/irc/line-parser.js';
import { MatrixIrcTransport } from '../../../lib/irc/matrix-org-irc.js';
import type { IrcTransport } from '../../../lib/irc/port.js';
import {
  buildServerProfile,
  GENERIC_ANSWERS,
  SERVER_FAMILIES,
  serverFamilyOf,
  UNKNOWN_SERVER,
  type ServerProfile,
} from '../../../lib/irc/server-profile.js';
import { SessionState } from '../../../lib/irc/session.js';
import { createLogger } from '../../../lib/logger.js';
import { FakeTransport, fakeOptions } from '../../../testing/fake-irc.js';
import { irc2Answer, irc2Received } from '../../support/irc2.js';
import { findRepoRoot } from '../../support/testnet.js';
import { ScriptedIrcServer } from './fixtures/scripted-server.js';

const networks = path.join(findRepoRoot(), 'test', 'fixtures', 'networks');

/** The session state after these raw lines, as the connection would have seen them. */
function sessionAfter(lines: readonly string[], nick = 'regtest'): SessionState {
  const state = new SessionState(nick);
  state.connected = true;
  for (const line of lines) {
    const message = parseLine(line);
    if (message) state.apply(message);
  }
  return state;
}

/** The profile after a test network's registration (CAP LS 302, 001–005, LUSERS, MOTD), as recorded. */
function recorded(kind: string): ServerProfile {
  const lines = fs.readFileSync(path.join(networks, kind, 'registration.txt'), 'utf8').split('\n');
  return sessionAfter(lines.filter((line) => line.startsWith(':'))).profile;
}

/** The registration lines of public networks, as their servers sent them. */
const PUBLIC = {
  unreal: [
    ':netsplit.pirc.pl 001 SIC-test :Welcome to the pirc.pl IRC Network SIC-test!~SIC-test@1.1.1.1',
    ':netsplit.pirc.pl 004 SIC-test netsplit.pirc.pl UnrealIRCd-6.0.3 diknopqrstwxzBDFGHINRSTWZ beIacdfhiklmnopqrstvzBCDGHKLMNOPQRSTVZ',
    ':netsplit.pirc.pl 005 SIC-test AWAYLEN=307 BOT=B CASEMAPPING=ascii CHANLIMIT=#:30 CHANMODES=beI,fkL,lH,cdimnprstzBCDGKMNOPQRSTVZ CHANNELLEN=32 CHANTYPES=# CHATHISTORY=50 CLIENTTAGDENY=*,-draft/typing,-typing,-draft/reply DEAF=d ELIST=MNUCT EXCEPTS :are supported by this server',
    ':netsplit.pirc.pl 005 SIC-test EXTBAN=~,acfjmnpqrtCGIOST EXTJWT=1 INVEX KICKLEN=307 KNOCK MAP MAXCHANNELS=30 MAXLIST=b:200,e:200,I:200 MAXNICKLEN=30 METADATA=10 MINNICKLEN=0 MODES=12 :are supported by this server',
    ':netsplit.pirc.pl 005 SIC-test UHNAMES USERIP WALLCHOPS WATCH=128 WATCHOPTS=A WHOX :are supported by this server',
  ],
  solanum: [
    ':iridium.libera.chat CAP * LS :account-notify away-notify batch chghost extended-join multi-prefix sasl=ECDSA-NIST256P-CHALLENGE,EXTERNAL,PLAIN,SCRAM-SHA-512 tls account-tag cap-notify echo-message invite-notify labeled-response message-tags no-implicit-names server-time solanum.chat/identify-msg solanum.chat/oper solanum.chat/realhost',
    ':iridium.libera.chat 001 me :Welcome to the Libera.Chat Internet Relay Chat Network me',
    ':iridium.libera.chat 004 me iridium.libera.chat solanum-1.0-dev DGIMQRSZaghiopsuwz CFILMPQRSTbcefgijklmnopqrstuvz bkloveqjfI',
    ':iridium.libera.chat 005 me ETRACE KNOCK SAFELIST ELIST=CMNTU MONITOR=100 FNC WHOX CALLERID=g ACCOUNTEXTBAN=a CHANTYPES=# EXCEPTS INVEX :are supported by this server',
    ':iridium.libera.chat 005 me CHANMODES=eIbq,k,flj,CFLMPQRSTcgimnprstuz CHANLIMIT=#:250 PREFIX=(ov)@+ MAXLIST=bqeI:100 MODES=4 NETWORK=Libera.Chat STATUSMSG=@+ CASEMAPPING=rfc1459 NICKLEN=16 MAXNICKLEN=16 CHANNELLEN=50 TOPICLEN=390 :are supported by this server',
  ],
  ircu: [
    ':euroserv.fr.quakenet.org 001 scaussin :Welcome to the QuakeNet IRC Network, scaussin',
    ':euroserv.fr.quakenet.org 004 scaussin euroserv.fr.quakenet.org u2.10.12.10+snircd(1.3.4a) dioswkgxRXInP biklmnopstvrDcCNuMT bklov',
    ':euroserv.fr.quakenet.org 005 scaussin WHOX WALLCHOPS WALLVOICES USERIP CPRIVMSG CNOTICE SILENCE=15 MODES=6 MAXCHANNELS=20 MAXBANS=45 NICKLEN=15 :are supported by this server',
  ],
  irc2: [
    ':fu-berlin.de 001 osntauohe :Welcome to the Internet Relay Network osntauohe!~osntauohe@176.99.114.122',
    ':fu-berlin.de 004 osntauohe fu-berlin.de 2.11.2p2 aoOirw abeiIklmnoOpqrRstv',
    ':fu-berlin.de 005 osntauohe RFC2812 PREFIX=(ov)@+ CHANTYPES=#&!+ MODES=3 CHANLIMIT=#&!+:21 NICKLEN=15 TOPICLEN=255 KICKLEN=255 MAXLIST=beIR:64 CHANNELLEN=50 IDCHAN=!:5 CHANMODES=beIR,k,l,imnpstaqr :are supported by this server',
  ],
};

/** A sample version string of each family, for the table's own checks. */
const SAMPLES: Record<string, string[]> = {
  InspIRCd: ['InspIRCd-3', 'InspIRCd-4', 'InspIRCd-3.15.0-debian'],
  'ircd-hybrid': ['ircd-hybrid-1:8.2.43+dfsg.1-1', 'ircd-hybrid-8.2.24'],
  ngIRCd: ['ngircd-26.1', 'ngIRCd-26.1'],
  UnrealIRCd: ['UnrealIRCd-6.0.3', 'UnrealIRCd-6.1.4'],
  Solanum: ['solanum-1.0-dev', 'charybdis-4.1.2'],
  ircu: ['u2.10.12.14', 'u2.10.12.10+snircd(1.3.4a)', 'u2.10.12.14+Nefarious(2.0.0)'],
  'ircd 2.11': ['2.11.2p2', '2.11.2p3+0PNv1.06'],
};

t.test('each family is one entry whose pattern knows its versions and no other', async (t) => {
  t.same(
    SERVER_FAMILIES.map((family) => family.name),
    Object.keys(SAMPLES),
    'the seven families, each named once',
  );
  for (const [name, versions] of Object.entries(SAMPLES)) {
    for (const version of versions) {
      t.equal(serverFamilyOf(version)?.name, name, `${version} is ${name}`);
      const others = SERVER_FAMILIES.filter((family) => family.version.test(version));
      t.equal(others.length, 1, `${version} matches no other family`);
    }
  }
  for (const version of ['InspIRCd-2.0', 'Anope-2.0.12', 'atheme-7.2.12', 'test-1.0', '']) {
    t.equal(serverFamilyOf(version), null, `${version || 'no version'} is no known family`);
  }
});

t.test('InspIRCd (inspircd+anope): its real-host flag, notices and WHOIS 378, SASL offered', async (t) => {
  const profile = recorded('inspircd+anope');
  t.match(profile, {
    version: 'InspIRCd-3',
    family: 'InspIRCd',
    whox: true,
    realHostWhoFlag: 'x',
    operatorWhoSeesInvisible: true,
    whoReplyLimit: null,
    whoxIp: 'operator',
    listsNewChannels: true,
    listsByUsers: true,
    listShowsModes: null,
    channelLimit: 100,
    botMode: null,
    localChannelTypes: '',
    operatorsStats: 'P',
    latencyProbes: ['TIME', 'VERSION'],
    sasl: true,
    accountFrom: 'whois',
  });
  t.equal(profile.serverNotices?.modes, '+cCqQnNlLjJ');
  t.notOk(profile.isLocalChannel('&local'), 'CHANTYPES=#: no local channels');
  const map = fs.readFileSync(path.join(networks, 'inspircd+anope', 'map-oper.txt'), 'utf8');
  const users = map
    .split('\n')
    .flatMap((line) => parseLine(line) ?? [])
    .filter((message) => message.command === '015')
    .map((message) => profile.mapLine!.exec(message.params.at(-1)!)?.groups);
  t.same(
    users.map((groups) => [groups?.name, groups?.users]),
    [
      ['hub.test.net', '2'],
      ['services.test.net', '7'],
      ['leaf.test.net', '2'],
    ],
    'its MAP, as the operator got it, gives the users per server',
  );
});

t.test('ircd-hybrid (hybrid+anope): no SASL, modes in LIST, its own RPL_TRYAGAIN advice', async (t) => {
  const profile = recorded('hybrid+anope');
  t.match(profile, {
    version: 'ircd-hybrid-1:8.2.43+dfsg.1-1',
    family: 'ircd-hybrid',
    whox: true,
    realHostWhoFlag: null,
    operatorWhoSeesInvisible: false,
    whoReplyLimit: 500,
    listsNewChannels: true,
    listShowsModes: true,
    channelLimit: 100,
    botMode: 'B',
    operatorsStats: null,
    mapLine: null,
    serverNotices: null,
    sasl: false,
    tryAgainText: 'on ircd-hybrid, oper the bot or set pace_wait and pace_wait_simple to 0',
  });
});

t.test('ngIRCd (ngircd+atheme): no WHOX, local & channels', async (t) => {
  const profile = recorded('ngircd+atheme');
  t.match(profile, {
    version: 'ngircd-26.1',
    family: 'ngIRCd',
    whox: false,
    realHostWhoFlag: null,
    listsNewChannels: false,
    listsByUsers: false,
    operatorWhoSeesInvisible: false,
    whoReplyLimit: 25,
    listShowsModes: false,
    channelLimit: 100,
    localChannelTypes: '&',
    operatorsStats: null,
    mapLine: null,
    sasl: false,
  });
  t.ok(profile.isLocalChannel('&SERVER'), 'its &SERVER channel is local');
  t.notOk(profile.isLocalChannel('#test'));
});

/** The IRC lines of one recorded transcript (test/fixtures/networks/<kind>/<file>). */
function transcript(kind: string, file: string) {
  return fs
    .readFileSync(path.join(networks, kind, file), 'utf8')
    .split('\n')
    .flatMap((line) => (line.startsWith('#') ? [] : (parseLine(line) ?? [])));
}

t.test(
  'ircu (ircu+atheme): LUSERS ends at 255, no modes in LIST, invisible users and MAP for operators only',
  async (t) => {
    const profile = recorded('ircu+atheme');
    t.match(profile, {
      version: 'u2.10.12.19',
      family: 'ircu',
      whox: true,
      // `x` widens an operator's WHO (to invisible users, with a log line), but shows no real host.
      realHostWhoFlag: null,
      operatorWhoSeesInvisible: true,
      invisibleWhoFlag: 'x',
      whoReplyLimit: 147,
      whoxIp: 'operator',
      listsNewChannels: false,
      listsByUsers: false,
      listShowsModes: false,
      listEveryChannel: [],
      whoEveryone: '*',
      channelLimit: 100,
      botMode: null,
      localChannelTypes: '&',
      operatorsStats: null,
      lusersEnd: '255',
      mapLine: null,
      serverNotices: null,
      // It offers the cap only while services announce SASL to it (Atheme 7.2 does not): the CAP decides.
      sasl: null,
    });
    const lusers = transcript('ircu+atheme', 'lusers.txt');
    t.same(
      lusers.map((message) => message.command),
      ['251', '252', '255', 'NOTICE'],
      'LUSERS: no 265/266, a NOTICE after the 255',
    );
    t.equal(lusers.filter((message) => /^\d{3}$/.test(message.command)).at(-1)?.command, profile.lusersEnd);
    const list = transcript('ircu+atheme', 'list-hub.txt').filter((message) => message.command === '322');
    t.same(
      list.map((message) => message.params.slice(1)),
      [['#test', '2', 'capture topic']],
      'LIST: the topic alone',
    );
    const statsP = transcript('ircu+atheme', 'stats-P-oper.txt');
    t.ok(
      statsP.some((message) => message.command === '217') && !statsP.some((message) => message.command === '249'),
      "an operator's STATS P lists ports (217), no operator (249)",
    );
    t.same(
      transcript('ircu+atheme', 'map-user.txt').map((message) => message.command),
      ['NOTICE'],
      "a user's MAP: a NOTICE, no RPL_MAPEND to wait for",
    );
    t.match(
      transcript('ircu+atheme', 'map-oper.txt').map((message) => message.params.at(-1)),
      [
        'hub.test.net  [2 clients]',
        '|-leaf.test.net (0s) [2 clients]',
        '`-services.test.net  [4 clients]',
        'End of /MAP',
      ],
      "an operator's MAP, in a form the generic pattern does not read",
    );
    // A user's WHO (recorded by hand: 170 users on the hub, `WHO * %tcuihsnfar,8`): 147 rows, then these.
    const cut = sessionAfter([
      ':hub.test.net 001 asker :Welcome to the TestNet IRC Network, asker',
      ':hub.test.net 004 asker hub.test.net u2.10.12.19 diOoswkgxczIR biklmnopstvrDdRcCuMZz bklov',
      ':hub.test.net 416 asker * :Too many lines in the output, restrict your query',
      ':hub.test.net 315 asker * :End of /WHO list.',
    ]).profile;
    t.equal(cut.whoReplyLimit, 147);
  },
);

/** The messages of raw lines, in order. */
const parsed = (lines: readonly string[]) => lines.flatMap((line) => parseLine(line) ?? []);

/** The numerics of raw lines, in order. */
const numerics = (lines: readonly string[]) =>
  parsed(lines)
    .map((message) => message.command)
    .filter((command) => /^\d{3}$/.test(command));

t.test('ircd 2.11 (irc2): what its recorded lines say, answer by answer', async (t) => {
  const registration = irc2Received('01-registration.txt', 'alice');
  const profile = sessionAfter(registration, 'alice').profile;
  t.match(profile, {
    version: '2.11.2p3',
    family: 'ircd 2.11',
    // No WHOX in its 005 (`WHO #stats %tcuhnfar,42` is answered with plain 352 rows, 05-who.txt): no real-host flag.
    whox: false,
    realHostWhoFlag: null,
    invisibleWhoFlag: null,
    whoReplyLimit: null,
    listsNewChannels: false,
    listsByUsers: false,
    listShowsModes: false,
    listEveryChannel: [],
    whoEveryone: '0',
    operatorWhoSeesInvisible: false,
    operatorListsSecret: false,
    operatorsStats: null,
    operatorWhoisIp: false,
    lusersEnd: '266',
    mapLine: null,
    serverNotices: null,
    latencyProbes: ['TIME', 'VERSION'],
    channelLimit: 21,
    botMode: null,
    localChannelTypes: '&',
    modelessChannelTypes: '+',
    commandPenalty: true,
    accountFrom: 'whois',
    sasl: false,
    accounts: false,
  });
  t.ok(profile.isLocalChannel('&ERRORS') && profile.isLocalChannel('&testlocal'));
  t.ok(profile.isModelessChannel('+plus'));
  t.notOk(profile.isModelessChannel('!ZJ8F2events') || profile.isLocalChannel('!ZJ8F2events'), 'a safe channel');
  t.match(parseLine(registration.find((line) => / 004 /.test(line))!)!.params, [
    'alice',
    'hub.test.net',
    '2.11.2p3',
    'aoOirw',
    'abeiIklmnoOpqrRstv',
  ]);
  t.equal(sessionAfter(registration, 'alice').casemapping, 'ascii');

  // No CAP: CAP LS 302 before registration goes unanswered, after it CAP and AUTHENTICATE are unknown commands.
  t.same(numerics(irc2Answer('14-cap-services.txt', 'capper', 'CAP LS 302')), ['020'], 'only its "Please wait"');
  t.same(numerics(irc2Answer('14-cap-services.txt', 'capper', 'CAP LS')), ['421']);
  t.same(numerics(irc2Answer('14-cap-services.txt', 'capper', 'AUTHENTICATE PLAIN')), ['421']);
  t.same(numerics(irc2Answer('14-cap-services.txt', 'capper', 'PRIVMSG NickServ :IDENTIFY secret')), ['401']);

  // LUSERS: 251 counts every user (no invisible count), 252 only while operators are online; it ends at 266.
  for (const client of ['alice', 'bob']) {
    const lusers = irc2Answer('02-lusers.txt', client, 'LUSERS');
    t.equal(numerics(lusers).at(-1), '266', `${client}'s LUSERS ends at 266`);
    t.match(parsed(lusers)[0]!.params.at(-1), /^There are \d+ users and 0 services on 2 servers$/);
  }
  t.same(numerics(irc2Answer('02-lusers.txt', 'alice', 'LUSERS')), ['251', '253', '254', '255', '265', '266']);

  // LIST: a NOTICE first; rows of the topic alone; the servers' `&` channels; no secret or private channel the
  // asker is not in, to an operator either; `LIST >1` lists nothing.
  const listOf = (client: string) =>
    parsed(irc2Answer('03-list.txt', client, 'LIST')).filter((message) => message.command === '322');
  const list = listOf('alice');
  t.equal(parsed(irc2Answer('03-list.txt', 'alice', 'LIST'))[0]!.command, 'NOTICE');
  t.same(
    list.find((message) => message.params[1] === '#stats')!.params,
    ['alice', '#stats', '2', 'Stats topic set by alice'],
    'the topic alone',
  );
  t.ok(
    list.some((message) => message.params[1] === '!ZJ8F2events'),
    'a safe channel by its whole name',
  );
  t.ok(
    list.some((message) => message.params[1] === '&ERRORS'),
    "the servers' message channels",
  );
  const secret = ['!ZJ8JKsecret', '!ZJ8J1private'];
  t.ok(
    secret.every((name) => listOf('bob').some((message) => message.params[1] === name)),
    'its members see them',
  );
  t.notOk(
    listOf('opal').some((message) => secret.includes(message.params[1]!)),
    'an operator does not: operatorListsSecret false',
  );
  t.same(numerics(irc2Answer('03-list.txt', 'alice', 'LIST >1')), ['323'], 'LIST >1: nothing');

  // WHO: `*` is the asker's last channel, `0` everyone it may see; an invisible user who shares no channel with
  // the asker is left out of `0` and of masks, for an operator too (opal); the realname follows the server's SID.
  const whoNicks = (client: string, mask: string) =>
    parsed(irc2Answer('05-who.txt', client, `WHO ${mask}`))
      .filter((message) => message.command === '352')
      .map((message) => message.params[5]);
  t.same(whoNicks('alice', '*'), ['alice'], "alice's WHO *: her #plain only");
  t.same(whoNicks('opal', '*'), ['opal'], "opal's WHO *: one channel of his (&SERVICES)");
  t.equal(whoNicks('alice', '0').length, 7, "alice's WHO 0: everyone, ivy too (they share #stats)");
  t.notOk(whoNicks('opal', '0').includes('ivy'), "the operator's WHO 0 leaves out ivy (+i, no channel shared)");
  t.same(whoNicks('opal', '*ivy*'), [], 'a mask too');
  t.same(whoNicks('opal', 'ivy'), ['ivy'], 'her nick finds her');
  const trailing = parsed(irc2Answer('05-who.txt', 'alice', 'WHO #stats'))[0]!.params.at(-1)!;
  t.equal(trailing, '1 002A Invisible Ivy');
  t.match(profile.hopsField.exec(trailing)?.groups, { hops: '1', text: 'Invisible Ivy' }, 'hops, SID, realname');
  t.match(profile.hopsField.exec('0 001A ')?.groups, { hops: '0', text: '' }, 'an empty realname');
  t.match(GENERIC_ANSWERS.hopsField.exec('0 Real Name')?.groups, { hops: '0', text: 'Real Name' });
  const links = parsed(irc2Answer('04-links-map.txt', 'alice', 'LINKS'));
  t.same(links[0]!.params, ['alice', 'leaf.test.net', 'hub.test.net', '1 002A TestNet leaf']);
  t.match(profile.hopsField.exec(links[0]!.params.at(-1)!)?.groups, { hops: '1', text: 'TestNet leaf' });

  // WHOIS: to an operator no IP or real host (no 338, 378), to nobody an account (330).
  t.same(numerics(irc2Answer('06-whois.txt', 'opal', 'WHOIS bob bob')), ['311', '319', '312', '317', '318']);
  t.same(numerics(irc2Answer('06-whois.txt', 'opal', 'WHOIS alice')), ['311', '319', '312', '317', '318']);

  // MAP: the tree without user counts, which the generic pattern does not read.
  const map = parsed(irc2Answer('04-links-map.txt', 'opal', 'MAP'));
  t.same(
    map.map((message) => message.command),
    ['018', '015', '015', '017'],
  );
  t.same(
    map
      .filter((message) => message.command === '015')
      .flatMap((m) => GENERIC_ANSWERS.mapLine!.exec(m.params.at(-1)!) ?? []),
    [],
  );

  // STATS P lists ports, STATS p nothing: no operators online anywhere.
  const statsP = parsed(irc2Answer('07-stats.txt', 'alice', 'STATS P'));
  t.same(
    statsP.map((message) => message.command),
    ['211', '211', '219'],
  );
  t.same(numerics(irc2Answer('07-stats.txt', 'alice', 'STATS p')), ['219']);

  // No snomasks (`MODE opal +s`: 501): the notices come in the `&` channels instead, which the collector reads not.
  t.same(numerics(irc2Answer('10-oper.txt', 'opal', 'MODE opal +s')), ['501']);

  // Penalty: past three, the answers come seconds apart (ISUPPORT PENALTY).
  t.ok(registration.some((line) => / 005 .* PENALTY /.test(line)));
  t.match(
    fs.readFileSync(path.join(networks, 'irc2', '18-burst-penalty.txt'), 'utf8'),
    /penalty TIME: 12 sent at once/,
  );

  // VERSION of a server: the version with a final dot, then the server, then its SID; an attached client's profile.
  const version = parsed(irc2Answer('09-version-time.txt', 'alice', 'VERSION leaf.test.net'))[0]!;
  t.same(version.params.slice(1, 4), ['2.11.2p3.', 'leaf.test.net', '002A']);
  const attached = sessionAfter([
    ':hub.test.net 001 alice :Welcome to the Internet Relay Network alice!~alice@127.0.0.10',
    ...irc2Answer('09-version-time.txt', 'alice', 'VERSION'),
  ]);
  t.match(attached.profile, { version: '2.11.2p3', family: 'ircd 2.11' });
});

t.test('the families no test network runs yet: known by version, answered by feature', async (t) => {
  t.match(sessionAfter(PUBLIC.unreal, 'SIC-test').profile, {
    family: 'UnrealIRCd',
    whox: true,
    listsNewChannels: true,
    listsByUsers: true,
    channelLimit: 30,
    botMode: 'B',
    localChannelTypes: '',
    sasl: true,
  });
  t.match(sessionAfter(PUBLIC.solanum, 'me').profile, {
    family: 'Solanum',
    whox: true,
    listsNewChannels: true,
    channelLimit: 250,
    botMode: null,
    sasl: true,
    // A plain LIST hides channels under 3 users, and `WHO *` is the asker's first channel.
    listEveryChannel: ['>0'],
    whoEveryone: '0',
    operatorWhoSeesInvisible: false,
    listShowsModes: false,
  });
  t.match(sessionAfter(PUBLIC.ircu, 'scaussin').profile, {
    family: 'ircu',
    whox: true,
    listsNewChannels: false,
    channelLimit: 20,
    localChannelTypes: '&',
    sasl: null,
  });
  const irc2 = sessionAfter(PUBLIC.irc2, 'osntauohe').profile;
  t.match(irc2, { family: 'ircd 2.11', whox: false, channelLimit: 21, localChannelTypes: '&', sasl: false });
  t.ok(irc2.isLocalChannel('&ERRORS'));
  t.notOk(irc2.isLocalChannel('!channel'));
  for (const profile of [PUBLIC.unreal, PUBLIC.solanum, PUBLIC.irc2].map((lines) => sessionAfter(lines).profile)) {
    // Until a test network checks them, they are asked what any server is, but what is known to be unreadable.
    t.match(profile, { realHostWhoFlag: null, serverNotices: null });
  }
  for (const lines of [PUBLIC.unreal, PUBLIC.solanum, PUBLIC.irc2]) {
    t.match(
      sessionAfter(lines).profile,
      { operatorsStats: null, mapLine: null },
      'STATS P lists ports there, and MAP has a form the collector does not read: neither is asked',
    );
  }
});

t.test('software the table does not name gets the generic answers', async (t) => {
  const older = buildServerProfile({
    version: 'InspIRCd-2.0',
    isupport: new Map([['WHOX', '']]),
    caps: new Set(),
    offeredCaps: new Set(),
  });
  t.equal(older.family, null);
  t.equal(older.realHostWhoFlag, null, 'InspIRCd 2 has no real-host WHO flag');
  t.equal(older.serverNotices, null, 'and words its notices otherwise');
  const { mapLine, hopsField, ...answers } = GENERIC_ANSWERS;
  t.match(older, answers);
  t.equal(older.mapLine, mapLine);
  t.equal(older.hopsField, hopsField);
  t.equal(older.tryAgainText, "oper the bot, or have the server's limit on the command lifted");
  t.match(UNKNOWN_SERVER, {
    version: '',
    family: null,
    whox: false,
    channelLimit: null,
    botMode: null,
    // RFC 2811's default, where a server lists no CHANTYPES.
    localChannelTypes: '&',
    accountFrom: 'whois',
    sasl: null,
  });
});

t.test('by feature first: what the server advertises wins over its family', async (t) => {
  const profile = (version: string, isupport: [string, string][], caps: string[] = [], offered: string[] = []) =>
    buildServerProfile({ version, isupport: new Map(isupport), caps: new Set(caps), offeredCaps: new Set(offered) });
  t.equal(profile('InspIRCd-3', []).realHostWhoFlag, null, 'a real-host flag needs WHOX');
  t.equal(profile('ngircd-26.1', [], [], ['sasl']).sasl, true, 'SASL offered, whatever the family says');
  t.equal(profile('ngircd-26.1', [], ['sasl']).sasl, true, 'or granted');
  t.equal(profile('InspIRCd-3', []).sasl, true, 'the family has it while its services are linked');
  t.equal(profile('', [], ['account-tag']).accountFrom, 'account-tag');
  t.equal(profile('', [['CHANLIMIT', '#:100,&:20']]).channelLimit, 20, 'the lowest of its prefixes');
  t.equal(profile('', [['MAXCHANNELS', '20']]).channelLimit, 20, 'the older token');
  t.equal(
    profile('', [
      ['CHANLIMIT', '#:100'],
      ['MAXCHANNELS', '20'],
    ]).channelLimit,
    100,
    'CHANLIMIT first',
  );
  t.equal(profile('', [['MAXCHANNELS', '']]).channelLimit, null, 'no number: no limit');
  t.equal(profile('', [['ELIST', 'mntu']]).listsByUsers, true, 'ELIST letters in either case');
  t.equal(profile('', [['BOT', '']]).botMode, null, 'BOT without a letter is no bot mode');
  t.equal(profile('2.11.2p3', []).accounts, false, 'ircd 2.11 knows no accounts');
  t.equal(profile('2.11.2p3', [], ['account-tag']).accounts, true, 'unless it tags lines with them');
  t.equal(profile('2.11.2p3', [], [], ['sasl']).accounts, true, 'or offers SASL');
  t.equal(profile('ngircd-26.1', []).accounts, true, 'the others do');
  t.equal(profile('', [['PENALTY', '']]).commandPenalty, true, 'commands penalised (ISUPPORT PENALTY)');
  t.equal(profile('2.11.2p3', []).commandPenalty, false, 'by feature, not by family');
  t.equal(profile('', [['CHANTYPES', '#&+']]).isModelessChannel('+x'), true, 'modeless channels where CHANTYPES has +');
  t.equal(profile('', [['CHANTYPES', '#']]).modelessChannelTypes, '');
  t.equal(profile('', []).modelessChannelTypes, '', "RFC 2811's default #& has none");
});

t.test('the session builds the profile again after RPL_MYINFO, RPL_VERSION, ISUPPORT and CAP lines', async (t) => {
  const state = sessionAfter([
    ':irc.test CAP * LS :multi-prefix sasl=PLAIN',
    ':irc.test 001 DataBot :Welcome',
    ':irc.test 005 DataBot WHOX ELIST=CMNTU :are supported by this server',
  ]);
  t.match(state.profile, { family: null, whox: true, sasl: true });
  const before = state.profile;
  t.equal(state.profile, before, 'asked again with nothing new: the same profile');
  state.apply(parseLine(':irc.test 004 DataBot irc.test InspIRCd-3 iosw biklmnopstv :bklov')!);
  t.match(state.profile, { family: 'InspIRCd', realHostWhoFlag: 'x' });
  state.apply(parseLine(':irc.test 005 DataBot -WHOX :are supported by this server')!);
  t.match(state.profile, { whox: false, realHostWhoFlag: null }, 'a token withdrawn');
  state.apply(parseLine(':irc.test CAP DataBot DEL :sasl')!);
  t.equal(state.profile.sasl, true, 'InspIRCd withdraws the cap while services are away; it has SASL all the same');
  state.apply(parseLine(':irc.test CAP DataBot ACK :account-tag')!);
  t.equal(state.profile.accountFrom, 'account-tag');
  state.reset('DataBot');
  t.equal(state.profile, UNKNOWN_SERVER, 'a new connection knows nothing of the server yet');

  // An attached client's 004 went by: the server's own VERSION answer names the software.
  const attached = sessionAfter([
    ':leaf.test.net 001 watcher :Welcome',
    ':leaf.test.net 351 watcher ngIRCd-26.1. leaf.test.net :IDENT+IPv6+IRCPLUS+PAM+SSL+SYSLOG+ZLIB-x86_64/pc/linux-gnu',
  ]);
  t.match(attached.profile, { version: 'ngIRCd-26.1', family: 'ngIRCd' });
});

t.test('the transport sets bot mode and words RPL_TRYAGAIN errors from the profile', async (t) => {
  const irc = new FakeTransport({ tryAgain: { firstWaitMs: 1, times: 0 } });
  irc.connect();
  irc.receive(
    ':hub.test.net 001 DataBot :Welcome',
    ':hub.test.net 004 DataBot hub.test.net ircd-hybrid-1:8.2.43+dfsg.1-1 BDFGHXRSWZacefgijklnopqrswyz CIKLMNOQRSTVZbcehiklmnoprstvz Ibehklov',
    ':hub.test.net 005 DataBot BOT=B CALLERID CASEMAPPING=ascii DEAF=D KICKLEN=180 MODES=6 :are supported by this server',
    ':hub.test.net 376 DataBot :End of /MOTD command.',
  );
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(irc.sent.includes('MODE DataBot +B'), 'the bot mode the profile read from ISUPPORT');
  const refused = irc.request({ send: ['LINKS'], reply: () => false, end: (line) => line.command === '365' });
  irc.receive(
    ':hub.test.net 263 DataBot LINKS :Server load is temporarily too heavy. Please wait a while and try again.',
  );
  await t.rejects(refused, /refused it 1 times over 0 s; on ircd-hybrid, oper the bot or set pace_wait/);
});

/** A transport of `library` connected to a scripted server offering `sasl` and these ISUPPORT tokens. */
async function connected(t: Test, library: 'irc-framework' | 'matrix-org-irc') {
  const server = await ScriptedIrcServer.start({
    caps: 'multi-prefix sasl=PLAIN',
    isupport: 'CASEMAPPING=rfc1459 WHOX ELIST=CMNTU BOT=B CHANLIMIT=#:50 CHANTYPES=#',
  });
  const options = { ...fakeOptions, port: server.port };
  const logger = createLogger({ sink: () => undefined });
  const transport: IrcTransport =
    library === 'irc-framework' ? new IrcFrameworkTransport(options, logger) : new MatrixIrcTransport(options, logger);
  t.teardown(async () => {
    await transport.quit('test over');
    await server.close();
  });
  const ready = new Promise<void>((resolve) => transport.on('ready', resolve));
  transport.connect();
  await ready;
  return { transport, connection: await server.connection(0) };
}

for (const library of ['irc-framework', 'matrix-org-irc'] as const) {
  t.test(`on ${library}, the profile follows the server's lines`, async (t) => {
    const { transport, connection } = await connected(t, library);
    t.match(transport.state.profile, {
      version: 'test-1.0',
      family: null,
      whox: true,
      listsNewChannels: true,
      channelLimit: 50,
      botMode: 'B',
      localChannelTypes: '',
      sasl: true,
    });
    const withdrawn = new Promise<void>((resolve) =>
      transport.on('message', (message) => {
        if (message.command === '005') resolve();
      }),
    );
    connection.send(':irc.test 005 DataBot -WHOX :are supported by this server');
    await withdrawn;
    t.equal(transport.state.profile.whox, false, 'WHOX withdrawn');
  });
}
