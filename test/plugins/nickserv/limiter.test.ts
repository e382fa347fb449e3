import t from 'tap';
import { FailureWindow } from '../../../plugins/nickserv/limiter.js';

const MINUTE = 60_000;

function window(maxFailures = 5) {
  const clock = { now: 1_000_000 };
  const limiter = new FailureWindow({
    maxFailures,
    windowMs: 15 * MINUTE,
    pendingRetryMs: 10_000,
    now: () => clock.now,
  });
  const fail = (key: string, times = 1): void => {
    for (let i = 0; i < times; i++) {
      limiter.start(key);
      limiter.finish(key, true);
    }
  };
  return { limiter, clock, fail };
}

t.test('the sixth try after five failures waits until the oldest leaves the window', async (t) => {
  const { limiter, clock, fail } = window();
  for (let i = 0; i < 5; i++) {
    t.equal(limiter.waitMs('alice'), 0, `try ${i + 1} is allowed`);
    fail('alice');
    clock.now += MINUTE;
  }
  // Failures at 0, 1, 2, 3, 4 minutes; now is 5 minutes: the first leaves at 15.
  t.equal(limiter.waitMs('alice'), 10 * MINUTE, 'refused for the rest of the first failure’s window');
  t.equal(limiter.waitMs('bob'), 0, 'another key is not affected');
  clock.now += 10 * MINUTE;
  t.equal(limiter.waitMs('alice'), 0, 'the window slid past the first failure');
  t.equal(limiter.failures('alice'), 4);
});

t.test('a success clears the failures; running checks count against the limit', async (t) => {
  const { limiter, fail } = window(3);
  fail('alice', 2);
  limiter.start('alice');
  t.equal(limiter.waitMs('alice'), 10_000, 'two failures and one running check fill the limit of 3');
  limiter.finish('alice', false);
  t.equal(limiter.waitMs('alice'), 0, 'the running check ended without failing');
  limiter.clear('alice');
  t.equal(limiter.failures('alice'), 0, 'cleared');
  t.equal(limiter.size, 0, 'a key with nothing left is forgotten');
  for (let i = 0; i < 3; i++) limiter.start('burst');
  t.ok(limiter.waitMs('burst') > 0, 'three guesses at once fill the limit before any answer');
});

t.test('sweep forgets keys whose failures all expired', async (t) => {
  const { limiter, clock, fail } = window();
  fail('a');
  fail('b', 5);
  t.equal(limiter.size, 2);
  clock.now += 15 * MINUTE + 1;
  limiter.sweep();
  t.equal(limiter.size, 0);
  t.equal(limiter.waitMs('b'), 0);
});
