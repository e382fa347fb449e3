/**
 * The network statistics routes of the api plugin in the real host, over HTTP without a socket, with a
 * model, activity and history filled by hand.
 */
import t, { type Test } from 'tap';
import { indexOf } from '../../../plugins/api/netstats.js';
import { CHAT_RECORD, CHAT_RECORD_AT, fill, NOW, PRIVATE } from './fixtures/network-fill.js';
import { startApi } from './fixtures/api-host.js';
import { OpenApiValidator } from './fixtures/openapi-validator.js';

type Body = Record<string, unknown> & { results: Record<string, unknown>[] };

/** The api plugin on a host whose model, activity and history are filled; its clock at {@link NOW}. */
async function start(t: Test) {
  const { host, inject, activity, history, records, authorization } = await startApi(t, {
    clock: () => NOW,
    api: { cache_seconds: 30, reuse_ms: 0 },
  });
  const { model } = host;
  fill({ model, activity, history, records });
  const document = (await inject('GET', '/api/openapi.json')).body as Record<string, unknown>;
  const validator = new OpenApiValidator(document);
  /**
   * GET a path (a token path with a token approved for it); the answer, headers included, must match the
   * OpenAPI document, and a public one must hold no private string.
   */
  const get = async (path: string) => {
    const token = path.startsWith('/api/');
    const response = await inject('GET', path, token ? { Authorization: authorization } : {});
    const body = response.body as Body;
    t.same(
      validator.check('GET', path, response.status, body, new Headers(response.headers)),
      [],
      `${path} matches the OpenAPI document`,
    );
    if (!token) {
      const shown = PRIVATE.filter(
        (secret) => !decodeURIComponent(path).includes(secret) && response.text.includes(secret),
      );
      t.same(shown, [], `${path} shows nothing private`);
    }
    return { response, body };
  };
  return { host, model, records, get, document };
}

t.test('the index lists every endpoint with both paths, from the route table', async (t) => {
  const { get, host } = await start(t);
  const index = await get('/network/netstats/api/index.json');
  t.equal(index.response.headers['cache-control'], 'public, max-age=30');
  const names = ['index', 'status', 'channel', 'user', 'countries', 'clients', 'history', 'operators', 'servers'];
  t.same(
    (index.body.endpoints as { name: string }[]).map((entry) => entry.name),
    names,
  );
  t.same((index.body.endpoints as unknown[])[2], {
    name: 'channel',
    public_path: '/network/data/channel/{channel}/',
    token_path: '/api/netstats/channel/{channel}/',
    description: 'Channel profile: overview, hourly lines, top users today',
  });
  t.same(
    (index.body.endpoints as unknown[])[0],
    {
      name: 'index',
      public_path: '/network/netstats/api/index.json',
      token_path: '/api/netstats/',
      description: 'Machine-readable index of the network statistics endpoints',
    },
    'the index lists itself',
  );
  const token = await get('/api/netstats/');
  t.same(token.body, index.body);
  t.equal(token.response.headers['cache-control'], 'private, no-store');
  const tokenRoutes = host.http
    .routes()
    .filter(({ route }) => route.tier === 'token' && route.path.startsWith('/api/netstats/'));
  t.same(
    tokenRoutes.map(({ route }) => route.name),
    names.map((name) => `netstats.${name}`),
    'the token names of the contract',
  );
  t.same(indexOf([]), [], 'an empty table, an empty index');
});

t.test('status: snapshot, leaderboards (public lines only on the public path), hourly history', async (t) => {
  const { get } = await start(t);
  const { body } = await get('/network/data/status/');
  t.match(body.snapshot, { users: 6, operators: 1, synced_as_operator: true });
  t.equal(body.date, '2026-11-21');
  t.equal(body.time_zone, 'UTC');
  t.equal(body.generated_at, NOW.toISOString());
  t.same(body.top_users_today, [
    { nick: 'Alice', lines: 3 },
    { nick: 'bob', lines: 3 },
    { nick: 'carol', lines: 2 },
    { nick: 'gone', lines: 1 },
  ]);
  t.same(body.top_channels_today, [
    { name: '#chat', lines: 7, users: 3 },
    { name: '#dev', lines: 2, users: 2 },
  ]);
  t.same(
    (body.history as { time: string; users: number }[]).map((point) => [point.time, point.users]),
    [
      ['2026-11-21T12:00:00.000Z', 111],
      ['2026-11-21T13:00:00.000Z', 123],
      ['2026-11-21T14:00:00.000Z', 129],
    ],
    'the last 24 hours by the hour, the most users of each',
  );
  const token = await get('/api/netstats/status/?top=2');
  t.same(token.body.top_users_today, [
    { nick: 'onlyhidden', lines: 9 },
    { nick: 'Alice', lines: 7 },
  ]);
  t.same(token.body.top_channels_today, [
    { name: '#hush', lines: 13, users: 3 },
    { name: '#chat', lines: 7, users: 3 },
  ]);
  for (const top of ['0', '101', 'x', '-1']) {
    const bad = await get(`/network/data/status/?top=${top}`);
    t.match(bad.body, { error: { status: 400, code: 'invalid_parameter', details: [{ field: 'top' }] } }, top);
  }
});

t.test('channel profile: overview, 24 hours that add up, top users; hidden ones only on the token path', async (t) => {
  const { model, get } = await start(t);
  const { body } = await get('/network/data/channel/%23CHAT/');
  t.same(body.channel, {
    name: '#chat',
    topic: 'hello',
    users: 3,
    peak_users: 12,
    record_users: CHAT_RECORD,
    record_users_at: CHAT_RECORD_AT.toISOString(),
    modes: '+nt',
    created_at: '2023-11-14T22:13:20.000Z',
  });
  const hourly = body.hourly_lines as number[];
  t.equal(hourly.length, 24);
  t.equal(hourly[9], 3);
  t.equal(hourly[14], 3);
  t.equal(
    hourly.reduce((sum, lines) => sum + lines, 0),
    body.lines_today,
    'the hours add up to the lines today',
  );
  t.equal(body.lines_today, 7);
  t.same(body.top_users_today, [
    { nick: 'Alice', lines: 3 },
    { nick: 'bob', lines: 3 },
    { nick: 'gone', lines: 1 },
  ]);
  const hidden = await get('/network/data/channel/%23hush/');
  t.same(hidden.body, { error: { status: 404, code: 'channel_not_found', message: 'No visible channel named #hush' } });
  const missing = await get('/network/data/channel/nope/');
  t.match(missing.body, { error: { message: /channel names start with #, written %23/ } });
  const token = await get('/api/netstats/channel/%23hush/');
  t.match(token.body, { channel: { name: '#hush', hidden: true, peak_users: 3 }, lines_today: 13 });
  const quiet = await get('/network/data/channel/%23dev/?top=1');
  t.same(quiet.body.top_users_today, [{ nick: 'carol', lines: 2 }]);
  t.equal(body.lines_counted, true, 'the collector sits in #chat and counts its lines');

  // A channel the bot is not in: users and topic, no line counts nor members, and it says so.
  model.upsertChannel('#big', { users: 3000, topic: 'too big to sit in' });
  const outside = await get('/network/data/channel/%23big/');
  t.match(outside.body, {
    channel: { name: '#big', users: 3000, topic: 'too big to sit in' },
    lines_counted: false,
    lines_today: null,
    hourly_lines: null,
    top_users_today: [],
    member_clients: null,
    member_countries: null,
  });
  // One the bot left today: what it counted while there, marked as not counted now.
  model.clearMembers('#dev', 2);
  const left = await get('/network/data/channel/%23dev/');
  t.match(left.body, { lines_counted: false, lines_today: 2 });
});

t.test("a channel's record users: the collector's record, never below the users now", async (t) => {
  const { model, records, get } = await start(t);
  // #dev has no record yet (its counts were not announced to the collector): its users now are the record.
  t.match((await get('/network/data/channel/%23dev/')).body, {
    channel: { users: 2, record_users: 2, record_users_at: NOW.toISOString() },
  });
  const later = new Date('2026-11-21T11:00:00.000Z');
  records.note('#dev', 5, later.getTime());
  t.match((await get('/network/data/channel/%23dev/')).body, {
    channel: { users: 2, record_users: 5, record_users_at: later.toISOString() },
  });
  t.notOk(records.note('#dev', 4, NOW.getTime()), 'fewer users than the record are no record');
  t.match((await get('/network/data/channel/%23DEV/')).body.channel, { record_users: 5 }, 'the CASEMAPPING folds');
  // A count past the record that the collector has not noted yet: the answer still says at least `users`.
  for (const nick of ['d1', 'd2', 'd3', 'd4', 'd5']) model.addMember('#dev', nick);
  t.match((await get('/network/data/channel/%23dev/')).body.channel, {
    users: 7,
    record_users: 7,
    record_users_at: NOW.toISOString(),
  });
  const token = await get('/api/netstats/channel/%23chat/');
  t.match(token.body.channel, { record_users: CHAT_RECORD, record_users_at: CHAT_RECORD_AT.toISOString() });
});

t.test("a channel's members by client and country: public members only, the top ones and the rest", async (t) => {
  const { model, get } = await start(t);
  // #chat: Alice (WeeChat, GB), bob (WeeChat 3.8, DE) and the bot itself, which is not counted.
  const chat = await get('/network/data/channel/%23chat/');
  t.same(chat.body.member_clients, {
    results: [{ client: 'WeeChat', users: 2, percent: 100 }],
    other: 0,
    unknown: 0,
    total: 2,
  });
  t.same(chat.body.member_countries, {
    results: [
      { country_code: 'DE', country: 'Germany', users: 1, percent: 50 },
      { country_code: 'GB', country: 'United Kingdom', users: 1, percent: 50 },
    ],
    other: 0,
    unknown: 0,
    total: 2,
  });
  // A service joins (not counted), and two users: one whose client and country are unknown, one with mIRC in FR.
  model.addMember('#chat', 'NickServ');
  model.upsertUser('dave', { server: 'hub.test.net' });
  model.upsertUser('erin', { server: 'hub.test.net', client: 'mIRC', countryCode: 'FR' });
  model.addMember('#chat', 'dave');
  model.addMember('#chat', 'erin');
  const top = await get('/network/data/channel/%23chat/?top=1');
  t.same(top.body.member_clients, {
    results: [{ client: 'WeeChat', users: 2, percent: 50 }],
    other: 1,
    unknown: 1,
    total: 4,
  });
  t.same(top.body.member_countries, {
    results: [{ country_code: 'DE', country: 'Germany', users: 1, percent: 25 }],
    other: 2,
    unknown: 1,
    total: 4,
  });
  // The secret channel's members, on the token path only: the user seen only there is counted.
  const hush = await get('/api/netstats/channel/%23hush/');
  t.same(
    (hush.body.member_clients as { results: { client: string; users: number }[] }).results.map((entry) => [
      entry.client,
      entry.users,
    ]),
    [
      ['WeeChat', 1],
      ['mIRC', 1],
    ],
    'ties by name, in code units as the network distributions order them',
  );
  t.match(hush.body.member_countries, { other: 0, unknown: 0, total: 2 });
});

t.test(
  'user profile: overview and hours; public counts leave hidden channels out; private fields on the token path',
  async (t) => {
    const { get } = await start(t);
    const { body } = await get('/network/data/user/alice/');
    t.same(body.user, {
      nick: 'Alice',
      online: true,
      server: 'hub.test.net',
      channels: ['#chat'],
      away: false,
      is_operator: false,
      client: 'WeeChat',
      client_version: '4.1.1',
      country_code: 'GB',
      country: 'United Kingdom',
    });
    t.equal(body.lines_today, 3, 'the 4 lines in #hush are not public');
    t.equal((body.hourly_activity as number[])[13], 0);
    t.equal((body.hourly_activity as number[])[9], 3);
    const token = await get('/api/netstats/user/ALICE/');
    t.match(token.body.user, {
      channels: ['#chat', '#hush'],
      ident: 'secret-ident',
      host: 'secret.host.example',
      hostmask: 'Alice!secret-ident@secret.host.example',
      real_host: 'secret.realhost.example',
      ip: '198.51.100.7',
      realname: 'Secret Realname',
      account: 'secretaccount',
    });
    t.equal(token.body.lines_today, 7);
    t.equal((token.body.hourly_activity as number[])[13], 4);

    const onlyHidden = await get('/network/data/user/onlyhidden/');
    t.same(onlyHidden.body, {
      error: { status: 404, code: 'user_not_found', message: 'No user named onlyhidden is online or was active today' },
    });
    t.match((await get('/api/netstats/user/onlyhidden/')).body, { user: { channels: ['#hush'] }, lines_today: 9 });
    const gone = await get('/network/data/user/gone/');
    t.match(gone.body, { user: { nick: 'gone', online: false, server: null, channels: [] }, lines_today: 1 });
    t.equal((await get('/network/data/user/nobody/')).response.status, 404);
  },
);

t.test('a user last seen only in a secret channel the bot left stays out of public answers', async (t) => {
  const { model, get } = await start(t);
  // The bot leaves #hush (it was kicked, or parted): it no longer sees who is in it.
  model.clearMembers('#hush', 2);
  t.equal(model.users.get('onlyhidden')!.channels.size, 0);
  t.match((await get('/network/data/user/onlyhidden/')).body, { error: { status: 404, code: 'user_not_found' } });
  t.match((await get('/api/netstats/user/onlyhidden/')).body, { user: { nick: 'onlyhidden', channels: [] } });
  t.match((await get('/network/data/user/alice/')).body, { user: { channels: ['#chat'] } }, 'seen in a public one');
  const countries = await get('/network/data/countries/?ordering=country_code');
  t.notOk(
    countries.body.results.some((item) => item.country_code === 'FR'),
    'not counted in a public distribution',
  );
  t.match(countries.body, { total: 4 });
  t.match((await get('/api/netstats/countries/')).body, { total: 5 }, 'the token path counts them');
  // Seen in a public channel again, they are public again.
  model.addMember('#chat', 'onlyhidden');
  t.match((await get('/network/data/user/onlyhidden/')).body, { user: { channels: ['#chat'] } });
});

t.test('countries and clients: distributions of the users seen, without the bot and services', async (t) => {
  const { get } = await start(t);
  const countries = await get('/network/data/countries/');
  t.same(countries.body, {
    count: 2,
    next: null,
    previous: null,
    results: [
      { country_code: 'GB', country: 'United Kingdom', users: 2, percent: 50 },
      { country_code: 'DE', country: 'Germany', users: 1, percent: 25 },
    ],
    unknown: 1,
    total: 4,
  });
  const tokenCountries = await get('/api/netstats/countries/?ordering=country_code');
  t.same(
    tokenCountries.body.results.map((item) => [item.country_code, item.users]),
    [
      ['DE', 1],
      ['FR', 1],
      ['GB', 2],
    ],
    'the token path counts the user only seen in a secret channel',
  );
  t.match(tokenCountries.body, { unknown: 1, total: 5 });
  t.same((await get('/network/data/countries/?search=germ')).body.results.length, 1);

  const clients = await get('/network/data/clients/');
  t.same(clients.body.results, [
    {
      client: 'WeeChat',
      users: 2,
      percent: 50,
      versions: [
        { version: '3.8', users: 1 },
        { version: '4.1.1', users: 1 },
      ],
    },
    { client: 'irssi', users: 1, percent: 25, versions: [{ version: null, users: 1 }] },
  ]);
  t.match(clients.body, { unknown: 1, total: 4 });
  const tokenClients = await get('/api/netstats/clients/?ordering=client');
  t.same(
    tokenClients.body.results.map((item) => item.client),
    ['irssi', 'mIRC', 'WeeChat'],
  );
});

t.test('history: since, until, buckets; bad parameters are 400', async (t) => {
  const { get } = await start(t);
  const all = await get('/network/data/history/?limit=1000');
  t.equal(all.body.count, 30, 'one point per interval');
  t.same(all.body.results[0], {
    time: '2026-11-21T12:00:00.000Z',
    users: 100,
    channels: 10,
    operators: 0,
    servers: 3,
    max_users: 200,
  });
  const some = await get('/network/data/history/?since=2026-11-21T14:00:00Z&until=2026-11-21T14:10Z');
  t.same(
    some.body.results.map((point) => point.users),
    [124, 125, 126],
  );
  const zoned = await get('/network/data/history/?since=2026-11-21T15:00:00%2B01:00&until=2026-11-21T14:00:00.000Z');
  t.same(
    zoned.body.results.map((point) => point.users),
    [124],
    'offsets are understood',
  );
  const hourly = await get('/network/data/history/?bucket=1h&ordering=-time');
  t.same(
    hourly.body.results.map((point) => [point.time, point.users, point.operators]),
    [
      ['2026-11-21T14:00:00.000Z', 129, 1],
      ['2026-11-21T13:00:00.000Z', 123, 1],
      ['2026-11-21T12:00:00.000Z', 111, 1],
    ],
  );
  const daily = await get('/api/netstats/history/?bucket=1d');
  t.same(
    daily.body.results.map((point) => [point.time, point.users]),
    [['2026-11-21T00:00:00.000Z', 129]],
  );
  t.equal((await get('/network/data/history/?since=2024-02-29')).body.count, 30, 'a leap day is a day');
  const fiveMinutes = await get('/network/data/history/?bucket=5m&since=2026-11-21');
  t.equal(fiveMinutes.body.count, 30);
  const paged = await get('/network/data/history/?limit=10&offset=10');
  t.match(paged.body, {
    count: 30,
    next: '/network/data/history/?limit=10&offset=20',
    previous: '/network/data/history/?limit=10',
  });
  for (const [query, field] of [
    ['since=yesterday', 'since'],
    ['until=2026-13-45', 'until'],
    ['since=2026-02-30', 'since'],
    ['until=2026-04-31T10:00Z', 'until'],
    ['since=2026-11-21T14:00:00Z&until=2026-11-21T13:00:00Z', 'until'],
    ['bucket=1w', 'bucket'],
    ['search=x', 'search'],
    ['ordering=users', 'ordering'],
  ] as const) {
    const bad = await get(`/network/data/history/?${query}`);
    t.match(bad.body, { error: { status: 400, code: 'invalid_parameter', details: [{ field }] } }, query);
  }
});

t.test('operators and servers', async (t) => {
  const { get } = await start(t);
  const operators = await get('/network/data/operators/');
  t.same(operators.body.results, [
    { nick: 'NickServ', server: 'services.test.net', away: false },
    { nick: 'Oper', server: 'hub.test.net', away: false },
  ]);
  const tokenOperators = await get('/api/netstats/operators/?search=oper');
  t.same(tokenOperators.body.results, [
    {
      nick: 'Oper',
      server: 'hub.test.net',
      away: false,
      account: 'root',
      hostmask: 'Oper!opident@staff.example.net',
      real_host: 'op.home.example',
      ip: '203.0.113.5',
    },
  ]);
  const servers = await get('/network/data/servers/');
  t.same(
    servers.body.results.map((server) => [server.name, server.is_services]),
    [
      ['hub.test.net', false],
      ['services.test.net', true],
    ],
  );
  t.same((await get('/api/netstats/servers/')).body.results, servers.body.results);
});

t.test('503 before the first sync, except the index and the stored history', async (t) => {
  const { model, get } = await start(t);
  model.connectionLost();
  for (const path of [
    '/network/data/status/',
    '/network/data/channel/%23chat/',
    '/network/data/user/alice/',
    '/network/data/countries/',
    '/network/data/clients/',
    '/network/data/operators/',
    '/network/data/servers/',
    '/api/netstats/status/',
  ]) {
    const { response, body } = await get(path);
    t.equal(response.status, 503, path);
    t.match(body, { error: { code: 'unavailable' } });
  }
  t.equal((await get('/network/data/history/')).body.count, 30, 'the history is served from the store');
  t.equal((await get('/network/netstats/api/index.json')).response.status, 200);
});
