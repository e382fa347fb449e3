/** The token-tier user and operator routes of the api plugin in the real host, with a model filled by hand. */
import t, { type Test } from 'tap';
import type { NetworkModel } from '../../../lib/model/network.js';
import { startApi } from './fixtures/api-host.js';
import { OpenApiValidator } from './fixtures/openapi-validator.js';

/** Fill `model` with a synced network. */
function fill(model: NetworkModel): void {
  model.connectionOpened('rfc1459');
  model.upsertUser('alice', {
    ident: 'al',
    host: 'a.example.net',
    realHost: 'dsl-42.home.example',
    ip: '192.0.2.10',
    realname: 'Alice A',
    account: 'alice',
    server: 'leaf.test.net',
  });
  model.upsertUser('Bob[away]', { ident: 'bob', host: '198.51.100.7', server: 'hub.test.net', away: true });
  model.upsertUser('Oper', {
    ident: 'op',
    host: 'staff.example.net',
    realHost: 'op.home.example',
    ip: '203.0.113.5',
    account: 'root',
    isOperator: true,
  });
  model.upsertUser('ghost');
  model.upsertChannel('#chat', {});
  model.addMember('#chat', 'alice', '@');
  model.upsertChannel('#Secret', { hidden: true });
  model.addMember('#Secret', 'alice');
  model.markSynced(true);
}

/**
 * The api plugin on a host whose model is filled by {@link fill} unless `filled` is false; GET answers a
 * path with a token approved for it, checked against the published OpenAPI document, headers included.
 */
async function start(t: Test, { filled = true } = {}) {
  const { host, inject, authorization } = await startApi(t, {
    clock: () => new Date('2026-11-21T14:00:00.000Z'),
    api: { cache_seconds: 10, reuse_ms: 0 },
  });
  if (filled) fill(host.model);
  const document = (await inject('GET', '/api/openapi.json')).body as Record<string, unknown>;
  const validator = new OpenApiValidator(document);
  return async (path: string) => {
    const response = await inject('GET', path, { Authorization: authorization });
    const body = response.body as Record<string, unknown>;
    t.same(
      validator.check('GET', path, response.status, body, new Headers(response.headers)),
      [],
      `${path} matches the OpenAPI document`,
    );
    return { status: response.status, body };
  };
}

interface Page {
  count: number;
  results: Record<string, unknown>[];
}

t.test('a user with every contract field; what the bot did not see is null', async (t) => {
  const get = await start(t);
  const { status, body } = await get('/api/irc/users/alice/');
  t.equal(status, 200);
  t.same(body, {
    nick: 'alice',
    ident: 'al',
    host: 'a.example.net',
    hostmask: 'alice!al@a.example.net',
    real_host: 'dsl-42.home.example',
    ip: '192.0.2.10',
    realname: 'Alice A',
    account: 'alice',
    server: 'leaf.test.net',
    channels: ['#Secret', '#chat'],
    away: false,
    is_operator: false,
    client: null,
    country_code: null,
    connected_at: '2026-11-21T14:00:00.000Z',
  });
  const ghost = await get('/api/irc/users/ghost/');
  t.equal(ghost.body.hostmask, null, 'no hostmask without ident and host');
  t.equal(ghost.body.ip, null);
  t.equal(ghost.body.real_host, null);
});

t.test('lookups by nick follow the CASEMAPPING and answer 404 user_not_found', async (t) => {
  const get = await start(t);
  t.equal((await get('/api/irc/users/BOB%7BAWAY%7D/')).body.nick, 'Bob[away]', '{} fold to [] under rfc1459');
  const missing = await get('/api/irc/users/nobody/');
  t.equal(missing.status, 404);
  t.same(missing.body, { error: { status: 404, code: 'user_not_found', message: 'No connected user named nobody' } });
});

t.test('the user list is paginated and searchable by nick, host, real host, IP and account', async (t) => {
  const get = await start(t);
  const all = (await get('/api/irc/users/')).body as unknown as Page;
  t.equal(all.count, 4);
  t.same(
    all.results.map((user) => user.nick),
    ['alice', 'Bob[away]', 'ghost', 'Oper'],
  );
  const search = async (text: string) =>
    ((await get(`/api/irc/users/?search=${encodeURIComponent(text)}`)).body as unknown as Page).results.map(
      (user) => user.nick,
    );
  t.same(await search('ALI'), ['alice'], 'nick');
  t.same(await search('198.51'), ['Bob[away]'], 'host');
  t.same(await search('dsl-42'), ['alice'], 'real host');
  t.same(await search('203.0.113'), ['Oper'], 'IP');
  t.same(await search('root'), ['Oper'], 'account');
  t.same(await search('b{AWAY}'), ['Bob[away]'], 'the search folds with the CASEMAPPING: {} are [] under rfc1459');
  const paged = (await get('/api/irc/users/?limit=2&ordering=-nick')).body as unknown as Page & { next: string };
  t.same(
    paged.results.map((user) => user.nick),
    ['Oper', 'ghost'],
  );
  t.equal(paged.next, '/api/irc/users/?limit=2&offset=2&ordering=-nick');
  t.equal((await get('/api/irc/users/?ordering=realname')).status, 400);
});

t.test('operators: the contract fields, list and detail, 404 operator_not_found', async (t) => {
  const get = await start(t);
  const list = (await get('/api/irc/opers/')).body as unknown as Page;
  t.equal(list.count, 1);
  t.same(list.results[0], {
    nick: 'Oper',
    account: 'root',
    hostmask: 'Oper!op@staff.example.net',
    real_host: 'op.home.example',
    ip: '203.0.113.5',
    server: null,
    away: false,
  });
  t.equal((await get('/api/irc/opers/oper/')).body.nick, 'Oper');
  t.equal(((await get('/api/irc/opers/?search=staff.example')).body as unknown as Page).count, 1, 'search by host');
  const byRealHost = await get('/api/irc/opers/?search=op.home.example');
  t.equal((byRealHost.body as unknown as Page).count, 1, 'search by real host');
  const notOper = await get('/api/irc/opers/alice/');
  t.equal(notOper.status, 404);
  t.equal((notOper.body.error as { code: string }).code, 'operator_not_found', 'a user who is not an operator');
});

t.test('503 before the first sync', async (t) => {
  const get = await start(t, { filled: false });
  for (const path of ['/api/irc/users/', '/api/irc/users/x/', '/api/irc/opers/', '/api/irc/opers/x/']) {
    t.equal((await get(path)).status, 503, path);
  }
});
