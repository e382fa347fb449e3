import t from 'tap';
import { TimeSlice } from '../../lib/time-slice.js';

t.test('a loop with a time slice lets a timer due run before it ends', async (t) => {
  // Each item takes 0.5 ms of a fake clock: four items to a slice, whatever the machine's load.
  let clock = 0;
  const slice = new TimeSlice(2, () => clock);
  let timerRanAt = -1;
  setTimeout(() => (timerRanAt = done), 0);
  let done = 0;
  let pauses = 0;
  for (let item = 0; item < 40; item++) {
    if (slice.spent()) {
      pauses++;
      await slice.pause();
    }
    clock += 0.5;
    // A little real time too, so that the timer comes due before the loop is done.
    const until = performance.now() + 0.1;
    while (performance.now() < until);
    done++;
  }
  t.equal(pauses, 9, 'paused after every 4 of 40 items');
  t.ok(timerRanAt > 0 && timerRanAt < 40, `the timer ran after ${timerRanAt} of 40 items`);
});

t.test('within its slice a loop does not pause', async (t) => {
  const slice = new TimeSlice(1000);
  t.notOk(slice.spent());
});
