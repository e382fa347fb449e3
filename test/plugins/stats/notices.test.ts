/**
 * An operator's client notices: how they are read, and the collector in the real host following them
 * into the model and asking for them when it is an operator on InspIRCd.
 */
import IrcFramework from 'irc-framework';
import t from 'tap';
import { toIrcMessage } from '../../../lib/irc/irc-framework.js';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { buildServerProfile } from '../../../lib/irc/server-profile.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import { parseClientNotice as parseInWording } from '../../../plugins/stats/notices.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';

/** The lines InspIRCd 3.15 sent an operator with snomasks +cCqQjJ on the test network (verbatim). */
const SEEN = {
  connect:
    ':hub.test.net NOTICE oper1 :*** CONNECT: Client connecting on port 16667 (class main): hubuser!tester@127.0.0.1 (127.0.0.1) [Hub User Name]',
  remoteConnect:
    ':hub.test.net NOTICE oper1 :*** REMOTECONNECT: Client connecting at leaf.test.net: leafuser!tester@127.0.0.1 (127.0.0.1) [Leaf :User]',
  quit: ':hub.test.net NOTICE oper1 :*** QUIT: Client exiting: hubuser2!tester@127.0.0.1 (127.0.0.1) [Quit: bye now]',
  remoteQuit:
    ':hub.test.net NOTICE oper1 :*** REMOTEQUIT: Client exiting on server leaf.test.net: leafuser2!tester@127.0.0.1 (127.0.0.1) [Quit: leaving]',
  // Snomasks +jJ, with the chancreate module loaded.
  channel: ':hub.test.net NOTICE watcher :*** CHANCREATE: Channel #formedonhub created by hubu!hubu@127.0.0.1',
  remoteChannel:
    ':hub.test.net NOTICE watcher :*** REMOTECHANCREATE: From leaf.test.net: Channel #formedonleaf created by leafu!leafu@127.0.0.1',
};

/** The server profile of a server whose RPL_MYINFO names `version`. */
function profileOf(version: string) {
  return buildServerProfile({ version, isupport: new Map(), caps: new Set(), offeredCaps: new Set() });
}

/** The notices' wording the profile of InspIRCd 3 gives. */
const INSPIRCD_WORDING = profileOf('InspIRCd-3').serverNotices!;

/** A client notice in InspIRCd's wording. */
const parseClientNotice = (message: IrcMessage) => parseInWording(message, INSPIRCD_WORDING);

/** A server line as the connection hands it on. */
function parse(line: string): IrcMessage {
  return toIrcMessage(IrcFramework.ircLineParser(line));
}

/**
 * The collector as oper1 on a fake connection, `oper` (OPER with these credentials after registration) or
 * not; the test feeds the registration ({@link registerOnInspircd}).
 */
function asOper1(oper?: { name: string; password: string }): HarnessOptions {
  return {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: {} },
    config: { irc: { nick: 'oper1', ...(oper ? { oper } : {}) } },
    register: false,
  };
}

/** Registration on an InspIRCd 3 server, to the end of the MOTD. */
function registerOnInspircd(bot: Harness): void {
  bot.irc.receive(
    ':hub.test.net 001 oper1 :Welcome',
    ':hub.test.net 004 oper1 hub.test.net InspIRCd-3 iosw biklmnopstv :bklov',
    ':hub.test.net 005 oper1 CASEMAPPING=rfc1459 :are supported by this server',
    ':hub.test.net 376 oper1 :End of MOTD',
  );
}

t.test('InspIRCd notices of a channel formed, on this server or another, are read', async (t) => {
  t.same(parseClientNotice(parse(SEEN.channel)), { kind: 'channel', name: '#formedonhub' });
  t.same(parseClientNotice(parse(SEEN.remoteChannel)), { kind: 'channel', name: '#formedonleaf' });
  t.equal(
    parseClientNotice(parse(':mallory!m@evil NOTICE oper1 :*** CHANCREATE: Channel #fake created by x!y@z')),
    null,
    'not from a server',
  );
});

t.test('InspIRCd client notices are read; anything else is not', async (t) => {
  t.same(parseClientNotice(parse(SEEN.connect)), {
    kind: 'connect',
    nick: 'hubuser',
    ident: 'tester',
    host: '127.0.0.1',
    ip: '127.0.0.1',
    realname: 'Hub User Name',
    server: 'hub.test.net',
  });
  t.match(parseClientNotice(parse(SEEN.remoteConnect)), {
    nick: 'leafuser',
    realname: 'Leaf :User',
    server: 'leaf.test.net',
  });
  t.same(parseClientNotice(parse(SEEN.quit)), { kind: 'exit', nick: 'hubuser2', reason: 'Quit: bye now' });
  t.same(parseClientNotice(parse(SEEN.remoteQuit)), { kind: 'exit', nick: 'leafuser2', reason: 'Quit: leaving' });
  t.equal(
    parseClientNotice(parse(':mallory!m@evil NOTICE oper1 :*** QUIT: Client exiting: alice!a@h (1.2.3.4) [x]')),
    null,
    'a user cannot forge one',
  );
  t.equal(parseClientNotice(parse(':hub.test.net NOTICE oper1 :*** LINK: Server leaf.test.net split')), null);
});

t.test('the model follows connects and exits anywhere on the network', async (t) => {
  const bot = await startHarness(t, asOper1());
  registerOnInspircd(bot);
  const { irc } = bot;
  const { model } = bot.host;
  irc.receive(SEEN.remoteConnect);
  t.match(model.users.get('leafuser'), {
    ident: 'tester',
    ip: '127.0.0.1',
    realHost: '127.0.0.1',
    host: null,
    realname: 'Leaf :User',
    server: 'leaf.test.net',
  });
  irc.receive(SEEN.remoteQuit.replace('leafuser2', 'leafuser'));
  t.notOk(model.users.get('leafuser'), 'gone at once');
  irc.receive(
    ':mallory!m@evil NOTICE oper1 :*** REMOTECONNECT: Client connecting at leaf.test.net: fake!f@h (1.2.3.4) [x]',
  );
  t.notOk(model.users.get('fake'), 'not from a user');
});

t.test('with the seenicks module, nick changes anywhere on the network are followed', async (t) => {
  const bot = await startHarness(t, asOper1());
  registerOnInspircd(bot);
  const { irc } = bot;
  const { model } = bot.host;
  const user = model.upsertUser('farnick', { server: 'leaf.test.net' });
  const local = ':hub.test.net NOTICE oper1 :*** NICK: User farnick changed their nickname to nearnick';
  t.same(parseClientNotice(parse(local)), { kind: 'nick', from: 'farnick', to: 'nearnick' });
  irc.receive(local);
  t.equal(model.users.get('nearnick'), user, 'the same user, under the new nick');
  t.notOk(model.users.get('farnick'));
  irc.receive(':hub.test.net NOTICE oper1 :*** REMOTENICK: User nearnick changed their nickname to thirdnick');
  t.equal(model.users.get('thirdnick'), user, 'a remote one too');
  irc.receive(
    ':hub.test.net NOTICE oper1 :*** NICK: User thirdnick!f@far.example (192.0.2.7) changed their nickname to fourth',
  );
  t.equal(model.users.get('fourth'), user, 'in the words of InspIRCd 4.7 and later, with the mask and the IP');
  const before = [...model.users.all()].map((known) => known.nick);
  const garbled = ':hub.test.net NOTICE oper1 :*** NICK: changed their nickname';
  t.equal(parseClientNotice(parse(garbled)), null);
  irc.receive(garbled);
  t.same(
    [...model.users.all()].map((known) => known.nick),
    before,
    'a notice that names no change changes nobody',
  );
});

t.test('a connect under a nick the model still has is a new person', async (t) => {
  const bot = await startHarness(t, asOper1());
  registerOnInspircd(bot);
  const { irc } = bot;
  const { model } = bot.host;
  const before = model.upsertUser('hubuser', { ident: 'old', host: 'old.host', ip: '10.0.0.1' });
  before.client = 'irssi';
  irc.receive(SEEN.connect);
  const after = model.users.get('hubuser')!;
  t.not(after, before, 'a new user');
  t.equal(after.client, null, 'with nothing of the previous holder');
  t.equal(after.ip, '127.0.0.1');
});

t.test('an operator on InspIRCd asks for client and link notices; elsewhere nothing is asked', async (t) => {
  t.equal(profileOf('InspIRCd-3').serverNotices?.modes, '+cCqQnNlLjJ');
  t.equal(profileOf('InspIRCd-4').serverNotices?.modes, '+cCqQnNlLjJ');
  t.equal(profileOf('ircd-hybrid-8.2.43').serverNotices, null, 'letters of other servers are not guessed');
  t.equal(profileOf('InspIRCd-2.0').serverNotices, null, 'nor those of an older InspIRCd');
  const user = await startHarness(t, asOper1());
  registerOnInspircd(user);
  t.notOk(
    user.irc.sent.some((line) => line.startsWith('MODE')),
    'not an operator: nothing',
  );

  const oper = await startHarness(t, asOper1({ name: 'oper1', password: 'oper-password' }));
  registerOnInspircd(oper);
  t.notOk(
    oper.irc.sent.some((line) => line.startsWith('MODE')),
    'nothing asked before the OPER is answered',
  );
  oper.irc.receive(':hub.test.net 381 oper1 :You are now a NetAdmin');
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(oper.irc.sent.includes('MODE oper1 +s +cCqQnNlLjJ'));

  const elsewhere = await startHarness(t, asOper1({ name: 'oper1', password: 'oper-password' }));
  elsewhere.irc.receive(
    ':hub.test.net 001 oper1 :Welcome',
    ':hub.test.net 004 oper1 hub.test.net ircd-hybrid-1:8.2.43+dfsg.1-1 BDFGHXRSWZacefgijklnopqrswyz CIKLMNOQRSTVZbcehiklmnoprstvz Ibehklov',
    ':hub.test.net 005 oper1 CASEMAPPING=ascii CHANTYPES=# WHOX :are supported by this server',
    ':hub.test.net 376 oper1 :End of /MOTD command.',
    ':hub.test.net 381 oper1 :You are now an IRC operator',
  );
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(
    elsewhere.irc.sent.some((line) => line.startsWith('MODE oper1 +s')),
    'an operator on a server whose notices the profile does not know asks for none',
  );
  elsewhere.irc.receive(SEEN.connect);
  t.notOk(elsewhere.host.model.users.get('hubuser'), "nor reads a notice in another server's words");
});
