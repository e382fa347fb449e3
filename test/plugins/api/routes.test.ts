/**
 * The api plugin's routes in the real host, over HTTP: every answer and its headers checked against the
 * OpenAPI document, and no public one showing what only the token tier may.
 */
import t, { type Test } from 'tap';
import { openApiPath } from '../../../lib/http/routes.js';
import type { NetworkModel } from '../../../lib/model/network.js';
import { startApi } from './fixtures/api-host.js';
import { OpenApiValidator } from './fixtures/openapi-validator.js';

/** Strings that only the token tier may show: none of them may appear in a public answer. */
const PRIVATE = [
  'secret-ident',
  'secret.host.example',
  '198.51.100.7',
  'Secret Realname',
  'secretaccount',
  'hiddenchan',
  'onlyhidden',
];

/** The path as the client wrote it, decoded where it can be (a malformed escape is sent on purpose). */
function asked(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The time of the model's clock. */
const NOW = new Date('2026-11-21T14:03:00.000Z');

/** Fill `model` with a synced network. */
function populate(model: NetworkModel): void {
  model.connectionOpened('rfc1459');
  model.updateStats({ users: 4, invisible: 1, channels: 3, operators: 1, servers: 2, maxUsers: 9 });
  model.upsertServer('hub.test.net', { hops: 0, uplink: null, description: 'TestNet hub', users: 3 });
  model.upsertServer('leaf.test.net', { hops: 1, uplink: 'hub.test.net', description: 'TestNet leaf', users: 1 });
  model.setServerLatency('hub.test.net', 0.4);
  model.upsertChannel('#Chat[1]', {
    joined: true,
    topic: 'hello',
    modes: '+nt',
    createdAt: '2023-11-14T22:13:20.000Z',
  });
  model.upsertUser('Alice', {
    ident: 'secret-ident',
    host: 'secret.host.example',
    ip: '198.51.100.7',
    realname: 'Secret Realname',
    account: 'secretaccount',
  });
  model.addMember('#Chat[1]', 'Alice', '@');
  model.addMember('#Chat[1]', 'bob', '+');
  model.addMember('#Chat[1]', 'DataBot');
  model.upsertChannel('#lobby', { users: 40, topic: 'welcome' });
  model.upsertChannel('#hiddenchan', { users: 2, topic: 'secret plans', modes: '+nst', hidden: true, joined: true });
  model.addMember('#hiddenchan', 'onlyhidden');
  model.markSynced(true);
}

/**
 * The api plugin in the host, its model filled by {@link populate} unless `populated` is false. `rateLimits`
 * turns on the tokens plugin's rate limits (its default), with buckets of `capacity` requests. Its answers
 * come over a real socket: their headers are checked as a client gets them (`Date` included).
 */
async function start(t: Test, { populated = true, rateLimits = false, capacity = 1000 } = {}) {
  const bucket = { capacity, refill_per_second: 0.001 };
  const { host, authorization } = await startApi(t, {
    socket: true,
    clock: () => NOW,
    api: { cache_seconds: 30, reuse_ms: 0 },
    rateLimit: { enabled: rateLimits, public: bucket, token: bucket },
  });
  const { model } = host;
  if (populated) populate(model);
  const url = host.url!;
  const document = (await (await fetch(`${url}/api/openapi.json`)).json()) as Record<string, unknown>;
  const validator = new OpenApiValidator(document);
  const tokenPaths = new Set(
    host.http
      .routes()
      .filter(({ route }) => route.tier !== 'public')
      .map(({ route }) => openApiPath(route.path)),
  );
  /**
   * GET (or HEAD, or another method) a path, with a token approved for it on the token tier; the answer,
   * its headers included, is checked against the OpenAPI document, and a public one for private strings.
   */
  const get = async (path: string, init: RequestInit = {}) => {
    const template = validator.templateOf(path);
    const tokenTier = template !== undefined && tokenPaths.has(template);
    const headers = { ...(init.headers as Record<string, string> | undefined) };
    if (tokenTier) headers.Authorization = authorization;
    const response = await fetch(url + path, { ...init, headers });
    const text = await response.text();
    const body = text === '' ? undefined : (JSON.parse(text) as unknown);
    t.same(
      validator.check(init.method ?? 'GET', path, response.status, body, response.headers),
      [],
      `${init.method ?? 'GET'} ${path} → ${response.status} matches the OpenAPI document, headers included`,
    );
    if (!tokenTier) {
      // A 404 repeats the name asked for; that is the client's own text.
      const shown = PRIVATE.filter((secret) => !asked(path).includes(secret) && text.includes(secret));
      t.same(shown, [], `${path} shows no ident, host, IP, realname, account or hidden channel`);
    }
    return { response, body: body as Record<string, unknown> & { results: Record<string, unknown>[] } };
  };
  return { host, model, url, get, document };
}

t.test('503 before the first sync, on every network path', async (t) => {
  const { model, get } = await start(t, { populated: false });
  for (const path of [
    '/api/irc/stats/',
    '/api/irc/latency/',
    '/api/irc/channels/',
    '/api/irc/servers/',
    '/api/irc/commands/',
  ]) {
    const { response, body } = await get(path);
    t.equal(response.status, 503, path);
    t.match(body, { error: { status: 503, code: 'unavailable' } });
  }
  model.connectionOpened('rfc1459');
  const { body } = await get('/api/irc/stats/');
  t.match(body, { error: { message: /not finished its first sync/ } });
});

t.test('the stats answer is kept until the network state changes', async (t) => {
  const { model, get } = await start(t);
  const first = await get('/api/irc/stats/');
  const etag = first.response.headers.get('etag') ?? '';
  t.equal((await get('/api/irc/stats/')).response.headers.get('etag'), etag, 'the same answer');
  const cached = await get('/api/irc/stats/', { headers: { 'If-None-Match': etag } });
  t.equal(cached.response.status, 304);

  model.upsertUser('carol');
  t.equal((await get('/api/irc/stats/')).response.headers.get('etag'), etag, 'a user change is not a stats change');

  model.updateStats({ users: 5, maxUsers: 10 });
  const updated = await get('/api/irc/stats/', { headers: { 'If-None-Match': etag } });
  t.equal(updated.response.status, 200, 'new numbers are a new answer');
  t.match(updated.body, { users: 5, max_users: 10 });
  t.not(updated.response.headers.get('etag'), etag);

  model.connectionLost();
  t.equal((await get('/api/irc/stats/')).response.status, 503, 'a lost connection is seen at once');
  model.connectionOpened('rfc1459');
  model.markSynced(false);
  const resynced = await get('/api/irc/stats/');
  t.equal(resynced.response.status, 200);
  t.match(resynced.body, { synced_as_operator: false });
});

t.test('stats, servers and latency', async (t) => {
  const { get } = await start(t);
  const stats = await get('/api/irc/stats/');
  t.same(stats.body, {
    users: 4,
    invisible: 1,
    channels: 3,
    operators: 1,
    servers: 2,
    max_users: 9,
    synced_at: '2026-11-21T14:03:00.000Z',
    synced_as_operator: true,
    sync_ms: null,
  });
  t.equal(stats.response.headers.get('cache-control'), 'public, max-age=30');

  const servers = await get('/api/irc/servers/');
  t.same(
    servers.body.results.map((server) => server.name),
    ['hub.test.net', 'leaf.test.net'],
    'ordered by hops',
  );
  t.match(servers.body.results[1], { uplink: 'hub.test.net', latency_ms: null, measured_at: null, is_services: false });
  const leaf = await get('/api/irc/servers/LEAF.Test.Net/');
  t.match(leaf.body, { name: 'leaf.test.net', users: 1 });
  const missing = await get('/api/irc/servers/nope.test.net/');
  t.equal(missing.response.status, 404);
  t.same(missing.body, {
    error: { status: 404, code: 'server_not_found', message: 'No linked server named nope.test.net' },
  });

  const latency = await get('/api/irc/latency/?ordering=-latency_ms');
  t.same(latency.body.results, [
    { server: 'hub.test.net', latency_ms: 0.4, measured_at: '2026-11-21T14:03:00.000Z' },
    { server: 'leaf.test.net', latency_ms: null, measured_at: null },
  ]);
});

t.test('channels: public only, paginated, found by %23 and casemapping', async (t) => {
  const { get } = await start(t);
  const list = await get('/api/irc/channels/');
  t.same(list.body, {
    count: 2,
    next: null,
    previous: null,
    results: [
      { name: '#lobby', users: 40, topic: 'welcome', modes: '' },
      { name: '#Chat[1]', users: 3, topic: 'hello', modes: '+nt' },
    ],
  });
  const paged = await get('/api/irc/channels/?limit=1&ordering=name');
  t.match(paged.body, {
    count: 2,
    next: '/api/irc/channels/?limit=1&offset=1&ordering=name',
    results: [{ name: '#Chat[1]' }],
  });
  const searched = await get('/api/irc/channels/?search=LOB');
  t.same(
    searched.body.results.map((channel) => channel.name),
    ['#lobby'],
  );
  const bad = await get('/api/irc/channels/?limit=-1');
  t.match(bad.body, { error: { status: 400, code: 'invalid_parameter' } });

  const detail = await get('/api/irc/channels/%23chat%7B1%7D/');
  t.same(detail.body, {
    name: '#Chat[1]',
    users: 3,
    topic: 'hello',
    modes: '+nt',
    topic_set_by: null,
    topic_set_at: null,
    created_at: '2023-11-14T22:13:20.000Z',
    members_known: true,
    members: [
      { nick: 'Alice', prefix: '@' },
      { nick: 'bob', prefix: '+' },
      { nick: 'DataBot', prefix: '' },
    ],
  });
  const notJoined = await get('/api/irc/channels/%23lobby');
  t.match(notJoined.body, { members_known: false, members: [] }, 'served without the trailing slash too');

  const hidden = await get('/api/irc/channels/%23hiddenchan/');
  const unknown = await get('/api/irc/channels/%23nochan/');
  t.equal(hidden.response.status, 404);
  t.same(hidden.body, {
    error: { status: 404, code: 'channel_not_found', message: 'No visible channel named #hiddenchan' },
  });
  t.same(unknown.body, {
    error: { status: 404, code: 'channel_not_found', message: 'No visible channel named #nochan' },
  });
});

t.test('ETag, 304, HEAD', async (t) => {
  const { get } = await start(t);
  const first = await get('/api/irc/channels/');
  const etag = first.response.headers.get('etag')!;
  t.match(etag, /^"[\w-]+"$/);
  const again = await get('/api/irc/channels/', { headers: { 'If-None-Match': etag } });
  t.equal(again.response.status, 304);
  const head = await get('/api/irc/channels/', { method: 'HEAD' });
  t.equal(head.response.status, 200);
  t.equal(head.response.headers.get('etag'), etag);
  t.equal(head.body, undefined);
});

/** The headers RFC 9110 §15.4.5 says a 304 carries when the 200 would have had them. */
const REPEATED_ON_304 = ['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary'];

t.test('a 304 to GET and HEAD sends only headers the document lists for it, and those a 200 would', async (t) => {
  for (const rateLimits of [false, true]) {
    const { host, model, get, document } = await start(t, { rateLimits });
    model.setServiceCommands([{ service: 'NickServ', commands: [{ name: 'IDENTIFY', description: null }] }]);
    // An operator, for the operator routes' example.
    model.upsertUser('Alice', { isOperator: true });
    const chat = encodeURIComponent('#Chat[1]');
    const examples: Record<string, string> = {
      '/api/irc/channels/{name}/': `/api/irc/channels/${chat}/`,
      '/api/irc/servers/{name}/': '/api/irc/servers/hub.test.net/',
      '/api/irc/users/{nick}/': '/api/irc/users/Alice/',
      '/api/irc/opers/{name}/': '/api/irc/opers/Alice/',
      '/network/data/channel/{channel}/': `/network/data/channel/${chat}/`,
      '/api/netstats/channel/{channel}/': `/api/netstats/channel/${chat}/`,
      '/network/data/user/{nick}/': '/network/data/user/Alice/',
      '/api/netstats/user/{nick}/': '/api/netstats/user/Alice/',
    };
    const templates = [
      ...new Set(
        host.http
          .routes()
          .filter(({ plugin, route }) => plugin === 'api' && route.method === 'GET')
          .map(({ route }) => openApiPath(route.path)),
      ),
    ];
    t.same(
      templates.filter((template) => !(template in (document.paths as Record<string, unknown>))),
      [],
      'the document has each',
    );
    const paths = templates.map((template) => examples[template] ?? template);
    t.equal(paths.length, 30, 'every GET path of the API plugin, public and token');
    t.same(
      paths.filter((path) => path.includes('{')),
      [],
      'an example for each path parameter',
    );
    for (const path of paths) {
      const where = `${path}${rateLimits ? ' with rate limits' : ''}`;
      const ok = await get(path);
      t.equal(ok.response.status, 200, `${where}: 200 first`);
      const etag = ok.response.headers.get('etag') ?? '';
      for (const method of ['GET', 'HEAD']) {
        // `get` also checks every header of a 304 against the document.
        const { response } = await get(path, { method, headers: { 'If-None-Match': etag } });
        t.equal(response.status, 304, `${method} ${where}: 304`);
        t.equal(response.headers.get('content-type'), null, `${method} ${where}: no body, so no Content-Type`);
        for (const name of REPEATED_ON_304) {
          const value = ok.response.headers.get(name);
          if (value === null) t.equal(response.headers.get(name), null, `${method} ${where}: no ${name}, as the 200`);
          else if (name === 'date') t.ok(response.headers.has(name), `${method} ${where}: a date`);
          else t.equal(response.headers.get(name), value, `${method} ${where}: the 200's ${name}`);
        }
        if (rateLimits) t.ok(response.headers.has('ratelimit-remaining'), `${method} ${where}: rate limit headers`);
      }
    }
  }
});

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

t.test('error answers send only the headers the document lists for their status, rate limits on or off', async (t) => {
  // Each error the public routes give, and whether the rate limit hook has run when it is answered.
  const cases: { method: string; path: string; status: number; limited: boolean }[] = [
    { method: 'GET', path: `/api/irc/channels/${encodeURIComponent('#nochan')}/`, status: 404, limited: true },
    { method: 'GET', path: '/api/irc/servers/nope.test.net/', status: 404, limited: true },
    { method: 'GET', path: '/api/nothing/', status: 404, limited: false },
    { method: 'GET', path: '/api/irc/channels/?limit=-1', status: 400, limited: true },
    { method: 'GET', path: '/api/irc/channels/%zz/', status: 400, limited: false },
    { method: 'GET', path: '/api/irc/commands/', status: 503, limited: true },
    { method: 'POST', path: '/api/irc/channels/', status: 405, limited: false },
    { method: 'DELETE', path: '/api/irc/channels/%23lobby/', status: 405, limited: false },
    { method: 'POST', path: '/api/openapi.json', status: 405, limited: false },
  ];
  for (const rateLimits of [false, true]) {
    const { get } = await start(t, { rateLimits });
    for (const { method: first, path, status, limited } of cases) {
      for (const method of first === 'GET' ? ['GET', 'HEAD'] : [first]) {
        const where = `${method} ${path}${rateLimits ? ' with rate limits' : ''}`;
        // `get` fails the test for every header the document does not list for the status.
        const { response } = await get(path, { method });
        t.equal(response.status, status, where);
        t.equal(response.headers.get('cache-control'), 'no-store', `${where}: errors are not stored`);
        t.equal(response.headers.get('api-version'), '1', `${where}: API-Version`);
        t.equal(response.headers.has('allow'), status === 405, `${where}: Allow only on a 405`);
        for (const name of RATE_LIMIT_HEADERS) {
          t.equal(
            response.headers.has(name),
            rateLimits && limited,
            `${where}: ${name} only after the rate limit hook`,
          );
        }
      }
    }
  }

  const { get } = await start(t, { rateLimits: true, capacity: 2 });
  for (const path of ['/api/irc/stats/', `/api/irc/channels/${encodeURIComponent('#lobby')}/`]) {
    for (const method of ['GET', 'HEAD']) {
      let response = (await get(path, { method })).response;
      for (let tries = 0; response.status !== 429 && tries < 3; tries++)
        response = (await get(path, { method })).response;
      const where = `${method} ${path}`;
      t.equal(response.status, 429, `${where}: over the limit`);
      t.match(response.headers.get('retry-after'), /^\d+$/, `${where}: Retry-After`);
      t.equal(response.headers.get('ratelimit-remaining'), '0', `${where}: the empty bucket's RateLimit-*`);
      t.equal(response.headers.get('cache-control'), 'no-store', `${where}: errors are not stored`);
    }
  }
});

t.test('commands: 503 until the services answered, then grouped by service; search narrows the commands', async (t) => {
  const { model, get } = await start(t);
  t.equal((await get('/api/irc/commands/')).response.status, 503);
  model.setServiceCommands([
    {
      service: 'NickServ',
      commands: [
        { name: 'IDENTIFY', description: 'Identifies to services for a nickname.' },
        { name: 'REGISTER', description: 'Registers a nickname.' },
      ],
    },
    {
      service: 'ChanServ',
      commands: [
        { name: 'OP', description: null },
        { name: 'REGISTER', description: 'Registers a channel.' },
      ],
    },
  ]);
  const all = await get('/api/irc/commands/');
  t.same(
    all.body.results.map((group) => group.service),
    ['ChanServ', 'NickServ'],
  );
  t.equal(all.body.fetched_at, '2026-11-21T14:03:00.000Z');
  const register = await get('/api/irc/commands/?search=regis');
  t.same(register.body.results, [
    { service: 'ChanServ', commands: [{ name: 'REGISTER', description: 'Registers a channel.' }] },
    { service: 'NickServ', commands: [{ name: 'REGISTER', description: 'Registers a nickname.' }] },
  ]);
  const byService = await get('/api/irc/commands/?search=nicks');
  t.equal((byService.body.results[0]!.commands as unknown[]).length, 2, "a service's name matches all its commands");
});

t.test('the OpenAPI document lists every route with its schema', async (t) => {
  const { document, get } = await start(t);
  const paths = document.paths as Record<string, Record<string, { operationId: string }>>;
  t.same(Object.keys(paths).sort(), [
    '/api/irc/channels/',
    '/api/irc/channels/{name}/',
    '/api/irc/commands/',
    '/api/irc/latency/',
    '/api/irc/opers/',
    '/api/irc/opers/{name}/',
    '/api/irc/servers/',
    '/api/irc/servers/{name}/',
    '/api/irc/stats/',
    '/api/irc/users/',
    '/api/irc/users/{nick}/',
    '/api/netstats/',
    '/api/netstats/channel/{channel}/',
    '/api/netstats/clients/',
    '/api/netstats/countries/',
    '/api/netstats/history/',
    '/api/netstats/operators/',
    '/api/netstats/servers/',
    '/api/netstats/status/',
    '/api/netstats/user/{nick}/',
    '/api/openapi.json',
    // The tokens plugin's.
    '/api/staff/tokens/',
    '/api/staff/tokens/{id}/',
    '/network/data/channel/{channel}/',
    '/network/data/clients/',
    '/network/data/countries/',
    '/network/data/history/',
    '/network/data/operators/',
    '/network/data/servers/',
    '/network/data/status/',
    '/network/data/user/{nick}/',
    '/network/netstats/api/index.json',
  ]);
  t.equal(paths['/api/irc/channels/{name}/']!.get!.operationId, 'irc.channel');
  const unknown = await get('/api/nothing/');
  t.equal(unknown.response.status, 404, 'an unknown path is a documented error body too');
});
