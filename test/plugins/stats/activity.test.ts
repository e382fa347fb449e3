/**
 * Counting chat lines and channel peaks: the collector in the real host hears the lines of the fake
 * connection, as it would a server's.
 */
import t from 'tap';
import type { PluginDefinition } from '../../../lib/plugin.js';
import { isChatLine } from '../../../plugins/stats/activity.js';
import stats from '../../../plugins/stats/index.js';
import type { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';

/** The collector alone, on a registered fake connection that hears every line. */
const collector: HarnessOptions = { registry: [stats as PluginDefinition<never>], plugins: { stats: {} } };

/** The bot joins #chat and the secret #hush, and learns of #elsewhere, which it is not in. */
function joinChatAndHush(bot: Harness): void {
  bot.irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot alice bob',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':hub.test.net 324 DataBot #chat +nt',
    ':DataBot!databot@bot.host JOIN #hush',
    ':hub.test.net 353 DataBot @ #hush :DataBot spy',
    ':hub.test.net 366 DataBot #hush :End of /NAMES list.',
    ':hub.test.net 324 DataBot #hush +nst',
  );
  bot.host.model.upsertChannel('#elsewhere', { users: 40 });
}

/**
 * The day the collector counted in last. It dates lines by its own clock, which the test cannot pin: the
 * counts are read from the day they went to (the newest), never from "today" as of the read, which is
 * another day after midnight.
 */
function newestDay(activity: ActivitySlice) {
  return activity.days().at(-1)!;
}

t.test('chat lines: PRIVMSG, NOTICE and ACTION count; other CTCP does not', async (t) => {
  t.ok(isChatLine('hello'));
  t.ok(isChatLine('\x01ACTION waves\x01'));
  t.ok(isChatLine('\x01ACTION\x01'));
  t.notOk(isChatLine('\x01VERSION\x01'));
  t.notOk(isChatLine('\x01ACTIONS\x01'));
  const bot = await startHarness(t, collector);
  joinChatAndHush(bot);
  const { irc } = bot;
  const activity = bot.slice<ActivitySlice>('activity');
  const today = () => newestDay(activity);
  /** Every line counted today, over all nicks and channels. */
  const total = (): number =>
    activity.days().length === 0 ? 0 : activity.topNicks(today(), 1000).reduce((sum, { lines }) => sum + lines, 0);
  const hours = new Set([new Date().getUTCHours()]);
  const counted = [
    ':alice!a@a.host PRIVMSG #chat :hello',
    ':alice!a@a.host NOTICE #CHAT :a notice',
    ':bob!b@b.host PRIVMSG #chat :\x01ACTION waves\x01',
    ':bob!b@b.host PRIVMSG #chat :\x01VERSION\x01',
    ':bob!b@b.host PRIVMSG DataBot :a private message',
    ':bob!b@b.host PRIVMSG @#chat :to the operators only',
    ':carol!c@c.host PRIVMSG #elsewhere :the bot is not in this channel',
    ':hub.test.net NOTICE #chat :a server notice',
    ':DataBot!databot@bot.host PRIVMSG #chat :the bot itself (echo-message)',
    ':spy!s@s.host PRIVMSG #hush :psst',
  ].map((line) => {
    const before = total();
    irc.receive(line);
    return total() === before + 1;
  });
  hours.add(new Date().getUTCHours());
  t.same(counted, [true, true, true, false, false, false, false, false, false, true]);
  const day = today();
  t.same(activity.topNicks(day, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
    { nick: 'spy', lines: 1 },
  ]);
  t.match(activity.channelOn(day, '#hush'), { lines: 1, hidden: true }, 'a secret channel is counted, as hidden');
  const hourly = activity.channelOn(day, '#chat')!.hourly!;
  t.equal(
    [...hours].reduce((sum, hour) => sum + hourly[hour]!, 0),
    3,
    'in the hour they came (by the time zone, UTC)',
  );
});

t.test('peaks follow the members of channels the bot is in', async (t) => {
  const bot = await startHarness(t, collector);
  joinChatAndHush(bot);
  const { irc } = bot;
  const activity = bot.slice<ActivitySlice>('activity');
  const today = () => newestDay(activity);
  irc.receive(':carol!c@c.host JOIN #chat', ':dave!d@d.host JOIN #chat', ':dave!d@d.host PART #chat');
  t.equal(activity.channelOn(today(), '#chat')!.peakUsers, 5, 'the bot, alice, bob, carol, dave');
  t.equal(activity.channelOn(today(), '#elsewhere'), undefined, 'not for channels the bot is not in');
});
