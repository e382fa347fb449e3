import t, { type Test } from 'tap';
import { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import { NetworkModel } from '../../../lib/model/network.js';
import { countLine, isChatLine, notePeak } from '../../../plugins/stats/activity.js';
import { track } from '../../../plugins/stats/live.js';
import { FakeTransport } from '../../support/fake-irc.js';

const now = new Date('2026-11-21T14:30:00Z');

/** A connection whose lines go through live tracking and then the line counter, as in the collector. */
function setup(t: Test) {
  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  const model = new NetworkModel();
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: 30, fold: (name) => model.fold(name) });
  const counted: boolean[] = [];
  irc.on('message', (message) => {
    track(message, { irc, model });
    counted.push(countLine(message, { irc, model, activity }, now));
  });
  model.on('change', (change) => {
    if (change.slice === 'channels' && change.name) notePeak(change.name, { model, activity }, now);
  });
  irc.connect();
  irc.register();
  model.connectionOpened(irc.state.casemapping);
  irc.receive(
    ':DataBot!databot@bot.host JOIN #chat',
    ':hub.test.net 353 DataBot = #chat :DataBot alice bob',
    ':hub.test.net 366 DataBot #chat :End of /NAMES list.',
    ':hub.test.net 324 DataBot #chat +nt',
    ':DataBot!databot@bot.host JOIN #hush',
    ':hub.test.net 353 DataBot @ #hush :DataBot spy',
    ':hub.test.net 366 DataBot #hush :End of /NAMES list.',
    ':hub.test.net 324 DataBot #hush +nst',
  );
  model.upsertChannel('#elsewhere', { users: 40 });
  counted.length = 0;
  return { irc, model, activity, counted };
}

t.test('chat lines: PRIVMSG, NOTICE and ACTION count; other CTCP does not', async (t) => {
  t.ok(isChatLine('hello'));
  t.ok(isChatLine('\x01ACTION waves\x01'));
  t.ok(isChatLine('\x01ACTION\x01'));
  t.notOk(isChatLine('\x01VERSION\x01'));
  t.notOk(isChatLine('\x01ACTIONS\x01'));
  const { irc, activity, counted } = setup(t);
  irc.receive(
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
  );
  t.same(counted, [true, true, true, false, false, false, false, false, false, true]);
  const day = activity.day(now)!;
  t.same(activity.topNicks(day, 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
    { nick: 'spy', lines: 1 },
  ]);
  t.match(activity.channelOn(day, '#hush'), { lines: 1, hidden: true }, 'a secret channel is counted, as hidden');
  t.equal(activity.channelOn(day, '#chat')!.hourly![14], 3);
});

t.test('peaks follow the members of channels the bot is in', async (t) => {
  const { irc, activity } = setup(t);
  irc.receive(':carol!c@c.host JOIN #chat', ':dave!d@d.host JOIN #chat', ':dave!d@d.host PART #chat');
  const day = activity.day(now)!;
  t.equal(activity.channelOn(day, '#chat')!.peakUsers, 5, 'the bot, alice, bob, carol, dave');
  t.equal(activity.channelOn(day, '#elsewhere'), undefined, 'not for channels the bot is not in');
});
