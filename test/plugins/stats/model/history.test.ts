import t from 'tap';
import {
  bucketPoints,
  DAY_MS,
  HistorySlice,
  HOUR_MS,
  type HistoryPoint,
} from '../../../../plugins/stats/model/history.js';

const MINUTE_MS = 60 * 1000;
const start = Date.parse('2026-11-01T00:00:00Z');

function point(time: number, users: number | null, extra: Partial<HistoryPoint> = {}): HistoryPoint {
  return { time, users, channels: 5, operators: 1, servers: 3, maxUsers: 100, ...extra };
}

const retention = { fullMs: 7 * DAY_MS, hourlyMs: 90 * DAY_MS, dailyMs: 730 * DAY_MS };

t.test('buckets take the most of each number, timed at the bucket start; nulls do not count', async (t) => {
  const points = [
    point(start + 1 * MINUTE_MS, 10, { operators: null }),
    point(start + 2 * MINUTE_MS, 30, { operators: null }),
    point(start + 4 * MINUTE_MS, 20, { operators: null }),
    point(start + 5 * MINUTE_MS, null, { operators: 2 }),
    point(start + 61 * MINUTE_MS, 7),
  ];
  t.same(bucketPoints(points, 5 * MINUTE_MS), [
    point(start, 30, { operators: null }),
    point(start + 5 * MINUTE_MS, null, { operators: 2 }),
    point(start + 60 * MINUTE_MS, 7),
  ]);
  t.same(bucketPoints(points, HOUR_MS), [point(start, 30, { operators: 2 }), point(start + HOUR_MS, 7)]);
  t.same(bucketPoints(points, DAY_MS), [point(start, 30, { operators: 2 })]);
});

t.test('one point per add; queries select by time, inclusive', async (t) => {
  const history = new HistorySlice(retention);
  for (let i = 0; i < 10; i++) history.add(point(start + i * 5 * MINUTE_MS, 100 + i));
  t.equal(history.size, 10);
  const middle = history.query(start + 10 * MINUTE_MS, start + 20 * MINUTE_MS);
  t.same(
    middle.map((entry) => entry.users),
    [102, 103, 104],
  );
  t.same(history.query().length, 10);
  t.same(history.latest(), point(start + 45 * MINUTE_MS, 109));
  history.add(point(start + 3 * MINUTE_MS, 1));
  t.same(
    history.query(start, start + 5 * MINUTE_MS).map((entry) => entry.users),
    [100, 1, 101],
    'a point from a clock that stepped back is kept in order',
  );
});

t.test('full resolution for a week, then hourly for 90 days, then daily for two years, then gone', async (t) => {
  const history = new HistorySlice(retention);
  // Every 5 minutes for 3 hours, then a point far later.
  for (let i = 0; i < 36; i++) history.add(point(start + i * 5 * MINUTE_MS, i));
  t.equal(history.size, 36);
  history.add(point(start + 7 * DAY_MS + 2 * HOUR_MS + 30 * MINUTE_MS, 500));
  const afterWeek = history.query();
  t.same(
    afterWeek.map((entry) => [entry.time - start, entry.users]),
    [
      [0, 11],
      [HOUR_MS, 23],
      [2 * HOUR_MS, 29],
      [2 * HOUR_MS + 30 * MINUTE_MS, 30],
      [2 * HOUR_MS + 35 * MINUTE_MS, 31],
      [2 * HOUR_MS + 40 * MINUTE_MS, 32],
      [2 * HOUR_MS + 45 * MINUTE_MS, 33],
      [2 * HOUR_MS + 50 * MINUTE_MS, 34],
      [2 * HOUR_MS + 55 * MINUTE_MS, 35],
      [7 * DAY_MS + 2 * HOUR_MS + 30 * MINUTE_MS, 500],
    ],
    'points older than a week became hourly maxima; the rest of the hour on the edge is still full',
  );
  history.compact(start + 7 * DAY_MS + 3 * HOUR_MS);
  t.same(
    history.query().map((entry) => [entry.time - start, entry.users]),
    [
      [0, 11],
      [HOUR_MS, 23],
      [2 * HOUR_MS, 35],
      [7 * DAY_MS + 2 * HOUR_MS + 30 * MINUTE_MS, 500],
    ],
    'the hour on the edge merged once it aged',
  );
  history.compact(start + 91 * DAY_MS);
  t.same(
    history.query().map((entry) => [entry.time - start, entry.users]),
    [
      [0, 35],
      [7 * DAY_MS + 2 * HOUR_MS, 500],
    ],
    'hourly points older than 90 days became daily maxima; the week-old one is hourly now',
  );
  history.compact(start + 731 * DAY_MS);
  t.same(
    history.query().map((entry) => entry.time - start),
    [7 * DAY_MS],
    'daily points older than two years are gone',
  );
  history.compact(start + 740 * DAY_MS);
  t.equal(history.size, 0);
});

t.test('persistence: compact arrays, restored as they were; junk skipped', async (t) => {
  const history = new HistorySlice(retention);
  history.add(point(start, 10, { maxUsers: null }));
  history.add(point(start + 8 * DAY_MS, 20));
  const snapshot = JSON.parse(JSON.stringify(history.persistence.snapshot()));
  t.same(snapshot, {
    full: [[start + 8 * DAY_MS, 20, 5, 1, 3, 100]],
    hourly: [[start, 10, 5, 1, 3, null]],
    daily: [],
  });
  const restored = new HistorySlice(retention);
  restored.persistence.restore(snapshot);
  t.same(restored.query(), history.query());
  restored.persistence.restore({ full: [[start, 'x', 1], 'junk', [Number.NaN]], hourly: 'nope' } as never);
  t.same(restored.query(), [{ time: start, users: null, channels: 1, operators: null, servers: null, maxUsers: null }]);
  t.throws(() => restored.persistence.restore(null as never), { message: /"history" slice must be an object/ });
});
