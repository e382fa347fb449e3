/**
 * Without WHOX (ngIRCd) WHO gives no account and no IP: each user is asked WHOIS once per connection, one at
 * a time, one per tick of `whois_per_second`, and the model learns from 330 (and 338/378, countries.ts).
 */
import t, { type Test } from 'tap';
import type { Harness } from '../../../testing/harness.js';
import { fakeNetwork, type FakeUser } from '../../../testing/fake-network.js';
import { startCollector } from './support.js';

/** A server without WHOX, whose profile reads both WHOIS replies that give an IP (338 and 378). */
const NO_WHOX = 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANTYPES=#';

const user = (nick: string): FakeUser => ({ nick, ident: nick, host: `${nick}.example`, server: 'hub.test.net' });

/** alice, bob, the bot and NickServ, on a server without WHOX. */
function startOn(t: Test, isupport: string, operator = true): Promise<Harness> {
  return startCollector(t, {
    network: fakeNetwork({ users: ['alice', 'bob', 'DataBot', 'NickServ'].map(user) }),
    isupport,
    operator,
  });
}

const whoisLines = (nick: string, extra: string[]) => [
  `:hub.test.net 311 DataBot ${nick} ${nick} ${nick}.example * :${nick}`,
  ...extra,
  `:hub.test.net 318 DataBot ${nick} :End of /WHOIS list.`,
];

/** The WHOIS lines the bot wrote to fill users in: of the user's own server (the services unit asks `WHOIS ChanServ`). */
const whoises = (bot: Harness): string[] => bot.irc.sentMatching(/^WHOIS \S+ \S+$/);

/** One tick of `whois_per_second` (1, the default), and what it started done. */
const tick = (bot: Harness): Promise<void> => bot.clock.advance(1000);

t.test(
  'without WHOX: users are asked one at a time, of their own server; 330 and 338 fill account and IP',
  async (t) => {
    const bot = await startOn(t, NO_WHOX);
    // alice's answer is given by hand below, once her question has waited a tick.
    bot.server
      .answer(/^WHOIS alice alice$/, [])
      .answerOnce(/^WHOIS bob bob$/, [':hub.test.net 401 DataBot bob :No such nick/channel']);
    await bot.synced();
    t.same(whoises(bot), [], 'nobody before the first tick');
    await tick(bot);
    await tick(bot);
    t.same(whoises(bot), ['WHOIS alice alice'], 'nothing more while a WHOIS is unanswered');
    bot.irc.receive(
      ...whoisLines('alice', [
        ':hub.test.net 330 DataBot alice AliceAcct :is logged in as',
        ':hub.test.net 338 DataBot alice 81.2.69.142 :actually using host',
      ]),
    );
    t.match(bot.host.model.users.get('alice'), { account: 'AliceAcct', ip: '81.2.69.142' });
    await tick(bot);
    t.same(whoises(bot), ['WHOIS alice alice', 'WHOIS bob bob']);
    await tick(bot);
    await tick(bot);
    t.same(whoises(bot), ['WHOIS alice alice', 'WHOIS bob bob'], 'a 401 ends the question too; everyone asked');
    t.notOk(
      bot.irc.sent.some((line) => /^WHOIS (DataBot|NickServ) /.test(line)),
      'neither the bot nor a service is asked',
    );

    bot.irc.receive(':alice!alice@alice.example AWAY :lunch');
    await tick(bot);
    t.equal(whoises(bot).length, 2, 'a user who changed is not asked again: once per connection');

    bot.irc.sent.length = 0;
    await bot.reconnect();
    await bot.synced();
    await tick(bot);
    t.same(whoises(bot), ['WHOIS alice alice'], 'a new connection asks again');
  },
);

t.test('a user who left before their turn is skipped', async (t) => {
  const bot = await startOn(t, NO_WHOX);
  await bot.synced();
  bot.irc.receive(':alice!alice@alice.example QUIT :Quit: bye');
  await tick(bot);
  t.same(whoises(bot), ['WHOIS bob bob']);
  t.match(bot.host.model.users.get('bob'), { ident: 'bob' }, 'and answered');
});

t.test('with WHOX nobody is asked; a non-operator is not asked again for an IP it cannot see', async (t) => {
  const whox = await startOn(t, `${NO_WHOX} WHOX`);
  await whox.synced();
  for (let ticks = 0; ticks < 3; ticks++) await tick(whox);
  t.same(whoises(whox), []);
  await whox.stop();

  const plain = await startOn(t, NO_WHOX, false);
  await plain.synced();
  // carol connects and joins the bot's channel, logged in (extended-join): what WHOIS would tell is known.
  plain.irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':carol!carol@carol.example JOIN #chat carol :Carol',
  );
  for (let ticks = 0; ticks < 4; ticks++) await tick(plain);
  t.same(whoises(plain), ['WHOIS alice alice', 'WHOIS bob bob'], 'carol, whose account is known, is not asked');
});

t.test('on ircd 2.11 nobody is asked: its WHOIS shows no account, nor an IP to an operator', async (t) => {
  for (const operator of [true, false]) {
    const bot = await startCollector(t, {
      network: fakeNetwork({ users: ['alice', 'bob', 'DataBot'].map(user) }),
      isupport: 'CASEMAPPING=ascii PREFIX=(ov)@+ CHANTYPES=#&!+ PENALTY',
      version: '2.11.2p3',
      cap: false,
      operator,
    });
    await bot.synced();
    bot.irc.receive(
      ':DataBot!~databot@bot.host JOIN :#chat',
      ':hub.test.net 353 DataBot = #chat :DataBot ',
      ':hub.test.net 366 DataBot #chat :End of NAMES list.',
      ':alice!~alice@127.0.0.10 JOIN :#chat',
      ':bob!~bob@127.0.0.11 JOIN :#chat',
    );
    for (let ticks = 0; ticks < 3; ticks++) await tick(bot);
    t.ok(bot.host.model.users.get('alice') && bot.host.model.users.get('bob'));
    t.same(whoises(bot), [], operator ? 'as an operator' : 'as a user');
    await bot.stop();
  }
});
