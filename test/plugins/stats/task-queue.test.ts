import t from 'tap';
import { createLogger } from '../../../lib/logger.js';
import { TaskQueue } from '../../../plugins/stats/task-queue.js';

t.test('tasks run one at a time, in order; asking again for a waiting task joins it', async (t) => {
  const lines: string[] = [];
  const queue = new TaskQueue(createLogger({ level: 'debug', sink: (line) => lines.push(line) }));
  const events: string[] = [];
  let release!: () => void;
  const blocked = new Promise<void>((resolve) => (release = resolve));
  const first = queue.run('sync', async () => {
    events.push('sync start');
    await blocked;
    events.push('sync end');
  });
  const second = queue.run('latency', async () => {
    events.push('latency');
  });
  t.equal(
    queue.run('sync', async () => {
      events.push('second sync');
    }),
    first,
    'a running task is joined, not repeated',
  );
  t.ok(queue.has('latency'));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(events, ['sync start'], 'latency waits for the sync');
  release();
  await Promise.all([first, second]);
  t.same(events, ['sync start', 'sync end', 'latency']);
  t.notOk(queue.has('sync'));
  t.match(
    lines.filter((line) => line.includes('task done')).map((line) => line.replace(/.*task done /, '')),
    [/^task=sync ms=\d+$/, /^task=latency ms=\d+$/],
    'each task that ends says how long it took, for an operator reading a debug log',
  );

  await queue.run('broken', async () => {
    throw new Error('boom');
  });
  t.match(lines.at(-1), /WARN .*broken failed.*boom/, 'a failure is logged, and the queue goes on');
  await queue.run('after', async () => {
    events.push('after');
  });
  t.equal(events.at(-1), 'after');
});

t.test('runFresh: a running task does not count, a waiting one is joined', async (t) => {
  const queue = new TaskQueue(createLogger({ level: 'error', sink: () => undefined }));
  const events: string[] = [];
  let release!: () => void;
  const blocked = new Promise<void>((resolve) => (release = resolve));
  const running = queue.run('sync', async () => {
    events.push('first');
    await blocked;
  });
  await new Promise((resolve) => setImmediate(resolve));
  const fresh = queue.runFresh('sync', async () => {
    events.push('fresh');
  });
  t.not(fresh, running, 'a new one is queued behind the running one');
  t.equal(
    queue.runFresh('sync', async () => {
      events.push('third');
    }),
    fresh,
    'and joined while it waits',
  );
  t.equal(
    queue.run('sync', async () => {
      events.push('fourth');
    }),
    fresh,
    'run joins the waiting one too',
  );
  release();
  await fresh;
  t.same(events, ['first', 'fresh']);
  t.notOk(queue.has('sync'), 'forgotten once both ended');
});
