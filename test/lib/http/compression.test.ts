import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { acceptsGzip, GZIP_MIN_BYTES } from '../../../lib/http/compression.js';
import { etagOf } from '../../../lib/http/etag.js';
import { HtmlDocument } from '../../../lib/http/html-document.js';
import { SerializedJson } from '../../../lib/http/serialized-json.js';
import { HttpServer } from '../../../lib/http/server.js';
import { captureLog, route } from '../../support/http.js';

/** A body well over the threshold, that compresses (a list page's repetition); each test has bodies of its own. */
function bigBody(label = 'user'): SerializedJson {
  return new SerializedJson({ results: Array.from({ length: 200 }, (_, index) => ({ nick: `${label}${index}` })) });
}

async function start(t: Test) {
  const log = captureLog();
  const BIG = bigBody();
  const SMALL = new SerializedJson({ users: 12 });
  const PAGE = new HtmlDocument(`<!doctype html><title>t</title>${'<p>line</p>'.repeat(300)}`);
  const VARIED = bigBody('varied');
  const many = Array.from({ length: 6 }, (_, index) => bigBody(`many${index}-`));
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger });
  server.route('api', route({ path: '/api/big/', handler: () => ({ body: BIG }) }));
  server.route('api', route({ path: '/api/small/', handler: () => ({ body: SMALL }) }));
  server.route('api', route({ path: '/api/page/', handler: () => ({ body: PAGE }) }));
  server.route('api', route({ path: '/api/varied/', handler: () => ({ body: VARIED, headers: { Vary: 'Cookie' } }) }));
  server.route(
    'api',
    route({ path: '/api/many/:index/', handler: (request) => ({ body: many[Number(request.params.index)] }) }),
  );
  // A body made anew for each request: nothing to reuse a compressed copy for.
  server.route('api', route({ path: '/api/fresh/', handler: () => ({ body: JSON.parse(BIG.bytes.toString()) }) }));
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { url, log, server, BIG, SMALL, PAGE, many };
}

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose answer is read as it came over the wire (fetch would undo the gzip). */
function request(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject)
      .end();
  });
}

/** Ask until the answer comes gzip'd (its copy is made off the event loop), at most `tries` times. */
async function untilGzipped(url: string, headers: Record<string, string>, tries = 100): Promise<RawAnswer> {
  let answer = await request(url, headers);
  for (let attempt = 1; attempt < tries && answer.headers['content-encoding'] === undefined; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    answer = await request(url, headers);
  }
  return answer;
}

const GZIP = { 'Accept-Encoding': 'gzip, deflate, br' };

t.test('a body answered again goes gzip to a client that takes it, with an ETag of its own', async (t) => {
  const { url, BIG, PAGE } = await start(t);
  const first = await request(`${url}/api/big/`, GZIP);
  t.equal(first.status, 200);
  t.equal(first.headers['content-encoding'], undefined, 'the first time it goes as it is');
  t.equal(first.headers.vary, 'Accept-Encoding', 'but a cache is told it may differ');
  t.same(first.body, BIG.bytes);
  t.equal(first.headers.etag, BIG.etag);

  const gzipped = await untilGzipped(`${url}/api/big/`, GZIP);
  t.equal(gzipped.headers['content-encoding'], 'gzip', 'from the second time on, once compressed');
  t.equal(gzipped.headers.vary, 'Accept-Encoding');
  t.same(gunzipSync(gzipped.body), BIG.bytes, 'the same bytes, compressed');
  t.ok(gzipped.body.length < BIG.bytes.length / 3, `smaller: ${gzipped.body.length} of ${BIG.bytes.length} bytes`);
  t.equal(gzipped.headers['content-length'], String(gzipped.body.length), 'its length is the compressed one');
  t.equal(gzipped.headers.etag, etagOf(gzipped.body), 'its ETag is that of its own bytes');
  t.not(gzipped.headers.etag, BIG.etag);
  t.equal(gzipped.headers['content-type'], 'application/json; charset=utf-8');

  const head = await request(`${url}/api/big/`, GZIP, 'HEAD');
  t.same(
    [head.headers['content-encoding'], head.headers['content-length'], head.headers.etag],
    ['gzip', String(gzipped.body.length), gzipped.headers.etag],
    "HEAD says what the GET's body would be",
  );

  const plain = await request(`${url}/api/big/`);
  t.equal(plain.headers['content-encoding'], undefined, 'a client that asks for no coding gets none');
  t.equal(plain.headers.vary, 'Accept-Encoding');
  t.same(plain.body, BIG.bytes);

  const page = await untilGzipped(`${url}/api/page/`, GZIP);
  t.equal(page.headers['content-encoding'], 'gzip', 'a text document is compressed the same way');
  t.same(gunzipSync(page.body), PAGE.bytes);
});

t.test('If-None-Match: either form is current, and the 304 speaks of the one the client holds', async (t) => {
  const { url, BIG } = await start(t);
  const gzipped = await untilGzipped(`${url}/api/big/`, GZIP);
  t.equal(gzipped.headers['content-encoding'], 'gzip');

  const sameGzip = await request(`${url}/api/big/`, { ...GZIP, 'If-None-Match': gzipped.headers.etag! });
  t.equal(sameGzip.status, 304);
  t.equal(sameGzip.headers.etag, gzipped.headers.etag);
  t.equal(sameGzip.headers.vary, 'Accept-Encoding', 'a 304 repeats Vary');
  t.equal(sameGzip.headers['content-encoding'], undefined, 'but has no body to have a coding');

  const holdsIdentity = await request(`${url}/api/big/`, { ...GZIP, 'If-None-Match': BIG.etag });
  t.equal(holdsIdentity.status, 304, 'the form got before the copy was ready is still current');
  t.equal(holdsIdentity.headers.etag, BIG.etag, 'and named by its own ETag');

  const other = await request(`${url}/api/big/`, { ...GZIP, 'If-None-Match': '"something-else"' });
  t.equal(other.status, 200);
  t.equal(other.headers['content-encoding'], 'gzip', 'an unknown tag: the preferred form, whole');

  const gzipTagWithoutGzip = await request(`${url}/api/big/`, { 'If-None-Match': gzipped.headers.etag! });
  t.equal(gzipTagWithoutGzip.status, 200, 'the gzip tag means nothing to a client that does not take gzip');
  t.equal(gzipTagWithoutGzip.headers['content-encoding'], undefined);
  t.same(gzipTagWithoutGzip.body, BIG.bytes);
});

t.test('what is not compressed: small bodies, bodies made per request, gzip refused', async (t) => {
  const { url, BIG, SMALL } = await start(t);
  for (let index = 0; index < 3; index++) await request(`${url}/api/small/`, GZIP);
  t.ok(SMALL.bytes.length < GZIP_MIN_BYTES);
  const small = await request(`${url}/api/small/`, GZIP);
  t.equal(small.headers['content-encoding'], undefined, `${SMALL.bytes.length} bytes go as they are`);
  t.equal(small.headers.vary, undefined, 'and never vary');

  for (let index = 0; index < 5; index++) {
    const fresh = await request(`${url}/api/fresh/`, GZIP);
    t.equal(fresh.headers['content-encoding'], undefined, 'a body made for one answer is not compressed');
    t.equal(fresh.headers.vary, undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  await untilGzipped(`${url}/api/big/`, GZIP);
  for (const refusal of ['gzip;q=0', 'identity', 'br', 'gzip;q=0.5, identity', '*;q=0, identity']) {
    const answer = await request(`${url}/api/big/`, { 'Accept-Encoding': refusal });
    t.equal(answer.headers['content-encoding'], undefined, `Accept-Encoding: ${refusal}`);
    t.same(answer.body, BIG.bytes);
  }
  for (const accepted of ['gzip', 'GZIP', '*', 'br;q=1, gzip;q=0.8, identity;q=0.5', 'x-gzip, gzip']) {
    const answer = await request(`${url}/api/big/`, { 'Accept-Encoding': accepted });
    t.equal(answer.headers['content-encoding'], 'gzip', `Accept-Encoding: ${accepted}`);
  }
});

t.test("a handler's own Vary is kept beside Accept-Encoding", async (t) => {
  const { url } = await start(t);
  const answer = await untilGzipped(`${url}/api/varied/`, GZIP);
  t.equal(answer.headers['content-encoding'], 'gzip');
  t.equal(answer.headers.vary, 'Cookie, Accept-Encoding');
});

t.test('many bodies at once: each is compressed in its turn, none is left behind', async (t) => {
  const { url, many } = await start(t);
  // Asked for together, more bodies than compressions may run at once.
  for (let round = 0; round < 2; round++) {
    await Promise.all(many.map((_, index) => request(`${url}/api/many/${index}/`, GZIP)));
  }
  for (const [index, body] of many.entries()) {
    const answer = await untilGzipped(`${url}/api/many/${index}/`, GZIP);
    t.equal(answer.headers['content-encoding'], 'gzip', `body ${index}`);
    t.same(gunzipSync(answer.body), body.bytes);
  }
});

t.test('inject undoes the gzip, as a client does', async (t) => {
  const { url, server, BIG } = await start(t);
  await untilGzipped(`${url}/api/big/`, GZIP);
  const injected = await server.inject({ method: 'GET', path: '/api/big/', headers: GZIP });
  t.equal(injected.headers['content-encoding'], 'gzip');
  t.same(injected.body, JSON.parse(BIG.bytes.toString()));
});

t.test('acceptsGzip follows the qualities of Accept-Encoding', async (t) => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['deflate, gzip', true],
    ['gzip;q=0', false],
    ['gzip;q=0.001', true],
    ['*', true],
    ['*;q=0', false],
    ['identity;q=1, gzip;q=0.9', false],
    ['gzip;q=0.9, identity;q=0.9', true],
  ];
  for (const [header, expected] of cases) {
    t.equal(acceptsGzip({ 'accept-encoding': header }), expected, `Accept-Encoding: ${String(header)}`);
  }
});
