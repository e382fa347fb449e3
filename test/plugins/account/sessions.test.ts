/** SessionsSlice on its own: ids kept as SHA-256, idle and absolute expiry, the most per account, the file. */
import { createHash } from 'node:crypto';
import t from 'tap';
import { SessionsSlice } from '../../../plugins/account/sessions.js';

function slice(options: { idleMs?: number; lifetimeMs?: number; maxPerAccount?: number } = {}) {
  const clock = { now: Date.parse('2026-11-21T10:00:00Z') };
  const changes: string[] = [];
  let counter = 0;
  const sessions = new SessionsSlice({
    idleMs: options.idleMs ?? 60_000,
    lifetimeMs: options.lifetimeMs ?? 600_000,
    maxPerAccount: options.maxPerAccount ?? 5,
    now: () => clock.now,
    fold: (name) => name.toLowerCase(),
    onChange: (kind) => changes.push(kind),
    // Distinct, known ids: 32 bytes each.
    random: (size) => Buffer.alloc(size, ++counter),
  });
  return { sessions, clock, changes };
}

t.test('a session is found by its id only, and kept by its SHA-256', async (t) => {
  const { sessions, changes } = slice();
  const { id, session } = sessions.start('Alice', '192.0.2.1');
  t.match(id, /^[A-Za-z0-9_-]{43}$/);
  t.equal(session.idSha256, createHash('sha256').update(id).digest('hex'));
  t.equal(sessions.find(id), session);
  t.equal(sessions.find(undefined), undefined);
  t.equal(sessions.find('short'), undefined, 'not an id');
  t.equal(sessions.find(session.idSha256.slice(0, 43)), undefined, 'the hash is no key');
  const stored = JSON.stringify(sessions.persistence.snapshot());
  t.notOk(stored.includes(id), 'the file never holds the id');
  t.match(stored, session.idSha256);
  t.same(changes, ['start']);
  t.equal(sessions.persistence.durable, true, 'written before a sign-in is answered');
});

t.test('idle for idleMs, or lifetimeMs old however busy: ended when next looked at, or swept', async (t) => {
  const { sessions, clock, changes } = slice();
  const { id, session } = sessions.start('alice', '192.0.2.1');
  clock.now += 59_999;
  sessions.touch(session, '192.0.2.1');
  clock.now += 59_999;
  t.equal(sessions.find(id), session, 'used within the idle time');
  clock.now += 1;
  t.equal(sessions.find(id), undefined, 'idle a minute: ended');
  t.equal(sessions.size, 0);
  t.same(changes, ['start', 'touch', 'expire']);

  const busy = sessions.start('bob', '192.0.2.1');
  for (let minute = 1; minute <= 9; minute++) {
    clock.now += 59_000;
    sessions.touch(busy.session, '192.0.2.1');
  }
  t.equal(sessions.secondsLeft(busy.session), 69, 'the cookie lasts what the session has left');
  clock.now += 69_000;
  t.equal(sessions.find(busy.id), undefined, 'ten minutes after its start, used or not');

  sessions.start('carol', '192.0.2.1');
  sessions.start('dave', '192.0.2.1');
  clock.now += 60_000;
  t.equal(sessions.sweep(), 2, 'the sweep drops what expired');
  t.equal(sessions.size, 0);
});

t.test('sign-out ends a session at once; past maxPerAccount the oldest ends', async (t) => {
  const { sessions, clock } = slice({ maxPerAccount: 2 });
  const first = sessions.start('alice', '192.0.2.1');
  clock.now += 1;
  const second = sessions.start('ALICE', '192.0.2.1');
  clock.now += 1;
  const third = sessions.start('alice', '192.0.2.1');
  t.equal(sessions.find(first.id), undefined, 'the oldest of three');
  t.ok(sessions.find(second.id) && sessions.find(third.id));
  t.equal(sessions.ownedBy('Alice').length, 2, 'accounts compare folded');
  t.equal(sessions.end(second.session), true);
  t.equal(sessions.find(second.id), undefined);
  t.equal(sessions.end(second.session), false, 'once');
});

t.test('the file: restored whole; a broken one is refused, naming what is wrong', async (t) => {
  const { sessions, clock } = slice();
  const { id } = sessions.start('alice', '192.0.2.1');
  const snapshot = sessions.persistence.snapshot();
  const restored = slice().sessions;
  restored.persistence.restore(JSON.parse(JSON.stringify(snapshot)));
  t.match(restored.find(id), { account: 'alice', createdAt: clock.now, lastSeenAt: clock.now, notice: null });
  t.throws(() => restored.persistence.restore({} as never), /must be an object with a "sessions" array/);
  t.throws(
    () => restored.persistence.restore({ sessions: [{ ...snapshot.sessions[0]!, id_sha256: 'x' }] }),
    /no SHA-256 of its id/,
  );
  t.throws(
    () => restored.persistence.restore({ sessions: [{ ...snapshot.sessions[0]!, created_at: 'yesterday' }] }),
    /the session of alice has an unreadable time/,
  );
});
