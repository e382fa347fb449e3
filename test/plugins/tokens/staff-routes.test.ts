/**
 * The tokens plugin inside the real host on the plugin harness (fake IRC, HTTP without a socket): the
 * staff routes, its guards and rate limits as wired by the plugin, config defaults, and tokens that
 * survive a restart through the store's files.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { buildOpenApiDocument } from '../../../plugins/api/openapi-document.js';
import { SECRET_NOT_DELIVERED, TokensSlice } from '../../../plugins/tokens/model.js';
import { restoredFromDisk, storedText } from '../../support/stored.js';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import type { InjectResponse } from '../../../lib/http/inject.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';
import { OpenApiValidator } from '../api/fixtures/openapi-validator.js';

/** Stands in for the api plugin: one public route and two token routes. */
const fakeApi = definePlugin({
  name: 'fakeapi',
  description: 'test routes',
  configSchema: { type: 'object', properties: {} },
  start({ http }) {
    http.route({
      method: 'GET',
      path: '/api/irc/stats/',
      name: 'irc.stats',
      summary: 's',
      tier: 'public',
      handler: () => ({ body: {} }),
    });
    http.route({
      method: 'GET',
      path: '/api/irc/users/',
      name: 'irc.users',
      summary: 'u',
      tier: 'token',
      handler: () => ({ body: {} }),
    });
    http.route({
      method: 'GET',
      path: '/api/irc/users/:nick/',
      name: 'irc.user',
      summary: 'u',
      tier: 'token',
      handler: () => ({ body: {} }),
    });
  },
});

/** The tokens plugin with boss as administrator, beside the stand-in for the api plugin. */
function withTokens(tokens: Record<string, unknown> = {}, more: Partial<HarnessOptions> = {}): HarnessOptions {
  return {
    registry: [fakeApi, tokensPlugin] as PluginDefinition<never>[],
    plugins: { fakeapi: {}, tokens },
    admins: ['boss'],
    ...more,
  };
}

const admin = { account: 'boss', via: 'irc' } as const;

/** Requests with `secret` as the token (an object body goes as JSON). */
function as(bot: Harness, secret: string) {
  return (method: string, path: string, body?: object) =>
    bot.inject(method, path, { Authorization: `Token ${secret}` }, body);
}

t.test('the plugin fills its config defaults', async (t) => {
  const bot = await startHarness(t, withTokens());
  t.ok(bot.host.http.routes().some(({ route }) => route.path === '/api/staff/tokens/:id/' && route.method === 'PATCH'));
  const response = await bot.inject('GET', '/api/irc/stats/');
  t.equal(response.headers['ratelimit-limit'], '60', 'public bucket: 60 by default');
});

t.test('staff routes: list, detail, PATCH and DELETE, audited with the staff token as actor', async (t) => {
  const bot = await startHarness(t, withTokens());
  const tokens = bot.slice<TokensSlice>('tokens');
  const staff = tokens.create('carol', 'ops', admin);
  tokens.setStaff(staff.token, true, admin);
  const user = tokens.create('alice', 'laptop', { account: 'alice', via: 'irc' });
  const asStaff = as(bot, staff.secret);
  const asUser = as(bot, user.secret);

  t.equal((await asUser('GET', '/api/staff/tokens/')).status, 403, 'a token without the staff flag');
  t.equal((await bot.inject('GET', '/api/staff/tokens/')).status, 401, 'no token at all');

  const list = await asStaff('GET', '/api/staff/tokens/?search=ALI');
  t.equal(list.status, 200);
  const page = list.body as { count: number; results: Record<string, unknown>[] };
  t.equal(page.count, 1);
  t.same(page.results[0], {
    id: user.token.id,
    label: 'laptop',
    owner: 'alice',
    created_at: user.token.createdAt,
    last_used_at: user.token.lastUsedAt,
    revoked_at: null,
    is_active: true,
    staff: false,
    endpoints: [],
    requests: [],
    uses: {},
  });
  t.notOk(
    list.text.includes(user.token.secretSha256) || list.text.includes(user.secret),
    'neither secret nor hash is served',
  );

  t.equal((await asUser('GET', '/api/irc/users/')).status, 403);
  const patched = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['irc.*'], deny: [] });
  t.equal(patched.status, 200);
  const detail = patched.body as { endpoints: string[]; audit: { action: string; actor: unknown }[] };
  t.same(detail.endpoints, ['irc.*']);
  t.same(detail.audit.at(-1), {
    ...detail.audit.at(-1),
    action: 'grant',
    actor: { account: 'carol', via: 'http', token_id: staff.token.id, reason: null, address: '127.0.0.1' },
  });
  t.equal((await asUser('GET', '/api/irc/users/bob/')).status, 200, 'the grant takes effect at once');

  const denied = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}`, { deny: ['irc.user'] });
  t.same((denied.body as { endpoints: string[] }).endpoints, ['irc.users'], 'the wildcard was expanded');
  t.equal((await asUser('GET', '/api/irc/users/bob/')).status, 403);
  t.equal((await asUser('GET', '/api/irc/users/')).status, 200);

  const bad = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['irc.users', 'irc.nope'] });
  t.equal(bad.status, 400);
  const badError = (bad.body as { error: { code: string; details: { field: string; message: string }[] } }).error;
  t.equal(badError.code, 'invalid_body');
  t.equal(badError.details[0]!.field, '/grant/1');
  t.match(
    badError.details[0]!.message,
    /unknown endpoint "irc.nope"; valid names: irc.user, irc.users, irc.\*, netstats.\*/,
  );
  t.equal((await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, {})).status, 400, 'an empty change');
  t.equal((await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['x'], frob: 1 })).status, 400);
  t.equal(
    (await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['irc.user'], deny: ['irc.user'] })).status,
    400,
    'a name in both lists',
  );
  const staffOn = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { staff: true });
  t.equal((staffOn.body as { staff: boolean }).staff, true);
  t.equal((await asUser('GET', '/api/staff/tokens/')).status, 200, 'now a staff token');

  t.equal((await asStaff('GET', '/api/staff/tokens/999/')).status, 404);
  const missing = await asStaff('GET', '/api/staff/tokens/nope/');
  t.equal((missing.body as { error: { code: string } }).error.code, 'token_not_found');

  const deleted = await asStaff('DELETE', `/api/staff/tokens/${user.token.id}/`);
  t.equal(deleted.status, 200);
  const revoked = deleted.body as {
    is_active: boolean;
    revoked_at: string | null;
    audit: { action: string }[];
  };
  t.equal(revoked.is_active, false);
  t.equal(revoked.audit.at(-1)!.action, 'revoke');
  t.equal((await asUser('GET', '/api/irc/users/')).status, 401, 'revoked: 401');
  t.equal((await asStaff('DELETE', `/api/staff/tokens/${user.token.id}/`)).status, 200, 'deleting again is harmless');
  const frozen = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['irc.user'] });
  t.equal(frozen.status, 400);
  t.match((frozen.body as { error: { message: string } }).error.message, /revoked.*cannot be changed/);
  t.ok(bot.logs.some((line) => /token changed over HTTP .*by="carol \(staff token #1\)"/.test(line)));
});

t.test('PATCH and DELETE answer once the change is on disk; when the store cannot write, 503', async (t) => {
  const bot = await startHarness(t, withTokens({}, { store: 'files' }));
  const tokens = bot.slice<TokensSlice>('tokens');
  const staff = tokens.create('carol', 'ops', admin);
  tokens.setStaff(staff.token, true, admin);
  const user = tokens.create('alice', 'laptop', admin);
  const asStaff = as(bot, staff.secret);
  const asUser = as(bot, user.secret);
  /** The user's token as a restart would find it on disk (the durable file and its journal). */
  const onDisk = async () =>
    (
      await restoredFromDisk(bot.host.store.path, new TokensSlice({ onChange: () => undefined, fold: (name) => name }))
    ).get(user.token.id)!;

  const patched = await asStaff('PATCH', `/api/staff/tokens/${user.token.id}/`, { grant: ['irc.users'] });
  t.equal(patched.status, 200);
  t.same((await onDisk()).grants, ['irc.users'], 'the grant was on disk when the answer came');

  // The store's folder turns into a file: every write fails until it is a folder again.
  const folder = path.dirname(bot.host.store.path);
  renameSync(folder, `${folder}.aside`);
  writeFileSync(folder, '');
  const failed = await asStaff('DELETE', `/api/staff/tokens/${user.token.id}/`);
  t.equal(failed.status, 503);
  const error = (failed.body as { error: { code: string; message: string } }).error;
  t.equal(error.code, 'unavailable');
  t.match(
    error.message,
    /token #2 could not be saved .*holds until the bot restarts; send the request again to save it/,
  );
  t.equal((await asUser('GET', '/api/irc/users/')).status, 401, 'the revocation holds in memory');
  t.ok(bot.logs.some((line) => /a token change could not be saved method=DELETE token=#2 error=/.test(line)));

  rmSync(folder);
  renameSync(`${folder}.aside`, folder);
  const again = await asStaff('DELETE', `/api/staff/tokens/${user.token.id}/`);
  t.equal(again.status, 200, 'sent again, it saves what it changed before');
  t.not((await onDisk()).revokedAt, null, 'the revocation was on disk when the answer came');
});

t.test('staff answers match the OpenAPI document generated from the routes', async (t) => {
  const bot = await startHarness(t, withTokens());
  const tokens = bot.slice<TokensSlice>('tokens');
  const staff = tokens.create('carol', 'ops', admin);
  tokens.setStaff(staff.token, true, admin);
  const other = tokens.create('alice', '', admin);
  const lost = tokens.create('alice', 'lost', admin);
  tokens.revoke(lost.token, SECRET_NOT_DELIVERED);
  const document = buildOpenApiDocument(bot.host.http.routes(), { title: 'test', version: '1', description: 'test' });
  const validator = new OpenApiValidator(document as unknown as Record<string, unknown>);
  const asStaff = as(bot, staff.secret);
  const requests: [string, string, object?][] = [
    ['GET', '/api/staff/tokens/'],
    ['GET', `/api/staff/tokens/${other.token.id}/`],
    ['PATCH', `/api/staff/tokens/${other.token.id}/`, { grant: ['irc.users'], staff: true }],
    ['PATCH', `/api/staff/tokens/${other.token.id}/`, { grant: ['nope'] }],
    ['DELETE', `/api/staff/tokens/${other.token.id}/`],
    ['GET', '/api/staff/tokens/999/'],
    ['GET', `/api/staff/tokens/${lost.token.id}/`],
  ];
  for (const [method, path, body] of requests) {
    const response = await asStaff(method, path, body);
    t.same(
      validator.check(method, path, response.status, response.body, new Headers(response.headers)),
      [],
      `${method} ${path} (${response.status}), headers included`,
    );
  }
  const revokedBySystem = (await asStaff('GET', `/api/staff/tokens/${lost.token.id}/`)).body as {
    audit: { action: string; actor: unknown }[];
  };
  t.same(revokedBySystem.audit.at(-1), {
    ...revokedBySystem.audit.at(-1),
    action: 'revoke',
    actor: { account: null, via: 'system', token_id: null, reason: 'secret not delivered', address: null },
  });
});

t.test("the guards' and rate limits' error answers send only the headers the document lists", async (t) => {
  for (const enabled of [true, false]) {
    const bucket = { capacity: 12, refill_per_second: 0.001 };
    const bot = await startHarness(t, withTokens({ rate_limit: { enabled, public: bucket, token: bucket } }));
    const tokens = bot.slice<TokensSlice>('tokens');
    const document = buildOpenApiDocument(bot.host.http.routes(), { title: 'test', version: '1' });
    const validator = new OpenApiValidator(document as unknown as Record<string, unknown>);
    const staff = tokens.create('carol', 'ops', admin);
    tokens.setStaff(staff.token, true, admin);
    const ungranted = tokens.create('alice', 'none', admin);
    const granted = tokens.create('alice', 'users', admin);
    tokens.grant(granted.token, ['irc.users'], admin);
    const when = enabled ? 'rate limits on' : 'rate limits off';
    /** One request; its answer, headers included, must match the document. */
    const send = async (
      method: string,
      path: string,
      options: { authorization?: string; contentType?: string; body?: string } = {},
    ) => {
      const headers: Record<string, string> = {};
      if (options.authorization !== undefined) headers.Authorization = options.authorization;
      if (options.contentType !== undefined) headers['Content-Type'] = options.contentType;
      const response = await bot.inject(method, path, headers, options.body);
      const body = response.text === '' ? undefined : (JSON.parse(response.text) as unknown);
      t.same(
        validator.check(method, path, response.status, body, new Headers(response.headers)),
        [],
        `${method} ${path} → ${response.status} (${when}) matches the document, headers included`,
      );
      return response;
    };
    /** The error's own headers: each one iff `expected` says so. */
    const expectHeaders = (response: InjectResponse, where: string, expected: Record<string, boolean>) => {
      t.equal(response.headers['cache-control'], 'no-store', `${where}: errors are not stored`);
      for (const [name, sent] of Object.entries(expected)) t.equal(name in response.headers, sent, `${where}: ${name}`);
    };
    const asStaff = `Token ${staff.secret}`;
    const cases: [method: string, path: string, status: number, authorization?: string][] = [
      ['GET', '/api/irc/users/', 401],
      ['GET', '/api/irc/users/', 401, 'Token abc'],
      ['GET', '/api/irc/users/', 401, `Token ntd_${'A'.repeat(43)}`],
      ['GET', '/api/irc/users/bob/', 403, `Token ${ungranted.secret}`],
      ['GET', '/api/staff/tokens/', 403, `Token ${granted.secret}`],
      ['GET', '/api/staff/tokens/999/', 404, asStaff],
      ['GET', '/api/staff/tokens/?limit=-1', 400, asStaff],
      ['PUT', '/api/staff/tokens/', 405, asStaff],
      ['POST', `/api/staff/tokens/${granted.token.id}/`, 405],
      ['GET', '/api/nowhere/', 404, asStaff],
    ];
    for (const [first, path, status, authorization] of cases) {
      for (const method of first === 'GET' ? ['GET', 'HEAD'] : [first]) {
        const where = `${method} ${path} (${when})`;
        const response = await send(method, path, { authorization });
        t.equal(response.status, status, where);
        // The rate limit hook has not run for a 401, a 405 or an unknown path's 404, and none adds RateLimit-* itself.
        const counted = enabled && status !== 401 && status !== 405 && path !== '/api/nowhere/';
        expectHeaders(response, where, {
          'www-authenticate': status === 401,
          allow: status === 405,
          'retry-after': false,
          'ratelimit-limit': counted,
          'ratelimit-remaining': counted,
          'ratelimit-reset': counted,
        });
      }
    }
    const target = `/api/staff/tokens/${granted.token.id}/`;
    const bodies: [status: number, contentType: string, body: string][] = [
      [400, 'application/json', '{"grant": ["irc.nope"]}'],
      [400, 'application/json', '{'],
      [415, 'text/plain', '{}'],
    ];
    for (const [status, contentType, body] of bodies) {
      const where = `PATCH ${target} ${contentType} ${body} (${when})`;
      const response = await send('PATCH', target, { authorization: asStaff, contentType, body });
      t.equal(response.status, status, where);
      expectHeaders(response, where, { 'ratelimit-remaining': enabled, 'retry-after': false });
    }
    if (!enabled) continue;

    // Empty each bucket: the hook's (a granted token), the 403's (a token without grants) and the 401's (the IP).
    const limits: [what: string, path: string, authorization?: string][] = [
      ['the token bucket', '/api/irc/users/', `Token ${granted.secret}`],
      ["a refused token's bucket", '/api/irc/users/', `Token ${ungranted.secret}`],
      ["a refused client's bucket", '/api/irc/users/', 'Token guess'],
    ];
    for (const [what, path, authorization] of limits) {
      for (const method of ['GET', 'HEAD']) {
        let response = await send(method, path, { authorization });
        for (let tries = 0; response.status !== 429 && tries <= bucket.capacity; tries++) {
          response = await send(method, path, { authorization });
        }
        const where = `${method} ${path}: ${what}`;
        t.equal(response.status, 429, `${where} is empty`);
        expectHeaders(response, where, {
          'retry-after': true,
          'ratelimit-limit': true,
          'ratelimit-remaining': true,
          'ratelimit-reset': true,
          'www-authenticate': false,
        });
      }
    }
    const publicLimited = await send('GET', '/api/irc/stats/');
    t.equal(publicLimited.status, 429, 'the public bucket the refusals emptied');
    expectHeaders(publicLimited, 'GET /api/irc/stats/', { 'retry-after': true, 'ratelimit-remaining': true });
  }
});

t.test('tokens, grants and the audit log survive a restart; the file holds no secret', async (t) => {
  const first = await startHarness(t, withTokens({}, { store: 'files' }));
  const firstTokens = first.slice<TokensSlice>('tokens');
  const kept = firstTokens.create('alice', 'kept', admin);
  firstTokens.grant(kept.token, ['irc.users'], admin);
  const gone = firstTokens.create('alice', 'gone', admin);
  firstTokens.revoke(gone.token, admin);
  t.equal((await as(first, kept.secret)('GET', '/api/irc/users/')).status, 200);
  await first.stop();
  const file = storedText(first.host.store.path);
  t.notOk(file.includes(kept.secret) || file.includes(gone.secret), 'the store file holds no secret');
  t.ok(file.includes(kept.token.secretSha256), 'it holds the hash');

  const second = await startHarness(t, withTokens({}, { storeDir: first.storeDir! }));
  const tokens = second.slice<TokensSlice>('tokens');
  const restored = tokens.get(kept.token.id)!;
  t.same(restored.grants, ['irc.users']);
  t.equal(restored.uses['irc.users'], 1, 'the use count was written through the store');
  t.same(
    tokens.audit().map((entry) => `${entry.action} #${entry.tokenId}`),
    ['create #1', 'grant #1', 'create #2', 'revoke #2'],
  );
  t.equal((await as(second, kept.secret)('GET', '/api/irc/users/')).status, 200, 'the kept token works');
  t.equal((await as(second, kept.secret)('GET', '/api/irc/users/x/')).status, 403);
  t.equal((await as(second, gone.secret)('GET', '/api/irc/users/')).status, 401, 'the revoked one does not');
  t.equal(tokens.create('alice', 'new', admin).token.id, 3, 'ids are not reused');
});

t.test('token uses are not announced per request; stopping writes them to the store', async (t) => {
  const first = await startHarness(t, withTokens({}, { store: 'files' }));
  const firstTokens = first.slice<TokensSlice>('tokens');
  const issued = firstTokens.create('alice', 'busy', admin);
  firstTokens.grant(issued.token, ['irc.users'], admin);
  await first.host.store.flush();
  const changes: string[] = [];
  first.host.model.on('change', (change) => changes.push(`${change.slice}/${change.kind}`));
  const asAlice = as(first, issued.secret);
  for (let request = 0; request < 3; request++) t.equal((await asAlice('GET', '/api/irc/users/')).status, 200);
  t.equal(issued.token.uses['irc.users'], 3, 'counted in memory at once');
  t.same(
    changes.filter((change) => change.startsWith('tokens/')),
    [],
    'no change is announced per request',
  );
  const before = storedText(first.host.store.path);
  t.notOk(before.includes('"irc.users":3'), 'nor written yet');
  await first.stop();
  t.ok(storedText(first.host.store.path).includes('"irc.users":3'), 'stopping writes the pending uses');
  const second = await startHarness(t, withTokens({}, { storeDir: first.storeDir! }));
  const tokens = second.slice<TokensSlice>('tokens');
  t.equal(tokens.get(issued.token.id)!.uses['irc.users'], 3);
  t.not(tokens.get(issued.token.id)!.lastUsedAt, null);
});

t.test('a use after the plugin stopped, while the HTTP server still answers, still reaches the store', async (t) => {
  const first = await startHarness(t, withTokens({}, { store: 'files' }));
  const tokens = first.slice<TokensSlice>('tokens');
  const issued = tokens.create('alice', 'late', admin);
  tokens.grant(issued.token, ['irc.users'], admin);
  const changes: string[] = [];
  first.host.model.on('change', (change) => changes.push(`${change.slice}/${change.kind}`));
  // What the guard does for a request that arrives after the plugins stopped but before HTTP closes.
  const stop = first.stop();
  tokens.recordUse(issued.token, 'irc.users');
  await stop;
  t.ok(changes.includes('tokens/use'), 'the late use was announced');
  t.ok(storedText(first.host.store.path).includes('"irc.users":1'), 'and written');
});

t.test('rate limits per IP and per token, and failed authentications draw from the IP bucket', async (t) => {
  const bot = await startHarness(
    t,
    withTokens({
      rate_limit: { public: { capacity: 2, refill_per_second: 0.01 }, token: { capacity: 3, refill_per_second: 0.01 } },
    }),
  );
  const tokens = bot.slice<TokensSlice>('tokens');
  const { token, secret } = tokens.create('alice', '', admin);
  tokens.grant(token, ['irc.users'], admin);
  const asUser = as(bot, secret);
  for (let index = 0; index < 3; index++) t.equal((await asUser('GET', '/api/irc/users/')).status, 200);
  const limited = await asUser('GET', '/api/irc/users/');
  t.equal(limited.status, 429, 'the token bucket is empty');
  t.equal(limited.headers['retry-after'], '100');
  t.equal(limited.headers['ratelimit-limit'], '3');

  t.equal((await bot.inject('GET', '/api/irc/users/')).status, 401, 'a failed authentication costs one');
  t.equal((await bot.inject('GET', '/api/irc/stats/')).status, 200, 'the IP bucket had one left');
  const throttled = await bot.inject('GET', '/api/irc/users/', { Authorization: 'Token guess' });
  t.equal(throttled.status, 429, 'guessing is throttled by IP');
  t.ok(throttled.headers['retry-after']);
  t.equal((await bot.inject('GET', '/api/irc/stats/')).status, 429);
  // A revoked token is told so even then: every use of one is a 401, never a 429 to come back after.
  const gone = tokens.create('alice', 'gone', admin);
  tokens.revoke(gone.token, admin);
  const revoked = await as(bot, gone.secret)('GET', '/api/irc/users/');
  t.equal(revoked.status, 401, 'a revoked token with the IP bucket empty');
  t.match((revoked.body as { error: { message: string } }).error.message, /revoked/);
  t.equal((await bot.inject('GET', '/api/irc/stats/')).status, 429, 'and it drew from the bucket all the same');
});

t.test('an IPv6 client shares the public bucket with its /64 (rate_limit.ipv6_prefix_length)', async (t) => {
  const bucket = { capacity: 2, refill_per_second: 0.01 };
  const bot = await startHarness(t, withTokens({ rate_limit: { public: bucket, token: bucket } }));
  const from = (ip: string) => bot.from({ ip }).inject('GET', '/api/irc/stats/');
  t.equal((await from('2001:db8:1:2::1')).status, 200);
  t.equal((await from('2001:db8:1:2::99')).status, 200, 'another address of the /64 draws from the same bucket');
  t.equal((await from('2001:db8:1:2:ffff::1')).status, 429, 'the /64 has spent its two');
  t.equal((await from('2001:db8:1:3::1')).status, 200, 'another /64 has its own');
  t.equal((await from('192.0.2.1')).status, 200);
  t.equal((await from('192.0.2.2')).status, 200, 'each IPv4 address has its own');

  const each = await startHarness(
    t,
    withTokens({ rate_limit: { public: { capacity: 1, refill_per_second: 0.01 }, ipv6_prefix_length: 128 } }),
  );
  t.equal((await each.from({ ip: '2001:db8:1:2::1' }).inject('GET', '/api/irc/stats/')).status, 200);
  t.equal(
    (await each.from({ ip: '2001:db8:1:2::2' }).inject('GET', '/api/irc/stats/')).status,
    200,
    '/128: per address',
  );
});

t.test('refusals of a live token (403) draw from its bucket too', async (t) => {
  const bot = await startHarness(
    t,
    withTokens({
      rate_limit: { public: { capacity: 5, refill_per_second: 0.01 }, token: { capacity: 2, refill_per_second: 0.01 } },
    }),
  );
  const { secret } = bot.slice<TokensSlice>('tokens').create('alice', '', admin);
  const asUser = as(bot, secret);
  const first = await asUser('GET', '/api/irc/users/');
  t.equal(first.status, 403);
  t.equal(first.headers['ratelimit-remaining'], '1', 'the 403 says what is left');
  t.equal((await asUser('GET', '/api/irc/users/')).status, 403);
  const limited = await asUser('GET', '/api/irc/users/');
  t.equal(limited.status, 429, 'the third refusal finds the bucket empty');
  t.equal(limited.headers['ratelimit-limit'], '2');
  t.match((limited.body as { error: { message: string } }).error.message, /for token #1/);
  t.equal((await bot.inject('GET', '/api/irc/stats/')).status, 200, 'the IP bucket is not touched');
});

t.test('rate limits can be turned off', async (t) => {
  const bot = await startHarness(t, withTokens({ rate_limit: { enabled: false, public: { capacity: 1 } } }));
  for (let index = 0; index < 3; index++) {
    const response = await bot.inject('GET', '/api/irc/stats/');
    t.equal(response.status, 200);
    t.notOk('ratelimit-limit' in response.headers);
  }
});
