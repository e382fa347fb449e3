/**
 * Live tracking: the collector in the real host follows what the fake connection's lines say (joins,
 * modes, nicks, topics...) into the model.
 */
import t from 'tap';
import type { Channel } from '../../../lib/model/channels.js';
import type { NetworkModel } from '../../../lib/model/network.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import type { FakeTransport } from '../../../testing/fake-irc.js';
import { startHarness, type HarnessOptions } from '../../../testing/harness.js';

/** The collector alone, on a registered fake connection that hears every line. */
const collector: HarnessOptions = {
  registry: [stats as PluginDefinition<never>],
  plugins: { stats: {} },
  isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst WHOX',
};

/** A channel's members as folded nick → prefixes. */
function prefixesOf(model: NetworkModel, channel: Channel): Record<string, string> {
  return Object.fromEntries([...channel.members].map(([user, prefix]) => [model.fold(user.nick), prefix]));
}

/** The bot joins `channel`, NAMES lists `names`, MODE answers `modes`. */
function joinAs(irc: FakeTransport, channel: string, names: string, modes = '+nt') {
  irc.receive(
    `:DataBot!databot@bot.host JOIN ${channel} * :Data Bot`,
    `:hub.test.net 353 DataBot = ${channel} :${names}`,
    `:hub.test.net 366 DataBot ${channel} :End of /NAMES list.`,
  );
  irc.receive(`:hub.test.net 324 DataBot ${channel} ${modes}`, `:hub.test.net 329 DataBot ${channel} 1700000000`);
}

t.test('joining: members with every prefix (multi-prefix, userhost-in-names), modes, creation time', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  irc.receive(':DataBot!databot@bot.host JOIN #new * :Data Bot');
  t.equal(model.channels.get('#new')?.hidden, true, 'a channel LIST never showed is hidden until its modes are known');
  t.ok(irc.sent.includes('MODE #new'), 'the bot asks the modes of a channel it joins');
  irc.receive(
    ':hub.test.net 353 DataBot = #new :@+alice!al@host.a +bob!bo@host.b DataBot!databot@bot.host',
    ':hub.test.net 366 DataBot #new :End of /NAMES list.',
    ':hub.test.net 324 DataBot #new +ntk secretkey',
    ':hub.test.net 329 DataBot #new 1700000000',
  );
  const channel = model.channels.get('#NEW')!;
  t.match(channel, { joined: true, hidden: false, users: 3, modes: '+knt', createdAt: '2023-11-14T22:13:20.000Z' });
  t.notMatch(JSON.stringify(channel), /secretkey/, 'the key is never kept');
  t.same(prefixesOf(model, channel), { alice: '@+', bob: '+', databot: '' });
  t.match(model.users.get('alice'), { ident: 'al', host: 'host.a' }, 'userhost-in-names fills ident and host');
});

t.test('+s and +p hide a channel; removing them shows it again', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#room', 'DataBot @op');
  t.equal(model.channels.get('#room')?.hidden, false);
  irc.receive(':op!o@h MODE #room +s');
  t.match(model.channels.get('#room'), { hidden: true, modes: '+nst' });
  irc.receive(':op!o@h MODE #room -s+p');
  t.match(model.channels.get('#room'), { hidden: true, modes: '+npt' });
  irc.receive(':op!o@h MODE #room -p+l 10');
  t.match(model.channels.get('#room'), { hidden: false, modes: '+lnt' });
  joinAs(irc, '#secret', 'DataBot', '+nst');
  t.equal(model.channels.get('#secret')?.hidden, true, 'a secret channel the bot is in stays hidden');
});

t.test('prefixes change with MODE, including several in one line and list modes in between', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#room', 'DataBot alice bob');
  irc.receive(':op!o@h MODE #room +ovb alice bob *!*@bad.host');
  t.same(prefixesOf(model, model.channels.get('#room')!), { databot: '', alice: '@', bob: '+' });
  irc.receive(':op!o@h MODE #room +v alice');
  t.equal(model.memberPrefix('#room', 'alice'), '@+', 'prefixes are kept highest first');
  irc.receive(':op!o@h MODE #room -o+k alice key');
  t.equal(model.memberPrefix('#room', 'alice'), '+');
  t.equal(model.channels.get('#room')!.modes, '+knt');
});

t.test('join, part, kick, quit, nick change of others', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#room', 'DataBot alice');
  irc.receive(':carol!c@carol.host JOIN #room carolacct :Carol C');
  t.equal(model.channels.get('#room')!.users, 3);
  t.match(model.users.get('carol'), { account: 'carolacct', realname: 'Carol C', ident: 'c', host: 'carol.host' });
  irc.receive(':carol!c@carol.host NICK :Carol_');
  t.equal(model.memberPrefix('#room', 'carol_'), '', 'the member is found by the new nick');
  t.same(
    prefixesOf(model, model.channels.get('#room')!),
    { databot: '', alice: '', carol_: '' },
    'the same three members, carol under her new nick',
  );
  irc.receive(':Carol_!c@carol.host PART #room :bye');
  t.equal(model.channels.get('#room')!.users, 2);
  t.ok(model.users.get('carol_'), 'a user who parts is kept until the next sync decides');
  irc.receive(':op!o@h KICK #room alice :out');
  t.equal(model.channels.get('#room')!.users, 1);
  irc.receive(':dave!d@h JOIN #room * :Dave', ':dave!d@h QUIT :Quit: gone');
  t.notOk(model.users.get('dave'), 'a quit user is gone');
  t.equal(model.channels.get('#room')!.users, 1);
  t.same(prefixesOf(model, model.channels.get('#room')!), { databot: '' }, 'only the bot is left');
});

t.test('topic, away, account and host changes', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#room', 'DataBot alice');
  const received = new Date().toISOString();
  irc.receive('@time=2026-11-21T10:00:00.000Z :alice!a@h TOPIC #room :new topic');
  t.match(model.channels.get('#room'), { topic: 'new topic', topicSetBy: 'alice' });
  // The server's time where the connection has server-time (irc-framework asks for it), else when it came.
  const { topicSetAt } = model.channels.get('#room')!;
  if (irc.state.caps.has('server-time')) t.equal(topicSetAt, '2026-11-21T10:00:00.000Z');
  else t.ok(topicSetAt! >= received && topicSetAt! <= new Date().toISOString(), 'the time it was received');
  irc.receive(':hub.test.net 332 DataBot #room :from numeric', ':hub.test.net 333 DataBot #room bob!b@h 1700000000');
  t.match(model.channels.get('#room'), { topic: 'from numeric', topicSetBy: 'bob' });
  irc.receive(':alice!a@h AWAY :lunch');
  t.equal(model.users.get('alice')!.away, true);
  irc.receive(':alice!a@h AWAY');
  t.equal(model.users.get('alice')!.away, false);
  irc.receive(':alice!a@h ACCOUNT alice');
  t.equal(model.users.get('alice')!.account, 'alice');
  irc.receive(':alice!a@h ACCOUNT *');
  t.equal(model.users.get('alice')!.account, null);
  irc.receive(':alice!a@h CHGHOST newident new.host');
  t.match(model.users.get('alice'), { ident: 'newident', host: 'new.host' });
});

t.test('when the bot leaves, the channel keeps no members', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#a', 'DataBot alice');
  joinAs(irc, '#b', 'DataBot bob');
  irc.receive(':DataBot!databot@bot.host PART #a');
  t.match(model.channels.get('#a'), { joined: false, users: 1 }, 'alice is still there');
  t.equal(model.channels.get('#a')!.members.size, 0);
  t.equal(model.users.get('alice')!.channels.size, 0);
  t.equal(model.users.get('databot')!.channels.size, 1, 'the bot is still in #b');
  irc.receive(':op!o@h KICK #b DataBot :bye');
  t.equal(model.channels.get('#b')!.members.size, 0);
  t.equal(model.channels.get('#b')!.joined, false);
});

t.test("the bot is recognised under the connection's casemapping, also before the model has it", async (t) => {
  const { host, irc } = await startHarness(t, { ...collector, config: { irc: { nick: 'Bot[1]' } }, register: false });
  const { model } = host;
  // Registered, with the network's casemapping; the end of the MOTD, which opens the model, is still to come.
  irc.receive(
    ':irc.test 001 Bot[1] :Welcome',
    ':irc.test 005 Bot[1] CASEMAPPING=ascii PREFIX=(ov)@+ CHANMODES=b,k,l,imnpst :are supported by this server',
  );
  t.equal(model.casemapping, 'rfc1459', 'the model still has the default casemapping');
  irc.receive(':Bot{1}!x@other.host JOIN #other');
  t.notOk(model.channels.get('#other')?.joined, 'under ascii, Bot{1} is someone else');
  t.notOk(irc.sent.includes('MODE #other'));
  irc.receive(':BOT[1]!bot@bot.host JOIN #mine');
  t.equal(model.channels.get('#mine')?.joined, true, 'under ascii, BOT[1] is the bot');

  irc.receive(':irc.test 376 Bot[1] :End of MOTD');
  t.equal(model.casemapping, 'ascii', "the model opened under the connection's casemapping");
  irc.receive(':Bot[1]!bot@bot.host NICK :Renamed');
  irc.receive(':renamed!bot@bot.host JOIN #after');
  t.equal(model.channels.get('#after')?.joined, true, 'the new nick is the bot after its own NICK');
  irc.receive(':Bot[1]!x@other.host JOIN #stale');
  t.notOk(model.channels.get('#stale')?.joined, 'the old nick is no longer the bot');
});

t.test('a user joining again as the model knows them changes nothing; a new host does', async (t) => {
  const { irc, host } = await startHarness(t, collector);
  const { model } = host;
  joinAs(irc, '#a', 'DataBot');
  joinAs(irc, '#b', 'DataBot');
  const changes: string[] = [];
  model.on('change', (change) => changes.push(`${change.slice} ${change.kind} ${change.name ?? ''}`));
  irc.receive(':carol!c@carol.host JOIN #a * :Carol C', ':carol!c@carol.host PART #a');
  irc.receive(':carol!c@carol.host JOIN #b * :Carol C');
  t.same(changes, ['users upsert carol', 'channels join #a', 'channels part #a', 'channels join #b']);
  changes.length = 0;
  irc.receive(':dave!d@dave.host JOIN #a', ':dave!d@dave.host JOIN #b');
  t.same(changes, ['users upsert dave', 'channels join #a', 'channels join #b'], 'without extended-join too');
  changes.length = 0;
  irc.receive(':carol!c@new.host JOIN #a * :Carol C', ':carol!c@new.host PART #b :bye', ':erin!e@h PART #b');
  t.same(changes, ['users upsert carol', 'channels join #a', 'channels part #b'], 'a PART of a stranger is none');
  t.equal(model.users.get('carol')!.host, 'new.host');
});
