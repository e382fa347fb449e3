/**
 * What a page with forms needs of the server, over real HTTP: a route marked `form` takes an HTML form's
 * body (and only that), a page may answer any status (a 303 with its Location, a 403) with a Set-Cookie,
 * and a handler learns whether the request came over TLS.
 */
import t, { type Test } from 'tap';
import { HtmlDocument } from '../../../lib/http/html-document.js';
import { HttpServer } from '../../../lib/http/server.js';
import type { ApiRequest } from '../../../lib/http/types.js';
import { captureLog, route } from '../../support/http.js';

async function start(t: Test) {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger });
  const seen: ApiRequest[] = [];
  server.route(
    'account',
    route({
      method: 'POST',
      path: '/network/account/sign-in/',
      name: 'account.sign_in',
      document: 'page',
      form: true,
      handler: (request) => {
        seen.push(request);
        const fields = request.body as URLSearchParams;
        if (fields.get('password') !== 'right') {
          return { status: 403, body: new HtmlDocument('<!doctype html><title>Refused</title><p>Wrong.</p>') };
        }
        return {
          status: 303,
          headers: { Location: '/network/account/', 'Set-Cookie': 'session=abc; Path=/network/; HttpOnly' },
          body: new HtmlDocument('<!doctype html><title>Signed in</title><a href="/network/account/">On</a>'),
        };
      },
    }),
  );
  server.route(
    'api',
    route({ method: 'POST', path: '/api/echo/', name: 'echo', handler: (request) => ({ body: request.body }) }),
  );
  server.route(
    'web',
    route({ path: '/network/', name: 'web.status', handler: (request) => ({ body: { secure: request.secure } }) }),
  );
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, seen, log };
}

t.test('a form route takes an HTML form and hands the handler its fields', async (t) => {
  const { url, seen } = await start(t);
  const response = await fetch(`${url}/network/account/sign-in/`, {
    method: 'POST',
    body: new URLSearchParams({ account: 'ålice', password: 'right', note: 'a&b=c d' }),
    redirect: 'manual',
  });
  t.equal(response.status, 303, 'the page answers See Other');
  t.equal(response.headers.get('location'), '/network/account/');
  t.equal(response.headers.get('set-cookie'), 'session=abc; Path=/network/; HttpOnly');
  t.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(response.headers.get('cache-control'), 'no-store', 'a POST answer is never cached');
  t.equal(seen.length, 1);
  const fields = seen[0]!.body as URLSearchParams;
  t.ok(fields instanceof URLSearchParams);
  t.same(Object.fromEntries(fields), { account: 'ålice', password: 'right', note: 'a&b=c d' }, 'decoded, UTF-8');

  const refused = await fetch(`${url}/network/account/sign-in/`, {
    method: 'POST',
    body: new URLSearchParams({ account: 'alice', password: 'wrong' }),
  });
  t.equal(refused.status, 403, 'a page answers the status it gives');
  t.match(await refused.text(), /<p>Wrong\.<\/p>/, 'with its HTML');
});

t.test('a form route refuses JSON, and a JSON route a form (415); a form not in UTF-8 is 400', async (t) => {
  const { url, seen, log } = await start(t);
  const json = await fetch(`${url}/network/account/sign-in/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ password: 'right' }),
  });
  t.equal(json.status, 415);
  const error = ((await json.json()) as { error: { code: string; message: string } }).error;
  t.equal(error.code, 'unsupported_media_type');
  t.match(error.message, /application\/x-www-form-urlencoded/);
  const multipart = new FormData();
  multipart.set('password', 'right');
  t.equal(
    (await fetch(`${url}/network/account/sign-in/`, { method: 'POST', body: multipart })).status,
    415,
    'multipart/form-data is not taken either',
  );
  const form = await fetch(`${url}/api/echo/`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
  t.equal(form.status, 415, 'JSON routes keep JSON');
  const latin1 = await fetch(`${url}/network/account/sign-in/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: Buffer.from([0x70, 0x61, 0x73, 0x73, 0x77, 0x6f, 0x72, 0x64, 0x3d, 0xe9, 0x74, 0xe9]),
  });
  t.equal(latin1.status, 400);
  const invalid = ((await latin1.json()) as { error: { code: string; message: string } }).error;
  t.same(invalid, { status: 400, code: 'invalid_body', message: 'The form is not valid UTF-8' }, 'nothing quoted');
  t.equal(seen.length, 0, 'the handler saw none of them');
  await log.waitForLine(/POST \/network\/account\/sign-in\/ status=400/);
  t.notOk(log.lines.join('\n').includes('password'), 'no body in the log');
});

t.test('request.secure: false over plain HTTP, true for a request that came over TLS', async (t) => {
  const { server, url } = await start(t);
  t.same(await (await fetch(`${url}/network/`)).json(), { secure: false });
  t.same((await server.inject({ method: 'GET', path: '/network/' })).body, { secure: false });
  t.same((await server.inject({ method: 'GET', path: '/network/', secure: true })).body, { secure: true });
});
