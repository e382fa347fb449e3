/**
 * The collector's events (`stats.events`): each line the live handlers read is told with its full and public
 * forms, taken before the model changes; channels formed and emptied, servers linked and split and new counts
 * come from the model's changes once the first sync is done.
 */
import t from 'tap';
import { definePlugin, type PluginDefinition } from '../../../lib/sdk.js';
import type { NetworkEvent } from '../../../plugins/stats/contract.js';
import stats from '../../../plugins/stats/index.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import { startHarness } from '../../../testing/harness.js';
import { joinAs } from './support.js';

/** Starts the collector with a plugin that records every event; an IRC operator unless `operator` is false. */
async function start(t: Parameters<typeof startHarness>[0], operator = true) {
  const events: NetworkEvent[] = [];
  const recorder = definePlugin<Record<string, never>>({
    name: 'recorder',
    description: 'Records the events',
    uses: ['stats.events'],
    configSchema: { type: 'object' },
    start({ services }) {
      return services.get('stats.events').subscribe((event) => events.push(event));
    },
  });
  const bot = await startHarness(t, {
    registry: [stats as PluginDefinition<never>, recorder as PluginDefinition<never>],
    plugins: { stats: {}, recorder: {} },
    isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst WHOX',
    network: fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] }),
    operator,
    version: 'InspIRCd-3',
  });
  await bot.synced();
  events.length = 0;
  return { ...bot, events };
}

const ofType = (events: NetworkEvent[], type: string) => events.filter((event) => event.type === type);

t.test('a public channel: each line in full and in public, who users are only in full', async (t) => {
  const { irc, events } = await start(t);
  joinAs(irc, '#room', 'DataBot @op');
  irc.receive(':carol!ca@home.example JOIN #room carolacct :Carol C');
  const [join] = ofType(events, 'join');
  t.same(join!.publicData, { channel: '#room', nick: 'carol' });
  t.match(join!.data, {
    channel: '#room',
    nick: 'carol',
    identity: { ident: 'ca', host: 'home.example', account: 'carolacct', realname: 'Carol C' },
  });
  t.equal(ofType(events, 'join').length, 1, "the bot's own join is not an event");

  irc.receive(':op!o@h TOPIC #room :new topic');
  t.same(ofType(events, 'topic')[0]!.publicData, { channel: '#room', topic: 'new topic', set_by: 'op' });

  irc.receive(':op!o@h MODE #room +ok carol sekrit');
  const [mode] = ofType(events, 'mode');
  t.same(mode!.data, { channel: '#room', by: 'op', change: '+ok', parameters: ['carol', 'sekrit'], modes: '+knt' });
  t.same(mode!.publicData, { channel: '#room', by: 'op', change: '+ok', parameters: ['carol'], modes: '+knt' });
  t.same(mode!.tokenData, {
    channel: '#room',
    by: 'op',
    change: '+ok',
    parameters: ['carol', 'sekrit'],
    modes: '+knt',
  });
  irc.receive(':op!o@h MODE #room +bl *!*@bad.host 20');
  const ban = ofType(events, 'mode')[1]!;
  t.same(ban.data?.parameters, ['*!*@bad.host', '20']);
  t.same(ban.tokenData?.parameters, ['20'], 'a mask says where users connect from: not without users approved');
  t.same(ban.publicData?.parameters, []);

  irc.receive(':carol!ca@home.example AWAY :gone to lunch');
  t.same(ofType(events, 'away')[0]!.publicData, { nick: 'carol', away: true });
  t.same(ofType(events, 'away')[0]!.data, { nick: 'carol', away: true, message: 'gone to lunch' });
  irc.receive(':carol!ca@home.example AWAY :gone to lunch');
  t.equal(ofType(events, 'away').length, 1, 'away-notify repeating an AWAY (as at a join) is no event');
  irc.receive(':carol!ca@home.example AWAY');
  t.same(ofType(events, 'away')[1]!.data, { nick: 'carol', away: false, message: null });
  irc.receive(':carol!ca@home.example AWAY :again');

  irc.receive(':carol!ca@home.example ACCOUNT *');
  const [account] = ofType(events, 'account');
  t.equal(account!.publicData, null, 'an account is never public');
  t.match(account!.data, { nick: 'carol', identity: { account: null } });

  irc.receive(':carol!ca@home.example NICK carla');
  t.same(ofType(events, 'nick')[0]!.publicData, { old_nick: 'carol', new_nick: 'carla' });

  irc.receive(':op!o@h KICK #room carla :behave');
  t.same(ofType(events, 'kick')[0]!.publicData, { channel: '#room', nick: 'carla', by: 'op', reason: 'behave' });
  irc.receive(':op!o@h PART #room :later');
  t.same(ofType(events, 'part')[0]!.publicData, { channel: '#room', nick: 'op', reason: 'later' });
  t.ok(
    events.every((event) => event.publicData === null || !JSON.stringify(event.publicData).includes('home.example')),
    'no host in any public form',
  );
});

t.test('a secret channel: nothing public, and a quit names only public channels', async (t) => {
  const { irc, events } = await start(t);
  joinAs(irc, '#room', 'DataBot');
  joinAs(irc, '#hush', 'DataBot', '+nst');
  irc.receive(':dave!d@h JOIN #hush', ':dave!d@h TOPIC #hush :quiet', ':dave!d@h MODE #hush +l 5');
  t.same(
    events.filter((event) => event.type !== 'channel_created').map((event) => [event.type, event.publicData]),
    [
      ['join', null],
      ['topic', null],
      ['mode', null],
    ],
  );
  irc.receive(':dave!d@h AWAY :afk', ':dave!d@h NICK davey');
  t.same(
    events.filter((event) => event.type === 'away' || event.type === 'nick').map((event) => event.publicData),
    [null, null],
    'a user seen only in a secret channel: nothing public of their away or nick',
  );
  irc.receive(':davey!d@h QUIT :bye');
  t.equal(ofType(events, 'quit')[0]!.publicData, null, 'a user seen only in a secret channel is not public');
  t.same(ofType(events, 'quit')[0]!.data?.channels, ['#hush']);
  t.equal(ofType(events, 'quit')[0]!.data?.nick, 'davey');

  irc.receive(':erin!e@h JOIN #hush', ':erin!e@h JOIN #room', ':erin!e@h QUIT :Ping timeout');
  const quit = ofType(events, 'quit')[1]!;
  t.same(
    quit.publicData,
    { nick: 'erin', reason: null, channels: ['#room'] },
    'an operator bot may be shown a reason the channels were not: never public',
  );
  t.same(quit.data?.channels, ['#hush', '#room']);
  t.equal(quit.data?.reason, 'Ping timeout');
  irc.receive(':fay!f@h JOIN #room', ':oper.test.net KILL fay :flooding');
  t.same(ofType(events, 'quit')[2]!.publicData, {
    nick: 'fay',
    reason: null,
    killed_by: 'oper.test.net',
    channels: ['#room'],
  });
  t.equal(ofType(events, 'quit')[2]!.data?.reason, 'flooding');
});

t.test('connects, exits and nick changes from server notices; a QUIT seen twice is one event', async (t) => {
  const { irc, events } = await start(t);
  joinAs(irc, '#room', 'DataBot');
  irc.receive(
    ':hub.test.net NOTICE DataBot :*** REMOTECONNECT: Client connecting at leaf.test.net: frank!fr@10.0.0.9 (10.0.0.9) [Frank F]',
  );
  const [connect] = ofType(events, 'connect');
  t.same(connect!.publicData, { nick: 'frank', server: 'leaf.test.net' });
  t.match(connect!.data, { identity: { ident: 'fr', real_host: '10.0.0.9', ip: '10.0.0.9', realname: 'Frank F' } });
  irc.receive(':hub.test.net NOTICE DataBot :*** REMOTENICK: User frank changed their nickname to frankie');
  t.same(ofType(events, 'nick')[0]!.publicData, { old_nick: 'frank', new_nick: 'frankie' });
  irc.receive(':frankie!fr@h JOIN #room');
  irc.receive(
    ':hub.test.net NOTICE DataBot :*** REMOTEQUIT: Client exiting on server leaf.test.net: frankie!fr@10.0.0.9 (10.0.0.9) [Quit: off]',
    ':frankie!fr@h QUIT :Quit: off',
  );
  const quits = ofType(events, 'quit');
  t.equal(quits.length, 1, 'one quit, from whichever line came first');
  t.same(quits[0]!.publicData, { nick: 'frankie', reason: null, channels: ['#room'] });
  t.equal(quits[0]!.data?.reason, 'Quit: off', "the notice's reason, for tokens");
});

t.test('channels formed and emptied, and counts, once the first sync is done', async (t) => {
  const { irc, events, server, host, clock, synced } = await start(t);
  joinAs(irc, '#room', 'DataBot');
  t.same(
    ofType(events, 'channel_created').map((event) => [event.data, event.publicData]),
    [
      [{ channel: '#room' }, null],
      [null, { channel: '#room' }],
    ],
    'a channel the bot joins is formed hidden; once its modes say it is public, public readers see it formed',
  );
  events.length = 0;
  irc.receive(':hub.test.net 324 DataBot #room +nt');
  t.same(
    events.map((event) => [event.type, event.data, event.publicData]),
    [],
    'known public already: nothing new',
  );
  // LIST finds a channel the bot is not in: formed; then LIST no longer shows it: emptied.
  server.network!.channels.push({ name: '#fresh', users: 1, topic: '', modes: '+nt' });
  await clock.advance(60_000);
  await synced();
  const created = ofType(events, 'channel_created').find((event) => event.data?.channel === '#fresh');
  t.same(created?.publicData, { channel: '#fresh' }, 'a public channel LIST shows is public at once');
  server.network!.channels.splice(
    server.network!.channels.findIndex((channel) => channel.name === '#fresh'),
    1,
  );
  await clock.advance(60_000);
  await synced();
  t.same(ofType(events, 'channel_emptied').at(-1)?.publicData, { channel: '#fresh' });
  const counts = ofType(events, 'counts');
  t.ok(counts.length > 0, 'counts when LUSERS changed');
  t.same(counts.at(-1)!.publicData, {
    users: host.model.stats.users,
    channels: host.model.stats.channels,
    operators: host.model.stats.operators,
    servers: host.model.stats.servers,
    max_users: host.model.stats.maxUsers,
  });
});

t.test('after an outage: what changed meanwhile, once the next sync is done, and nothing else', async (t) => {
  const { events, server, reconnect, synced } = await start(t);
  server.network!.channels.push({ name: '#stays', users: 2, modes: '+nt' }, { name: '#goes', users: 2, modes: '+nt' });
  await reconnect();
  await synced();
  events.length = 0;
  const channels = server.network!.channels;
  channels.splice(
    channels.findIndex((channel) => channel.name === '#goes'),
    1,
  );
  channels.push({ name: '#came', users: 1, modes: '+nt' }, { name: '#hid', users: 1, modes: '+nst' });
  await reconnect('the link dropped');
  await synced();
  t.same(
    events
      .filter((event) => event.type.startsWith('channel_'))
      .map((event) => [event.type, event.data, event.publicData])
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    [
      ['channel_created', { channel: '#came' }, { channel: '#came' }],
      ['channel_created', { channel: '#hid' }, null],
      ['channel_emptied', { channel: '#goes' }, { channel: '#goes' }],
    ],
    'the channel gone, and the two new ones; #stays is no news',
  );
  t.same(
    events.filter((event) => event.type === 'counts').map((event) => event.publicData?.channels),
    [3],
    'the counts of the sync after the outage, once it is done (LUSERS came while the model was not ready)',
  );
});

t.test('a bot that is no operator sees the reason everyone sees: public', async (t) => {
  const { irc, events } = await start(t, false);
  joinAs(irc, '#room', 'DataBot');
  irc.receive(':gil!g@h JOIN #room', ':gil!g@h QUIT :Quit: see you');
  t.same(ofType(events, 'quit')[0]!.publicData, { nick: 'gil', reason: 'Quit: see you', channels: ['#room'] });
});
