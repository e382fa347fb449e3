import t from 'tap';
import { inTurn } from '../../../plugins/stats/in-turn.js';

/** Tasks that stay unanswered until the test answers them, recording what was started when. */
function pending() {
  const started: string[] = [];
  const answers = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  const task = (item: string) =>
    new Promise<void>((resolve, reject) => {
      started.push(item);
      answers.set(item, { resolve, reject });
    });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { started, answers, task, settle };
}

t.test('at most `limit` unanswered, the next started as one is answered, in order', async (t) => {
  const { started, answers, task, settle } = pending();
  const done = inTurn(['a', 'b', 'c', 'd'], { limit: 2 }, task);
  t.same(started, ['a', 'b']);
  answers.get('b')!.resolve();
  await settle();
  t.same(started, ['a', 'b', 'c']);
  for (const item of ['a', 'c']) answers.get(item)!.resolve();
  await settle();
  t.same(started, ['a', 'b', 'c', 'd']);
  answers.get('d')!.resolve();
  await done;
});

t.test('the unanswered weight stays within maxWeight, but one heavy item is always asked', async (t) => {
  const { started, answers, task, settle } = pending();
  const weights: Record<string, number> = { a: 6, b: 5, c: 30, d: 1 };
  const done = inTurn(['a', 'b', 'c', 'd'], { limit: 8, weight: (item) => weights[item]!, maxWeight: 20 }, task);
  t.same(started, ['a', 'b'], 'c would pass 20 with a and b out');
  for (const item of ['a', 'b']) answers.get(item)!.resolve();
  await settle();
  t.same(started, ['a', 'b', 'c'], 'alone, c goes out although it weighs 30');
  answers.get('c')!.resolve();
  await settle();
  answers.get('d')!.resolve();
  await done;
  t.same(started, ['a', 'b', 'c', 'd']);
});

t.test('the first failure rejects, and nothing more is started', async (t) => {
  const { started, answers, task, settle } = pending();
  const done = inTurn(['a', 'b', 'c'], { limit: 1 }, task);
  answers.get('a')!.reject(new Error('no reply'));
  await t.rejects(done, { message: 'no reply' });
  await settle();
  t.same(started, ['a']);
});
