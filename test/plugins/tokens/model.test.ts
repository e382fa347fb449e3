import t from 'tap';
import { casefold } from '../../../lib/irc/casemapping.js';
import {
  SECRET_NOT_DELIVERED,
  TOKEN_PATTERN,
  TokensSlice,
  grantsCover,
  hashSecret,
  type AuditActor,
} from '../../../plugins/tokens/model.js';

const admin: AuditActor = { account: 'boss', via: 'irc' };

function setup(start = Date.parse('2026-11-21T14:00:00.000Z')) {
  let now = start;
  const changes: string[] = [];
  const tokens = new TokensSlice({
    onChange: (kind, id) => changes.push(`${kind} #${id}`),
    fold: (name) => casefold(name),
    clock: () => new Date(now),
  });
  return { tokens, changes, advance: (ms: number) => (now += ms) };
}

t.test('a new token: ntd_ + 43 base64url characters, stored only as its SHA-256, reaching nothing', async (t) => {
  const { tokens, changes } = setup();
  const { token, secret } = tokens.create('alice', 'laptop', { account: 'alice', via: 'irc' });
  t.match(secret, TOKEN_PATTERN);
  t.equal(secret.length, 4 + 43);
  t.equal(token.id, 1);
  t.equal(token.secretSha256, hashSecret(secret));
  t.same(token.grants, []);
  t.equal(tokens.findBySecret(secret), token, 'found by its secret');
  t.equal(
    tokens.findBySecret(secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A')),
    undefined,
    'one character off',
  );
  t.equal(tokens.findBySecret('ntd_short'), undefined);
  t.same(changes, ['create #1']);
  const snapshot = JSON.stringify(tokens.persistence.snapshot());
  t.notOk(snapshot.includes(secret), 'the snapshot never holds the secret');
  t.ok(snapshot.includes(hashSecret(secret)), 'it holds the hash');
  const second = tokens.create('bob', '', admin);
  t.not(second.secret, secret, 'every secret is new');
});

t.test('ids are never reused, also across a restore', async (t) => {
  const { tokens } = setup();
  const first = tokens.create('alice', 'a', admin).token;
  tokens.create('alice', 'b', admin);
  tokens.revoke(first, admin);
  const restored = setup().tokens;
  restored.persistence.restore(JSON.parse(JSON.stringify(tokens.persistence.snapshot())));
  t.equal(restored.create('alice', 'c', admin).token.id, 3);
  // A file whose counter was lost still never hands out a stored id.
  const stored = tokens.persistence.snapshot();
  const again = setup().tokens;
  again.persistence.restore({ ...stored, next_id: 1 });
  t.equal(again.create('alice', 'd', admin).token.id, 3);
});

t.test('grants: exact names and wildcards matched by prefix at request time', async (t) => {
  t.ok(grantsCover(['irc.users'], 'irc.users'));
  t.notOk(grantsCover(['irc.users'], 'irc.user'), 'no prefix match without a wildcard');
  t.ok(grantsCover(['netstats.*'], 'netstats.later_added'), 'a wildcard covers endpoints added later');
  t.notOk(grantsCover(['irc.*'], 'netstats.status'));
  t.notOk(grantsCover(['irc.*'], 'irc.'), 'the bare prefix is no endpoint');
  t.notOk(grantsCover([], 'irc.users'));
});

t.test('grant, deny, staff and revoke change the token and write the audit log', async (t) => {
  const { tokens, changes, advance } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  t.same(tokens.grant(token, ['irc.users', 'irc.users', 'netstats.*'], admin), ['irc.users', 'netstats.*']);
  t.same(tokens.grant(token, ['irc.users'], admin), [], 'granting again changes nothing');
  advance(1000);
  t.same(tokens.deny(token, ['netstats.*', 'irc.opers'], ['irc.users'], admin), {
    denied: ['netstats.*'],
    expanded: [],
  });
  t.same(token.grants, ['irc.users']);
  t.ok(tokens.setStaff(token, true, admin));
  t.notOk(tokens.setStaff(token, true, admin), 'no change, no entry');
  t.ok(tokens.revoke(token, { account: 'bob', via: 'http', tokenId: 9 }));
  t.notOk(tokens.revoke(token, admin), 'revoking twice is a no-op');
  t.same(
    tokens.audit(token.id).map((entry) => [entry.action, entry.actor.account, entry.details.join(',')]),
    [
      ['create', 'alice', ''],
      ['grant', 'boss', 'irc.users,netstats.*'],
      ['deny', 'boss', 'netstats.*'],
      ['staff', 'boss', 'on'],
      ['revoke', 'bob', ''],
    ],
  );
  t.same(tokens.audit()[2]!.grantsAfter, ['irc.users'], 'denials record the grant list after the change');
  t.equal(tokens.audit()[4]!.actor.tokenId, 9);
  t.same(changes, ['create #1', 'grant #1', 'deny #1', 'staff #1', 'revoke #1']);
  t.equal(token.revokedAt, '2026-11-21T14:00:01.000Z');
});

t.test('denying one endpoint under a wildcard replaces the wildcard by the rest', async (t) => {
  const { tokens } = setup();
  const { token } = tokens.create('alice', '', admin);
  tokens.grant(token, ['irc.*', 'netstats.status'], admin);
  const known = ['irc.oper', 'irc.opers', 'irc.user', 'irc.users', 'netstats.status'];
  t.same(tokens.deny(token, ['irc.user'], known, admin), { denied: ['irc.user'], expanded: ['irc.*'] });
  t.same(token.grants, ['irc.oper', 'irc.opers', 'irc.users', 'netstats.status']);
  t.same(tokens.deny(token, ['irc.*'], known, admin).denied, ['irc.*'], 'a wildcard withdraws what it covers');
  t.same(token.grants, ['netstats.status']);
  t.same(tokens.deny(token, ['irc.users'], known, admin).denied, [], 'nothing to withdraw');
});

t.test('accounts compare with the CASEMAPPING; liveCount skips revoked tokens', async (t) => {
  const { tokens } = setup();
  const first = tokens.create('Alice[m]', '', admin).token;
  tokens.create('alice{m}', '', admin);
  tokens.create('bob', '', admin);
  t.equal(tokens.ownedBy('ALICE{M}').length, 2);
  t.ok(tokens.isOwner(first, 'alice{m}'));
  tokens.revoke(first, admin);
  t.equal(tokens.liveCount('alice[m]'), 1);
});

t.test('recordUse counts approved uses and notes every use', async (t) => {
  const { tokens, advance } = setup();
  const { token } = tokens.create('alice', '', admin);
  advance(5000);
  tokens.recordUse(token, 'irc.users');
  tokens.recordUse(token, 'irc.users');
  tokens.recordUse(token, null);
  t.same(token.uses, { 'irc.users': 2 });
  t.equal(token.lastUsedAt, '2026-11-21T14:00:05.000Z');
});

t.test('restore round-trips everything and refuses garbage', async (t) => {
  const { tokens } = setup();
  const { token, secret } = tokens.create('alice', 'x', admin);
  tokens.grant(token, ['irc.users'], admin);
  tokens.setStaff(token, true, { account: 'carol', via: 'http', tokenId: 7 });
  tokens.recordUse(token, 'irc.users');
  tokens.revoke(tokens.create('alice', 'lost', admin).token, SECRET_NOT_DELIVERED);
  const snapshot = JSON.parse(JSON.stringify(tokens.persistence.snapshot())) as ReturnType<
    typeof tokens.persistence.snapshot
  >;
  const restored = setup().tokens;
  restored.persistence.restore(snapshot);
  t.same(restored.get(1), token);
  t.same(restored.audit(), tokens.audit());
  t.same(
    snapshot.audit.at(-1)!.actor,
    { account: null, via: 'system', reason: 'secret not delivered' },
    'a revoke by the bot itself keeps its reason',
  );
  t.equal(restored.findBySecret(secret)?.id, 1, 'the secret still authenticates after a restore');
  t.throws(() => restored.persistence.restore({} as never), /must be an object with "tokens" and "audit" arrays/);
  t.throws(
    () =>
      restored.persistence.restore({
        ...snapshot,
        tokens: [{ ...snapshot.tokens[0]!, secret_sha256: secret }],
      }),
    /no SHA-256 of its secret/,
    'a plain secret in the file is refused',
  );
});
