import { createHash } from 'node:crypto';
import net from 'node:net';
import t, { type Test } from 'tap';
import { ApiError } from '../../../lib/http/errors.js';
import { SerializedJson } from '../../../lib/http/serialized-json.js';
import { HttpServer, type HttpServerOptions } from '../../../lib/http/server.js';
import type { ApiRequest, TierGuard } from '../../../lib/http/types.js';
import { captureLog, route } from '../../support/http.js';

async function start(t: Test, setup: (server: HttpServer) => void, options: Partial<HttpServerOptions> = {}) {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger, ...options });
  setup(server);
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, log };
}

/** A promise and the function that resolves it. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { opened, open };
}

/** A route at /api/slow/ that answers `body` once `release` opens; `entered` opens when its handler starts. */
function slowRoute(body: unknown) {
  const entered = gate();
  const release = gate();
  const slow = route({
    path: '/api/slow/',
    handler: async () => {
      entered.open();
      await release.opened;
      return { body };
    },
  });
  return { route: slow, entered, release };
}

async function errorOf(response: Response) {
  const body = (await response.json()) as {
    error: { status: number; code: string; message: string; details?: unknown };
  };
  return body.error;
}

const echoRoute = route({
  path: '/api/irc/channels/:name/',
  handler: (request) => ({ body: { name: request.params.name } }),
});

t.test('every answer is JSON and carries API-Version', async (t) => {
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/ok/', handler: () => ({ body: { ok: true } }) }));
    server.route(
      'test',
      route({
        path: '/api/fail/',
        handler: () => {
          throw new ApiError(404, 'user_not_found', 'No user named bob');
        },
      }),
    );
  });
  for (const [path, method, status] of [
    ['/api/ok/', 'GET', 200],
    ['/api/fail/', 'GET', 404],
    ['/nowhere/', 'GET', 404],
    ['/api/ok/', 'DELETE', 405],
  ] as const) {
    const response = await fetch(url + path, { method });
    t.equal(response.status, status, `${method} ${path} status`);
    t.equal(response.headers.get('content-type'), 'application/json; charset=utf-8', `${method} ${path} content type`);
    t.equal(response.headers.get('api-version'), '1', `${method} ${path} API-Version`);
    t.doesNotThrow(JSON.parse.bind(null, await response.text()), `${method} ${path} body is JSON`);
  }
});

/** Send `text` on a fresh connection and read until the server closes it (or `until` appears). */
async function rawExchange(t: Test, url: string, text: string, until?: string): Promise<string> {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  let received = '';
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (until && received.includes(until)) resolve();
    });
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
    socket.write(text);
  });
  return received;
}

t.test('a request the HTTP parser refuses still gets a JSON error with API-Version', async (t) => {
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/ok/', handler: () => ({ body: { ok: true } }) }));
  });
  const cases = [
    ['an unknown method', 'FOO /api/ok/ HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'parse_error'],
    ['a malformed request line', 'GET /api/ok/ NOTHTTP\r\n\r\n', 400, 'parse_error'],
    [
      'headers over the limit',
      `GET /api/ok/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'headers_too_large',
    ],
  ] as const;
  for (const [what, request, status, code] of cases) {
    const answer = await rawExchange(t, url, request);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    t.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: status`);
    t.match(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i, `${what}: JSON`);
    t.match(head, /\r\nAPI-Version: 1\r\n/i, `${what}: API-Version`);
    t.match(JSON.parse(body), { error: { status, code, message: String } }, `${what}: the contract's body`);
  }
});

t.test('a request target in absolute form (RFC 9112) is answered like its path', async (t) => {
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/ok/', handler: (request) => ({ body: { search: request.search } }) }));
  });
  for (const target of ['http://example.com/api/ok/?a=1', 'HTTP://example.com:8080/api/ok/?a=1']) {
    const answer = await rawExchange(t, url, `GET ${target} HTTP/1.1\r\nHost: example.com\r\n\r\n`, '}');
    t.match(answer, /^HTTP\/1\.1 200 /, target);
    t.match(answer, /\{"search":"\?a=1"\}$/, `${target}: the query is kept`);
  }
  const bare = await rawExchange(t, url, 'GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n', '}}');
  t.match(bare, /^HTTP\/1\.1 404 /, 'no path is the root, which is not a route here');
});

t.test('paths answer with and without the trailing slash', async (t) => {
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/irc/stats/', handler: () => ({ body: { users: 3 } }) }));
  });
  for (const path of ['/api/irc/stats/', '/api/irc/stats']) {
    const response = await fetch(url + path);
    t.equal(response.status, 200, path);
    t.same(await response.json(), { users: 3 }, path);
  }
});

t.test('path parameters are percent-decoded exactly once', async (t) => {
  const { url } = await start(t, (server) => server.route('test', echoRoute));
  const cases: [string, string][] = [
    ['/api/irc/channels/%23chat/', '#chat'],
    ['/api/irc/channels/%23chat', '#chat'],
    ['/api/irc/channels/%2523chat/', '%23chat'],
    ['/api/irc/channels/caf%C3%A9/', 'café'],
    ['/api/irc/channels/plain/', 'plain'],
  ];
  for (const [path, name] of cases) {
    const response = await fetch(url + path);
    t.equal(response.status, 200, path);
    t.same(await response.json(), { name }, path);
  }
});

t.test('a malformed percent escape is 400 invalid_parameter, not a 500', async (t) => {
  const { url } = await start(t, (server) => server.route('test', echoRoute));
  const response = await fetch(url + '/api/irc/channels/%E0%A4%A/');
  t.equal(response.status, 400);
  const error = await errorOf(response);
  t.equal(error.code, 'invalid_parameter');
  t.match(error.message, /^name: /);
  t.same(error.details, [{ field: 'name', message: error.message.slice('name: '.length) }]);
});

t.test('unknown paths are 404 not_found; paths match case-sensitively', async (t) => {
  const { url } = await start(t, (server) => server.route('test', echoRoute));
  for (const path of ['/api/nowhere/', '/API/irc/channels/x/', '/api/irc/channels/', '/api/irc/channels/a/b/']) {
    const response = await fetch(url + path);
    t.equal(response.status, 404, path);
    const error = await errorOf(response);
    t.equal(error.code, 'not_found', path);
    t.equal(error.status, 404, path);
  }
});

t.test('another method on a known path is 405 with Allow', async (t) => {
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/items/', handler: () => ({ body: [] }) }));
    server.route('test', route({ method: 'POST', path: '/api/items/', handler: () => ({ status: 201, body: {} }) }));
    server.route('test', route({ method: 'POST', path: '/api/check/', handler: () => ({ body: {} }) }));
  });
  let response = await fetch(url + '/api/items', { method: 'DELETE' });
  t.equal(response.status, 405);
  t.equal(response.headers.get('allow'), 'GET, HEAD, POST');
  t.equal((await errorOf(response)).code, 'method_not_allowed');

  response = await fetch(url + '/api/check/');
  t.equal(response.status, 405);
  t.equal(response.headers.get('allow'), 'POST');
  t.equal((await errorOf(response)).code, 'method_not_allowed');

  response = await fetch(url + '/api/check/', { method: 'HEAD' });
  t.equal(response.status, 405, 'HEAD only works where GET does');
  t.equal(response.headers.get('allow'), 'POST');
});

t.test('HEAD answers like GET without a body', async (t) => {
  const { url } = await start(t, (server) => {
    server.route(
      'test',
      route({
        path: '/api/irc/stats/',
        handler: () => ({ body: { users: 12, channels: 4 }, headers: { 'X-Extra': 'yes' } }),
      }),
    );
  });
  const get = await fetch(url + '/api/irc/stats/');
  const getBody = await get.text();
  const head = await fetch(url + '/api/irc/stats/', { method: 'HEAD' });
  t.equal(head.status, get.status);
  for (const name of ['content-type', 'content-length', 'etag', 'cache-control', 'api-version', 'x-extra']) {
    t.equal(head.headers.get(name), get.headers.get(name), name);
  }
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)));
  t.equal(await head.text(), '');

  const missing = await fetch(url + '/api/nowhere/', { method: 'HEAD' });
  t.equal(missing.status, 404);
  t.equal(missing.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(await missing.text(), '');
});

t.test('GET 200 carries a strong ETag of the body; If-None-Match answers 304', async (t) => {
  let users = 1;
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/irc/stats/', handler: () => ({ body: { users } }) }));
    server.route('test', route({ method: 'POST', path: '/api/irc/stats/', handler: () => ({ body: { users } }) }));
  });
  const first = await fetch(url + '/api/irc/stats/');
  const body = await first.text();
  const etag = first.headers.get('etag') ?? '';
  t.equal(
    etag,
    `"${createHash('sha256').update(body).digest('base64url')}"`,
    'quoted SHA-256 of the body bytes, no W/',
  );
  t.equal((await fetch(url + '/api/irc/stats/')).headers.get('etag'), etag, 'same body, same tag');

  for (const header of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
    const response = await fetch(url + '/api/irc/stats/', { headers: { 'If-None-Match': header } });
    t.equal(response.status, 304, `If-None-Match: ${header}`);
    t.equal(response.headers.get('etag'), etag);
    t.equal(response.headers.get('cache-control'), 'public, max-age=10');
    t.equal(response.headers.get('api-version'), '1');
    t.equal(response.headers.get('content-type'), null, 'no body, so no Content-Type');
    t.equal(await response.text(), '');
  }
  const head = await fetch(url + '/api/irc/stats/', { method: 'HEAD', headers: { 'If-None-Match': etag } });
  t.equal(head.status, 304, 'HEAD honours If-None-Match too');
  t.equal(head.headers.get('etag'), etag);
  t.equal(head.headers.get('content-type'), null);

  const stale = await fetch(url + '/api/irc/stats/', { headers: { 'If-None-Match': '"not-it"' } });
  t.equal(stale.status, 200);
  await stale.text();

  users = 2;
  const changed = await fetch(url + '/api/irc/stats/', { headers: { 'If-None-Match': etag } });
  t.equal(changed.status, 200, 'a changed body no longer matches');
  t.not(changed.headers.get('etag'), etag);
  t.same(await changed.json(), { users: 2 });

  const post = await fetch(url + '/api/irc/stats/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
  });
  t.equal(post.headers.get('etag'), null, 'only GET answers carry an ETag');
  await post.text();
});

t.test(
  'Cache-Control: public max-age on public GETs, private on token and staff routes, no-store on errors',
  async (t) => {
    const { url } = await start(t, (server) => {
      server.route('test', route({ path: '/api/default/', handler: () => ({ body: {} }) }));
      server.route('test', route({ path: '/api/long/', maxAge: 60, handler: () => ({ body: {} }) }));
      server.route('test', route({ path: '/api/token/', tier: 'token', handler: () => ({ body: {} }) }));
      server.route('test', route({ path: '/api/staff/', tier: 'staff', handler: () => ({ body: {} }) }));
      server.route(
        'test',
        route({
          path: '/api/broken/',
          maxAge: 60,
          handler: () => {
            throw new ApiError(503, 'unavailable', 'Not synced yet');
          },
        }),
      );
      server.setGuards(() => ({ token: () => {}, staff: () => {} }));
    });
    const expected: [string, number, string][] = [
      ['/api/default/', 200, 'public, max-age=10'],
      ['/api/long/', 200, 'public, max-age=60'],
      ['/api/token/', 200, 'private, no-store'],
      ['/api/staff/', 200, 'private, no-store'],
      ['/api/broken/', 503, 'no-store'],
      ['/api/nowhere/', 404, 'no-store'],
    ];
    for (const [path, status, cacheControl] of expected) {
      const response = await fetch(url + path);
      t.equal(response.status, status, path);
      t.equal(response.headers.get('cache-control'), cacheControl, path);
      await response.text();
    }
  },
);

t.test('handler headers are added case-insensitively; Content-Type and API-Version stay', async (t) => {
  const { url } = await start(t, (server) => {
    server.route(
      'test',
      route({
        path: '/api/custom/',
        handler: () => ({
          body: { ok: true },
          headers: {
            'cache-control': 'no-cache',
            'content-type': 'text/plain',
            'api-version': '2',
            'Content-Length': '1',
            'X-Extra': 'yes',
          },
        }),
      }),
    );
  });
  const response = await fetch(url + '/api/custom/');
  t.equal(response.headers.get('cache-control'), 'no-cache', 'a handler may choose its caching');
  t.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.equal(response.headers.get('api-version'), '1');
  t.equal(response.headers.get('x-extra'), 'yes');
  t.same(await response.json(), { ok: true }, 'Content-Length is the real one');
});

const credentialSchema = {
  type: 'object',
  required: ['nick', 'password'],
  properties: { nick: { type: 'string' }, password: { type: 'string' } },
  additionalProperties: false,
};

function bodyRoutes(server: HttpServer, seen: unknown[]) {
  server.route(
    'auth',
    route({
      method: 'POST',
      path: '/api/check/',
      body: credentialSchema,
      handler: (request) => {
        seen.push(request.body);
        return { body: { ok: true } };
      },
    }),
  );
  server.route(
    'auth',
    route({
      method: 'PATCH',
      path: '/api/raw/',
      handler: (request) => {
        seen.push(request.body);
        return { body: { ok: true } };
      },
    }),
  );
}

t.test('a body over the limit is 413, judged by Content-Length before reading', async (t) => {
  const seen: unknown[] = [];
  const { url } = await start(t, (server) => bodyRoutes(server, seen));
  const limit = 16 * 1024;
  const fits = JSON.stringify({ filler: 'x'.repeat(limit - '{"filler":""}'.length) });
  t.equal(Buffer.byteLength(fits), limit);
  let response = await fetch(url + '/api/raw/', {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body: fits,
  });
  t.equal(response.status, 200, 'exactly the default limit (16 KiB) is accepted');
  await response.text();

  response = await fetch(url + '/api/raw/', {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body: fits + ' ',
  });
  t.equal(response.status, 413, 'one byte more is refused');
  const error = await errorOf(response);
  t.equal(error.code, 'payload_too_large');
  t.match(error.message, /16384 bytes/);
  t.equal(seen.length, 1, 'the handler saw only the body that fit');

  const again = await fetch(url + '/api/raw/', {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body: '{"after":true}',
  });
  t.equal(again.status, 200, 'the server still answers after refusing a body');
  await again.text();
});

t.test(
  'a declared Content-Length over the limit is refused before any body arrives',
  { timeout: 10_000 },
  async (t) => {
    const seen: unknown[] = [];
    const { url } = await start(t, (server) => bodyRoutes(server, seen));
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    t.teardown(() => socket.destroy());
    // Announce a megabyte, send one byte of it, and wait: the answer must not wait for the rest.
    socket.write(
      'PATCH /api/raw/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{',
    );
    let received = '';
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        if (received.includes('}}')) resolve();
      });
    });
    t.match(received, /^HTTP\/1\.1 413 /);
    t.match(received, /"code":"payload_too_large"/);
    t.equal(seen.length, 0);
  },
);

t.test('a streamed body is refused as soon as it passes the limit', { timeout: 10_000 }, async (t) => {
  const seen: unknown[] = [];
  const { url, log } = await start(t, (server) => bodyRoutes(server, seen), { bodyLimit: 1024 });
  const uploadDone = gate();
  let chunksSent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (chunksSent < 3) {
        chunksSent++;
        controller.enqueue(new TextEncoder().encode(' '.repeat(512)));
      } else {
        // Hold the upload open: the answer must come before the body ends.
        await uploadDone.opened;
        controller.close();
      }
    },
  });
  const response = await fetch(url + '/api/raw/', {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  t.equal(response.status, 413, 'answered while the client was still sending');
  t.equal((await errorOf(response)).code, 'payload_too_large');
  t.equal(seen.length, 0);
  uploadDone.open();
  await log.waitForLine(/PATCH \/api\/raw\/ status=413/);
});

t.test('POST and PATCH need Content-Type: application/json (415)', async (t) => {
  const seen: unknown[] = [];
  const { url } = await start(t, (server) => bodyRoutes(server, seen));
  for (const contentType of [
    undefined,
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
  ]) {
    const headers: Record<string, string> = contentType === undefined ? {} : { 'Content-Type': contentType };
    // A Blob without a type makes fetch send no Content-Type at all.
    const response = await fetch(url + '/api/raw/', { method: 'PATCH', headers, body: new Blob(['{"a":1}']) });
    t.equal(response.status, 415, `Content-Type: ${contentType ?? '(none)'}`);
    t.equal((await errorOf(response)).code, 'unsupported_media_type');
  }
  for (const contentType of [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset="UTF-8"',
  ]) {
    const response = await fetch(url + '/api/raw/', {
      method: 'PATCH',
      headers: { 'Content-Type': contentType },
      body: '{"a":1}',
    });
    t.equal(response.status, 200, `Content-Type: ${contentType}`);
    await response.text();
  }
  t.same(seen, [{ a: 1 }, { a: 1 }, { a: 1 }]);
});

t.test('a body that is not JSON is 400 invalid_body, without echoing it', async (t) => {
  const seen: unknown[] = [];
  const { url } = await start(t, (server) => bodyRoutes(server, seen));
  const invalidUtf8 = Buffer.concat([
    Buffer.from('{"nick": "'),
    Buffer.from([0xff]),
    Buffer.from('", "password": "pw"}'),
  ]);
  for (const body of ['{"nick": "alice", "password": hunter2}', '', invalidUtf8]) {
    const response = await fetch(url + '/api/check/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    t.equal(response.status, 400, String(body));
    const error = await errorOf(response);
    t.equal(error.code, 'invalid_body');
    t.notMatch(error.message, /hunter2/);
  }
  t.equal(seen.length, 0);
});

t.test('a body failing the route schema is 400 invalid_body with JSON-pointer details', async (t) => {
  const seen: unknown[] = [];
  const { url } = await start(t, (server) => bodyRoutes(server, seen));
  let response = await fetch(url + '/api/check/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"nick": 5, "extra": 1}',
  });
  t.equal(response.status, 400);
  let error = await errorOf(response);
  t.equal(error.code, 'invalid_body');
  t.same(
    new Set(error.details as unknown[]),
    new Set([
      { field: '/password', message: 'is required' },
      { field: '/extra', message: 'is not allowed' },
      { field: '/nick', message: 'must be string' },
    ]),
  );
  t.match(error.message, /\/nick must be string/);

  response = await fetch(url + '/api/check/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '[]',
  });
  error = await errorOf(response);
  t.same(error.details, [{ field: '', message: 'must be object' }], 'the whole body is the empty pointer');

  response = await fetch(url + '/api/check/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"nick": "alice", "password": "pw"}',
  });
  t.equal(response.status, 200);
  await response.text();
  t.same(seen, [{ nick: 'alice', password: 'pw' }], 'the handler gets the parsed, valid body');
});

t.test('an invalid body schema fails at registration, naming the route and plugin', async (t) => {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: captureLog().logger });
  t.throws(
    () =>
      server.route(
        'auth',
        route({ method: 'POST', path: '/api/check/', body: { type: 'no-such-type' }, handler: () => ({ body: {} }) }),
      ),
    /POST \/api\/check\/ of plugin "auth"/,
  );
});

t.test('a thrown ApiError becomes its status, code, message, details and headers', async (t) => {
  const { url } = await start(t, (server) => {
    server.route(
      'test',
      route({
        path: '/api/limited/',
        handler: () => {
          throw new ApiError(429, 'rate_limited', 'Slow down', [{ field: 'nick', message: 'too many attempts' }], {
            'Retry-After': '30',
          });
        },
      }),
    );
  });
  const response = await fetch(url + '/api/limited/');
  t.equal(response.status, 429);
  t.equal(response.headers.get('retry-after'), '30');
  t.same(await response.json(), {
    error: {
      status: 429,
      code: 'rate_limited',
      message: 'Slow down',
      details: [{ field: 'nick', message: 'too many attempts' }],
    },
  });
});

t.test('any other failure is a 500 that reveals nothing, logged with the plugin and route', async (t) => {
  const { url, log } = await start(t, (server) => {
    server.route(
      'stats',
      route({
        path: '/api/sync/',
        handler: () => {
          throw new Error('sync secret-detail');
        },
      }),
    );
    server.route(
      'stats',
      route({
        path: '/api/async/',
        handler: async () => {
          await Promise.resolve();
          throw new TypeError('async secret-detail');
        },
      }),
    );
    server.route(
      'stats',
      route({ path: '/api/reject/', handler: () => Promise.reject(new Error('rejected secret-detail')) }),
    );
    server.route('stats', route({ path: '/api/bigint/', handler: () => ({ body: { users: 1n } }) }));
    server.route(
      'stats',
      route({ path: '/api/header/', handler: () => ({ body: {}, headers: { 'X-Bad': 'line\nbreak' } }) }),
    );
  });
  for (const path of ['/api/sync/', '/api/async/', '/api/reject/', '/api/bigint/', '/api/header/']) {
    const response = await fetch(url + path);
    t.equal(response.status, 500, path);
    t.equal(response.headers.get('cache-control'), 'no-store', path);
    const text = await response.text();
    t.notMatch(text, /secret-detail|at .*\.js|BigInt/, `${path}: no message or stack`);
    const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
    t.equal(error.code, 'internal', path);
    t.equal(error.message, 'Internal server error; the failure has been logged', path);
  }
  for (const path of ['sync', 'async', 'reject', 'bigint']) {
    const line = await log.waitForLine(new RegExp(`ERROR .*GET /api/${path}/ failed`));
    t.match(line, /plugin=stats/, `${path}: the plugin is named`);
  }
  await log.waitForLine(/ERROR .*GET \/api\/header\/ produced an invalid response header/);
  const after = await fetch(url + '/api/nowhere/');
  t.equal(after.status, 404, 'the server still answers');
  await after.text();
});

t.test('an error whose own answer cannot be built still gets the plain 500, sync or async', async (t) => {
  const { url, log } = await start(t, (server) => {
    // A thrown value without a prototype cannot be turned into text; details with a BigInt cannot be serialised.
    server.route(
      'stats',
      route({
        path: '/api/bare/',
        handler: () => {
          throw Object.create(null) as unknown;
        },
      }),
    );
    server.route(
      'stats',
      route({ path: '/api/bare-async/', handler: () => Promise.reject(Object.create(null) as unknown) }),
    );
    server.route(
      'stats',
      route({
        path: '/api/details/',
        handler: () => {
          throw new ApiError(400, 'bad', 'bad input', [{ field: 'a', message: 'b', n: 1n } as never]);
        },
      }),
    );
  });
  for (const path of ['/api/bare/', '/api/bare-async/', '/api/details/']) {
    const response = await fetch(url + path);
    t.equal(response.status, 500, path);
    t.equal(((await response.json()) as { error: { code: string } }).error.code, 'internal', path);
  }
  await log.waitForLine(/ERROR .*GET \/api\/details\/: the error answer could not be built/);
  t.equal((await fetch(url + '/api/nowhere/')).status, 404, 'the server still answers');
});

t.test('a 204 carries no body and no Content-Length, even with a pre-serialised body', async (t) => {
  const { url } = await start(t, (server) => {
    server.route(
      'stats',
      route({
        method: 'DELETE',
        path: '/api/thing/',
        handler: () => ({ status: 204, body: new SerializedJson({ a: 1 }) }),
      }),
    );
  });
  const response = await fetch(url + '/api/thing/', { method: 'DELETE' });
  t.equal(response.status, 204);
  t.equal(response.headers.get('content-length'), null);
  t.equal(await response.text(), '');
});

t.test('a client that leaves before the answer breaks nothing', async (t) => {
  const { route: slow, entered: handlerEntered, release } = slowRoute({ late: true });
  const { url, log } = await start(t, (server) => {
    server.route('slow', slow);
    server.route('slow', route({ path: '/api/fast/', handler: () => ({ body: { fast: true } }) }));
  });
  const abort = new AbortController();
  const request = fetch(url + '/api/slow/', { signal: abort.signal });
  await handlerEntered.opened;
  abort.abort();
  await t.rejects(request);
  const line = await log.waitForLine(/GET \/api\/slow\/ /);
  t.match(line, /aborted=true/);
  release.open();
  const after = await fetch(url + '/api/fast/');
  t.equal(after.status, 200, 'the server still answers');
  t.same(await after.json(), { fast: true });
  t.notOk(
    log.lines.some((logged) => /ERROR|WARN/.test(logged)),
    'the late answer is dropped quietly',
  );
});

t.test('token and staff routes run their guard first; without one they are 503', async (t) => {
  const handled: (string | undefined)[] = [];
  const handler = (request: ApiRequest) => {
    handled.push(request.tokenId);
    return { body: { token: request.tokenId ?? null } };
  };
  const { server, url } = await start(t, (server) => {
    server.route('api', route({ path: '/api/users/', tier: 'token', handler }));
    server.route('api', route({ path: '/api/staff/tokens/', tier: 'staff', handler }));
  });

  let response = await fetch(url + '/api/users/');
  t.equal(response.status, 503, 'no guard yet');
  t.equal((await errorOf(response)).code, 'unavailable');

  const guarded: string[] = [];
  const guards: { token?: TierGuard; staff?: TierGuard } = {};
  server.setGuards(() => guards);
  guards.token = (request, guardedRoute) => {
    guarded.push(guardedRoute.path);
    const header = request.headers.authorization;
    if (header !== 'Token good')
      throw new ApiError(401, 'unauthorized', 'Missing or unknown token', undefined, { 'WWW-Authenticate': 'Token' });
    request.tokenId = 'token-1';
  };
  response = await fetch(url + '/api/users/', { headers: { Authorization: 'Token bad' } });
  t.equal(response.status, 401);
  t.equal(response.headers.get('www-authenticate'), 'Token');
  t.equal((await errorOf(response)).code, 'unauthorized');
  t.same(handled, [], 'the handler did not run');

  response = await fetch(url + '/api/users/', { headers: { Authorization: 'Token good' } });
  t.equal(response.status, 200);
  t.same(await response.json(), { token: 'token-1' }, 'the guard can tell the handler who called');

  response = await fetch(url + '/api/staff/tokens/', { headers: { Authorization: 'Token good' } });
  t.equal(response.status, 503, 'the token guard does not open staff routes');
  await response.text();
  guards.staff = () => {
    throw new ApiError(403, 'forbidden', 'Not a staff token');
  };
  response = await fetch(url + '/api/staff/tokens/', { headers: { Authorization: 'Token good' } });
  t.equal(response.status, 403);
  await response.text();
  t.same(guarded, ['/api/users/', '/api/users/']);
  t.same(handled, ['token-1']);
});

t.test('hooks run after the guard, add headers, and may refuse', async (t) => {
  const seen: string[] = [];
  let refuse = false;
  const { url } = await start(t, (server) => {
    server.route('api', route({ path: '/api/users/', tier: 'token', handler: () => ({ body: {} }) }));
    server.route(
      'api',
      route({
        path: '/api/missing/',
        handler: () => {
          throw new ApiError(404, 'user_not_found', 'No user');
        },
      }),
    );
    server.setGuards(() => ({
      token: (request) => {
        request.tokenId = 'token-7';
      },
    }));
    server.addHook(async (request, hookedRoute) => {
      seen.push(`${hookedRoute.name}:${request.tokenId ?? 'public'}`);
      if (refuse) throw new ApiError(429, 'rate_limited', 'Too many requests', undefined, { 'Retry-After': '12' });
      return { 'RateLimit-Remaining': '9' };
    });
  });
  let response = await fetch(url + '/api/users/');
  t.equal(response.status, 200);
  t.equal(response.headers.get('ratelimit-remaining'), '9');
  await response.text();

  response = await fetch(url + '/api/missing/');
  t.equal(response.status, 404);
  t.equal(response.headers.get('ratelimit-remaining'), '9', 'the hook headers ride on errors too');
  await response.text();

  refuse = true;
  response = await fetch(url + '/api/users/');
  t.equal(response.status, 429);
  t.equal(response.headers.get('retry-after'), '12');
  t.equal((await errorOf(response)).code, 'rate_limited');
  t.same(seen, ['test.route:token-7', 'test.route:public', 'test.route:token-7']);
});

t.test('one access-log line per request, without query strings, headers or bodies', async (t) => {
  const { url, log } = await start(t, (server) => {
    server.route('test', echoRoute);
    server.route('auth', route({ method: 'POST', path: '/api/check/', handler: () => ({ body: { valid: true } }) }));
  });
  const response = await fetch(url + '/api/irc/channels/%23chat/?token=query-secret', {
    headers: { Authorization: 'Token header-secret' },
  });
  const body = await response.text();
  const post = await fetch(url + '/api/check/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{"password":"body-secret"}',
  });
  await post.text();
  const missing = await fetch(url + '/nowhere?x=1');
  await missing.text();

  const get = await log.waitForLine(/GET \/api\/irc\/channels\//);
  t.match(
    get,
    /INFO {2}\[http\] GET \/api\/irc\/channels\/%23chat\/ status=200 ms=[\d.]+ bytes=(\d+) ip=127\.0\.0\.1 route=test\.route$/,
  );
  t.equal(get.match(/bytes=(\d+)/)?.[1], String(Buffer.byteLength(body)));
  t.match(await log.waitForLine(/POST \/api\/check\//), /status=200/);
  const unrouted = await log.waitForLine(/GET \/nowhere /);
  t.match(unrouted, /status=404/);
  t.notMatch(unrouted, /route=/, 'no route took it');

  const accessLines = log.lines.filter((line) => / status=\d+ /.test(line));
  t.equal(accessLines.length, 3, 'exactly one line per request');
  t.notOk(
    log.lines.some((line) => /secret|Authorization|\?/.test(line)),
    'no query string, header or body is logged',
  );
});

t.test('a duplicate method and path is refused, naming both plugins', async (t) => {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: captureLog().logger });
  const first = route({ path: '/api/irc/channels/:name/', handler: () => ({ body: {} }) });
  server.route('channels', first);
  t.throws(
    () => server.route('other', route({ path: '/api/irc/channels/:channel', handler: () => ({ body: {} }) })),
    /plugin "other".*plugin "channels"/,
  );
  const post = route({ method: 'POST', path: '/api/irc/channels/:name/', handler: () => ({ body: {} }) });
  server.route('other', post);
  t.same(
    server.routes(),
    [
      { plugin: 'channels', route: first },
      { plugin: 'other', route: post },
    ],
    'routes() lists what was accepted',
  );
});

t.test('listen on port 0 reports the real port; a taken port fails naming it', async (t) => {
  const { server, url } = await start(t, () => {});
  const port = Number(new URL(url).port);
  t.ok(port > 0);
  t.equal(url, `http://127.0.0.1:${port}`);
  await t.rejects(server.listen(), /already listening/);

  const second = new HttpServer({ host: '127.0.0.1', port, logger: captureLog().logger });
  await t.rejects(second.listen(), new RegExp(`127\\.0\\.0\\.1:${port}.*EADDRINUSE`));
});

/** Fails the test instead of hanging when close() never resolves. */
function closesSoon(server: HttpServer): Promise<string> {
  return Promise.race([
    server.close().then(() => 'closed'),
    new Promise<string>((resolve) => setTimeout(resolve, 5000, 'hung').unref()),
  ]);
}

t.test('close() does not wait for idle keep-alive connections', { timeout: 10_000 }, async (t) => {
  const { server, url } = await start(t, (server) => server.route('test', echoRoute));
  for (let i = 0; i < 3; i++) {
    const response = await fetch(url + '/api/irc/channels/a/');
    t.equal(response.headers.get('connection'), 'keep-alive');
    await response.text();
  }
  // A raw connection that never sends a request is idle too.
  const raw = net.connect(Number(new URL(url).port), '127.0.0.1');
  await new Promise((resolve) => raw.once('connect', resolve));
  const rawClosed = new Promise((resolve) => raw.once('close', resolve));
  t.equal(await closesSoon(server), 'closed');
  await rawClosed;
  await t.rejects(fetch(url + '/api/irc/channels/a/'), 'no longer listening');
});

t.test('close() lets a request in flight finish, then closes its connection', { timeout: 10_000 }, async (t) => {
  const { route: slow, entered: handlerEntered, release } = slowRoute({ done: true });
  const { server, url } = await start(t, (server) => {
    server.route('slow', slow);
  });
  const request = fetch(url + '/api/slow/');
  await handlerEntered.opened;
  const closing = closesSoon(server);
  release.open();
  const response = await request;
  t.equal(response.status, 200);
  t.same(await response.json(), { done: true });
  t.equal(await closing, 'closed');
});

t.test('a pre-serialised body is sent as it is, with the contract headers, its ETag and 304', async (t) => {
  const page = new SerializedJson({ count: 2, results: ['a', 'b'] });
  const { server, url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/page/', maxAge: 30, handler: () => ({ body: page }) }));
    server.route('test', route({ path: '/api/private/', tier: 'token', handler: () => ({ body: page }) }));
    server.route(
      'test',
      route({
        path: '/api/extra/',
        handler: () => ({ body: page, headers: { 'X-Extra': 'yes', 'content-type': 'x' } }),
      }),
    );
    server.route('test', route({ method: 'POST', path: '/api/page/', handler: () => ({ status: 201, body: page }) }));
    server.setGuards(() => ({ token: () => {} }));
  });
  const response = await fetch(url + '/api/page/');
  t.equal(response.status, 200);
  t.same(Buffer.from(await response.arrayBuffer()), page.bytes, 'the bytes as serialised');
  const contract = (answer: Response) =>
    Object.fromEntries(
      ['content-type', 'api-version', 'cache-control', 'etag', 'content-length'].map((name) => [
        name,
        answer.headers.get(name),
      ]),
    );
  t.same(contract(response), {
    'content-type': 'application/json; charset=utf-8',
    'api-version': '1',
    'cache-control': 'public, max-age=30',
    etag: page.etag,
    'content-length': String(page.bytes.length),
  });
  t.equal(page.etag, `"${createHash('sha256').update(page.bytes).digest('base64url')}"`, 'the ETag of its bytes');

  const notModified = await fetch(url + '/api/page', { headers: { 'If-None-Match': `"other", W/${page.etag}` } });
  t.equal(notModified.status, 304);
  t.same(
    contract(notModified),
    { ...contract(response), 'content-type': null, 'content-length': null },
    'a 304 has no body, so neither its type nor its length',
  );
  t.equal(await notModified.text(), '');

  const head = await fetch(url + '/api/page/', { method: 'HEAD' });
  t.same(contract(head), contract(response), 'HEAD has the same headers');
  t.equal(await head.text(), '', 'and no body');

  const token = await fetch(url + '/api/private/');
  t.equal(token.headers.get('cache-control'), 'private, no-store', 'the route tier still decides the caching');
  await token.text();

  const extra = await fetch(url + '/api/extra/');
  t.equal(extra.headers.get('x-extra'), 'yes', 'headers of the handler are added');
  t.equal(extra.headers.get('content-type'), 'application/json; charset=utf-8', 'but the contract headers stay');
  t.equal(extra.headers.get('etag'), page.etag);
  t.same(Buffer.from(await extra.arrayBuffer()), page.bytes);
  const extraNotModified = await fetch(url + '/api/extra/', { headers: { 'If-None-Match': page.etag } });
  t.equal(extraNotModified.status, 304);
  t.equal(extraNotModified.headers.get('x-extra'), 'yes', "the handler's headers go with a 304 too");
  t.equal(extraNotModified.headers.get('content-type'), null, "but not a Content-Type, even the handler's");

  server.addHook(() => ({ 'RateLimit-Remaining': '7' }));
  const hooked = await fetch(url + '/api/page/', { headers: { 'If-None-Match': page.etag } });
  t.equal(hooked.status, 304, 'with hook headers, If-None-Match still works');
  t.equal(hooked.headers.get('ratelimit-remaining'), '7');
  t.same(contract(hooked), contract(notModified), 'merged or not, a 304 has the same headers');

  const post = await fetch(url + '/api/page/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
  });
  t.equal(post.status, 201);
  t.equal(post.headers.get('etag'), null, 'only GET answers carry an ETag');
  t.same(Buffer.from(await post.arrayBuffer()), page.bytes);
});

t.test("hooks' headers: new names appended, a server's own or a repeated name merged, a bad one refused", async (t) => {
  let hooks: Record<string, string>[] = [];
  const { url, log, server } = await start(t, (server) => {
    server.route('api', route({ path: '/api/thing/', handler: () => ({ body: { ok: true } }) }));
    for (const index of [0, 1]) server.addHook(() => hooks[index]);
  });
  const get = async (...sets: Record<string, string>[]) => {
    hooks = sets;
    const response = await fetch(url + '/api/thing/');
    await response.text();
    return response;
  };
  let response = await get({ 'RateLimit-Limit': '60', 'RateLimit-Remaining': '59' }, { 'X-Second': 'yes' });
  t.equal(response.status, 200);
  t.same(
    [
      response.headers.get('ratelimit-limit'),
      response.headers.get('ratelimit-remaining'),
      response.headers.get('x-second'),
    ],
    ['60', '59', 'yes'],
    'new names from both hooks go out',
  );
  t.equal(response.headers.get('api-version'), '1', "beside the server's own");

  response = await get({ 'cache-control': 'no-cache', 'CONTENT-TYPE': 'text/plain' }, {});
  t.equal(response.headers.get('cache-control'), 'no-cache', 'a default the server set may be replaced, in any case');
  t.equal(response.headers.get('content-type'), 'application/json; charset=utf-8', "but the server's own stay");

  response = await get({ 'X-Twice': 'first' }, { 'x-twice': 'second' });
  t.equal(response.headers.get('x-twice'), 'second', 'a name repeated in another case: the later hook wins, once');

  response = await get({ 'RateLimit-Limit': '60', 'X-Bad': 'line\nbreak' }, {});
  t.equal(response.status, 500, 'a header Node would refuse: the plain 500');
  t.equal(response.headers.get('x-bad'), null);
  t.equal(response.headers.get('ratelimit-limit'), null, 'without any header of the refused list');
  t.equal(response.headers.get('cache-control'), 'no-store');
  const body = (await (await fetch(url + '/api/thing/')).json()) as { error: { code: string } };
  t.equal(body.error.code, 'internal', "the contract's error body");
  await log.waitForLine(/ERROR .*GET \/api\/thing\/ produced an invalid response header/);

  hooks = [{ 'X-Bad': 'line\nbreak' }, {}];
  const injected = await server.inject({ method: 'GET', path: '/api/thing/' });
  t.equal(injected.status, 500, 'inject refuses it as Node does');
  t.equal(injected.headers['x-bad'], undefined);
});

t.test('a guard, a hook and a handler may each answer at once or with a promise', async (t) => {
  type Mode = 'sync' | 'async' | 'throw' | 'reject';
  let modes: { guard: Mode; hook: Mode; handler: Mode } = { guard: 'sync', hook: 'sync', handler: 'sync' };
  const calls: string[] = [];
  const outcome = <T>(mode: Mode, step: string, value: T): T | Promise<T> => {
    calls.push(step);
    const refusal = new ApiError(418, `${step}_refused`, `${step} refused (${mode})`);
    if (mode === 'throw') throw refusal;
    if (mode === 'reject') return Promise.reject(refusal);
    return mode === 'async' ? Promise.resolve(value) : value;
  };
  const { url } = await start(t, (server) => {
    server.route(
      'test',
      route({
        path: '/api/steps/',
        tier: 'token',
        handler: (request) => outcome(modes.handler, 'handler', { body: { token: request.tokenId ?? null } }),
      }),
    );
    server.setGuards(() => ({
      token: (request) => {
        const result = outcome(modes.guard, 'guard', undefined);
        request.tokenId = 'token-3';
        return result;
      },
    }));
    server.addHook(() => outcome(modes.hook, 'hook', { 'X-Hook': 'ran' }));
    server.addHook(() => undefined);
  });
  const all: Mode[] = ['sync', 'async'];
  for (const guard of all) {
    for (const hook of all) {
      for (const handler of all) {
        modes = { guard, hook, handler };
        calls.length = 0;
        const response = await fetch(url + '/api/steps/');
        const what = `guard ${guard}, hook ${hook}, handler ${handler}`;
        t.equal(response.status, 200, what);
        t.equal(response.headers.get('x-hook'), 'ran', `${what}: the hook's headers`);
        t.same(await response.json(), { token: 'token-3' }, `${what}: the guard ran before the handler`);
        t.same(calls, ['guard', 'hook', 'handler'], `${what}: in order, each once`);
      }
    }
  }
  for (const step of ['guard', 'hook', 'handler'] as const) {
    for (const failure of ['throw', 'reject'] as const) {
      modes = { guard: 'async', hook: 'sync', handler: 'async' };
      modes[step] = failure;
      calls.length = 0;
      const response = await fetch(url + '/api/steps/');
      t.equal(response.status, 418, `${step} ${failure}s`);
      t.equal((await errorOf(response)).code, `${step}_refused`, `${step} ${failure}s: its error is the answer`);
      t.equal(calls.at(-1), step, `${step} ${failure}s: nothing runs after it`);
    }
  }
});

t.test('routing: exact paths, parameters, HEAD, and the route registered first wins', async (t) => {
  const answer = (name: string) => (request: ApiRequest) => ({
    body: { route: name, params: request.params, search: request.search, query: [...request.query] },
  });
  const { url } = await start(t, (server) => {
    server.route('test', route({ path: '/api/items/:id/', handler: answer('item') }));
    server.route('test', route({ path: '/api/items/special/', handler: answer('special item') }));
    server.route('test', route({ path: '/api/things/new/', handler: answer('new thing') }));
    server.route('test', route({ path: '/api/things/:id/', handler: answer('thing') }));
    server.route('test', route({ method: 'DELETE', path: '/api/things/new/', handler: answer('deleted') }));
    server.route('test', route({ path: '/api/openapi.json', handler: answer('document') }));
  });
  const get = async (path: string, method = 'GET') => {
    const response = await fetch(url + path, { method });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  t.match(await get('/api/items/special/'), { body: { route: 'item', params: { id: 'special' } } }, 'earlier pattern');
  t.match(await get('/api/things/new'), { body: { route: 'new thing', params: {} } }, 'earlier exact path');
  t.match(await get('/api/things/old/'), { body: { route: 'thing', params: { id: 'old' } } });
  t.match(await get('/api/things/new/', 'DELETE'), { body: { route: 'deleted' } }, 'by method');
  t.match(await get('/api/openapi.json'), { body: { route: 'document' } });
  t.equal((await get('/api/openapi.json/')).status, 404, 'a path without a trailing slash takes none');
  t.equal((await get('/api/things/new//')).status, 404);
  t.equal((await get('/api/things/new/', 'PATCH')).status, 405);
  const head = await fetch(url + '/api/things/old', { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD is answered by the GET route');
  t.ok(Number(head.headers.get('content-length')) > 0);
  t.equal(await head.text(), '');
  t.match(
    await get('/api/things/new/?limit=10&search=a%20b&limit=20'),
    {
      body: {
        search: '?limit=10&search=a%20b&limit=20',
      },
    },
    'the query string as received',
  );
  t.same(
    (await get('/api/things/new/?limit=10&search=a%20b&limit=20')).body.query,
    [
      ['limit', '20'],
      ['search', 'a b'],
    ],
    'parsed: a repeated parameter keeps its last value (as Django QueryDict.get), in the place of its first',
  );
  t.same((await get('/api/things/new/?a=1&b=2')).body.query, [
    ['a', '1'],
    ['b', '2'],
  ]);
  t.match(await get('/api/things/new/'), { body: { search: '', query: [] } }, 'no query string');

  // A fragment is not part of a request target, but a client may send one anyway.
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  socket.end('GET /api/items/7/?a=1#frag?b=2 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n');
  let received = '';
  for await (const chunk of socket) received += String(chunk);
  t.match(received, /^HTTP\/1\.1 200 OK\r\n/);
  t.same(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)), {
    route: 'item',
    params: { id: '7' },
    search: '?a=1',
    query: [['a', '1']],
  });
});

t.test('inject answers without a socket exactly as HTTP does', async (t) => {
  const { server, url, log } = await start(t, (server) => {
    server.route('api', route({ path: '/api/cached/', handler: () => ({ body: new SerializedJson({ n: 1 }) }) }));
    server.route('api', route({ path: '/api/items/:name/', handler: (request) => ({ body: request.params }) }));
    server.route(
      'api',
      route({
        method: 'POST',
        path: '/api/echo/',
        body: { type: 'object', required: ['word'], properties: { word: { type: 'string' } } },
        handler: (request) => ({ status: 201, body: request.body, headers: { 'X-Echo': 'yes' } }),
      }),
    );
    server.setGuards(() => ({
      token: (request) => {
        if (request.headers.authorization !== 'Token right') throw new ApiError(401, 'unauthorized', 'No token');
      },
    }));
    server.route('api', route({ path: '/api/secret/', tier: 'token', handler: () => ({ body: { ok: true } }) }));
  });
  const cases: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
    { method: 'GET', path: '/api/cached/' },
    { method: 'HEAD', path: '/api/cached/' },
    { method: 'GET', path: '/api/cached/', headers: { 'If-None-Match': new SerializedJson({ n: 1 }).etag } },
    { method: 'GET', path: '/api/items/%23chat/?x=1' },
    { method: 'GET', path: '/api/items/%zz/' },
    { method: 'POST', path: '/api/echo/', headers: { 'Content-Type': 'application/json' }, body: '{"word":"hi"}' },
    { method: 'POST', path: '/api/echo/', headers: { 'Content-Type': 'application/json' }, body: '{"nope":1}' },
    { method: 'POST', path: '/api/echo/', headers: { 'Content-Type': 'text/plain' }, body: 'hi' },
    { method: 'DELETE', path: '/api/cached/' },
    { method: 'GET', path: '/api/nowhere/' },
    { method: 'GET', path: '/api/secret/' },
    { method: 'GET', path: '/api/secret/', headers: { Authorization: 'Token right' } },
  ];
  const comparable = (headers: Record<string, string>) => {
    const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
    return rest;
  };
  for (const request of cases) {
    const what = `${request.method} ${request.path}`;
    const overHttp = await fetch(`${url}${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      body: request.body ?? null,
    });
    const text = await overHttp.text();
    const injected = await server.inject(request);
    t.equal(injected.status, overHttp.status, `${what}: status`);
    t.same(comparable(injected.headers), comparable(Object.fromEntries(overHttp.headers)), `${what}: headers`);
    t.equal(injected.text, text, `${what}: body`);
  }
  const echoed = await server.inject({ method: 'POST', path: '/api/echo/', body: { word: 'hello' }, ip: '192.0.2.7' });
  t.same(echoed.body, { word: 'hello' }, 'an object body goes as JSON');
  t.match(
    await log.waitForLine(/POST \/api\/echo\/.*status=201.*ip=192\.0\.2\.7/),
    /bytes=16/,
    'and is in the access log',
  );
});

t.test('a handler answer that cannot be written is a logged 500, and the server goes on', async (t) => {
  const { server, url, log } = await start(t, (server) => {
    server.route('broken', route({ path: '/api/none/', handler: () => undefined as unknown as { body: unknown } }));
    server.route(
      'broken',
      route({ path: '/api/late-none/', handler: async () => undefined as unknown as { body: unknown } }),
    );
    server.route('broken', route({ path: '/api/status/', handler: () => ({ status: 99, body: {} }) }));
    server.route('fine', route({ path: '/api/fine/', handler: () => ({ body: { ok: true } }) }));
  });
  for (const path of ['/api/none/', '/api/late-none/']) {
    const answer = await server.inject({ method: 'GET', path });
    t.equal(answer.status, 500, path);
    t.match(answer.body, { error: { code: 'internal' } });
  }

  t.match(await log.waitForLine(/GET \/api\/none\/ failed in plugin "broken"/), /ERROR/);
  t.equal((await server.inject({ method: 'GET', path: '/api/fine/' })).status, 200);
  t.equal(
    (server as unknown as { connections: Map<unknown, unknown> }).connections.size,
    0,
    'no socket left behind by inject()',
  );
  // A status Node refuses is only refused by a real response.
  const refused = await fetch(`${url}/api/status/`);
  t.equal(refused.status, 500, 'a status Node refuses');
  t.match(await refused.json(), { error: { code: 'internal' } });
});

t.test('two servers in a process may each take a body schema with the same $id', async (t) => {
  const schema = () => ({ $id: 'https://example.org/echo-body', type: 'object' });
  for (let round = 0; round < 2; round++) {
    const log = captureLog();
    const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger });
    t.doesNotThrow(() =>
      server.route(
        'test',
        route({ method: 'POST', path: '/api/echo/', body: schema(), handler: () => ({ body: {} }) }),
      ),
    );
  }
});

/** An open connection to `url`; resolves once connected, with a promise of its close. */
async function openConnection(t: Test, url: string): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed };
}

/** One kept-alive request on `socket`; resolves with the answer's status line. */
function askOn(socket: net.Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8').split('\r\n')[0]!));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

for (const front of [false, true]) {
  const through = front ? ' (through the front)' : '';
  t.test(`maxConnections: one connection more is closed unanswered, and told in the log${through}`, async (t) => {
    const { url, log } = await start(
      t,
      (server) => server.route('test', route({ path: '/api/ok/', handler: () => ({ body: { ok: true } }) })),
      { maxConnections: 2, front },
    );
    const first = await openConnection(t, url);
    const second = await openConnection(t, url);
    t.equal(await askOn(first.socket, '/api/ok/'), 'HTTP/1.1 200 OK');
    t.equal(await askOn(second.socket, '/api/ok/'), 'HTTP/1.1 200 OK', 'two kept-alive connections are served');
    const third = await openConnection(t, url);
    let answered = false;
    third.socket.on('data', () => (answered = true));
    third.socket.write('GET /api/ok/ HTTP/1.1\r\nHost: x\r\n\r\n');
    await third.closed;
    t.notOk(answered, 'the third is closed without an answer');
    t.match(
      await log.waitForLine(/connections closed unanswered/),
      /WARN .*http\.max_connections reached .*max_connections=2 closed=1/,
    );
    first.socket.destroy();
    await first.closed;
    // The server counts the closed connection out when it sees the close.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const fourth = await openConnection(t, url);
    t.equal(await askOn(fourth.socket, '/api/ok/'), 'HTTP/1.1 200 OK', 'once one closed, a new one is served');
  });

  if (!front) {
    t.test('connections closed within the minute after a warning are told once it is over', async (t) => {
      const { url, log } = await start(
        t,
        (server) => server.route('test', route({ path: '/api/ok/', handler: () => ({ body: { ok: true } }) })),
        { maxConnections: 1, dropWarningEveryMs: 300 },
      );
      const held = await openConnection(t, url);
      t.equal(await askOn(held.socket, '/api/ok/'), 'HTTP/1.1 200 OK');
      for (let extra = 0; extra < 3; extra++) {
        const dropped = await openConnection(t, url);
        await dropped.closed;
      }
      t.match(await log.waitForLine(/closed=1/), /max_connections=1 closed=1/, 'the first at once');
      t.match(
        await log.waitForLine(/closed=2/),
        /max_connections=1 closed=2/,
        'the two closed within the interval, once it is over, though no more came',
      );
    });
  }

  t.test(`keepAliveTimeout: an idle kept-alive connection is closed after it${through}`, async (t) => {
    const { url } = await start(
      t,
      (server) => server.route('test', route({ path: '/api/ok/', handler: () => ({ body: { ok: true } }) })),
      { keepAliveTimeout: 300, front },
    );
    const { socket, closed } = await openConnection(t, url);
    t.equal(await askOn(socket, '/api/ok/'), 'HTTP/1.1 200 OK');
    const idleFrom = performance.now();
    await closed;
    const idle = performance.now() - idleFrom;
    t.ok(idle >= 250 && idle < 3000, `closed after ${Math.round(idle)} ms idle (300 ms set)`);
  });
}
