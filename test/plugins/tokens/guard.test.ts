/**
 * The tier guards of the tokens plugin in the real host, over HTTP without a socket: every 401 variant,
 * 403, and 200 once approved; refused authentications drawn from the client's public bucket.
 */
import t, { type Test } from 'tap';
import { buildOpenApiDocument } from '../../../plugins/api/openapi-document.js';
import type { InjectResponse } from '../../../lib/http/inject.js';
import type { RouteDefinition } from '../../../lib/http/types.js';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import type { TokensSlice } from '../../../plugins/tokens/model.js';
import { startHarness } from '../../../testing/harness.js';
import { OpenApiValidator } from '../api/fixtures/openapi-validator.js';

const admin = { account: 'boss', via: 'irc' } as const;

function route(path: string, name: string, tier: RouteDefinition['tier'] = 'token'): RouteDefinition {
  return {
    method: 'GET',
    path,
    name,
    summary: name,
    tier,
    handler: (request) => ({ body: { ok: true, token: request.tokenId ?? null } }),
  };
}

/** Stands in for the api plugin: token routes of both groups and a public one (the staff tier is the tokens plugin's). */
const api = definePlugin({
  name: 'api',
  description: 'routes behind the guards',
  configSchema: { type: 'object', properties: {} },
  start({ http }) {
    http.route(route('/api/irc/users/', 'irc.users'));
    http.route(route('/api/irc/users/:nick/', 'irc.user'));
    http.route(route('/api/netstats/status/', 'netstats.status'));
    http.route(route('/api/irc/stats/', 'irc.stats', 'public'));
  },
});

/** The tokens plugin with `rateLimit` as its `rate_limit` settings; off unless given. */
async function start(t: Test, rateLimit: Record<string, unknown> = { enabled: false }) {
  const { host, inject } = await startHarness(t, {
    registry: [api, tokensPlugin] as PluginDefinition<never>[],
    plugins: { api: {}, tokens: { rate_limit: rateLimit } },
  });
  const tokens = host.model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
  const document = buildOpenApiDocument(host.http.routes(), { title: 'test', version: '1' });
  const validator = new OpenApiValidator(document as unknown as Record<string, unknown>);
  /** GET a path; every header of the answer must be one the document lists for its status. */
  const get = async (path: string, authorization?: string): Promise<InjectResponse> => {
    const response = await inject('GET', path, authorization === undefined ? {} : { Authorization: authorization });
    t.same(
      validator.undocumentedHeaders('GET', path, response.status, new Headers(response.headers)),
      [],
      `GET ${path} → ${response.status}: the document lists every header sent`,
    );
    return response;
  };
  return { tokens, get };
}

function errorOf(response: InjectResponse) {
  return (response.body as { error: { status: number; code: string; message: string } }).error;
}

t.test('401 unauthorized with WWW-Authenticate: Token for every bad header', async (t) => {
  const { tokens, get } = await start(t);
  const { token, secret } = tokens.create('alice', '', admin);
  tokens.grant(token, ['irc.users'], admin);
  const revoked = tokens.create('alice', '', admin);
  tokens.grant(revoked.token, ['irc.users'], admin);
  tokens.revoke(revoked.token, admin);
  const cases: [string, string | undefined, RegExp][] = [
    ['missing header', undefined, /credentials were not provided/],
    ['empty header', '', /credentials were not provided/],
    ['another scheme', 'Bearer x', /must use the Token scheme/],
    ['bare secret', secret, /must use the Token scheme/],
    ['Token with nothing', 'Token', /no token after "Token"/],
    ['Token with spaces', `Token ${secret} extra`, /must not contain spaces/],
    ['malformed token', 'Token abc', /an API token is "ntd_" followed by 43/],
    ['unknown token', `Token ntd_${'A'.repeat(43)}`, /no such token/],
    ['revoked token', `Token ${revoked.secret}`, /Token #2 was revoked at/],
  ];
  for (const [what, header, message] of cases) {
    const response = await get('/api/irc/users/', header);
    t.equal(response.status, 401, `${what}: 401`);
    t.equal(response.headers['www-authenticate'], 'Token', `${what}: WWW-Authenticate`);
    const error = errorOf(response);
    t.equal(error.code, 'unauthorized');
    t.match(error.message, message, what);
    t.notOk(error.message.includes(secret), `${what}: the answer never echoes the secret`);
  }
  t.equal((await get('/api/irc/users/', `token ${secret}`)).status, 200, 'the scheme is case-insensitive, as in DRF');
  t.equal((await get('/api/irc/users/', `Token \t ${secret}`)).status, 200, 'any white space separates the token');
  t.equal((await get('/api/irc/users/', `Token ${secret}`)).status, 200, 'the usual header');
  t.equal(token.uses['irc.users'], 3);
});

t.test('403 forbidden for a live token not approved for the endpoint; 200 once approved', async (t) => {
  const { tokens, get } = await start(t);
  const { token, secret } = tokens.create('alice', '', admin);
  const header = `Token ${secret}`;
  for (const path of ['/api/irc/users/', '/api/irc/users/bob/', '/api/netstats/status/', '/api/staff/tokens/']) {
    const response = await get(path, header);
    t.equal(response.status, 403, `${path} before any grant`);
    const error = errorOf(response);
    t.equal(error.code, 'forbidden');
    t.notOk('www-authenticate' in response.headers);
  }
  t.match(
    errorOf(await get('/api/irc/users/bob/', header)).message,
    /not approved for irc\.user \(GET \/api\/irc\/users\/\{nick\}\/\).*TOKEN GRANT #1 irc\.user/,
  );
  t.match(errorOf(await get('/api/staff/tokens/', header)).message, /#1 is not a staff token/);
  t.not(token.lastUsedAt, null, 'a refused use still counts as a use of the token');
  t.same(token.uses, {}, 'but not as an approved one');

  tokens.grant(token, ['irc.users'], admin);
  const ok = await get('/api/irc/users/', header);
  t.equal(ok.status, 200);
  t.same(ok.body, { ok: true, token: '1' }, 'the guard sets request.tokenId');
  t.equal(ok.headers['cache-control'], 'private, no-store');
  t.equal((await get('/api/irc/users/bob/', header)).status, 403, 'irc.users does not cover irc.user');

  tokens.grant(token, ['netstats.*'], admin);
  t.equal((await get('/api/netstats/status/', header)).status, 200, 'a wildcard covers its group');
  tokens.setStaff(token, true, admin);
  t.equal((await get('/api/staff/tokens/', header)).status, 200, 'a staff token reaches the staff tier');
  tokens.revoke(token, admin);
  for (const path of ['/api/irc/users/', '/api/netstats/status/', '/api/staff/tokens/']) {
    t.equal((await get(path, header)).status, 401, `${path} after revocation`);
  }
});

t.test('every refused authentication draws from the public bucket, which may answer instead', async (t) => {
  const { get } = await start(t, { public: { capacity: 2, refill_per_second: 0.001 } });
  t.equal((await get('/api/irc/users/')).status, 401);
  t.equal((await get('/api/irc/users/', 'Token x')).status, 401);
  const refused = await get('/api/irc/users/', 'Token y');
  t.equal(refused.status, 429, 'the third refusal finds the bucket empty: its 429 is answered');
  t.equal(errorOf(refused).code, 'rate_limited');
  t.equal((await get('/api/irc/stats/')).status, 429, 'all three were drawn from the bucket');
});

t.test('a public path needs no token, but one presented there must be live (DRF TokenAuthentication)', async (t) => {
  const { tokens, get } = await start(t, { public: { capacity: 100, refill_per_second: 0.001 } });
  const { token, secret } = tokens.create('alice', '', admin);
  const revoked = tokens.create('alice', '', admin);
  tokens.revoke(revoked.token, admin);
  const ok = await get('/api/irc/stats/');
  t.equal(ok.status, 200, 'no header: answered');
  t.same(ok.body, { ok: true, token: null });
  for (const header of ['', 'Bearer x', 'Basic YWxpY2U6c2VjcmV0', secret]) {
    t.equal(
      (await get('/api/irc/stats/', header)).status,
      200,
      `another scheme or none (${JSON.stringify(header)}) is not ours`,
    );
  }
  const live = await get('/api/irc/stats/', `Token ${secret}`);
  t.equal(live.status, 200, 'a live token: answered');
  t.same(live.body, { ok: true, token: null }, 'as a public request: the token is not taken as the caller');
  t.equal(live.headers['cache-control'], 'public, max-age=10');
  t.equal(token.lastUsedAt, null, 'and it is not a use of the token');
  // Each request drew one from the address's bucket: 6 answered so far, none refused.
  t.equal(live.headers['ratelimit-remaining'], '94', 'the public requests so far, each drawn once');
  const cases: [string, RegExp][] = [
    [`Token ${revoked.secret}`, /Token #2 was revoked at/],
    [`token ${revoked.secret}`, /Token #2 was revoked at/],
    ['Token', /no token after "Token"/],
    ['Token abc', /an API token is "ntd_" followed by 43/],
    [`Token ntd_${'A'.repeat(43)}`, /no such token/],
    [`Token ${secret} extra`, /must not contain spaces/],
  ];
  for (const [header, message] of cases) {
    const response = await get('/api/irc/stats/', header);
    t.equal(response.status, 401, `${header.slice(0, 12)}…: 401`);
    t.equal(response.headers['www-authenticate'], 'Token');
    t.equal(response.headers['cache-control'], 'no-store', 'a refusal is not cached');
    t.match(errorOf(response).message, message);
  }
  t.equal(
    (await get('/api/irc/stats/')).headers['ratelimit-remaining'],
    String(94 - cases.length - 1),
    'each refusal drew from the address’s bucket too (the address is throttled)',
  );
});
