/** The collector's model listeners inside the real host, with a fake IRC connection: they follow real changes only. */
import t from 'tap';
import { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import { startHarness } from '../../../testing/harness.js';

t.test('countries and peaks follow real changes; a line that changes nothing is no change', async (t) => {
  const { host, irc: transport } = await startHarness(t, {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: { version_requests_per_second: 0 } },
    register: false,
    logLevel: 'error',
  });
  const { model } = host;
  const activity = model.slices().find((slice) => slice instanceof ActivitySlice)!;
  // The collector dates peaks by its own clock, which the test cannot pin: the peaks are read from the
  // day they went to (the newest), never from "today" as of the read, which is another day after midnight.
  const started = new Date();
  const peak = (): number | undefined => {
    const day = activity.days().at(-1);
    return day && activity.channelOn(day, '#chat')?.peakUsers;
  };
  transport.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':hub.test.net 324 DataBot #chat +nt',
  );
  const userChanges: string[] = [];
  model.on('change', (change) => {
    if (change.slice === 'users') userChanges.push(`${change.kind} ${change.name ?? ''}`);
  });

  transport.receive(':alice!a@dsl.example.de JOIN #chat');
  t.equal(model.users.get('alice')!.countryCode, 'DE', 'a new user is located');
  t.equal(peak(), 2);
  t.same(userChanges, ['upsert alice', 'upsert alice'], 'the user, then the country the listener found');

  userChanges.length = 0;
  transport.receive(':alice!a@dsl.example.de PART #chat', ':alice!a@dsl.example.de JOIN #chat');
  t.same(userChanges, [], 'the same user again: no change, so no listener ran');
  t.equal(model.users.get('alice')!.countryCode, 'DE');

  transport.receive(':bob!b@h JOIN #chat', ':alice!a@dsl.example.de CHGHOST a cable.example.fr');
  t.equal(model.users.get('alice')!.countryCode, 'FR', 'a new host is located again');
  t.equal(peak(), 3, 'the peak followed the joins');
  const dates = new Set([activity.dateOf(started), activity.dateOf(new Date())]);
  t.ok(dates.has(activity.days().at(-1)?.date ?? ''), 'the peaks went to a day the test ran on, in the time zone');
});
