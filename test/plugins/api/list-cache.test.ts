import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import type { SerializedJson } from '../../../lib/http/serialized-json.js';
import { ListCache } from '../../../plugins/api/lists.js';

t.test('a list answer is built once per query until the users or channels change', async (t) => {
  const model = new NetworkModel();
  const cache = new ListCache<number>((listener) => model.on('change', listener));
  let builds = 0;
  const build = () => ++builds;
  const get = (query: string): unknown => JSON.parse(cache.get(new URLSearchParams(query), build).bytes.toString());
  const first: SerializedJson = cache.get(new URLSearchParams('limit=10&offset=0'), build);
  t.equal(first.bytes.toString(), '1');
  t.equal(first.etag, cache.get(new URLSearchParams('limit=10&offset=0'), build).etag, 'a hit keeps its ETag');
  t.equal(get('limit=10&offset=0'), 1);
  t.equal(get('offset=0&limit=10'), 1, 'the same query in another order is a hit');
  t.equal(get('limit=20'), 2, 'another query is built');
  model.upsertUser('alice');
  t.equal(get('limit=10&offset=0'), 3, 'a user change drops every answer');
  model.upsertChannel('#a');
  t.equal(get('limit=20'), 4, 'a channel change too');
  model.upsertServer('hub.test');
  t.equal(get('limit=20'), 4, 'a server change does not');
});
