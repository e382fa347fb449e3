/** Several runs of one benchmark as one table: the median and the worst run, never the best. */
import t from 'tap';
import { measureOf, mergeRuns } from '../../bench/repeat.js';
import type { BenchResult, Figure } from '../../bench/common.js';

function result(figures: Figure[]): BenchResult {
  return { title: 'Scale', setup: 'One network.', figures };
}

t.test('the number a target judges', async (t) => {
  t.equal(measureOf({ name: 'p99', value: '24.5 ms (p50 0.3 ms, max 80.1 ms)', target: '≤ 20 ms' }), 24.5);
  t.equal(measureOf({ name: 'page', value: '0.84 ms / 4.50 ms', target: 'p99 ≤ 20 ms' }), 4.5, 'a p99 after a p50');
  t.equal(measureOf({ name: 'rss', value: '136 MB / 147 MB (148 MB)', target: '≤ 150 MB' }), 147);
  t.equal(measureOf({ name: 'users', value: '1,234 users', target: '≥ 1,000' }), 1234);
  t.equal(measureOf({ name: 'own', value: 'three', target: '≤ 2', measure: 3 }), 3, 'its own measure first');
  t.equal(measureOf({ name: 'none', value: 'never', target: '≤ 2' }), null);
});

t.test('lower is better: the median and the worst; met only if every run met it', async (t) => {
  const runs = [12, 31, 4].map((p99) =>
    result([{ name: 'HTTP p99', value: `${p99} ms (max ${p99 * 2} ms)`, target: '≤ 20 ms', pass: p99 <= 20 }]),
  );
  const [figure] = mergeRuns(runs).figures;
  t.equal(figure!.value, 'median 12 ms (max 24 ms); worst 31 ms (max 62 ms) (of 3 runs: 12, 31, 4)');
  t.equal(figure!.pass, false, 'one run missed it');
  t.match(mergeRuns(runs).setup, /^One network\. Run 3 times/);
});

t.test('higher is better: the worst is the smallest', async (t) => {
  const runs = [0.93, 0.81, 0.99].map((ratio) =>
    result([{ name: 'ratio', value: `${ratio}×`, target: '≥ 0.85×', pass: ratio >= 0.85 }]),
  );
  t.equal(mergeRuns(runs).figures[0]!.value, 'median 0.93×; worst 0.81× (of 3 runs: 0.93, 0.81, 0.99)');
});

t.test('figures without a target: one value where the runs agree, each run where they differ', async (t) => {
  const merged = mergeRuns([
    result([
      { name: 'network', value: '50,001 users' },
      { name: 'crowd', value: '4 processes' },
    ]),
    result([
      { name: 'network', value: '50,002 users' },
      { name: 'crowd', value: '4 processes' },
    ]),
  ]);
  t.equal(merged.figures[0]!.value, 'run 1: 50,001 users; run 2: 50,002 users');
  t.equal(merged.figures[1]!.value, '4 processes (each of 2 runs)');
});

t.test('a figure one run lacks is not met, and says so', async (t) => {
  const merged = mergeRuns([result([{ name: 'sync', value: '3.1 s', target: '≤ 15 s', pass: true }]), result([])]);
  t.equal(merged.figures[0]!.pass, false);
  t.match(merged.figures[0]!.value, /not measured in 1 of 2 runs$/);
});

t.test('one run is the run itself', async (t) => {
  const one = result([{ name: 'sync', value: '3.1 s', target: '≤ 15 s', pass: true }]);
  t.equal(mergeRuns([one]), one);
});
