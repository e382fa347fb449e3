import t from 'tap';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { NetworkModel } from '../../../lib/model/network.js';
import { noticeModes, parseClientNotice, requestNotices, trackClientNotice } from '../../../plugins/stats/notices.js';
import { FakeTransport } from '../../support/fake-irc.js';

/** The lines InspIRCd 3.15 sent an operator with snomasks +cCqQ on the test network (verbatim). */
const SEEN = {
  connect:
    ':hub.test.net NOTICE oper1 :*** CONNECT: Client connecting on port 16667 (class main): hubuser!tester@127.0.0.1 (127.0.0.1) [Hub User Name]',
  remoteConnect:
    ':hub.test.net NOTICE oper1 :*** REMOTECONNECT: Client connecting at leaf.test.net: leafuser!tester@127.0.0.1 (127.0.0.1) [Leaf :User]',
  quit: ':hub.test.net NOTICE oper1 :*** QUIT: Client exiting: hubuser2!tester@127.0.0.1 (127.0.0.1) [Quit: bye now]',
  remoteQuit:
    ':hub.test.net NOTICE oper1 :*** REMOTEQUIT: Client exiting on server leaf.test.net: leafuser2!tester@127.0.0.1 (127.0.0.1) [Quit: leaving]',
};

function setup() {
  const irc = new FakeTransport();
  const model = new NetworkModel();
  const received: IrcMessage[] = [];
  irc.on('message', (message) => received.push(message));
  irc.connect();
  irc.register('oper1', 'CASEMAPPING=rfc1459');
  model.connectionOpened('rfc1459');
  const parse = (line: string): IrcMessage => {
    irc.receive(line);
    return received.at(-1)!;
  };
  return { irc, model, parse };
}

t.test('InspIRCd client notices are read; anything else is not', async (t) => {
  const { parse } = setup();
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
  t.same(parseClientNotice(parse(SEEN.quit)), { kind: 'exit', nick: 'hubuser2' });
  t.same(parseClientNotice(parse(SEEN.remoteQuit)), { kind: 'exit', nick: 'leafuser2' });
  t.equal(
    parseClientNotice(parse(':mallory!m@evil NOTICE oper1 :*** QUIT: Client exiting: alice!a@h (1.2.3.4) [x]')),
    null,
    'a user cannot forge one',
  );
  t.equal(parseClientNotice(parse(':hub.test.net NOTICE oper1 :*** LINK: Server leaf.test.net split')), null);
});

t.test('the model follows connects and exits anywhere on the network', async (t) => {
  const { model, parse } = setup();
  t.ok(trackClientNotice(parse(SEEN.remoteConnect), model));
  t.match(model.users.get('leafuser'), {
    ident: 'tester',
    ip: '127.0.0.1',
    realHost: '127.0.0.1',
    host: null,
    realname: 'Leaf :User',
    server: 'leaf.test.net',
  });
  t.ok(trackClientNotice(parse(SEEN.remoteQuit.replace('leafuser2', 'leafuser')), model));
  t.notOk(model.users.get('leafuser'), 'gone at once');
});

t.test('with the seenicks module, nick changes anywhere on the network are followed', async (t) => {
  const { model, parse } = setup();
  const user = model.upsertUser('farnick', { server: 'leaf.test.net' });
  const local = parse(':hub.test.net NOTICE oper1 :*** NICK: User farnick changed their nickname to nearnick');
  t.same(parseClientNotice(local), { kind: 'nick', from: 'farnick', to: 'nearnick' });
  t.ok(trackClientNotice(local, model));
  t.equal(model.users.get('nearnick'), user, 'the same user, under the new nick');
  t.notOk(model.users.get('farnick'));
  trackClientNotice(
    parse(':hub.test.net NOTICE oper1 :*** REMOTENICK: User nearnick changed their nickname to thirdnick'),
    model,
  );
  t.equal(model.users.get('thirdnick'), user, 'a remote one too');
  t.notOk(trackClientNotice(parse(':hub.test.net NOTICE oper1 :*** NICK: changed their nickname'), model));
});

t.test('a connect under a nick the model still has is a new person', async (t) => {
  const { model, parse } = setup();
  const before = model.upsertUser('hubuser', { ident: 'old', host: 'old.host', ip: '10.0.0.1' });
  before.client = 'irssi';
  trackClientNotice(parse(SEEN.connect), model);
  const after = model.users.get('hubuser')!;
  t.not(after, before, 'a new user');
  t.equal(after.client, null, 'with nothing of the previous holder');
  t.equal(after.ip, '127.0.0.1');
});

t.test('an operator on InspIRCd asks for client and link notices; elsewhere nothing is asked', async (t) => {
  t.equal(noticeModes('InspIRCd-3'), '+cCqQnNlL');
  t.equal(noticeModes('hybrid-8.2.43'), null, 'letters of other servers are not guessed');
  const { irc } = setup();
  irc.receive(':hub.test.net 004 oper1 hub.test.net InspIRCd-3 iosw biklmnopstv :bklov');
  requestNotices(irc);
  t.notOk(
    irc.sent.some((line) => line.startsWith('MODE')),
    'not an operator: nothing',
  );
  irc.receive(':hub.test.net 381 oper1 :You are now a NetAdmin');
  requestNotices(irc);
  t.ok(irc.sent.includes('MODE oper1 +s +cCqQnNlL'));
});
