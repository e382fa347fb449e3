import t from 'tap';
import { TimeSlice } from '../../lib/time-slice.js';

t.test('a loop with a time slice lets a timer due run before it ends', async (t) => {
  const slice = new TimeSlice(2);
  let timerRanAt = -1;
  setTimeout(() => (timerRanAt = done), 0);
  let done = 0;
  let pauses = 0;
  for (let item = 0; item < 40; item++) {
    if (slice.spent()) {
      pauses++;
      await slice.pause();
    }
    const until = performance.now() + 0.5;
    while (performance.now() < until);
    done++;
  }
  t.ok(pauses >= 5, `paused ${pauses} times in 20 ms of work`);
  t.ok(timerRanAt > 0 && timerRanAt < 40, `the timer ran after ${timerRanAt} of 40 items`);
});

t.test('within its slice a loop does not pause', async (t) => {
  const slice = new TimeSlice(1000);
  t.notOk(slice.spent());
});
