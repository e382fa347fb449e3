import t from 'tap';
import { NickCounts, NickTotalsBuilder, SpeakerCounts } from '../../../../plugins/stats/model/nick-counts.js';

/** What a plain map of objects would count: the reference the tables are checked against. */
interface Expected {
  nick: string;
  lines: number;
  hidden: number;
  hours: number[];
  hiddenHours: number[];
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
}

t.test('counts per nick and hour agree with a plain map, through every growth of the table', async (t) => {
  const counts = new NickCounts();
  const expected = new Map<string, Expected>();
  const random = seeded(5);
  // Long keys (past what a row holds), keys that differ only at the end, non-ASCII: all must stay apart.
  const keyOf = (index: number) =>
    index % 7 === 0
      ? `a-very-long-nick-name-that-does-not-fit-in-a-row-${index}`
      : index % 5 === 0
        ? `nïck-ünïcode-${index}`
        : index % 3 === 0
          ? // Code units of 0x8000 and up (CJK, surrogates) are stored as negative numbers in the row.
            `日本語𝄞${index}`
          : `n${index}`;
  const ids = new Map<string, number>();
  let movedIds = 0;
  for (let line = 0; line < 60_000; line++) {
    const key = keyOf(Math.floor(random() * 5000));
    const hour = Math.floor(random() * 24);
    const hidden = random() < 0.1;
    const nick = random() < 0.5 ? key : key.toUpperCase();
    const id = counts.add(key, nick, hour, hidden);
    if (ids.has(key) && ids.get(key) !== id) movedIds++;
    ids.set(key, id);
    const entry = expected.get(key) ?? {
      nick,
      lines: 0,
      hidden: 0,
      hours: Array<number>(24).fill(0),
      hiddenHours: Array<number>(24).fill(0),
    };
    entry.nick = nick;
    entry.lines++;
    entry.hours[hour]!++;
    if (hidden) {
      entry.hidden++;
      entry.hiddenHours[hour]!++;
    }
    expected.set(key, entry);
  }
  t.equal(movedIds, 0, 'a nick keeps its id as the table grows');
  t.equal(counts.size, expected.size);
  let wrong = 0;
  for (const [key, entry] of expected) {
    const record = counts.get(key);
    const same =
      record !== undefined &&
      record.nick === entry.nick &&
      record.lines === entry.lines &&
      record.hiddenLines === entry.hidden &&
      [...record.hourly!].join() === entry.hours.join() &&
      (entry.hidden === 0
        ? record.hiddenHourly === null
        : [...record.hiddenHourly!].join() === entry.hiddenHours.join());
    if (!same) wrong++;
  }
  t.equal(wrong, 0, 'every nick has exactly its own counts');
  t.equal(counts.get('nobody'), undefined);
  t.notOk(counts.has('a-very-long-nick-name-that-does-not-fit-in-a-row-99999'));
  t.same([...counts.keys()].sort(), [...expected.keys()].sort(), 'keys in id order, every one once');
});

t.test(
  'keys whose hashes collide stay apart: short ones by their characters, long ones by their strings',
  async (t) => {
    // FNV-1a collisions, found by search: two of 5 characters, and two of 38 that share their first 34
    // (all a row holds), so only the comparison with the whole string tells them apart.
    const pairs = [
      ['n3pvu', 'ne3ea'],
      ['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx3uzx', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxa2ad'],
    ] as const;
    const counts = new NickCounts();
    for (const [a, b] of pairs) {
      counts.add(a, a, 1, false);
      counts.add(b, b, 2, false);
      counts.add(b, b, 2, false);
    }
    for (const [a, b] of pairs) {
      t.not(counts.indexOf(a), counts.indexOf(b), `${a} and ${b} are two nicks`);
      t.match(counts.get(a), { nick: a, lines: 1 });
      t.match(counts.get(b), { nick: b, lines: 2 });
    }
    t.equal(counts.size, 4);
  },
);

t.test('the nick as last seen, whether or not it is its key', async (t) => {
  const counts = new NickCounts();
  counts.add('alice', 'Alice', 3, false);
  t.equal(counts.get('alice')!.nick, 'Alice');
  counts.add('alice', 'alice', 4, false);
  t.equal(counts.get('alice')!.nick, 'alice');
  counts.add('alice', 'ALICE', 4, false);
  t.equal(counts.get('alice')!.nick, 'ALICE');
  t.match(counts.get('alice'), { lines: 3, hiddenLines: 0, hiddenHourly: null });
});

t.test('a restore puts counts back; totals keep the lines only', async (t) => {
  const counts = new NickCounts();
  const hours = Array.from({ length: 24 }, (_, hour) => hour);
  counts.set('bob', 'Bob', 276, 2, hours, [0, 2]);
  counts.add('bob', 'Bob', 1, true);
  t.match(counts.get('bob'), { nick: 'Bob', lines: 277, hiddenLines: 3 });
  t.equal(counts.get('bob')!.hourly![1], 2);
  t.equal(counts.get('bob')!.hiddenHourly![1], 3);
  counts.set('bob', 'bob', 5, 0, null, null);
  t.match(counts.get('bob'), { nick: 'bob', lines: 5, hiddenLines: 0, hiddenHourly: null });
  t.equal(
    counts.get('bob')!.hourly!.reduce((sum, lines) => sum + lines, 0),
    0,
    'a restore replaces the hours',
  );

  counts.add('carol', 'Carol', 0, true);
  const totals = counts.totals();
  counts.add('carol', 'Carol', 0, false);
  t.equal(totals.size, 2);
  t.same(totals.get('carol'), { nick: 'Carol', lines: 1, hiddenLines: 1, hourly: null, hiddenHourly: null });
  t.equal(totals.hasHours, false);
  t.same(
    [...totals].map(([key, record]) => [key, record.lines]),
    [
      ['bob', 5],
      ['carol', 1],
    ],
    'totals do not follow later counting',
  );
});

t.test('stored totals: a nick stored twice is kept as written, and found as the later record', async (t) => {
  const builder = new NickTotalsBuilder();
  builder.add('dave', 'Dave', 3, 0);
  builder.add('erin', 'Erin', 1, 1);
  builder.add('dave', 'DAVE', 4, 2);
  const totals = builder.build();
  t.equal(totals.size, 3);
  t.same(totals.get('dave'), { nick: 'DAVE', lines: 4, hiddenLines: 2, hourly: null, hiddenHourly: null });
  t.equal(totals.indexOf('erin'), 1);
  t.equal(totals.indexOf('frank'), -1);
  t.same(
    [...totals.values()].map((record) => record.lines),
    [3, 1, 4],
  );
});

t.test('lines per nick and channel agree with a plain map, and group by channel in steps', async (t) => {
  const speakers = new SpeakerCounts();
  const expected = new Map<string, number>();
  const random = seeded(9);
  const channels = 300;
  for (let line = 0; line < 200_000; line++) {
    const nick = Math.floor(random() * 20_000);
    const channel = Math.floor(channels * random() ** 2);
    speakers.add(nick, channel);
    expected.set(`${nick}/${channel}`, (expected.get(`${nick}/${channel}`) ?? 0) + 1);
  }
  speakers.add(0, 0, 5);
  expected.set('0/0', (expected.get('0/0') ?? 0) + 5);
  t.equal(speakers.size, expected.size);
  t.equal(speakers.get(0, 0), expected.get('0/0'));
  t.equal(speakers.get(19_999, channels + 1), 0, 'a pair never counted');

  const seen = new Map<string, number>();
  speakers.forEach((nick, channel, lines) => seen.set(`${nick}/${channel}`, lines));
  t.same(seen, expected, 'forEach gives every pair once');

  let grouping = speakers.grouping(channels);
  let steps = 1;
  while (!grouping.step()) steps++;
  t.ok(steps > 2, `grouped in ${steps} steps`);
  const grouped = new Map<string, number>();
  for (let channel = 0; channel < channels; channel++) {
    for (let at = grouping.offsets[channel]!; at < grouping.offsets[channel + 1]!; at++) {
      grouped.set(`${grouping.nicks[at]}/${channel}`, grouping.lines[at]!);
    }
  }
  t.same(grouped, expected, 'each pair under its own channel');

  // A grouping is of its moment: counting after it started changes nothing in it.
  const before = expected.get('0/0')!;
  const later = speakers.grouping(channels, grouping);
  speakers.add(0, 0);
  speakers.add(99_999, 7);
  while (!later.step());
  let zeroLines = -1;
  for (let at = later.offsets[0]!; at < later.offsets[1]!; at++)
    if (later.nicks[at] === 0) zeroLines = later.lines[at]!;
  t.equal(zeroLines, before, 'a line counted after the grouping started is in the next one');
  grouping = later;
  t.equal(grouping.offsets[channels], expected.size, 'the pair added later is not in it');
  t.equal(speakers.size, expected.size + 1, 'but it is counted');
  t.same(
    [...speakers.nicksIn(7)].sort((a, b) => a - b),
    [...expected.keys()]
      .filter((key) => key.endsWith('/7'))
      .map((key) => Number(key.split('/')[0]))
      .concat(99_999)
      .sort((a, b) => a - b),
    "a channel's nicks, each once",
  );
});
