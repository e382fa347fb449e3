import t, { type Test } from 'tap';
import { ApiError } from '../../../lib/http/errors.js';
import { HttpServer, paginate, type PaginateOptions } from '../../../lib/http/server.js';
import type { ApiRequest } from '../../../lib/http/types.js';
import { searchFold } from '../../../lib/irc/casemapping.js';
import { createLogger } from '../../../lib/logger.js';

interface Channel {
  name: string;
  users: number | null;
  aliases: string[];
}

function request(query: string, path = '/api/irc/channels/'): ApiRequest {
  return {
    method: 'GET',
    path,
    params: {},
    search: query === '' ? '' : `?${query}`,
    query: new URLSearchParams(query),
    headers: {},
    ip: '127.0.0.1',
    secure: false,
    body: undefined,
  };
}

const options: PaginateOptions<Channel> = {
  orderingFields: ['name', 'users'],
  defaultOrdering: 'name',
  searchField: (channel) => [channel.name, ...channel.aliases],
};

function channels(count: number): Channel[] {
  return Array.from({ length: count }, (_, index) => ({
    name: `#c${String(index).padStart(4, '0')}`,
    users: index,
    aliases: [],
  }));
}

const names = (page: { results: Channel[] }) => page.results.map((channel) => channel.name);

t.test('defaults: the first 100 items, a next link, no previous', async (t) => {
  const page = paginate(request(''), channels(250), options);
  t.equal(page.count, 250);
  t.equal(page.results.length, 100);
  t.equal(page.results[0]?.name, '#c0000');
  t.equal(page.next, '/api/irc/channels/?limit=100&offset=100');
  t.equal(page.previous, null);
});

t.test('limit and offset slice; links keep the other parameters and drop offset=0', async (t) => {
  const items = channels(250);
  let page = paginate(request('ordering=users&limit=100&offset=150&search=c0'), items, options);
  t.equal(page.count, 250);
  t.same(
    names(page),
    items.slice(150, 250).map((channel) => channel.name),
  );
  t.equal(page.next, null, 'last page');
  t.equal(page.previous, '/api/irc/channels/?limit=100&offset=50&ordering=users&search=c0');

  page = paginate(request('offset=10&limit=10&ordering=users'), items, options);
  t.equal(page.previous, '/api/irc/channels/?limit=10&ordering=users', 'back to the start: no offset');
  t.equal(page.next, '/api/irc/channels/?limit=10&offset=20&ordering=users');

  page = paginate(request('offset=5&limit=10'), items, options);
  t.equal(page.previous, '/api/irc/channels/?limit=10', 'a partial step back also lands on the start');

  page = paginate(request('limit=1000'), items, options);
  t.equal(page.results.length, 250);
  t.equal(page.next, null);

  page = paginate(request('offset=400'), items, options);
  t.same(page.results, [], 'past the end is an empty page');
  t.equal(page.count, 250);
  t.equal(page.next, null);
  t.equal(page.previous, '/api/irc/channels/?limit=100&offset=300');
});

t.test('links use the canonical path with its trailing slash and encode values', async (t) => {
  const page = paginate(request('limit=1&search=c 0', '/api/irc/channels'), channels(3), {
    ...options,
    searchField: () => 'c 0',
  });
  t.equal(page.next, '/api/irc/channels/?limit=1&offset=1&search=c+0');
});

/** Expect 400 invalid_parameter for `field`, with a message matching `message`. */
function invalid(
  t: Test,
  query: string,
  field: string,
  message: RegExp,
  listOptions: PaginateOptions<Channel> = options,
) {
  let thrown: unknown;
  try {
    paginate(request(query), channels(3), listOptions);
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof ApiError)) {
    t.fail(`${query}: expected an ApiError, got ${String(thrown)}`);
    return;
  }
  t.equal(thrown.status, 400, query);
  t.equal(thrown.code, 'invalid_parameter', query);
  t.equal(thrown.details?.[0]?.field, field, query);
  t.match(thrown.message, message, query);
}

t.test('bad limit and offset values are 400 invalid_parameter, naming what is allowed', async (t) => {
  for (const value of ['0', '-1', '1001', 'ten', '1.5', '1e2', ' 5']) {
    invalid(
      t,
      `limit=${encodeURIComponent(value)}`,
      'limit',
      new RegExp(`^limit: must be an integer from 1 to 1000; got ${JSON.stringify(value).replace(/[.+]/g, '\\$&')}$`),
    );
  }
  for (const value of ['-1', 'x', '2.5']) {
    invalid(t, `offset=${value}`, 'offset', /^offset: must be an integer of at least 0; got /);
  }
  invalid(
    t,
    'offset=9007199254740993',
    'offset',
    /^offset: must be an integer from 0 to 9007199254740991; got "9007199254740993"$/,
  );
});

t.test('ordering must be a listed field, optionally with -', async (t) => {
  invalid(t, 'ordering=foo', 'ordering', /^ordering: must be one of name, users, -name, -users; got "foo"$/);
  invalid(t, 'ordering=--name', 'ordering', /got "--name"/);
  t.throws(
    () => paginate(request(''), channels(1), { ...options, defaultOrdering: 'topic' }),
    /defaultOrdering "topic"/,
  );
});

t.test('ordering: numbers numerically, strings locale-independently, null last, ties stable', async (t) => {
  const items: Channel[] = [
    { name: '#b', users: 10, aliases: [] },
    { name: '#ä', users: null, aliases: [] },
    { name: '#B', users: 9, aliases: [] },
    { name: '#a', users: 10, aliases: [] },
    { name: '#z', users: 100, aliases: [] },
    { name: '#c', users: 9, aliases: [] },
  ];
  t.same(
    names(paginate(request('ordering=users'), items, options)),
    ['#B', '#c', '#b', '#a', '#z', '#ä'],
    'ascending, ties in input order, null last',
  );
  t.same(
    names(paginate(request('ordering=-users'), items, options)),
    ['#z', '#b', '#a', '#B', '#c', '#ä'],
    'descending keeps ties in input order and null last',
  );
  t.same(
    names(paginate(request('ordering=name'), items, options)),
    ['#a', '#B', '#b', '#c', '#z', '#ä'],
    'case-insensitive, by code unit (ä after z in every locale)',
  );
  t.same(names(paginate(request(''), items, options)), ['#a', '#B', '#b', '#c', '#z', '#ä'], 'the default ordering');
  t.same(names(paginate(request('ordering=-name'), items, options)), ['#ä', '#z', '#c', '#b', '#B', '#a']);
  t.equal(items[0]?.name, '#b', 'the input is not reordered');
});

t.test('search is a case-insensitive substring of the search field', async (t) => {
  const items: Channel[] = [
    { name: '#Linux', users: 1, aliases: [] },
    { name: '#chat', users: 2, aliases: ['#LinuxChat'] },
    { name: '#help', users: 3, aliases: [] },
  ];
  const page = paginate(request('search=LINUX&limit=1'), items, options);
  t.equal(page.count, 2, 'count is of the matches');
  t.same(names(page), ['#chat']);
  t.equal(page.next, '/api/irc/channels/?limit=1&offset=1&search=LINUX');
  t.same(
    names(paginate(request('search='), items, options)),
    ['#chat', '#help', '#Linux'],
    'an empty search filters nothing',
  );

  const folded = [
    { name: '#{away}', users: 1, aliases: [] },
    { name: '#[AWAY]', users: 2, aliases: [] },
  ];
  t.same(
    names(paginate(request('search=[away'), folded, options)),
    ['#[AWAY]'],
    'by default only letters fold (lower case)',
  );
  const rfc1459 = (text: string) => searchFold(text, 'rfc1459');
  t.same(
    names(paginate(request('search=[away'), folded, { ...options, searchFold: rfc1459 })),
    ['#[AWAY]', '#{away}'],
    'searchFold folds the search and the fields alike',
  );

  const { searchField: _, ...unsearchable } = options;
  invalid(t, 'search=x', 'search', /^search: this list cannot be searched$/, unsearchable);
});

t.test('over HTTP: a bad parameter is a 400 answer, a good one a page', async (t) => {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: createLogger({ sink: () => {} }) });
  server.route('channels', {
    method: 'GET',
    path: '/api/irc/channels/',
    name: 'irc.channels',
    summary: 'Channels',
    tier: 'public',
    handler: (apiRequest) => ({ body: paginate(apiRequest, channels(3), options) }),
  });
  const { url } = await server.listen();
  t.teardown(() => server.close());

  let response = await fetch(url + '/api/irc/channels/?ordering=foo');
  t.equal(response.status, 400);
  t.same(await response.json(), {
    error: {
      status: 400,
      code: 'invalid_parameter',
      message: 'ordering: must be one of name, users, -name, -users; got "foo"',
      details: [{ field: 'ordering', message: 'must be one of name, users, -name, -users; got "foo"' }],
    },
  });

  response = await fetch(url + '/api/irc/channels?limit=2&ordering=-users');
  t.equal(response.status, 200);
  const page = (await response.json()) as { count: number; next: string; results: Channel[] };
  t.equal(page.count, 3);
  t.same(names(page), ['#c0002', '#c0001']);
  t.equal(page.next, '/api/irc/channels/?limit=2&offset=2&ordering=-users');
});

t.test('orderingValue orders the items as given; present maps only the page', async (t) => {
  const items = channels(250);
  const presented: string[] = [];
  const page = paginate(request('ordering=-size&limit=3&offset=1'), items, {
    orderingFields: ['size'],
    defaultOrdering: 'size',
    orderingValue: (channel, field) => (field === 'size' ? channel.users : undefined),
    present: (channel) => {
      presented.push(channel.name);
      return { label: channel.name.toUpperCase() };
    },
  });
  t.equal(page.count, 250);
  t.same(page.results, [{ label: '#C0248' }, { label: '#C0247' }, { label: '#C0246' }]);
  t.same(presented, ['#c0248', '#c0247', '#c0246'], 'only the page was mapped');
});

t.test('tieBreak orders ties ascending in both directions, missing values still last', async (t) => {
  const items: Channel[] = [
    { name: '#b', users: 2, aliases: [] },
    { name: '#none', users: null, aliases: [] },
    { name: '#C', users: 2, aliases: [] },
    { name: '#a', users: 2, aliases: [] },
    { name: '#d', users: 5, aliases: [] },
  ];
  const tied = { ...options, tieBreak: (channel: Channel) => channel.name.toLowerCase() };
  t.same(names(paginate(request('ordering=-users'), items, tied)), ['#d', '#a', '#b', '#C', '#none']);
  t.same(names(paginate(request('ordering=users'), items, tied)), ['#a', '#b', '#C', '#d', '#none']);
  t.same(
    names(paginate(request('ordering=users'), items, options)),
    ['#b', '#C', '#a', '#d', '#none'],
    'input order without',
  );
});

t.test('an early page of a long list is the same page a full sort gives', async (t) => {
  // 4,000 channels with 7 user counts (some missing): most comparisons are ties, kept in input order.
  const items: Channel[] = Array.from({ length: 4000 }, (_, index) => ({
    name: `#c${(index * 7919) % 4000}`,
    users: index % 11 === 0 ? null : (index * 31) % 7,
    aliases: [],
  }));
  for (const ordering of ['users', '-users', 'name', '-name']) {
    const descending = ordering.startsWith('-');
    const field = descending ? ordering.slice(1) : ordering;
    const value = (item: Channel) => (field === 'users' ? item.users : item.name);
    const expected = [...items].sort((left, right) => {
      const a = value(left);
      const b = value(right);
      if ((a === null) !== (b === null)) return a === null ? 1 : -1;
      if (a === null || b === null || a === b) return 0;
      return (a < b ? -1 : 1) * (descending ? -1 : 1);
    });
    // Within the first 2,000 and an eighth of the list (picked out), and past it (sorted).
    for (const [limit, offset] of [
      [10, 0],
      [100, 300],
      [50, 3900],
    ] as const) {
      const page = paginate(request(`ordering=${ordering}&limit=${limit}&offset=${offset}`), items, options);
      t.same(
        page.results.map((item) => item.name),
        expected.slice(offset, offset + limit).map((item) => item.name),
        `${ordering}, ${limit} from ${offset}`,
      );
      t.equal(page.count, 4000);
    }
  }
});

t.test('a collection that knows its size is paged as its array would be, without being copied first', async (t) => {
  const items = channels(300);
  items[7]!.aliases = ['#lobby'];
  const byName = new Map(items.map((item) => [item.name, item]));
  let walks = 0;
  const collection = {
    size: byName.size,
    [Symbol.iterator]: () => {
      walks++;
      return byName.values();
    },
  };
  for (const query of ['', 'limit=10&offset=20', 'ordering=-users&limit=5', 'limit=50&offset=250', 'search=LOBBY']) {
    walks = 0;
    const page = paginate(request(query), collection, options);
    t.same(page, paginate(request(query), items, options), `?${query}`);
    t.equal(walks, 1, `?${query}: walked once`);
  }
});
