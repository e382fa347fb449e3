/**
 * Pages: a route that answers an HtmlDocument is sent as HTML with its route's cache headers, ETag, 304
 * and HEAD, over real HTTP; a page's own 404 keeps its HTML; pages stay out of the OpenAPI document.
 */
import t, { type Test } from 'tap';
import { escapeHtml, HtmlDocument } from '../../../lib/http/html-document.js';
import { buildOpenApiDocument } from '../../../plugins/api/openapi-document.js';
import { HttpServer } from '../../../lib/http/server.js';
import { captureLog, route } from '../../support/http.js';

async function start(t: Test) {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger });
  const page = new HtmlDocument('<!doctype html><title>Network</title><p>42 users</p>');
  server.route(
    'web',
    route({ path: '/network/', name: 'web.status', document: 'page', maxAge: 5, handler: () => ({ body: page }) }),
  );
  server.route(
    'web',
    route({
      path: '/network/channel/:channel/',
      name: 'web.channel',
      document: 'page',
      handler: (request) => ({
        status: 404,
        body: new HtmlDocument(
          `<!doctype html><title>Not found</title><p>No channel ${escapeHtml(request.params.channel!)}</p>`,
        ),
      }),
    }),
  );
  server.route('api', route({ path: '/api/ok/', name: 'ok', handler: () => ({ body: { ok: true } }) }));
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, page };
}

t.test('a page: HTML, cache headers by tier, an ETag, 304 and HEAD', async (t) => {
  const { url, page } = await start(t);
  const response = await fetch(`${url}/network/`);
  t.equal(response.status, 200);
  t.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(response.headers.get('cache-control'), 'public, max-age=5');
  t.equal(response.headers.get('etag'), page.etag);
  t.equal(await response.text(), '<!doctype html><title>Network</title><p>42 users</p>');
  const again = await fetch(`${url}/network/`, { headers: { 'If-None-Match': page.etag } });
  t.equal(again.status, 304);
  t.equal(again.headers.get('content-type'), null, 'a 304 carries no type');
  const head = await fetch(`${url}/network/`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(page.bytes.length));
  t.equal(await head.text(), '');
  const json = await fetch(`${url}/api/ok/`);
  t.equal(json.headers.get('content-type'), 'application/json; charset=utf-8', 'JSON routes are unchanged');
});

t.test("a page's own 404 is HTML, never cached, and escapes what it repeats", async (t) => {
  const { url } = await start(t);
  const response = await fetch(`${url}/network/channel/${encodeURIComponent('<script>x</script>')}/`);
  t.equal(response.status, 404);
  t.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(response.headers.get('etag'), null, 'no ETag but on a 200');
  t.match(await response.text(), /No channel &lt;script&gt;x&lt;\/script&gt;/);
  t.equal(escapeHtml(`&<>"'`), '&amp;&lt;&gt;&quot;&#39;');
});

t.test('pages are left out of the OpenAPI document', async (t) => {
  const { server } = await start(t);
  const document = buildOpenApiDocument(server.routes(), { title: 'test', version: '1' });
  t.same(Object.keys(document.paths), ['/api/ok/']);
});
