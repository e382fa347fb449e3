/** The collector's network statistics wiring inside the real host, with a fake IRC connection and a real store. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import { ChannelRecordsSlice } from '../../../plugins/stats/model/channel-records.js';
import { DAY_MS, HistorySlice } from '../../../plugins/stats/model/history.js';
import { NetworkModel } from '../../../lib/model/network.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import { recordHistoryPoint } from '../../../plugins/stats/history.js';
import { startHarness } from '../../support/harness.js';

/** The collector alone in the real host, on the fake connection, with its store in `storeDir`. */
function hostWith(t: Test, storeDir: string, statsConfig: Record<string, unknown>) {
  return startHarness(t, {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: statsConfig },
    storeDir,
    register: false,
  });
}

const activityOf = (model: NetworkModel) => model.slices().find((slice) => slice instanceof ActivitySlice)!;
const recordsOf = (model: NetworkModel) => model.slices().find((slice) => slice instanceof ChannelRecordsSlice)!;

t.test('a time zone the runtime does not know stops the start, naming the key', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'netstats-plugin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.rejects(hostWith(t, dir, { time_zone: 'Mars/Olympus' }), {
    message: /config\.plugins\.stats\.time_zone: "Mars\/Olympus" is not a known IANA time zone/,
  });
});

t.test("today's counts are written at stop and come back at the next start", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'netstats-plugin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A long save interval: only the stop writes the counts.
  const first = await hostWith(t, dir, { save_seconds: 3600, version_requests_per_second: 0 });
  first.irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot alice bob',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':hub.test.net 324 DataBot #chat +nt',
    ':alice!a@a.host PRIVMSG #chat :one',
    ':alice!a@a.host PRIVMSG #chat :two',
    ':bob!b@b.host PRIVMSG #chat :\x01ACTION three\x01',
  );
  const now = new Date();
  t.same(activityOf(first.host.model).topNicks(activityOf(first.host.model).day(now)!, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
  ]);
  await first.host.stop();
  const stored = JSON.parse(readFileSync(path.join(dir, 'store.json'), 'utf8')) as {
    slices: { activity: { days: { nicks: { nick: string; lines: number }[] }[] } };
  };
  t.same(
    stored.slices.activity.days.at(-1)!.nicks.map(({ nick, lines }) => [nick, lines]),
    [
      ['alice', 2],
      ['bob', 1],
    ],
  );

  const second = await hostWith(t, dir, { version_requests_per_second: 0 });
  const activity = activityOf(second.host.model);
  t.same(activity.topNicks(activity.day(new Date())!, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
  ]);
  t.equal(activity.channelOn(activity.day(new Date())!, '#chat')!.peakUsers, 3);
});

t.test(
  "every channel's record: from joins and LIST counts, kept in the store, old ones of gone channels dropped",
  async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'netstats-plugin-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const first = await hostWith(t, dir, { save_seconds: 3600, version_requests_per_second: 0 });
    const { model } = first.host;
    const started = Date.now();
    first.irc.receive(
      ':DataBot!databot@bot.host JOIN #chat',
      ':hub.test.net 353 DataBot = #chat :DataBot alice bob',
      ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
      ':hub.test.net 324 DataBot #chat +nt',
      ':carol!c@c.host JOIN #chat',
    );
    const records = recordsOf(model);
    const joined = records.channel('#chat');
    t.match(joined, { name: '#chat', users: 4 }, 'each member as they join');
    t.ok(joined!.at >= started && joined!.at <= Date.now(), 'timed when the fourth joined');
    first.irc.receive(':alice!a@a.host PART #chat', ':bob!b@b.host QUIT :bye');
    t.equal(model.channels.get('#chat')!.users, 2);
    t.same(records.channel('#chat'), joined, 'members leaving leave the record as it was');
    // A channel the bot is not in has the count LIST gives; a later, smaller count is no record.
    model.upsertChannel('#big', { users: 300 });
    model.upsertChannel('#big', { users: 250 });
    t.match(records.channel('#big'), { users: 300 });
    await first.host.stop();
    const stored = JSON.parse(readFileSync(path.join(dir, 'store.json'), 'utf8')) as {
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
    writeFileSync(path.join(dir, 'store.json'), JSON.stringify(stored));
    const second = await hostWith(t, dir, { save_seconds: 1, version_requests_per_second: 0 });
    const again = recordsOf(second.host.model);
    t.match(again.channel('#chat'), { users: 4, at: joined!.at }, 'back after the restart');
    t.match(again.channel('#big'), { users: 300 }, 'kept while the model does not know all its channels yet');
    second.host.model.connectionOpened('rfc1459');
    second.host.model.markSynced(false);
    // The next save: synced, a new day since the last thinning out, #big gone 40 days: forgotten.
    const deadline = Date.now() + 5000;
    while (again.channel('#big') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    t.equal(again.channel('#big'), undefined, "a gone channel's old record is forgotten");
    t.match(again.channel('#chat'), { users: 4 }, 'a recent one stays, though its channel is gone too');
  },
);

t.test('a history point only while connected and synced', async (t) => {
  const model = new NetworkModel();
  const history = new HistorySlice({ fullMs: 1000, hourlyMs: 2000, dailyMs: 3000 });
  const now = new Date('2026-11-21T14:00:00Z');
  t.notOk(recordHistoryPoint(model, history, now), 'not connected');
  model.connectionOpened('rfc1459');
  t.notOk(recordHistoryPoint(model, history, now), 'not synced');
  model.updateStats({ users: 12, channels: 3, operators: null, servers: 2, maxUsers: 15 });
  model.markSynced(true);
  t.ok(recordHistoryPoint(model, history, now));
  t.same(history.query(), [{ time: now.getTime(), users: 12, channels: 3, operators: null, servers: 2, maxUsers: 15 }]);
});

t.test('a refused JOIN is logged once, with the server’s reply', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'netstats-plugin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bot = await hostWith(t, dir, { version_requests_per_second: 0 });
  bot.irc.receive(':hub.test.net 474 DataBot #closed :Cannot join channel (you are banned)');
  bot.irc.receive(':hub.test.net 366 DataBot #open :End of /NAMES list.');
  t.same(
    bot.logs.filter((line) => /\[stats\] join refused/.test(line)).map((line) => line.replace(/^\S+ /, '')),
    ['INFO  [stats] join refused channel=#closed reply=474 text="Cannot join channel (you are banned)"'],
  );
});
