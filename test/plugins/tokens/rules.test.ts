/**
 * The token rules, each once, called directly (no IRC, no HTTP): who may see and change which token, who
 * may see every token and the audit log, the label and the live-token limit, endpoint names, a revoked token,
 * the staff tier's change of several parts, and the durable write's outcome. The front ends' tests
 * (commands.test.ts, staff-routes.test.ts, manage.test.ts) check how each words a result, not the rule again.
 */
import t from 'tap';
import { casefold } from '../../../lib/irc/casemapping.js';
import { createLogger } from '../../../lib/logger.js';
import type { GrantableEndpoint } from '../../../plugins/tokens/endpoints.js';
import { SECRET_NOT_DELIVERED, TOKEN_NOT_SAVED, TokensSlice } from '../../../plugins/tokens/model.js';
import { TokenRules, cleanLabel, type Caller, type PersonActor } from '../../../plugins/tokens/rules.js';

const endpoint = (name: string): GrantableEndpoint => ({ name, method: 'GET', path: `/${name}/`, summary: name });

/** Rules over a fresh slice: irc.user and irc.users served, at most `max` live tokens, writes that may fail. */
function setup(max = 3, perDay = 100) {
  const logs: string[] = [];
  const logger = createLogger({ sink: (line) => logs.push(line.replace(/^\S+ /, '')) }, 'tokens');
  const tokens = new TokensSlice({ onChange: () => undefined, fold: casefold });
  const served = [endpoint('irc.user'), endpoint('irc.users')];
  let failure: Error | null = null;
  let writes = 0;
  // The rules' clock; the tokens are dated by the runtime's.
  const clock = { now: Date.now() };
  const rules = new TokenRules({
    tokens,
    endpoints: () => served,
    maxTokensPerAccount: max,
    maxCreatedPerDay: perDay,
    now: () => clock.now,
    fold: casefold,
    persisted: async () => {
      writes++;
      if (failure) throw failure;
    },
    logger,
  });
  /** `account` acting over `via`; `admin` says whether they administer tokens, and `asked` counts the questions. */
  const caller = (account: string, admin = false, via: PersonActor['via'] = 'irc') => {
    const asked = { admin: 0 };
    const actor: PersonActor =
      via === 'http'
        ? { account, via, tokenId: 9, address: '192.0.2.1' }
        : via === 'web'
          ? { account, via, address: '192.0.2.1' }
          : { account, via };
    const who: Caller & { asked: { what: string }; questions: typeof asked } = {
      actor,
      isAdmin: async () => {
        asked.admin++;
        return admin;
      },
      asked: { what: 'test' },
      questions: asked,
    };
    return who;
  };
  return {
    rules,
    tokens,
    logs,
    served,
    caller,
    clock,
    writes: () => writes,
    failWrites: (error: Error | null) => (failure = error),
  };
}

t.test(
  'find: the owner sees their token; an administrator sees any; the refusal says which rule applied',
  async (t) => {
    const { rules, tokens, caller } = setup();
    const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
    const owner = caller('ALICE');
    t.same(await rules.find(owner, token.id), { ok: true, token }, 'accounts compare folded');
    t.equal(owner.questions.admin, 0, 'the owner is not asked whether they administer tokens');
    t.same(await rules.find(caller('bob'), token.id), {
      ok: false,
      reason: 'no-such-token',
      id: token.id,
      account: 'bob',
      admin: false,
    });
    t.same(await rules.find(caller('boss', true), token.id), { ok: true, token });
    t.match(await rules.find(caller('boss', true), 99), { ok: false, reason: 'no-such-token', id: 99, admin: true });
  },
);

t.test('changeable: as find, and a revoked token changes no more', async (t) => {
  const { rules, tokens, caller } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  t.same(await rules.changeable(caller('alice'), token.id), { ok: true, token });
  tokens.revoke(token, { account: 'alice', via: 'irc' });
  t.same(await rules.changeable(caller('alice'), token.id), { ok: false, reason: 'revoked', token });
  t.match(await rules.changeable(caller('bob'), token.id), { ok: false, reason: 'no-such-token' }, 'unseen first');
});

t.test("list: one's own tokens; every token or another account's for an administrator", async (t) => {
  const { rules, tokens, caller } = setup();
  const irc = { account: 'x', via: 'irc' } as const;
  tokens.create('Alice', 'a', irc);
  tokens.create('bob', 'b', irc);
  t.same(
    rules.own(caller('alice')).tokens.map((token) => token.label),
    ['a'],
  );
  t.equal(rules.own(caller('alice')).owner, 'alice', 'named as the caller is');
  const mine = await rules.list(caller('ALICE'), { account: 'alice' });
  t.match(mine, { ok: true, owner: 'Alice' }, 'their own account in any case, named as its tokens spell it');
  t.same(await rules.list(caller('alice'), { all: true }), { ok: false, reason: 'not-admin', account: 'alice' });
  t.same(await rules.list(caller('alice'), { account: 'bob' }), { ok: false, reason: 'not-admin', account: 'alice' });
  t.match(await rules.list(caller('boss', true), { all: true }), { ok: true, owner: null, tokens: [{}, {}] });
  t.match(await rules.list(caller('boss', true), { account: 'BOB' }), { ok: true, owner: 'bob' });
  t.same(await rules.list(caller('boss', true), { account: 'Nobody' }), { ok: true, owner: 'Nobody', tokens: [] });
  t.same(await rules.list(caller('nobody'), { account: 'NOBODY' }), { ok: true, owner: 'nobody', tokens: [] });
});

t.test("audit: the log, or one token's entries, for an administrator alone", async (t) => {
  const { rules, tokens, caller } = setup();
  const irc = { account: 'x', via: 'irc' } as const;
  const first = tokens.create('alice', 'a', irc).token;
  tokens.create('bob', 'b', irc);
  t.same(await rules.audit(caller('alice')), { ok: false, reason: 'not-admin', account: 'alice' });
  t.same(
    await rules.audit(caller('alice'), first.id),
    { ok: false, reason: 'not-admin', account: 'alice' },
    'even of their own',
  );
  const all = await rules.audit(caller('boss', true));
  t.same(all.ok && all.entries.map((entry) => [entry.tokenId, entry.action]), [
    [1, 'create'],
    [2, 'create'],
  ]);
  const one = await rules.audit(caller('boss', true), first.id);
  t.same(one.ok && one.entries.map((entry) => entry.tokenId), [1]);
});

t.test(
  'create: the label cleaned and measured in characters, the live-token limit, the secret once saved',
  async (t) => {
    const { rules, tokens, logs, caller, writes } = setup(2);
    t.equal(cleanLabel('  my\x07 \x1flaptop \x7f '), 'my laptop');
    const created = await rules.create(caller('alice'), ` ${'🔑'.repeat(64)}\x02 `);
    t.match(created, { ok: true, token: { id: 1, owner: 'alice', label: '🔑'.repeat(64), grants: [] } });
    t.match(created.ok && created.secret, /^ntd_/);
    t.equal(writes(), 1, 'on disk before it is answered');
    t.same(await rules.create(caller('alice'), '🔑'.repeat(65)), {
      ok: false,
      reason: 'label-too-long',
      length: 65,
      limit: 64,
    });
    await rules.create(caller('Alice', false, 'web'), 'two');
    t.same(await rules.create(caller('ALICE'), 'three'), {
      ok: false,
      reason: 'too-many-tokens',
      account: 'ALICE',
      live: 2,
      limit: 2,
    });
    tokens.revoke(tokens.get(1)!, { account: 'alice', via: 'irc' });
    t.match(await rules.create(caller('alice'), 'three'), { ok: true }, 'a revoked token frees its place');
    t.same(logs.slice(0, 2), [
      'INFO  [tokens] token created token=#1 account=alice',
      'INFO  [tokens] token created token=#2 account=Alice via=web',
    ]);
  },
);

t.test('create: at most max_created_per_day a day, revoked ones too; the 24 hours slide', async (t) => {
  const { rules, tokens, caller, clock } = setup(3, 4);
  for (let made = 1; made <= 4; made++) {
    const created = await rules.create(caller('alice'), `round ${made}`);
    t.match(created, { ok: true }, `token ${made} of the day`);
    if (created.ok) tokens.revoke(created.token, { account: 'alice', via: 'irc' });
  }
  const refused = await rules.create(caller('ALICE'), 'one more');
  t.match(refused, { ok: false, reason: 'too-many-today', account: 'ALICE', limit: 4 }, 'revoking freed no place');
  const firstAt = Date.parse(tokens.get(1)!.createdAt);
  t.equal(
    refused.ok === false && 'nextAt' in refused ? refused.nextAt : '',
    new Date(firstAt + 86_400_000).toISOString(),
  );
  t.match(await rules.create(caller('bob'), 'his'), { ok: true }, 'another account is not counted');
  clock.now = firstAt + 86_400_000 + 1;
  t.match(await rules.create(caller('alice'), 'next day'), { ok: true }, 'once the first left the 24 hours');
});

t.test('create: a token the store cannot write is revoked by the bot, its secret never given', async (t) => {
  const { rules, tokens, logs, caller, failWrites } = setup();
  failWrites(new Error('ENOSPC'));
  const created = await rules.create(caller('alice'), 'doomed');
  const token = tokens.get(1)!;
  t.same(created, { ok: false, reason: 'not-saved', token });
  t.notOk('secret' in created);
  t.not(token.revokedAt, null);
  t.same(tokens.audit(1).at(-1)!.actor, TOKEN_NOT_SAVED);
  t.same(logs, [
    'INFO  [tokens] token created token=#1 account=alice',
    'ERROR [tokens] a token change could not be saved what=test token=#1 error=ENOSPC',
    'WARN  [tokens] token revoked: it could not be saved token=#1 account=alice',
  ]);
});

t.test('secretNotDelivered: the bot revokes the token, once', async (t) => {
  const { rules, tokens, logs, caller } = setup();
  const created = await rules.create(caller('alice'), '');
  const token = tokens.get(1)!;
  t.ok(created.ok);
  rules.secretNotDelivered(token);
  t.not(token.revokedAt, null);
  t.same(tokens.audit(1).at(-1)!.actor, SECRET_NOT_DELIVERED);
  rules.secretNotDelivered(token);
  t.equal(tokens.audit(1).length, 2, 'a token revoked already is not revoked again');
  t.equal(logs.at(-1), 'WARN  [tokens] token revoked: its secret could not be delivered token=#1 account=alice');
  t.equal(logs.filter((line) => line.includes('could not be delivered')).length, 1);
});

t.test(
  'request: the owner asks for one endpoint by name; outcomes; not for others, a wildcard or a revoked token',
  async (t) => {
    const { rules, tokens, caller, logs } = setup();
    const { token } = tokens.create('alice', '', { account: 'alice', via: 'web' });
    const alice = caller('alice', false, 'web');
    t.match(await rules.request(alice, token.id, 'IRC.Users'), { ok: true, name: 'irc.users', outcome: 'requested' });
    t.match(await rules.request(alice, token.id, 'irc.users'), { ok: true, outcome: 'pending', saved: true });
    t.equal(logs.at(-1), 'INFO  [tokens] token endpoint requested token=#1 by=alice endpoint=irc.users via=web');
    t.same(await rules.request(alice, token.id, 'irc.*'), {
      ok: false,
      reason: 'unknown-endpoints',
      unknown: ['irc.*'],
      valid: ['irc.user', 'irc.users'],
    });
    t.same(
      await rules.request(caller('boss', true), token.id, 'irc.user'),
      { ok: false, reason: 'no-such-token', id: token.id, account: 'boss', admin: false },
      'only the owner asks, an administrator too',
    );
    tokens.grant(token, ['irc.*'], { account: 'boss', via: 'irc' });
    t.match(await rules.request(alice, token.id, 'irc.user'), { ok: true, outcome: 'granted' });
    tokens.revoke(token, { account: 'alice', via: 'irc' });
    t.match(await rules.request(alice, token.id, 'irc.user'), { ok: false, reason: 'revoked' });
  },
);

t.test('revoke: by the owner or an administrator; again, it changes nothing but is confirmed', async (t) => {
  const { rules, tokens, caller, writes } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  t.match(await rules.revoke(caller('bob'), token.id), { ok: false, reason: 'no-such-token', admin: false });
  t.match(await rules.revoke(caller('boss', true), token.id), { ok: true, revoked: true, saved: true });
  t.match(await rules.revoke(caller('alice'), token.id), { ok: true, revoked: false, saved: true });
  t.equal(writes(), 2, 'both answers wait for the disk');
});

t.test('an administrator: grant, deny, decline and staff are refused to others before anything else', async (t) => {
  const { rules, caller, logs } = setup();
  const alice = caller('alice');
  const refusal = { ok: false, reason: 'not-admin', account: 'alice' };
  t.same(await rules.grant(alice, 99, ['irc.users']), refusal, 'not "no such token"');
  t.same(await rules.deny(alice, 99, ['irc.users']), refusal);
  t.same(await rules.decline(alice, 99, 'irc.users'), refusal);
  t.same(await rules.setStaff(alice, 99, true), refusal);
  t.same(await rules.change(alice, 99, { staff: true }), refusal);
  t.same(logs, [], 'a refusal is the front end’s to log');
});

t.test('grant: known names and wildcards in any case, all or none; what was added; a revoked token', async (t) => {
  const { rules, tokens, caller, logs } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  const boss = caller('boss', true);
  t.same(await rules.grant(boss, token.id, ['irc.users', 'IRC.Nope', 'x']), {
    ok: false,
    reason: 'unknown-endpoints',
    unknown: ['irc.nope', 'x'],
    valid: ['irc.user', 'irc.users', 'irc.*', 'netstats.*'],
  });
  t.same(token.grants, [], 'nothing granted');
  t.match(await rules.grant(boss, token.id, ['IRC.Users', 'irc.users']), {
    ok: true,
    names: ['irc.users', 'irc.users'],
    added: ['irc.users'],
    grants: ['irc.users'],
    saved: true,
  });
  t.match(await rules.grant(boss, token.id, ['irc.users']), { ok: true, added: [], grants: ['irc.users'] });
  t.equal(logs.at(-1), 'INFO  [tokens] token granted token=#1 by=boss endpoints=irc.users', 'only a change is logged');
  t.match(await rules.grant(boss, 99, ['irc.users']), { ok: false, reason: 'no-such-token', admin: true });
  tokens.revoke(token, { account: 'alice', via: 'irc' });
  t.match(await rules.grant(boss, token.id, ['irc.user']), { ok: false, reason: 'revoked' });
});

t.test('deny: a wildcard expanded; a name held stays deniable after its route is gone', async (t) => {
  const { rules, tokens, caller, served } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  const boss = caller('boss', true, 'web');
  tokens.grant(token, ['irc.*', 'old.thing'], { account: 'boss', via: 'irc' });
  t.match(await rules.deny(boss, token.id, ['IRC.User']), {
    ok: true,
    names: ['irc.user'],
    denied: ['irc.user'],
    expanded: ['irc.*'],
    grants: ['irc.users', 'old.thing'],
  });
  t.match(await rules.deny(boss, token.id, ['irc.user']), { ok: true, denied: [], expanded: [] });
  t.same(await rules.deny(boss, token.id, ['nope']), {
    ok: false,
    reason: 'unknown-endpoints',
    unknown: ['nope'],
    valid: ['irc.user', 'irc.users', 'irc.*', 'netstats.*'],
  });
  served.length = 0;
  t.match(await rules.deny(boss, token.id, ['old.thing']), { ok: true, denied: ['old.thing'] }, 'no route serves it');
});

t.test('decline and staff: done, or nothing to do; both confirmed on disk', async (t) => {
  const { rules, tokens, caller, writes, logs } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  tokens.request(token, 'irc.users', { account: 'alice', via: 'web' });
  const boss = caller('boss', true);
  t.match(await rules.decline(boss, token.id, 'IRC.users'), { ok: true, name: 'irc.users', declined: true });
  t.match(await rules.decline(boss, token.id, 'irc.users'), { ok: true, declined: false });
  t.match(await rules.setStaff(boss, token.id, true), { ok: true, staff: true, changed: true });
  t.match(await rules.setStaff(boss, token.id, true), { ok: true, changed: false });
  t.equal(writes(), 4);
  t.same(logs, [
    'INFO  [tokens] token request declined token=#1 by=boss endpoint=irc.users',
    'INFO  [tokens] token staff changed token=#1 by=boss staff=true',
  ]);
});

t.test('change: every name checked first, none in both lists, then all applied in one log line', async (t) => {
  const { rules, tokens, caller, logs } = setup();
  const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
  tokens.grant(token, ['gone.route'], { account: 'boss', via: 'irc' });
  const staff = caller('carol', true, 'http');
  const valid = ['irc.user', 'irc.users', 'irc.*', 'netstats.*'];
  t.same(await rules.change(staff, token.id, { grant: ['irc.users', 'Nope'], staff: true }), {
    ok: false,
    reason: 'unknown-endpoint',
    list: 'grant',
    index: 1,
    name: 'nope',
    valid,
  });
  t.same(await rules.change(staff, token.id, { grant: ['irc.users'], deny: ['gone.route', 'x'] }), {
    ok: false,
    reason: 'unknown-endpoint',
    list: 'deny',
    index: 1,
    name: 'x',
    valid,
  });
  t.same(await rules.change(staff, token.id, { grant: ['irc.user'], deny: ['IRC.User'] }), {
    ok: false,
    reason: 'in-grant-and-deny',
    index: 0,
    name: 'irc.user',
  });
  t.same(token.grants, ['gone.route'], 'a refused change changes nothing');
  t.equal(token.staff, false);
  t.match(await rules.change(staff, token.id, { grant: ['IRC.*'], deny: ['gone.route'], staff: true }), {
    ok: true,
    granted: ['irc.*'],
    denied: ['gone.route'],
    staffChanged: true,
    saved: true,
  });
  t.same(logs, [
    'INFO  [tokens] token changed over HTTP token=#1 by="carol (staff token #9)" granted=irc.* denied=gone.route staff=true',
  ]);
  t.match(await rules.change(staff, token.id, { staff: true }), { ok: true, granted: [], staffChanged: false });
  t.equal(logs.length, 1, 'nothing changed, nothing logged');
  tokens.revoke(token, { account: 'alice', via: 'irc' });
  t.match(await rules.change(staff, token.id, { staff: false }), { ok: false, reason: 'revoked' });
});

t.test(
  "a change the store cannot write holds in memory, and says so; the log names the caller's request",
  async (t) => {
    const { rules, tokens, caller, logs, failWrites } = setup();
    const { token } = tokens.create('alice', '', { account: 'alice', via: 'irc' });
    failWrites(new Error('disk full'));
    const boss = caller('boss', true, 'http');
    t.match(await rules.grant(boss, token.id, ['irc.users']), { ok: true, added: ['irc.users'], saved: false });
    t.same(token.grants, ['irc.users'], 'in effect until a restart');
    t.match(await rules.revoke(boss, token.id), { ok: true, revoked: true, saved: false });
    t.same(logs, [
      'INFO  [tokens] token granted over HTTP token=#1 by="boss (staff token #9)" endpoints=irc.users',
      'ERROR [tokens] a token change could not be saved what=test token=#1 error="disk full"',
      'INFO  [tokens] token revoked over HTTP token=#1 by="boss (staff token #9)"',
      'ERROR [tokens] a token change could not be saved what=test token=#1 error="disk full"',
    ]);
    failWrites(null);
    t.match(await rules.revoke(boss, token.id), { ok: true, revoked: false, saved: true }, 'sent again, saved');
  },
);
