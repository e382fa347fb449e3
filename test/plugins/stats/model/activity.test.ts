import t from 'tap';
import { casefold } from '../../../../lib/irc/casemapping.js';
import { ActivitySlice } from '../../../../plugins/stats/model/activity.js';
import { addDays, TimeZone } from '../../../../plugins/stats/model/time-zone.js';

const fold = (name: string) => casefold(name, 'rfc1459');

function slice(timeZone = 'UTC', retentionDays = 30) {
  return new ActivitySlice({ timeZone, retentionDays, fold });
}

const at = (iso: string) => new Date(iso);

t.test('time zones: dates and hours, a day rolls over at local midnight', async (t) => {
  const utc = new TimeZone('UTC');
  t.same(utc.at(at('2026-11-21T23:59:59.999Z')), { date: '2026-11-21', hour: 23 });
  t.same(utc.at(at('2026-11-22T00:00:00.000Z')), { date: '2026-11-22', hour: 0 });
  const berlin = new TimeZone('Europe/Berlin');
  t.same(berlin.at(at('2026-11-21T23:30:00Z')), { date: '2026-11-22', hour: 0 }, 'UTC+1 in winter');
  t.same(berlin.at(at('2026-07-01T21:59:00Z')), { date: '2026-07-01', hour: 23 }, 'UTC+2 in summer');
  const kathmandu = new TimeZone('Asia/Kathmandu');
  t.same(kathmandu.at(at('2026-11-21T18:14:00Z')), { date: '2026-11-21', hour: 23 }, 'a +05:45 zone');
  t.same(kathmandu.at(at('2026-11-21T18:15:00Z')), { date: '2026-11-22', hour: 0 });
  t.throws(() => new TimeZone('Mars/Olympus'), { message: /"Mars\/Olympus" is not a known IANA time zone/ });
  t.equal(addDays('2026-03-01', -1), '2026-02-28');
  t.equal(addDays('2024-12-31', 1), '2025-01-01');
});

t.test('lines are counted per channel, per nick and per hour', async (t) => {
  const activity = slice();
  activity.record('#chat', 'alice', false, at('2026-11-21T09:15:00Z'));
  activity.record('#Chat', 'Alice', false, at('2026-11-21T09:45:00Z'));
  activity.record('#chat', 'bob', false, at('2026-11-21T14:00:00Z'));
  activity.record('#dev', 'alice', false, at('2026-11-21T14:01:00Z'));
  const day = activity.day(at('2026-11-21T15:00:00Z'))!;
  t.equal(day.date, '2026-11-21');
  t.equal(day.lines, 4);
  const chat = activity.channelOn(day, '#CHAT')!;
  t.equal(chat.lines, 3);
  t.equal(chat.name, '#chat', 'the name as last seen');
  t.equal(chat.hourly![9], 2);
  t.equal(chat.hourly![14], 1);
  t.equal(
    [...chat.hourly!].reduce((sum, lines) => sum + lines, 0),
    3,
    'the hours add up to the lines',
  );
  t.match(activity.nickOn(day, 'ALICE'), { nick: 'alice', lines: 3, hiddenLines: 0 });
  t.same(activity.topNicks(day, 10), [
    { nick: 'alice', lines: 3 },
    { nick: 'bob', lines: 1 },
  ]);
  t.same(activity.topChannels(day, 10), [
    { name: '#chat', lines: 3 },
    { name: '#dev', lines: 1 },
  ]);
  t.same(activity.topSpeakers(day, '#chat', 10), [
    { nick: 'alice', lines: 2 },
    { nick: 'bob', lines: 1 },
  ]);
  t.equal(activity.day(at('2026-11-22T00:00:00Z')), undefined, 'nothing yet on the next day');
  t.ok(activity.takeChanges(), 'changes are reported once');
  t.notOk(activity.takeChanges());
});

t.test('ties are broken by folded nick, the same every time', async (t) => {
  const activity = slice();
  const time = at('2026-11-21T10:00:00Z');
  for (const nick of ['zed', 'Bob', 'amy', '[x]', 'carl']) {
    activity.record('#a', nick, false, time);
    activity.record('#a', nick, false, time);
  }
  activity.record('#a', 'carl', false, time);
  const day = activity.day(time)!;
  t.same(
    activity.topNicks(day, 10).map((entry) => entry.nick),
    ['carl', 'amy', 'Bob', 'zed', '[x]'],
    'most lines first, then by folded nick ("{x}" sorts after letters)',
  );
  t.same(
    activity.topNicks(day, 2).map((entry) => entry.nick),
    ['carl', 'amy'],
  );
  activity.record('#b', 'x', false, time);
  activity.record('#c', 'x', false, time);
  t.same(
    activity.topChannels(day, 10).map((entry) => entry.name),
    ['#a', '#b', '#c'],
  );
});

t.test('hidden channels: their lines are marked and a filter leaves them out', async (t) => {
  const activity = slice();
  const time = at('2026-11-21T10:00:00Z');
  activity.record('#public', 'alice', false, time);
  activity.record('#secret', 'alice', true, time);
  activity.record('#secret', 'alice', true, time);
  activity.record('#secret', 'spy', true, time);
  const day = activity.day(time)!;
  t.match(activity.nickOn(day, 'alice'), { lines: 3, hiddenLines: 2 });
  t.equal(activity.nickOn(day, 'alice')!.hiddenHourly![10], 2);
  const publicOnly = (channel: { hidden: boolean }) => !channel.hidden;
  t.same(activity.topNicks(day, 10, publicOnly), [{ nick: 'alice', lines: 1 }], 'spy spoke only in #secret');
  t.same(activity.topChannels(day, 10, publicOnly), [{ name: '#public', lines: 1 }]);
  t.same(activity.topNicks(day, 10), [
    { nick: 'alice', lines: 3 },
    { nick: 'spy', lines: 1 },
  ]);
});

t.test('peaks keep the most members seen today', async (t) => {
  const activity = slice();
  activity.notePeak('#chat', 5, false, at('2026-11-21T10:00:00Z'));
  activity.notePeak('#chat', 3, false, at('2026-11-21T11:00:00Z'));
  const day = activity.day(at('2026-11-21T12:00:00Z'))!;
  t.equal(activity.channelOn(day, '#chat')!.peakUsers, 5);
  t.equal(activity.channelOn(day, '#chat')!.lines, 0);
  t.same(activity.topChannels(day, 10), [], 'a channel without lines is no leaderboard entry');
});

t.test('midnight: the day before keeps its totals; days past the retention go', async (t) => {
  const activity = slice('Europe/Berlin', 3);
  activity.record('#chat', 'alice', false, at('2026-11-21T22:59:00Z'));
  t.equal(activity.day(at('2026-11-21T22:59:00Z'))!.date, '2026-11-21');
  activity.record('#chat', 'bob', false, at('2026-11-21T23:00:00Z'));
  t.same(
    activity.days().map((day) => day.date),
    ['2026-11-21', '2026-11-22'],
    'midnight in Berlin is 23:00 UTC',
  );
  const yesterday = activity.days()[0]!;
  t.equal(yesterday.lines, 1);
  t.equal(activity.channelOn(yesterday, '#chat')!.hourly, null, 'hours are dropped once the day is over');
  t.equal(activity.nickOn(yesterday, 'alice')!.lines, 1);
  t.notOk(activity.rollover(at('2026-11-22T10:00:00Z')), 'same day: nothing to do');
  t.ok(activity.rollover(at('2026-11-24T10:00:00Z')));
  t.same(
    activity.days().map((day) => day.date),
    ['2026-11-22', '2026-11-24'],
    'three days kept, today included',
  );
  activity.record('#chat', 'late', false, at('2026-11-23T10:00:00Z'));
  t.equal(activity.days().at(-1)!.lines, 1, 'a line from a clock that went back counts for the current day');
});

t.test('persistence: a snapshot restores the same counts; bad entries are skipped', async (t) => {
  const activity = slice();
  activity.record('#chat', 'alice', false, at('2026-11-20T10:00:00Z'));
  activity.record('#chat', 'alice', false, at('2026-11-21T10:00:00Z'));
  activity.record('#secret', 'bob', true, at('2026-11-21T11:00:00Z'));
  activity.notePeak('#chat', 7, false, at('2026-11-21T11:00:00Z'));
  const stored = JSON.parse(JSON.stringify(activity.persistence.snapshot()));
  const restored = slice();
  restored.persistence.restore(stored);
  t.same(restored.persistence.snapshot(), activity.persistence.snapshot(), 'the same snapshot again');
  const day = restored.day(at('2026-11-21T12:00:00Z'))!;
  t.equal(restored.channelOn(day, '#chat')!.hourly![10], 1);
  t.equal(restored.channelOn(day, '#chat')!.peakUsers, 7);
  t.same(
    restored.topNicks(day, 10, (channel) => !channel.hidden),
    [{ nick: 'alice', lines: 1 }],
  );
  restored.record('#chat', 'alice', false, at('2026-11-21T12:00:00Z'));
  t.equal(restored.nickOn(restored.day(at('2026-11-21T12:00:00Z'))!, 'alice')!.lines, 2, 'counting goes on');

  const messy = slice();
  messy.persistence.restore({
    time_zone: 'UTC',
    days: [
      { date: 'yesterday', lines: 1, channels: [], nicks: [] },
      {
        date: '2026-11-21',
        lines: 2,
        channels: [{ name: 7 }, { name: '#ok', lines: -4, hidden: false, peak_users: 2, hourly: ['x', 2] }],
        nicks: [null, { nick: 'ok', lines: 2, hidden_lines: 0 }],
      },
    ],
  } as never);
  const messyDay = messy.days()[0]!;
  t.equal(messy.days().length, 1);
  t.match(messy.channelOn(messyDay, '#ok'), { lines: 0, peakUsers: 2 });
  t.equal(messy.channelOn(messyDay, '#ok')!.hourly![1], 2);
  t.throws(() => messy.persistence.restore(null as never), { message: /"activity" slice must be an object/ });
});

t.test('the day and hour found for a quarter hour follow a restore and a rollover by the owner', async (t) => {
  const activity = slice();
  const tenPast = at('2026-11-21T10:10:00Z');
  activity.record('#chat', 'alice', false, tenPast);
  const stored = JSON.parse(JSON.stringify(activity.persistence.snapshot()));
  activity.record('#chat', 'alice', false, tenPast);
  activity.persistence.restore(stored);
  activity.record('#chat', 'alice', false, at('2026-11-21T10:11:00Z'));
  const day = activity.day(tenPast)!;
  t.equal(activity.nickOn(day, 'alice')!.lines, 2, 'counted into the restored day, not the one it replaced');
  t.equal(activity.channelOn(day, '#chat')!.hourly![10], 2);

  const late = at('2026-11-21T23:50:00Z');
  activity.record('#chat', 'alice', false, late);
  t.ok(activity.rollover(at('2026-11-22T00:05:00Z')), 'the owner starts the next day');
  activity.record('#chat', 'bob', false, late);
  t.same(
    activity.days().map((kept) => [kept.date, kept.lines]),
    [
      ['2026-11-21', 3],
      ['2026-11-22', 1],
    ],
    'a line from the quarter hour before midnight counts for the current day once it has begun',
  );
  t.equal(activity.nickOn(activity.days()[1]!, 'bob')!.hourly![23], 1, 'at its own hour');
});

t.test('many nicks: each has hours of its own, and names folded by the caller count the same', async (t) => {
  const activity = slice();
  const nicks = Array.from({ length: 2500 }, (_, index) => `Nick[${index}]`);
  nicks.forEach((nick, index) => {
    const time = at(`2026-11-21T${String(index % 24).padStart(2, '0')}:30:00Z`);
    if (index % 2 === 0) activity.record('#Chat', nick, false, time);
    else activity.recordFolded(fold('#Chat'), '#Chat', fold(nick), nick, false, time);
  });
  activity.record('#chat', 'nick{7}', false, at('2026-11-21T07:45:00Z'));
  const day = activity.days()[0]!;
  t.equal(day.nicks.size, 2500);
  let wrong = 0;
  nicks.forEach((nick, index) => {
    const counted = activity.nickOn(day, nick)!;
    const expected = new Uint32Array(24);
    expected[index % 24] = index === 7 ? 2 : 1;
    if (counted.hourly!.length !== 24 || counted.hourly!.some((lines, hour) => lines !== expected[hour])) wrong++;
  });
  t.equal(wrong, 0, 'no nick sees another one’s hours');
  t.match(activity.nickOn(day, 'NICK[7]'), { nick: 'nick{7}', lines: 2 }, 'the nick as last seen');
  t.equal(activity.speakersOf(day, '#CHAT').size, 2500);
  t.equal(activity.speakersOf(day, '#chat').get('nick{7}'), 2);
  t.equal(activity.channelOn(day, '#chat')!.lines, 2501);
});
