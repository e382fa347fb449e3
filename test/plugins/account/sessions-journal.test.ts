/**
 * The sessions slice's journal: its snapshot as the store last took it plus the records drained since,
 * replayed into a fresh slice, give the sessions as they are now, through a random run of starts, uses,
 * sign-outs, expiries and evictions.
 */
import t from 'tap';
import { SessionsSlice } from '../../../plugins/account/sessions.js';

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

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
  let base = live.persistence.snapshot();
  let records: unknown[] = [];
  let failures = 0;
  const check = (step: number) => {
    records.push(...live.persistence.journal!.drain());
    const copy = slice(clock);
    copy.persistence.restore(structuredClone(base));
    for (const record of structuredClone(records)) copy.persistence.journal!.replay(record);
    return t.same(copy.persistence.snapshot(), live.persistence.snapshot(), `step ${step}`, { diagnostic: false });
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
    } else if (moment < 0.35) {
      records.push(...live.persistence.journal!.drain());
      base = live.persistence.snapshot();
      records = [];
    }
  }
  t.ok(check(2000));
  t.equal(failures, 0);
});
