import t from 'tap';
import { PoolBusyError, TaskPool } from '../../../plugins/nickserv/pool.js';

/** A task that runs until released. */
function heldTask() {
  let release!: () => void;
  let started = false;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    run: async () => {
      started = true;
      await done;
      return 'ok';
    },
    release: () => release(),
    get started() {
      return started;
    },
  };
}

t.test('at most `size` tasks run; the queue takes the rest in order', async (t) => {
  const pool = new TaskPool({ size: 2, queueLimit: 5, maxWaitMs: 10_000 });
  const tasks = [heldTask(), heldTask(), heldTask()];
  const results = tasks.map((task) => pool.run(task.run));
  t.equal(pool.active, 2);
  t.equal(pool.queued, 1);
  t.notOk(tasks[2]!.started, 'the third waits');
  tasks[0]!.release();
  await results[0];
  await t.resolves(
    (async () => {
      while (!tasks[2]!.started) await new Promise((resolve) => setImmediate(resolve));
    })(),
  );
  t.equal(pool.active, 2, 'the freed slot went to the waiting task');
  tasks[1]!.release();
  tasks[2]!.release();
  t.same(await Promise.all(results), ['ok', 'ok', 'ok']);
  t.equal(pool.active, 0);
});

t.test('a full queue refuses at once; a task waiting too long gives up', async (t) => {
  const pool = new TaskPool({ size: 1, queueLimit: 1, maxWaitMs: 50 });
  const running = heldTask();
  const first = pool.run(running.run);
  const waiting = pool.run(async () => 'late');
  await t.rejects(
    pool.run(async () => 'refused'),
    PoolBusyError,
    'queue full',
  );
  await t.rejects(waiting, { name: 'PoolBusyError', message: /within 50 ms/ }, 'waited too long');
  t.equal(pool.queued, 0);
  running.release();
  t.equal(await first, 'ok');
});

t.test('a failing task frees its slot; close rejects the waiting ones', async (t) => {
  const pool = new TaskPool({ size: 1, queueLimit: 5, maxWaitMs: 10_000 });
  await t.rejects(
    pool.run(async () => {
      throw new Error('boom');
    }),
    { message: 'boom' },
  );
  t.equal(pool.active, 0);
  const running = heldTask();
  const first = pool.run(running.run);
  const waiting = pool.run(async () => 'never');
  pool.close();
  await t.rejects(waiting, { name: 'PoolBusyError', message: /stopping/ });
  await t.rejects(
    pool.run(async () => 'after'),
    PoolBusyError,
  );
  running.release();
  t.equal(await first, 'ok', 'a running task finishes');
});
