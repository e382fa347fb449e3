/**
 * `tokens.manage`, the tokens plugin's service for the website, in the real host (fake IRC, HTTP without a
 * socket): the same tokens and audit log as the TOKEN commands, each seen from the other side; the
 * commands' rules (label, limit, owner, administrator); endpoint requests; answers only once on disk.
 */
import t, { type Test } from 'tap';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import type { Services } from '../../../lib/sdk.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import { eventually } from '../../support/bot.js';
import { startHarness } from '../../../testing/harness.js';

type TokensManage = Services['tokens.manage'];

/** Two token routes to request and grant, standing in for the api plugin. */
/** Who acts on the website: an account, from an address. */
const web = (account: string) => ({ account, address: '198.51.100.20' });
/** An administrator on the website, for the listings that are theirs alone. */
const boss = web('boss');

const routes = definePlugin({
  name: 'routes',
  description: 'two token routes',
  configSchema: { type: 'object', properties: {} },
  start({ http }) {
    for (const [path, name, summary] of [
      ['/api/irc/users/', 'irc.users', 'Connected users, with hostmasks'],
      ['/api/irc/opers/', 'irc.opers', 'IRC operators'],
    ] as const) {
      http.route({ method: 'GET', path, name, summary, tier: 'token', handler: () => ({ body: { name } }) });
    }
  },
});

/** Hands the test the service, as a plugin that uses it gets it. */
function probe(found: (service: TokensManage) => void) {
  return definePlugin({
    name: 'probe',
    description: 'uses tokens.manage',
    uses: ['tokens.manage'],
    configSchema: { type: 'object', properties: {} },
    start({ services }) {
      found(services.get('tokens.manage'));
    },
  });
}

async function start(t: Test, tokens: Record<string, unknown> = {}, store: 'memory' | 'files' = 'memory') {
  let manage!: TokensManage;
  const bot = await startHarness(t, {
    registry: [routes, tokensPlugin, probe((service) => (manage = service))] as PluginDefinition<never>[],
    plugins: { routes: {}, tokens, probe: {} },
    admins: ['Boss'],
    store,
  });
  return { bot, manage };
}

async function created(manage: TokensManage, account: string, label: string) {
  const answer = await manage.create(web(account), label);
  if (!answer.done) throw new Error(`create refused: ${answer.message}`);
  return answer;
}

t.test('a token made on the web and one made over IRC are the same thing, each listed by the other', async (t) => {
  const { bot, manage } = await start(t);
  const web = await created(manage, 'alice', '  laptop\x07  ');
  t.match(web.secret, /^ntd_[A-Za-z0-9_-]{43}$/, 'the secret, once');
  t.same(
    web.token,
    {
      id: 1,
      label: 'laptop',
      owner: 'alice',
      createdAt: web.token.createdAt,
      lastUsedAt: null,
      revokedAt: null,
      grants: [],
      requests: [],
      staff: false,
    },
    'no endpoint yet, the label cleaned as TOKEN CREATE cleans it',
  );
  const [ircLine] = await bot.say('alice', 'alice', 'TOKEN CREATE desktop');
  t.match(ircLine, /^Token #2 "desktop" created: ntd_/);

  const listed = await bot.say('Alice', 'ALICE', 'TOKEN LIST');
  t.match(listed.join('\n'), /#1 "laptop" of alice: active; endpoints: none/, 'the web token over IRC');
  t.same(
    manage.ownedBy('ALICE').map((token) => [token.id, token.label]),
    [
      [1, 'laptop'],
      [2, 'desktop'],
    ],
    'the IRC token on the web (accounts compare folded)',
  );
  t.same(manage.ownedBy('bob'), [], "nobody else's");
  t.equal(
    (await bot.inject('GET', '/api/irc/users/', { Authorization: `Token ${web.secret}` })).status,
    403,
    'the web secret authenticates, approved for nothing',
  );
  t.notOk(JSON.stringify((await manage.all(boss))!).includes(web.secret), 'no secret in any listing');
  t.notOk(
    bot.logs.some((line) => line.includes(web.secret)),
    'nor in the log',
  );
});

t.test('an endpoint request waits for an administrator; approve, decline, withdraw, revoke', async (t) => {
  const { bot, manage } = await start(t);
  const { token, secret } = await created(manage, 'alice', 'ci');
  const asAlice = { Authorization: `Token ${secret}` };

  t.match(await manage.request(web('alice'), token.id, 'IRC.users'), { done: true, message: /Requested irc\.users/ });
  t.match(await manage.request(web('alice'), token.id, 'irc.users'), { done: true, message: /already waits/ });
  await manage.request(web('alice'), token.id, 'irc.opers');
  t.same(
    (await manage.all(boss))![0]!.requests,
    ['irc.users', 'irc.opers'],
    'both pending, as an administrator sees them',
  );
  t.match(await manage.request(web('alice'), token.id, 'irc.*'), { done: false, status: 400 }, 'no wildcard requests');
  t.match(await manage.request(web('alice'), token.id, 'irc.nope'), { done: false, status: 400 });
  t.match(await manage.request(web('bob'), token.id, 'irc.users'), { done: false, status: 404 }, "not bob's token");

  t.match(await manage.grant(web('alice'), token.id, 'irc.users'), {
    done: false,
    status: 403,
    message: 'The account alice is not an administrator.',
  });
  t.equal((await bot.inject('GET', '/api/irc/users/', asAlice)).status, 403, 'still not approved');
  t.match(await manage.grant(web('boss'), token.id, 'irc.users'), { done: true, message: /may now call irc\.users/ });
  t.equal((await bot.inject('GET', '/api/irc/users/', asAlice)).status, 200, 'approved at once');
  t.same(manage.ownedBy('alice')[0]!.requests, ['irc.opers'], 'the approved request is no longer pending');
  t.match(await manage.request(web('alice'), token.id, 'irc.users'), { done: true, message: /may already call/ });

  t.match(await manage.decline(web('BOSS'), token.id, 'irc.opers'), { done: true, message: /Declined irc\.opers/ });
  t.same(manage.ownedBy('alice')[0]!.requests, []);
  t.match(await manage.decline(web('boss'), token.id, 'irc.opers'), { done: true, message: /no pending request/ });

  t.match(await manage.withdraw(web('boss'), token.id, 'irc.users'), {
    done: true,
    message: /no longer call irc\.users/,
  });
  t.equal((await bot.inject('GET', '/api/irc/users/', asAlice)).status, 403, 'withdrawn at once');

  await manage.request(web('alice'), token.id, 'irc.opers');
  t.match(await manage.revoke(web('bob'), token.id), { done: false, status: 404 }, 'bob may not revoke it');
  t.match(await manage.revoke(web('alice'), token.id), {
    done: true,
    message: /revoked: every request with it now gets 401/,
  });
  t.equal((await bot.inject('GET', '/api/irc/users/', asAlice)).status, 401);
  t.same((await manage.all(boss))![0]!.requests, [], 'a revoked token has nothing pending');
  t.match(await manage.grant(web('boss'), token.id, 'irc.users'), { done: false, status: 409 }, 'revoked: no change');
  t.match(await manage.request(web('alice'), token.id, 'irc.users'), { done: false, status: 409 });
  t.match(await manage.grant(web('boss'), 99, 'irc.users'), { done: false, status: 404 });

  const audit = (await manage.audit(boss, 0, 100))!;
  t.equal(audit.count, 8);
  t.same(
    audit.entries.map((entry) => [entry.action, entry.details.join(','), entry.actor.account, entry.actor.via]),
    [
      ['revoke', '', 'alice', 'web'],
      ['request', 'irc.opers', 'alice', 'web'],
      ['deny', 'irc.users', 'boss', 'web'],
      ['decline', 'irc.opers', 'BOSS', 'web'],
      ['grant', 'irc.users', 'boss', 'web'],
      ['request', 'irc.opers', 'alice', 'web'],
      ['request', 'irc.users', 'alice', 'web'],
      ['create', '', 'alice', 'web'],
    ],
    'newest first, every change with who did it and from where',
  );
  t.same(
    (await manage.audit(boss, 2, 2))!.entries.map((entry) => entry.action),
    ['deny', 'decline'],
    'paged',
  );
  const over = await bot.say('boss', 'boss', 'TOKEN AUDIT');
  t.match(over.join('\n'), /#1 grant irc\.users by boss on the website/, 'TOKEN AUDIT shows the web actions');
  t.match(over.join('\n'), /#1 request irc\.users by alice on the website/);
});

t.test('IRC changes are in the web listing and audit log, with where they came from', async (t) => {
  const { bot, manage } = await start(t);
  await bot.say('alice', 'alice', 'TOKEN CREATE irc-made');
  await bot.say('boss', 'boss', 'TOKEN GRANT 1 irc.opers');
  t.same(manage.ownedBy('alice')[0]!.grants, ['irc.opers']);
  t.same(
    (await manage.audit(boss, 0, 10))!.entries.map((entry) => [entry.action, entry.actor.account, entry.actor.via]),
    [
      ['grant', 'boss', 'irc'],
      ['create', 'alice', 'irc'],
    ],
  );
});

t.test(
  "the rules' refusals as the website words them; who is an administrator; what each endpoint exposes",
  async (t) => {
    const { manage } = await start(t, { max_tokens_per_account: 2 });
    t.equal(manage.maxLabelLength, 64);
    t.same(await manage.create(web('alice'), 'x'.repeat(65)), {
      done: false,
      status: 400,
      message: 'A label has at most 64 characters; this one has 65.',
    });
    await created(manage, 'alice', 'one');
    await created(manage, 'alice', 'two');
    t.same(await manage.create(web('Alice'), 'three'), {
      done: false,
      status: 409,
      message: 'The account Alice already holds 2 active tokens, the most allowed. Revoke one first.',
    });
    t.equal(await manage.all(web('alice')), null, 'every token is for administrators');
    t.equal(await manage.audit(web('alice'), 0, 10), null, 'and so is the audit log');
    t.equal(await manage.isAdmin('boss'), true, 'listed in admins (folded)');
    t.equal(await manage.isAdmin('alice'), false);
    t.same(
      manage.endpoints(),
      [
        { name: 'irc.opers', method: 'GET', path: '/api/irc/opers/', summary: 'IRC operators' },
        { name: 'irc.users', method: 'GET', path: '/api/irc/users/', summary: 'Connected users, with hostmasks' },
      ],
      'what each endpoint exposes',
    );
  },
);

t.test('opers_are_admins: an account whose online client a fresh WHOIS shows as an operator', async (t) => {
  const { bot, manage } = await start(t, { opers_are_admins: true });
  bot.host.model.upsertUser('OperNick', { account: 'operacct' });
  bot.host.model.upsertUser('plain', { account: 'plainacct' });
  t.equal(await manage.isAdmin('nobody'), false, 'no client online: the list alone decides');
  const before = bot.irc.sent.length;
  const asked = manage.isAdmin('OperAcct');
  await eventually(() => bot.irc.sent.slice(before).includes('WHOIS OperNick'), 'the WHOIS of the account’s client');
  bot.irc.receive(
    ':irc.test 313 DataBot OperNick :is an IRC operator',
    ':irc.test 330 DataBot OperNick operacct :is logged in as',
    ':irc.test 318 DataBot OperNick :End of /WHOIS list.',
  );
  t.equal(await asked, true, 'the operator and the account, from the server');
  const plain = manage.isAdmin('plainacct');
  await eventually(() => bot.irc.sent.includes('WHOIS plain'), 'the WHOIS of plain');
  bot.irc.receive(
    ':irc.test 330 DataBot plain plainacct :is logged in as',
    ':irc.test 318 DataBot plain :End of /WHOIS list.',
  );
  t.equal(await plain, false, 'logged in, not an operator');
});

t.test('answers wait for the disk; a token the store cannot save is revoked and its secret never shown', async (t) => {
  const { bot, manage } = await start(t);
  const { token } = await created(manage, 'alice', 'kept');
  const asked = bot.durableWrites.asked;
  await manage.request(web('alice'), token.id, 'irc.users');
  t.equal(bot.durableWrites.asked, asked + 1, 'a request is on disk before it is confirmed');

  bot.durableWrites.fail(new Error('disk full'));
  const lost = await manage.create(web('alice'), 'lost');
  t.match(lost, {
    done: false,
    status: 503,
    message: /could not be saved .* revoked at once and its secret is not shown/,
  });
  t.notOk('secret' in lost, 'no secret');
  const revoked = manage.ownedBy('alice').find((candidate) => candidate.label === 'lost')!;
  t.ok(revoked.revokedAt, 'revoked');
  t.match((await manage.audit(boss, 0, 1))!.entries[0], {
    action: 'revoke',
    actor: { via: 'system', reason: 'not saved' },
  });

  const grant = await manage.grant(web('boss'), token.id, 'irc.users');
  t.match(grant, { done: false, status: 503, message: /^NOT SAVED: .* Token #1 may now call irc\.users\./ });
  t.same(manage.ownedBy('alice')[0]!.grants, ['irc.users'], 'in effect in memory all the same, as over IRC');
  t.match(bot.logs.join('\n'), /a token change could not be saved action=grant token=#1 error="disk full"/);
  bot.durableWrites.fail(null);
  t.match(await manage.grant(web('boss'), token.id, 'irc.users'), { done: true, message: /already had irc\.users/ });
});

t.test("a staff token's changes over HTTP answer the requests and land in the same log", async (t) => {
  const { bot, manage } = await start(t);
  const { token } = await created(manage, 'alice', 'ci');
  await manage.request(web('alice'), token.id, 'irc.opers');
  const [staffLine] = await bot.say('carol', 'carol', 'TOKEN CREATE ops');
  const staffSecret = /created: (ntd_\S+)$/.exec(staffLine ?? '')![1]!;
  await bot.say('boss', 'boss', 'TOKEN STAFF 2 ON');
  const asStaff = { Authorization: `Token ${staffSecret}` };
  const listed = await bot.inject('GET', '/api/staff/tokens/1/', asStaff);
  t.match(listed.body, {
    requests: ['irc.opers'],
    audit: [{ action: 'create', actor: { via: 'web' } }, { action: 'request' }],
  });
  const patched = await bot.inject('PATCH', '/api/staff/tokens/1/', asStaff, { grant: ['irc.opers'] });
  t.equal(patched.status, 200);
  t.match(patched.body, { endpoints: ['irc.opers'], requests: [] }, 'the grant answers the request');
  t.match((await manage.audit(boss, 0, 1))!.entries[0], {
    action: 'grant',
    details: ['irc.opers'],
    actor: { account: 'carol', via: 'http', token_id: 2, address: '127.0.0.1' },
  });
  t.match(
    (await bot.inject('GET', '/api/staff/tokens/1/', asStaff)).body,
    { audit: [{ actor: { via: 'web', address: '198.51.100.20' } }] },
    "the website's changes name the client's address in the audit log",
  );
});

t.test('requests and who made each change survive a restart', async (t) => {
  const first = await start(t, {}, 'files');
  const { token } = await created(first.manage, 'alice', 'kept');
  await first.manage.request(web('alice'), token.id, 'irc.users');
  await first.bot.stop();
  let manage!: TokensManage;
  await startHarness(t, {
    registry: [routes, tokensPlugin, probe((service) => (manage = service))] as PluginDefinition<never>[],
    plugins: { routes: {}, tokens: {}, probe: {} },
    admins: ['boss'],
    storeDir: first.bot.storeDir!,
  });
  t.same(manage.ownedBy('alice')[0]!.requests, ['irc.users']);
  t.same(
    (await manage.audit(boss, 0, 5))!.entries.map((entry) => [entry.action, entry.actor.via]),
    [
      ['request', 'web'],
      ['create', 'web'],
    ],
  );
});
