import t from 'tap';
import { casefold } from '../../../../lib/irc/casemapping.js';
import { ActivitySlice } from '../../../../plugins/stats/model/activity.js';
import { ActivityCodec, type StoredActivity } from '../../../../plugins/stats/model/activity-codec.js';

const fold = (name: string) => casefold(name, 'rfc1459');
const at = (iso: string) => new Date(iso);

function slice(retentionDays = 30) {
  return new ActivitySlice({ timeZone: 'Europe/Berlin', retentionDays, fold });
}

/** Copies each piece as it comes: a piece of bytes is only good until the next one is taken. */
function collect(pieces: Iterable<string | Uint8Array>): { text: string; parts: (string | Uint8Array)[] } {
  const parts: (string | Uint8Array)[] = [];
  let text = '';
  for (const piece of pieces) {
    parts.push(piece);
    text += typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8');
  }
  return { text, parts };
}

function piecesText(activity: ActivitySlice): string {
  return collect(activity.persistence.snapshotJson!()).text;
}

/** Three days with odd names: quotes, backslashes, control characters, non-ASCII, a lone surrogate. */
function busySlice(): ActivitySlice {
  const activity = slice();
  const names = ['alice', 'b"o\\b', 'tab\there', 'zoë', '𝄞clef', 'lone\ud800', 'del\u007f', '[x]^{y}'];
  for (const [day, count] of [
    ['2026-11-19', 3],
    ['2026-11-20', 5],
    ['2026-11-21', 8],
  ] as const) {
    for (let index = 0; index < count; index++) {
      const name = names[index]!;
      activity.record(index % 2 ? '#secret' : '#chat', name, index % 2 === 1, at(`${day}T0${index}:30:00Z`));
    }
    activity.notePeak('#chat', 10 + count, false, at(`${day}T09:00:00Z`));
  }
  return activity;
}

t.test('the pieces are the JSON of the snapshot, odd names included', async (t) => {
  const activity = busySlice();
  const text = piecesText(activity);
  t.same(JSON.parse(text), JSON.parse(JSON.stringify(activity.persistence.snapshot())));
  t.equal(text, JSON.stringify(activity.persistence.snapshot()), 'byte for byte, in the same order');
  const restored = slice();
  restored.persistence.restore(JSON.parse(text) as StoredActivity);
  t.equal(piecesText(restored), text, 'what is restored writes the same text again');
});

t.test(
  'a nick named like an object key ("__proto__") is written, snapshotted and restored like any other',
  async (t) => {
    const activity = slice();
    activity.record('#chat', '__proto__', false, at('2026-11-21T10:00:00Z'));
    activity.record('#chat', 'constructor', false, at('2026-11-21T10:00:00Z'));
    const snapshot = activity.persistence.snapshot();
    t.same(Object.entries(snapshot.days[0]!.channels[0]!.speakers!).sort(), [
      ['__proto__', 1],
      ['constructor', 1],
    ]);
    const text = piecesText(activity);
    t.equal(text, JSON.stringify(snapshot));
    const restored = slice();
    restored.persistence.restore(JSON.parse(text) as StoredActivity);
    const day = restored.days()[0]!;
    t.same([...restored.speakersOf(day, '#chat')].sort(), [
      ['__proto__', 1],
      ['constructor', 1],
    ]);
  },
);

t.test('many records come in many small pieces', async (t) => {
  const activity = slice();
  for (let index = 0; index < 20_000; index++) {
    activity.record(`#c${index % 50}`, `nick${index}`, false, at('2026-11-21T10:00:00Z'));
  }
  const { text, parts } = collect(activity.persistence.snapshotJson!());
  t.ok(parts.length > 20, `${parts.length} pieces`);
  t.ok(
    parts.every((piece) => (typeof piece === 'string' ? piece.length : piece.byteLength) <= 64 * 1024 + 1024),
    'none much bigger than 64 KB',
  );
  t.same(JSON.parse(text), JSON.parse(JSON.stringify(activity.persistence.snapshot())));
});

t.test('past days are encoded once and their bytes written again', async (t) => {
  const activity = busySlice();
  const codec = new ActivityCodec();
  const first = collect(codec.pieces('Europe/Berlin', activity.days()));
  const kept = codec.keptBytes(activity.days());
  t.ok(kept > 0, `${kept} bytes kept`);
  t.equal(kept, codec.keptBytes(activity.days().slice(0, 2)), 'only the past days are kept');
  activity.record('#chat', 'alice', false, at('2026-11-21T10:00:00Z'));
  const second = collect(codec.pieces('Europe/Berlin', activity.days()));
  // Kept as text in the heap, not as bytes: a past day comes as a string that starts its record.
  const keptDays = second.parts.filter((part) => typeof part === 'string' && part.startsWith('{"date":'));
  t.equal(keptDays.length, 2, 'the two past days come as their kept text');
  t.notOk(
    first.parts.some((part) => typeof part === 'string' && part.startsWith('{"date":')),
    'the first write encoded them',
  );
  t.ok(first.text.includes('zoë') && first.text.includes('𝄞clef'), 'the odd names are in the text');
  t.equal(second.text.slice(0, 200), first.text.slice(0, 200), 'the kept text is what was encoded first');
  const pastOf = (text: string) => (JSON.parse(text) as StoredActivity).days.slice(0, 2);
  t.same(pastOf(second.text), pastOf(first.text), 'past days, non-ASCII names included, written as they were');
  t.same(JSON.parse(second.text), JSON.parse(JSON.stringify(activity.persistence.snapshot())), 'today is new');
});

t.test('kept text goes with rollover, retention, restore, and a past day that changed', async (t) => {
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: 3, fold });
  const codec = new ActivityCodec();
  const write = () => JSON.parse(collect(codec.pieces('UTC', activity.days())).text) as StoredActivity;
  const expected = () => JSON.parse(JSON.stringify(activity.persistence.snapshot())) as StoredActivity;
  for (const day of ['2026-11-19', '2026-11-20', '2026-11-21']) {
    activity.record('#chat', 'alice', false, at(`${day}T10:00:00Z`));
  }
  write();

  activity.rollover(at('2026-11-22T00:00:01Z'));
  t.same(write(), expected(), 'rollover: the day that was today is now written as a past day, without hours');
  t.same(
    write().days.map((day) => day.date),
    ['2026-11-20', '2026-11-21', '2026-11-22'],
    'retention: the dropped day is gone from the file',
  );
  t.equal(codec.keptBytes(activity.days()), codec.keptBytes(activity.days().slice(0, 2)));

  const changed = activity.days()[0]!;
  changed.lines += 5; // not something the slice does, but the codec must not write stale text
  t.same(write().days[0]!.lines, changed.lines, 'a past day whose totals changed is encoded again');

  const before = write();
  activity.persistence.restore({
    ...before,
    days: before.days.map((day) => ({ ...day, lines: day.lines + 100 })),
  });
  t.same(write(), expected(), 'restore: new days, new text');
  t.equal(write().days[0]!.lines, before.days[0]!.lines + 100);
});

t.test('changes between pieces: still JSON, each record whole, the day list of the first piece', async (t) => {
  const activity = slice(30);
  for (let index = 0; index < 5000; index++) {
    activity.record(`#c${index % 20}`, `nick${index}`, false, at('2026-11-21T10:00:00Z'));
  }
  let text = '';
  let taken = 0;
  for (const piece of activity.persistence.snapshotJson!()) {
    text += typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8');
    taken++;
    // Lines keep coming between pieces: to nicks already written, to new ones, in every channel.
    for (let index = 0; index < 300; index++) {
      const nick = `nick${(taken * 997 + index * 31) % 8000}`;
      activity.record(`#c${index % 20}`, nick, index % 7 === 0, at('2026-11-21T11:00:00Z'));
    }
    if (taken === 5) activity.rollover(at('2026-11-22T00:00:01Z'));
  }
  t.ok(taken > 5, `${taken} pieces`);
  const stored = JSON.parse(text) as StoredActivity;
  t.same(
    stored.days.map((day) => day.date),
    ['2026-11-21'],
    'the new day is for the next write',
  );
  const sum = (values: number[] | undefined) => (values ?? []).reduce((total, value) => total + value, 0);
  const nicks = stored.days[0]!.nicks;
  t.ok(nicks.length >= 5000, `${nicks.length} nicks written`);
  t.same(
    nicks.filter((nick) => nick.hourly && sum(nick.hourly) !== nick.lines).map((nick) => nick.nick),
    [],
    "every nick's hours add up to its lines",
  );
  t.same(
    stored.days[0]!.channels.filter(
      (channel) => channel.speakers && sum(Object.values(channel.speakers)) !== channel.lines,
    ).map((channel) => channel.name),
    [],
    "every channel's speakers add up to its lines",
  );
  t.same(
    JSON.parse(piecesText(activity)),
    JSON.parse(JSON.stringify(activity.persistence.snapshot())),
    'the next write has everything',
  );
});
