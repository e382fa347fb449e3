import t from 'tap';
import { ClientThrottle } from '../../lib/rate-limiter.js';

t.test('ClientThrottle reports each run of refusals once per client', async (t) => {
  let now = 0;
  const throttle = new ClientThrottle({ capacity: 2, refill_per_second: 1 }, () => now);
  const take = (key: string) => {
    const { allowed, firstRefusal } = throttle.take(key);
    return [allowed, firstRefusal];
  };
  t.same(take('a'), [true, false]);
  t.same(take('a'), [true, false]);
  t.same(take('a'), [false, true], 'the first refusal is reported');
  t.same(take('a'), [false, false], 'the next ones of the run are not');
  t.same(take('b'), [true, false], 'another client has its own bucket');
  now += 1000;
  t.same(take('a'), [true, false], 'allowed again once refilled');
  t.same(take('a'), [false, true], 'a new run of refusals is reported again');
});

t.test('ClientThrottle forgets refilled buckets once it holds many clients', async (t) => {
  let now = 0;
  const throttle = new ClientThrottle({ capacity: 1, refill_per_second: 1 }, () => now);
  for (let index = 0; index <= 1000; index++) throttle.take(`client${index}`);
  t.equal(throttle.size, 1001);
  t.equal(throttle.take('client0').allowed, false, 'client0 is still empty');
  now += 1000;
  throttle.take('late');
  t.equal(throttle.size, 1, 'every refilled bucket is gone; only the newest client has one');
});
