import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import type { SerializedJson } from '../../../lib/http/serialized-json.js';
import { ChangeCache, ListCache, TimedCache } from '../../../plugins/api/lists.js';

t.test('a list answer is built once per query until the users or channels change', async (t) => {
  const model = new NetworkModel();
  const cache = new ListCache<number>((listener) => model.on('change', listener));
  let builds = 0;
  const build = () => ++builds;
  const get = (search: string): unknown => JSON.parse(cache.get(search, build).bytes.toString());
  const first: SerializedJson = cache.get('?limit=10&offset=0', build);
  t.equal(first.bytes.toString(), '1');
  t.equal(cache.get('?limit=10&offset=0', build), first, 'a hit is the same answer, with its ETag');
  t.equal(get('?limit=10&offset=0'), 1);
  t.equal(get('?offset=0&limit=10'), 1, 'the same query in another order is a hit');
  t.equal(get('?offset=0&limit=10&'), 1, 'so is one with an empty parameter left over');
  t.equal(get('?limit=20'), 2, 'another query is built');
  t.equal(get(''), 3, 'no query is a query of its own');
  t.equal(get('?'), 3, 'and a lone "?" is the same one');
  model.upsertUser('alice');
  t.equal(get('?limit=10&offset=0'), 4, 'a user change drops every answer');
  t.equal(get('?offset=0&limit=10'), 4, 'the other spellings of a query too');
  model.upsertChannel('#a');
  t.equal(get('?limit=20'), 5, 'a channel change too');
  model.upsertServer('hub.test');
  t.equal(get('?limit=20'), 5, 'a server change does not');
  model.connectionOpened('rfc1459');
  t.equal(get('?limit=20'), 6, 'a network change (a new connection) does');
});

t.test('a client looping over distinct queries does not grow the cache without end', async (t) => {
  const model = new NetworkModel();
  const cache = new ListCache<number>((listener) => model.on('change', listener));
  let builds = 0;
  const build = () => ++builds;
  for (let offset = 0; offset < 2500; offset++) cache.get(`?offset=${offset}`, build);
  t.equal(builds, 2500);
  cache.get('?offset=2499', build);
  t.equal(builds, 2500, 'the latest query is still kept');
  cache.get('?offset=0', build);
  t.equal(builds, 2501, 'old queries were dropped');
});

t.test('a change cache keeps one answer until one of its slices changes', async (t) => {
  const model = new NetworkModel();
  const cache = new ChangeCache((listener) => model.on('change', listener), ['network']);
  let builds = 0;
  const build = () => ({ builds: ++builds });
  const first = cache.get(build);
  t.same(JSON.parse(first.bytes.toString()), { builds: 1 });
  t.equal(cache.get(build), first, 'built once');
  model.upsertUser('alice');
  model.upsertChannel('#a');
  t.equal(cache.get(build), first, 'other slices do not matter');
  model.updateStats({ users: 3 });
  const second = cache.get(build);
  t.same(JSON.parse(second.bytes.toString()), { builds: 2 }, 'a network change rebuilds it');
  t.not(second.etag, first.etag, 'with a new ETag');
});

t.test('while changes keep coming, an answer is rebuilt at most once per reuseMs', async (t) => {
  const model = new NetworkModel();
  const clock = { now: 1_000_000 };
  const cache = new ListCache<number>((listener) => model.on('change', listener), {
    reuseMs: 1000,
    now: () => clock.now,
  });
  let builds = 0;
  const get = (): number => JSON.parse(cache.get('?limit=10', () => ++builds).bytes.toString()) as number;
  t.equal(get(), 1);
  // A quiet second: the first change after it is seen at once.
  clock.now += 5000;
  model.upsertUser('alice');
  t.equal(get(), 2, 'after a quiet while, a change rebuilds at once');
  for (let step = 1; step <= 9; step++) {
    clock.now += 100;
    model.upsertUser(`user${step}`);
    t.equal(get(), 2, `${step * 100} ms later, still the answer built then`);
  }
  clock.now += 100;
  model.upsertUser('bob');
  t.equal(get(), 3, 'a second after the rebuild, the next one');
  clock.now += 5000;
  t.equal(get(), 3, 'no change since: kept however old');

  const stats = new ChangeCache((listener) => model.on('change', listener), ['network'], {
    reuseMs: 1000,
    now: () => clock.now,
  });
  let statsBuilds = 0;
  const first = stats.get(() => ++statsBuilds);
  model.updateStats({ users: 1 });
  clock.now += 999;
  t.equal(
    stats.get(() => ++statsBuilds),
    first,
    'within reuseMs of its build, a change waits',
  );
  clock.now += 1;
  t.not(
    stats.get(() => ++statsBuilds),
    first,
    'then it is rebuilt',
  );
});

t.test('a timed cache keeps each answer reuseMs from its build; 0 keeps nothing', async (t) => {
  const clock = { now: 0 };
  const cache = new TimedCache({ reuseMs: 1000, now: () => clock.now });
  let builds = 0;
  const get = (key: string): number => JSON.parse(cache.get(key, () => ++builds).bytes.toString()) as number;
  t.equal(get('a'), 1);
  clock.now = 999;
  t.equal(get('a'), 1);
  t.equal(get('b'), 2, 'by key');
  clock.now = 1000;
  t.equal(get('a'), 3, 'built again once reuseMs old');
  const never = new TimedCache({ reuseMs: 0 });
  t.equal(JSON.parse(never.get('a', () => 'x').bytes.toString()), 'x');
  t.equal(JSON.parse(never.get('a', () => 'y').bytes.toString()), 'y');
});
