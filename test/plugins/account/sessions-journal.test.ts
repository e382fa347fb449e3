/**
 * The sessions slice's journal: its snapshot as the store last took it plus the records drained since,
 * replayed into a fresh slice, give the sessions as they are now, through a random run of starts, uses,
 * sign-outs, expiries and evictions.
 */
import t from 'tap';
import { SessionsSlice } from '../../../plugins/account/sessions.js';
import { journalFollower, seeded } from '../../support/journal-check.js';

function slice(clock: { now: number }): SessionsSlice {
  let counter = 0;
  return new SessionsSlice({
    idleMs: 60 * 60_000,
    lifetimeMs: 12 * 60 * 60_000,
    maxPerAccount: 3,
    now: () => clock.now,
    fold: (name) => name.toLowerCase(),
    onChange: () => undefined,
    random: (size) => {
      const bytes = Buffer.alloc(size);
      bytes.writeUInt32BE(++counter);
      return bytes;
    },
  });
}

t.test('snapshot + drained records replayed = the sessions now', async (t) => {
  const random = seeded(7);
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const live = slice(clock);
  const ids: string[] = [];
  let failures = 0;
  const follower = journalFollower(live, () => slice(clock));
  const check = (step: number) => {
    const { live: now, copy } = follower.compare();
    return t.same(copy, now, `step ${step}`, { diagnostic: false });
  };
  for (let step = 0; step < 2000 && failures < 3; step++) {
    clock.now += Math.floor(random() * 20 * 60_000);
    const roll = random();
    const id = ids[Math.floor(random() * ids.length)];
    if (roll < 0.3 || id === undefined)
      ids.push(live.start(`acct${Math.floor(random() * 4)}`, `10.0.0.${step % 250}`).id);
    else if (roll < 0.7) {
      const session = live.find(id);
      if (session) live.touch(session, `10.1.0.${step % 250}`);
    } else if (roll < 0.8) {
      const session = live.find(id);
      if (session) live.end(session);
    } else if (roll < 0.85) live.endAll(`ACCT${Math.floor(random() * 4)}`);
    else live.sweep();
    const moment = random();
    if (moment < 0.3) {
      if (!check(step)) failures++;
    } else if (moment < 0.6) follower.drain();
    else if (moment < 0.65) follower.compact();
  }
  t.ok(check(2000));
  t.equal(failures, 0);
});
