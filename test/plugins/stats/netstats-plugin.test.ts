/** The collector's network statistics inside the real host, with a fake IRC connection and a real store. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import type { ChannelRecordsSlice } from '../../../plugins/stats/model/channel-records.js';
import { DAY_MS, type HistorySlice } from '../../../plugins/stats/model/history.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import type { Harness } from '../../../testing/harness.js';
import { startCollector } from './support.js';

/** The bot joins #chat, where NAMES lists `names`. */
function joinChat(bot: Harness, names: string): void {
  bot.irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    `:hub.test.net 353 DataBot = #chat :${names}`,
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':hub.test.net 324 DataBot #chat +nt',
  );
}

t.test('a time zone the runtime does not know stops the start, naming the key', async (t) => {
  await t.rejects(startCollector(t, { stats: { time_zone: 'Mars/Olympus' }, register: false }), {
    message: /config\.plugins\.stats\.time_zone: "Mars\/Olympus" is not a known IANA time zone/,
  });
});

t.test("today's counts are written at stop and come back at the next start", async (t) => {
  // A long save interval: only the stop writes the counts.
  const first = await startCollector(t, {
    stats: { save_seconds: 3600, version_requests_per_second: 0 },
    store: 'files',
    register: false,
  });
  joinChat(first, 'DataBot alice bob');
  first.irc.receive(
    ':alice!a@a.host PRIVMSG #chat :one',
    ':alice!a@a.host PRIVMSG #chat :two',
    ':bob!b@b.host PRIVMSG #chat :\x01ACTION three\x01',
  );
  const activity = first.slice<ActivitySlice>('activity');
  t.same(activity.topNicks(activity.day(new Date())!, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
  ]);
  await first.stop();
  const stored = JSON.parse(readFileSync(path.join(first.storeDir!, 'store.json'), 'utf8')) as {
    slices: { activity: { days: { nicks: { nick: string; lines: number }[] }[] } };
  };
  t.same(
    stored.slices.activity.days.at(-1)!.nicks.map(({ nick, lines }) => [nick, lines]),
    [
      ['alice', 2],
      ['bob', 1],
    ],
  );

  const second = await startCollector(t, {
    stats: { version_requests_per_second: 0 },
    storeDir: first.storeDir!,
    register: false,
  });
  const again = second.slice<ActivitySlice>('activity');
  t.same(again.topNicks(again.day(new Date())!, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
  ]);
  t.equal(again.channelOn(again.day(new Date())!, '#chat')!.peakUsers, 3);
});

t.test(
  "every channel's record: from joins and LIST counts, kept in the store, old ones of gone channels dropped",
  async (t) => {
    const network = fakeNetwork({ users: [{ nick: 'DataBot', server: 'hub.test.net' }] });
    const first = await startCollector(t, {
      stats: { save_seconds: 3600, version_requests_per_second: 0 },
      store: 'files',
      network,
    });
    await first.synced();
    const { model } = first.host;
    const started = Date.now();
    joinChat(first, 'DataBot alice bob');
    first.irc.receive(':carol!c@c.host JOIN #chat');
    const records = first.slice<ChannelRecordsSlice>('channel-records');
    const joined = records.channel('#chat');
    t.match(joined, { name: '#chat', users: 4 }, 'each member as they join');
    t.ok(joined!.at >= started && joined!.at <= Date.now(), 'timed when the fourth joined');
    first.irc.receive(':alice!a@a.host PART #chat', ':bob!b@b.host QUIT :bye');
    t.equal(model.channels.get('#chat')!.users, 2);
    t.same(records.channel('#chat'), joined, 'members leaving leave the record as it was');
    // A channel the bot is not in has the count LIST gives; a later, smaller count is no record.
    network.channels.push({ name: '#big', users: 300, modes: '+nt' });
    await first.clock.advance(250);
    t.match(model.channels.get('#big'), { users: 300 }, 'the LIST between syncs');
    network.channels[0]!.users = 250;
    await first.clock.advance(250);
    t.match(model.channels.get('#big'), { users: 250 });
    t.match(records.channel('#big'), { users: 300 });
    await first.stop();
    const file = path.join(first.storeDir!, 'store.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      slices: { 'channel-records': { forgotten_on: string | null; channels: [string, number, number][] } };
    };
    const saved = stored.slices['channel-records'];
    t.same(
      saved.channels.map(([name, users]) => [name, users]),
      [
        ['#chat', 4],
        ['#big', 300],
      ],
      'written at stop',
    );

    // Aged by hand: #big's record 40 days old, and the last thinning out two days ago.
    saved.channels[1]![2] = Date.now() - 40 * DAY_MS;
    saved.forgotten_on = '2000-01-01';
    writeFileSync(file, JSON.stringify(stored));
    const second = await startCollector(t, {
      stats: { save_seconds: 1, version_requests_per_second: 0 },
      storeDir: first.storeDir!,
      network: fakeNetwork({ users: [{ nick: 'DataBot', server: 'hub.test.net' }] }),
      register: false,
    });
    const again = second.slice<ChannelRecordsSlice>('channel-records');
    t.match(again.channel('#chat'), { users: 4, at: joined!.at }, 'back after the restart');
    await second.clock.advance(1000);
    t.match(again.channel('#big'), { users: 300 }, 'kept while the model does not know all its channels yet');
    await second.register();
    await second.synced();
    // The next save: synced, a new day since the last thinning out, #big gone 40 days: forgotten.
    await second.clock.advance(1000);
    t.equal(again.channel('#big'), undefined, "a gone channel's old record is forgotten");
    t.match(again.channel('#chat'), { users: 4 }, 'a recent one stays, though its channel is gone too');
  },
);

t.test('a history point only while connected and synced', async (t) => {
  const bot = await startCollector(t, {
    stats: { history_seconds: 1, version_requests_per_second: 0 },
    network: fakeNetwork({ servers: [{ name: 'hub.test.net' }, { name: 'leaf.test.net', uplink: 'hub.test.net' }] }),
    register: false,
  });
  const history = bot.slice<HistorySlice>('history');
  await bot.clock.advance(1000);
  t.same(history.query(), [], 'not connected');
  // LUSERS is answered by hand: until then the sync waits, and the model is connected but not synced.
  bot.server.answer(/^LUSERS$/, []);
  await bot.register();
  await bot.clock.advance(1000);
  t.same(history.query(), [], 'not synced');
  bot.irc.receive(
    ':hub.test.net 251 DataBot :There are 12 users and 0 invisible on 2 servers',
    ':hub.test.net 254 DataBot 3 :channels formed',
    ':hub.test.net 266 DataBot :Current global users: 12  Max: 15',
  );
  await bot.synced();
  // A point is dated by the runtime's clock (`Date.now()` is the test's).
  const before = new Date().getTime();
  await bot.clock.advance(1000);
  const points = history.query();
  t.equal(points.length, 1);
  t.match(points[0], { users: 12, channels: 3, operators: 0, servers: 2, maxUsers: 15 }, 'the numbers LUSERS gave');
  t.ok(points[0]!.time >= before && points[0]!.time <= new Date().getTime(), 'at the time it was taken');
});

t.test('a refused JOIN is logged once, with the server’s reply', async (t) => {
  const bot = await startCollector(t, { stats: { version_requests_per_second: 0 }, register: false });
  bot.irc.receive(':hub.test.net 474 DataBot #closed :Cannot join channel (you are banned)');
  bot.irc.receive(':hub.test.net 366 DataBot #open :End of /NAMES list.');
  t.same(
    bot.logs.filter((line) => /\[stats\] join refused/.test(line)).map((line) => line.replace(/^\S+ /, '')),
    ['INFO  [stats] join refused channel=#closed reply=474 text="Cannot join channel (you are banned)"'],
  );
});
