/**
 * Without WHOX (ngircd) WHO gives no account and no IP: each user is asked WHOIS once per
 * connection, one at a time, and the model learns from 330 (and 338/378, countries.ts).
 */
import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import { noteWhoisHost } from '../../../plugins/stats/countries.js';
import { noteWhoisAccount, WhoisFiller } from '../../../plugins/stats/whois-fill.js';
import { FakeTransport } from '../../support/fake-irc.js';

function setup(isupport: string, operator = true) {
  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  const model = new NetworkModel();
  irc.on('message', (message) => {
    noteWhoisHost(message, model);
    noteWhoisAccount(message, model);
  });
  irc.connect();
  irc.register('DataBot', isupport);
  if (operator) irc.receive(':hub.test.net 381 DataBot :You are now an IRC operator');
  model.connectionOpened(irc.state.casemapping);
  const filler = new WhoisFiller({ irc, model, services: ['NickServ'] });
  for (const nick of ['alice', 'bob', 'DataBot', 'NickServ']) {
    model.upsertUser(nick, { host: `${nick}.example` });
    filler.considerUser(model.users.get(nick)!);
  }
  return { irc, model, filler };
}

const whoisLines = (nick: string, extra: string[]) => [
  `:hub.test.net 311 DataBot ${nick} ${nick} ${nick}.example * :${nick}`,
  ...extra,
  `:hub.test.net 318 DataBot ${nick} :End of /WHOIS list.`,
];

t.test('ngircd: users are asked one at a time, of their own server; 330 and 338 fill account and IP', async (t) => {
  const { irc, model, filler } = setup('CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANTYPES=#');
  t.equal(filler.waiting, 2, 'neither the bot nor a service is asked');
  const first = filler.tick();
  t.equal(await filler.tick(), null, 'nothing while a WHOIS is unanswered');
  t.same(
    irc.sent.filter((line) => line.startsWith('WHOIS')),
    ['WHOIS alice alice'],
  );
  irc.receive(
    ...whoisLines('alice', [
      ':hub.test.net 330 DataBot alice AliceAcct :is logged in as',
      ':hub.test.net 338 DataBot alice 81.2.69.142 :actually using host',
    ]),
  );
  t.equal(await first, 'alice');
  t.match(model.users.get('alice'), { account: 'AliceAcct', ip: '81.2.69.142' });
  const second = filler.tick();
  irc.receive(':hub.test.net 401 DataBot bob :No such nick/channel');
  t.equal(await second, 'bob', 'a 401 ends the question too');
  t.equal(await filler.tick(), null, 'everyone asked');
  filler.considerUser(model.users.get('alice')!);
  t.equal(filler.waiting, 0, 'once per connection');
  filler.reset();
  filler.considerUser(model.users.get('bob')!);
  t.equal(filler.waiting, 1, 'a new connection asks again');
});

t.test('a user who left before their turn is skipped', async (t) => {
  const { irc, model, filler } = setup('CASEMAPPING=rfc1459 CHANTYPES=#');
  model.removeUser('alice');
  const next = filler.tick();
  t.same(
    irc.sent.filter((line) => line.startsWith('WHOIS')),
    ['WHOIS bob bob'],
  );
  irc.receive(...whoisLines('bob', []));
  t.equal(await next, 'bob');
});

t.test('with WHOX nobody is asked; a non-operator is not asked again for an IP it cannot see', async (t) => {
  const whox = setup('CASEMAPPING=rfc1459 WHOX');
  t.equal(whox.filler.waiting, 0);
  t.equal(await whox.filler.tick(), null);
  t.notOk(whox.irc.sent.some((line) => line.startsWith('WHOIS')));

  const plain = setup('CASEMAPPING=rfc1459', false);
  plain.model.upsertUser('carol', { account: 'carol' });
  plain.filler.considerUser(plain.model.users.get('carol')!);
  t.equal(plain.filler.waiting, 2, 'carol, whose account is known, is not queued');
});
