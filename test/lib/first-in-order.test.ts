import t from 'tap';
import { firstInOrder } from '../../lib/first-in-order.js';

/** A small generator of repeatable numbers (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('firstInOrder gives what a stable sort and a slice give', async (t) => {
  const next = random(7);
  // Few distinct values, so most comparisons are ties and the order among equals is what is tested.
  const items = Array.from({ length: 2000 }, (_, index) => ({ index, value: Math.floor(next() * 20) }));
  const byValue = (left: { value: number }, right: { value: number }) => left.value - right.value;
  const byValueDescending = (left: { value: number }, right: { value: number }) => right.value - left.value;
  for (const count of [0, 1, 2, 10, 100, 1999, 2000, 2500]) {
    for (const compare of [byValue, byValueDescending]) {
      const expected = [...items].sort(compare).slice(0, count);
      t.same(
        firstInOrder(items, count, compare).map((item) => item.index),
        expected.map((item) => item.index),
        `${count} by ${compare.name}`,
      );
    }
  }
});

t.test('firstInOrder compares an item that does not make the cut only once', async (t) => {
  const items = Array.from({ length: 10_000 }, (_, index) => index);
  let comparisons = 0;
  const kept = firstInOrder(items, 10, (left, right) => {
    comparisons++;
    return left - right;
  });
  t.same(kept, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // 10 insertions of a few comparisons each, then one comparison for each of the 9,990 others.
  t.ok(comparisons < 10_100, `${comparisons} comparisons`);
});

t.test('firstInOrder takes any iterable and an empty one', async (t) => {
  t.same(
    firstInOrder(new Set([3, 1, 2]), 2, (left, right) => left - right),
    [1, 2],
  );
  t.same(
    firstInOrder([], 5, (left: number, right: number) => left - right),
    [],
  );
});
