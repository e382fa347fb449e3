import t from 'tap';
import { FailureWindow, RefusedError, type Admission } from '../../../plugins/nickserv/limiter.js';

const MINUTE = 60_000;

function window(
  options: { maxFailures?: number; maxQueued?: number; clearOnSuccess?: boolean; maxWaitMs?: number } = {},
) {
  const clock = { now: 1_000_000 };
  const limiter = new FailureWindow({
    maxFailures: options.maxFailures ?? 5,
    windowMs: 15 * MINUTE,
    maxQueued: options.maxQueued ?? 32,
    queueFullRetryMs: 10_000,
    maxWaitMs: options.maxWaitMs ?? 60_000,
    clearOnSuccess: options.clearOnSuccess ?? true,
    now: () => clock.now,
  });
  const fail = async (key: string, times = 1): Promise<void> => {
    for (let i = 0; i < times; i++) (await limiter.admit(key)).finish('failed');
  };
  return { limiter, clock, fail };
}

/** Admissions of `key` in arrival order; each entry is the admission once granted, or the refusal. */
function burst(limiter: FailureWindow, key: string, count: number) {
  const settled: (Admission | RefusedError | undefined)[] = new Array(count).fill(undefined);
  const all = Array.from({ length: count }, (_, index) =>
    limiter.admit(key).then(
      (admission) => {
        settled[index] = admission;
      },
      (error: unknown) => {
        if (!(error instanceof RefusedError)) throw error;
        settled[index] = error;
      },
    ),
  );
  return { settled, all: Promise.all(all) };
}

/** Let promise callbacks run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test('the sixth try after five failures waits until the oldest leaves the window', async (t) => {
  const { limiter, clock, fail } = window();
  for (let i = 0; i < 5; i++) {
    t.equal(limiter.waitMs('alice'), 0, `try ${i + 1} is allowed`);
    await fail('alice');
    clock.now += MINUTE;
  }
  // Failures at 0, 1, 2, 3, 4 minutes; now is 5 minutes: the first leaves at 15.
  t.equal(limiter.waitMs('alice'), 10 * MINUTE, 'refused for the rest of the first failure’s window');
  await t.rejects(limiter.admit('alice'), new RefusedError('failures', 10 * MINUTE), 'admit is refused');
  t.equal(limiter.waitMs('bob'), 0, 'another key is not affected');
  clock.now += 10 * MINUTE;
  t.equal(limiter.waitMs('alice'), 0, 'the window slid past the first failure');
  t.equal(limiter.failures('alice'), 4);
});

t.test('a burst of right passwords all run, never more at once than failures are left', async (t) => {
  const { limiter } = window({ maxFailures: 5 });
  const { settled, all } = burst(limiter, 'alice', 16);
  await turn();
  t.equal(limiter.running('alice'), 5, 'five run');
  t.equal(limiter.queued('alice'), 11, 'the others wait, none refused');
  let peak = 0;
  let succeeded = 0;
  while (succeeded < 16) {
    peak = Math.max(peak, limiter.running('alice'));
    const index = settled.findIndex((entry) => entry !== undefined && !(entry instanceof RefusedError));
    const admission = settled[index] as Admission;
    settled[index] = undefined;
    admission.finish('succeeded');
    succeeded++;
    await turn();
  }
  await all;
  t.equal(peak, 5, 'at most five at once');
  t.equal(limiter.size, 0, 'nothing is left of the key');
});

t.test('running checks never add up to more failures than the limit allows', async (t) => {
  const { limiter, fail } = window({ maxFailures: 3 });
  await fail('alice', 2);
  const { settled, all } = burst(limiter, 'alice', 4);
  await turn();
  t.equal(limiter.running('alice'), 1, 'two failures leave room for one check at a time');
  t.equal(limiter.queued('alice'), 3);
  (settled[0] as Admission).finish('failed');
  await all;
  t.equal(limiter.failures('alice'), 3, 'the third failure reached the limit');
  t.ok(
    settled.slice(1).every((entry) => entry instanceof RefusedError && entry.reason === 'failures'),
    'the waiting checks are refused with the failures, never run',
  );
  t.equal(limiter.running('alice'), 0);
});

t.test('a check that ends unknown (503) is no failure and lets the next one in', async (t) => {
  const { limiter, fail } = window({ maxFailures: 2 });
  await fail('alice');
  const { settled, all } = burst(limiter, 'alice', 2);
  await turn();
  t.equal(limiter.running('alice'), 1);
  (settled[0] as Admission).finish('unknown');
  await turn();
  t.equal(limiter.running('alice'), 1, 'the second took its place');
  (settled[1] as Admission).finish('succeeded');
  await all;
  t.equal(limiter.failures('alice'), 0, 'the success cleared the failure');
});

t.test('a success clears a nick’s failures but not a token’s', async (t) => {
  const nick = window({ maxFailures: 3 });
  await nick.fail('alice', 2);
  (await nick.limiter.admit('alice')).finish('succeeded');
  t.equal(nick.limiter.failures('alice'), 0, 'cleared');
  t.equal(nick.limiter.size, 0, 'a key with nothing left is forgotten');

  const token = window({ maxFailures: 3, clearOnSuccess: false });
  await token.fail('stuffer', 2);
  (await token.limiter.admit('stuffer')).finish('succeeded');
  t.equal(token.limiter.failures('stuffer'), 2, 'kept');
});

t.test('past maxQueued waiting checks, the next is refused at once, not counted', async (t) => {
  const { limiter } = window({ maxFailures: 1, maxQueued: 2 });
  const { settled, all } = burst(limiter, 'alice', 4);
  await turn();
  t.equal(limiter.running('alice'), 1);
  t.equal(limiter.queued('alice'), 2);
  t.match(settled[3], { reason: 'queue', retryMs: 10_000 }, 'the fourth finds the line full');
  for (let index = 0; index < 3; index++) {
    (settled[index] as Admission).finish('succeeded');
    await turn();
  }
  await all;
  t.equal(limiter.failures('alice'), 0);
  t.equal(limiter.size, 0);
});

t.test('a check that waits longer than maxWaitMs gives up, and the key forgets it', async (t) => {
  const { limiter } = window({ maxFailures: 1, maxWaitMs: 30 });
  const running = await limiter.admit('alice');
  const started = Date.now();
  await t.rejects(limiter.admit('alice'), new RefusedError('wait', 1000));
  t.ok(Date.now() - started >= 25, 'after its longest wait');
  t.equal(limiter.queued('alice'), 0);
  running.finish('succeeded');
  t.equal(limiter.size, 0, 'nothing left of the key');
});

t.test('finish twice counts once', async (t) => {
  const { limiter } = window({ maxFailures: 2 });
  const admission = await limiter.admit('alice');
  admission.finish('failed');
  admission.finish('failed');
  t.equal(limiter.failures('alice'), 1);
  t.equal(limiter.running('alice'), 0);
});

t.test('sweep forgets keys whose failures all expired', async (t) => {
  const { limiter, clock, fail } = window();
  await fail('a');
  await fail('b', 5);
  t.equal(limiter.size, 2);
  clock.now += 15 * MINUTE + 1;
  limiter.sweep();
  t.equal(limiter.size, 0);
  t.equal(limiter.waitMs('b'), 0);
});
