import t from 'tap';
import { Pacer } from '../../../lib/irc/pacer.js';

function pacer(burst: number) {
  let now = 0;
  const written: string[] = [];
  const instance = new Pacer({ burst, intervalMs: 1000, write: (line) => written.push(line), now: () => now });
  t.teardown(() => instance.clear());
  return { pacer: instance, written, advance: (ms: number) => (now += ms) };
}

t.test('urgent lines go ahead of the others, in their own order', async (t) => {
  const { pacer: queue, written } = pacer(1);
  queue.enqueue('first');
  queue.enqueue('later 1');
  queue.enqueue('later 2');
  queue.enqueue('answer 1', undefined, { urgent: true });
  queue.enqueue('answer 2', undefined, { urgent: true });
  t.same(written, ['first']);
  t.equal(queue.pending, 4);
  await new Promise((resolve) => setTimeout(resolve, 0));
  queue.clear();
  t.equal(queue.pending, 0, 'clear drops both queues');
});

t.test('a line no longer wanted is dropped without using a token', async (t) => {
  const { pacer: queue, written } = pacer(2);
  let wanted = false;
  const wrote: string[] = [];
  queue.enqueue('dropped', () => wrote.push('dropped'), { urgent: true, stillWanted: () => wanted });
  queue.enqueue('kept 1');
  queue.enqueue('kept 2');
  t.same(written, ['kept 1', 'kept 2'], 'both tokens went to the lines still wanted');
  t.same(wrote, [], 'no write callback for a dropped line');
  wanted = true;
  queue.enqueue('sent', () => wrote.push('sent'), { stillWanted: () => wanted });
  t.equal(queue.pending, 1, 'no token left now');
});

t.test('urgent lines are written first once tokens come back', async (t) => {
  const { pacer: queue, written, advance } = pacer(1);
  queue.enqueue('a');
  queue.enqueue('b');
  queue.enqueue('urgent', undefined, { urgent: true });
  advance(1000);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.same(written.slice(0, 2), ['a', 'urgent']);
});
