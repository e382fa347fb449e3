/**
 * The tokens slice's journal: at any moment, its snapshot as the store last took it plus the records drained
 * since, replayed in order into a fresh slice, give the slice as it is now. Checked over a long random run of
 * every kind of change, with drains and snapshots at random moments, as the store takes them.
 */
import t from 'tap';
import { TokensSlice, type ApiToken, type AuditActor } from '../../../plugins/tokens/model.js';
import { journalFollower, seeded } from '../../support/journal-check.js';

function slice(clock: { now: number }): TokensSlice {
  let counter = 0;
  return new TokensSlice({
    onChange: () => undefined,
    fold: (name) => name.toLowerCase(),
    clock: () => new Date(clock.now),
    random: (size) => Buffer.alloc(size, ++counter),
  });
}

const actor: AuditActor = { account: 'boss', via: 'irc' };
const DAY = 24 * 60 * 60 * 1000;

t.test('snapshot + drained records replayed = the slice now, through a random run of every change', async (t) => {
  const random = seeded(39);
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const live = slice(clock);
  const follower = journalFollower(live, () => slice(clock));
  const check = (step: number) => {
    const { live: now, copy } = follower.compare();
    return t.same(copy, now, `step ${step}: the copy matches`, { diagnostic: false });
  };
  const pick = (): ApiToken | undefined => {
    const all = live.all();
    return all[Math.floor(random() * all.length)];
  };
  let failures = 0;
  for (let step = 0; step < 3000 && failures < 3; step++) {
    clock.now += Math.floor(random() * 6 * 60 * 60 * 1000);
    const roll = random();
    const token = pick();
    if (roll < 0.2 || !token) live.create(`acct${Math.floor(random() * 5)}`, `t${step}`, actor);
    else if (roll < 0.35) live.grant(token, [`irc.e${Math.floor(random() * 4)}`, 'netstats.*'], actor);
    else if (roll < 0.45)
      live.deny(
        token,
        ['netstats.servers', `irc.e${Math.floor(random() * 4)}`],
        ['netstats.servers', 'netstats.users'],
        actor,
      );
    else if (roll < 0.5) live.request(token, `irc.r${Math.floor(random() * 3)}`, actor);
    else if (roll < 0.55) live.decline(token, token.requests[0] ?? 'irc.none', actor);
    else if (roll < 0.6) live.setStaff(token, random() < 0.5, actor);
    else if (roll < 0.7) live.revoke(token, actor);
    else if (roll < 0.85) live.recordUse(token, random() < 0.5 ? 'irc.e1' : null);
    else if (roll < 0.9) live.forget(live.expired({ revokedDays: 3, auditDays: 20, auditMaxEntries: 300 }, clock.now));
    // The store drains at every append, and takes a snapshot (with a drain in the same instant) at a compaction.
    const moment = random();
    if (moment < 0.3) {
      if (!check(step)) failures++;
    } else if (moment < 0.6) follower.drain();
    else if (moment < 0.65) follower.compact();
  }
  t.ok(check(3000), 'at the end too');
  t.ok(live.auditCount <= 300 + 50, `audit entries stay bounded by the policy (${live.auditCount})`);
  t.equal(failures, 0);
});

t.test('uses between two drains are one record; the id counter survives tokens forgotten', async (t) => {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const live = slice(clock);
  const { token } = live.create('alice', 'one', actor);
  live.persistence.journal!.drain();
  for (let use = 0; use < 50; use++) live.recordUse(token, 'irc.users');
  const records = live.persistence.journal!.drain();
  t.equal(records.length, 1, 'fifty uses, one record');
  t.match(records[0], { token: { id: token.id, uses: { 'irc.users': 50 } } });

  live.revoke(token, actor);
  clock.now += 10 * DAY;
  const expired = live.expired({ revokedDays: 7, auditDays: 365, auditMaxEntries: 1000 }, clock.now);
  t.same(
    expired.tokens.map((expiredToken) => expiredToken.id),
    [token.id],
  );
  t.equal(expired.audit.length, 0, 'its audit entries follow their own policy');
  live.forget(expired);
  t.equal(live.get(token.id), undefined, 'forgotten');
  const copy = slice(clock);
  copy.persistence.restore(structuredClone(live.persistence.snapshot()));
  const next = copy.create('bob', 'two', actor);
  t.equal(next.token.id, token.id + 1, 'a forgotten id is not handed out again');
});

t.test('the audit log is cut by age and by count, oldest first', async (t) => {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const live = slice(clock);
  const { token } = live.create('alice', 'one', actor);
  for (let day = 0; day < 10; day++) {
    clock.now += DAY;
    live.grant(token, [`irc.e${day}`], actor);
  }
  t.equal(live.auditCount, 11);
  const byAge = live.expired({ revokedDays: 30, auditDays: 5, auditMaxEntries: 100 }, clock.now);
  t.same(
    byAge.audit.map((entry) => entry.action),
    ['create', 'grant', 'grant', 'grant', 'grant'],
    'older than five days (the one of exactly five days stays)',
  );
  const byCount = live.expired({ revokedDays: 30, auditDays: 365, auditMaxEntries: 4 }, clock.now);
  t.equal(byCount.audit.length, 7, 'beyond the four kept');
  live.forget(byCount);
  t.equal(live.auditCount, 4);
  t.same(
    live.audit().map((entry) => entry.details),
    [['irc.e6'], ['irc.e7'], ['irc.e8'], ['irc.e9']],
  );
});
