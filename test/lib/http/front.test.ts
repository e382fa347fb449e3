import { existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { AnswerCache, type StoredAnswer } from '../../../lib/http/front/answer-cache.js';
import { ClientBudgets } from '../../../lib/http/front/client-budgets.js';
import { clientGroup } from '../../../lib/http/client-address.js';
import { ApiError } from '../../../lib/http/errors.js';
import { SerializedJson } from '../../../lib/http/serialized-json.js';
import { HttpServer, type HttpServerOptions, type RequestHook } from '../../../lib/http/server.js';
import type { ApiRequest, RouteGuard } from '../../../lib/http/types.js';
import { captureLog, route } from '../../support/http.js';
import { RateLimiter } from '../../../lib/rate-limiter.js';

function answer(text: string): StoredAnswer {
  return { status: 200, headers: [], notModifiedHeaders: [], etag: undefined, body: Buffer.from(text), route: 'test' };
}

t.test('the answer store: fresh, then stale with one renewal, then gone', async (t) => {
  const cache = new AnswerCache({ maxStaleMs: 1000 });
  cache.put('/a/', answer('one'), 100, 0);
  t.same(cache.get('/a/', 50), { answer: answer('one'), renew: false }, 'fresh within its reuse time');
  t.equal(cache.get('/a/', 150)?.renew, true, 'the first request after it went stale renews it');
  t.equal(cache.get('/a/', 160)?.renew, false, 'the next ones are served it while the renewal is under way');
  cache.renewalFailed('/a/');
  t.equal(cache.get('/a/', 170)?.renew, true, 'a failed renewal is tried again by the next request');
  t.equal(cache.get('/a/', 1101), undefined, 'stale for longer than maxStaleMs it is not served: the bot is asked');
  t.equal(cache.get('/b/', 0), undefined);

  cache.put('/c/', answer('three'), 100, 0, 300);
  t.equal(cache.get('/c/', 250)?.answer.body.toString(), 'three', 'stale within its max-age');
  t.equal(cache.get('/c/', 300), undefined, 'never served past its max-age from when the bot gave it');
});

t.test('the answer store keeps the most recently used within its limits', async (t) => {
  const cache = new AnswerCache({ maxEntries: 2, maxBytes: 100 });
  cache.put('/a/', answer('a'), 1000, 0);
  cache.put('/b/', answer('b'), 1000, 0);
  cache.get('/a/', 1);
  cache.put('/c/', answer('c'), 1000, 2);
  t.ok(cache.get('/a/', 3) && cache.get('/c/', 3), 'the used and the new are kept');
  t.equal(cache.get('/b/', 3), undefined, 'the least recently used went');
  cache.put('/big/', answer('x'.repeat(60)), 1000, 4);
  t.equal(cache.get('/big/', 5), undefined, 'an answer over a quarter of the byte limit is not kept');
  cache.put('/d/', answer('y'.repeat(20)), 1000, 6);
  cache.put('/e/', answer('z'.repeat(20)), 1000, 7);
  t.equal(cache.size, 2);
});

t.test('a client budget spends what the bot said is left, and counts it', async (t) => {
  const budgets = new ClientBudgets();
  t.equal(budgets.spend('1.2.3.4', 0), undefined, 'nothing known: the bot must answer');
  budgets.learn('1.2.3.4', { 'ratelimit-limit': '60', 'ratelimit-remaining': '2', 'ratelimit-reset': '5' }, 0);
  t.same(budgets.spend('1.2.3.4', 1), ['RateLimit-Limit', '60', 'RateLimit-Remaining', '1', 'RateLimit-Reset', '5']);
  t.same(budgets.spend('1.2.3.4', 2), ['RateLimit-Limit', '60', 'RateLimit-Remaining', '0', 'RateLimit-Reset', '5']);
  t.equal(budgets.spend('1.2.3.4', 3), undefined, 'spent: the bot must answer');
  t.equal(budgets.takeServed('1.2.3.4'), 2, 'two answers to report');
  t.equal(budgets.takeServed('1.2.3.4'), 0, 'reported once');

  budgets.learn('5.6.7.8', {}, 0);
  t.same(budgets.spend('5.6.7.8', 1), [], 'no rate limit headers: no limit applies');
  t.equal(budgets.takeServed('5.6.7.8'), 0, 'and nothing to count');

  budgets.learn('9.9.9.9', { 'ratelimit-limit': '60', 'ratelimit-remaining': '5', 'ratelimit-reset': '1' }, 0);
  budgets.spend('9.9.9.9', 1);
  budgets.forget('9.9.9.9');
  t.equal(budgets.spend('9.9.9.9', 2), undefined, 'after an answer the front cannot read, the bot answers');
  t.equal(budgets.takeServed('9.9.9.9'), 1, 'what was served before is still reported');
  budgets.sweep(60 * 60 * 1000);
  t.equal(budgets.size, 0, 'quiet clients are forgotten');
});

/** A server behind its front, with a public route whose answers count the times the bot built one. */
async function startFront(t: Test, options: Partial<HttpServerOptions> = {}, setup?: (server: HttpServer) => void) {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger, front: true, ...options });
  const seen: ApiRequest[] = [];
  server.route(
    'test',
    route({
      path: '/api/count/',
      handler: (request) => {
        seen.push(request);
        return { body: { built: seen.length } };
      },
    }),
  );
  setup?.(server);
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, log, seen };
}

t.test('a public read is answered by the front from the answer the bot gave, ETag and 304 included', async (t) => {
  const { url, seen, log } = await startFront(t, { frontReuseMs: 60_000 });
  const first = await fetch(`${url}/api/count/`);
  t.same(await first.json(), { built: 1 });
  t.equal(first.headers.get('x-front-reuse-ms'), null, 'the private header never reaches a client');
  const again = await fetch(`${url}/api/count/`);
  t.same(await again.json(), { built: 1 }, 'the second answer is the kept one');
  t.equal(again.headers.get('etag'), first.headers.get('etag'));
  t.equal(again.headers.get('cache-control'), 'public, max-age=10');
  t.ok(again.headers.get('date'), 'with a Date of its own');
  const notModified = await fetch(`${url}/api/count/`, { headers: { 'If-None-Match': first.headers.get('etag')! } });
  t.equal(notModified.status, 304);
  t.equal(notModified.headers.get('etag'), first.headers.get('etag'));
  const head = await fetch(`${url}/api/count/`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), first.headers.get('content-length'));
  t.equal(seen.length, 1, 'the bot built the answer once');
  const other = await fetch(`${url}/api/count/?x=1`);
  t.same(await other.json(), { built: 2 }, 'another query is another answer');

  const withToken = await fetch(`${url}/api/count/`, { headers: { Authorization: 'Token x' } });
  t.same(await withToken.json(), { built: 3 }, 'a request with credentials always reaches the bot');
  t.equal(seen[0]!.ip, '127.0.0.1', "the bot sees the client's address");
  // The lines come from the front's thread by message: wait for the six requests' lines.
  const accessLines = () => log.lines.filter((line) => / (GET|HEAD) \/api\/count\/ /.test(line));
  const deadline = Date.now() + 5000;
  while (accessLines().length < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(accessLines().length, 6, 'one access-log line per request, those the front answered too');
  t.equal(accessLines().filter((line) => /status=304/.test(line)).length, 1);
  t.match(accessLines()[1]!, /\[http\].*status=200.*ip=127\.0\.0\.1/);
});

t.test("the front keeps the answer as it is, for every client, whatever a client's Accept-Encoding", async (t) => {
  const big = new SerializedJson({ results: Array.from({ length: 200 }, (_, index) => ({ nick: `user${index}` })) });
  const { url } = await startFront(t, { frontReuseMs: 60_000 }, (server) => {
    server.route('test', route({ path: '/api/big/', handler: () => ({ body: big }) }));
  });
  const get = (headers: Record<string, string>) =>
    new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http
        .get(`${url}/api/big/`, { headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  // Requests with credentials go through to the bot as they are, and get its gzip copy once it is made.
  const withCredentials = { 'Accept-Encoding': 'gzip', Authorization: 'Token x' };
  let passed = await get(withCredentials);
  for (let tries = 0; tries < 100 && passed.headers['content-encoding'] === undefined; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    passed = await get(withCredentials);
  }
  t.equal(passed.headers['content-encoding'], 'gzip', 'passed through, the answer is gzip');
  // The first public read is passed on and kept; what is kept must serve every client.
  const kept = await get({ 'Accept-Encoding': 'gzip' });
  t.equal(kept.headers['content-encoding'], undefined, 'the answer the front keeps is not compressed');
  t.equal(kept.headers.vary, 'Accept-Encoding');
  t.same(kept.body, big.bytes);
  const plain = await get({});
  t.same(plain.body, big.bytes, 'a client without gzip can read the kept answer');
});

t.test("a route with guards of its own is never answered from the front's store", async (t) => {
  const checked: string[] = [];
  const visitor: RouteGuard<string> = {
    name: 'visitor',
    point: 'request',
    check: (request) => {
      checked.push(request.ip);
      return { found: request.ip };
    },
  };
  const { url, seen } = await startFront(t, { frontReuseMs: 60_000 }, (server) =>
    server.route(
      'test',
      route({ path: '/api/mine/', guards: [visitor], handler: (_request, found) => ({ body: found.get(visitor) }) }),
    ),
  );
  for (let round = 0; round < 3; round++) await (await fetch(`${url}/api/count/`)).text();
  t.equal(seen.length, 1, 'the unguarded route was answered from the store after the first time');
  for (let round = 0; round < 3; round++) t.same(await (await fetch(`${url}/api/mine/`)).json(), '127.0.0.1');
  t.equal(checked.length, 3, 'the guarded one reached the bot every time');
});

t.test("a client cannot write the front's private headers", async (t) => {
  const { url, seen } = await startFront(t);
  await fetch(`${url}/api/count/?spoof`, {
    headers: { 'X-Front-Client': '6.6.6.6', 'X-Front-Served': '1000', 'X-Front-Renew': '1' },
  });
  t.equal(seen[0]!.ip, '127.0.0.1');
  t.same(seen[0]!.front, { served: 0, renew: false });
});

t.test("a kept answer is served while the bot's thread is busy", async (t) => {
  const { url } = await startFront(t, { frontReuseMs: 60_000 });
  await fetch(`${url}/api/count/`);
  // The client runs on a thread of its own, so that it can be answered while this one is blocked.
  const client = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.once('message', async (url) => {
       const sent = performance.timeOrigin + performance.now();
       const response = await fetch(url);
       await response.text();
       parentPort.postMessage({ sent, answered: performance.timeOrigin + performance.now(), status: response.status });
     });`,
    { eval: true },
  );
  t.teardown(() => client.terminate());
  const result = new Promise<{ sent: number; answered: number; status: number }>((resolve) =>
    client.once('message', resolve),
  );
  client.postMessage(`${url}/api/count/`);
  // The bot's thread is held for 1.5 s, as a long collection or a burst of IRC input would hold it.
  const blockedUntil = performance.timeOrigin + performance.now() + 1500;
  while (performance.timeOrigin + performance.now() < blockedUntil);
  const { sent, answered, status } = await result;
  t.equal(status, 200);
  t.ok(answered < blockedUntil, `answered ${Math.round(blockedUntil - answered)} ms before the thread was free`);
  t.ok(answered - sent < 1000, `in ${Math.round(answered - sent)} ms`);
});

t.test('a stale answer is served while one renewal is under way, then the new one', async (t) => {
  const { url, seen } = await startFront(t, { frontReuseMs: 50 });
  t.same(await (await fetch(`${url}/api/count/`)).json(), { built: 1 });
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(await (await fetch(`${url}/api/count/`)).json(), { built: 1 }, 'stale, served at once');
  const deadline = Date.now() + 5000;
  while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal(seen.length, 2, 'the front renewed it');
  t.same(seen[1]!.front, { served: 0, renew: true }, 'a renewal says so');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(await (await fetch(`${url}/api/count/`)).json(), { built: 2 }, 'then the renewed answer');
});

/**
 * The bot's own public rate limit as the tokens plugin keeps it: what the front served is charged first, a
 * renewal is no client's request, and every answer says what is left.
 */
function limitHook(limiter: RateLimiter, key: (ip: string) => string): RequestHook {
  return (request) => {
    if (request.front?.renew) return {};
    limiter.charge(key(request.ip), request.front?.served ?? 0);
    const decision = limiter.take(key(request.ip));
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) throw new ApiError(429, 'rate_limited', 'Too many requests', undefined, headers);
    return headers;
  };
}

t.test("the client's rate limit counts the answers the front gave", async (t) => {
  // The bot's own limit: 3 public requests and no refill; what the front served is charged first.
  const limiter = new RateLimiter({ capacity: 3, refill_per_second: 0 });
  const { url, seen } = await startFront(t, { frontReuseMs: 60_000 }, (server) =>
    server.addHook(limitHook(limiter, (ip) => `ip:${ip}`)),
  );
  const statuses: number[] = [];
  const remaining: (string | null)[] = [];
  for (let index = 0; index < 4; index++) {
    const response = await fetch(`${url}/api/count/`);
    statuses.push(response.status);
    remaining.push(response.headers.get('ratelimit-remaining'));
  }
  t.same(statuses, [200, 200, 200, 429], 'the fourth request is refused, though the front held an answer');
  t.same(remaining, ['2', '1', '0', '0']);
  t.equal(seen.length, 1, 'the bot built one answer');
});

t.test(
  'the addresses of one IPv6 /64 spend one budget at the front, as they share one bucket at the bot',
  async (t) => {
    const limiter = new RateLimiter({ capacity: 3, refill_per_second: 0 });
    const { url, seen } = await startFront(t, { frontReuseMs: 60_000, trustProxy: 'loopback' }, (server) =>
      server.addHook(limitHook(limiter, (ip) => clientGroup(ip, 64))),
    );
    const statuses: number[] = [];
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2::1']) {
      statuses.push((await fetch(`${url}/api/count/`, { headers: { 'X-Forwarded-For': ip } })).status);
    }
    t.same(statuses, [200, 200, 200, 429, 429], 'three answers for the /64, whichever address asks');
    t.equal(seen.length, 1, 'the bot built one answer');
  },
);

t.test('answers the front gave are counted even when the next request to the bot misses its rate limit', async (t) => {
  const limiter = new RateLimiter({ capacity: 3, refill_per_second: 0 });
  const { url } = await startFront(t, { frontReuseMs: 60_000 }, (server) =>
    server.addHook((request) => {
      limiter.charge(`ip:${request.ip}`, request.front?.served ?? 0);
      const decision = limiter.take(`ip:${request.ip}`);
      if (!decision.allowed) throw new ApiError(429, 'rate_limited', 'Too many requests');
      return { 'RateLimit-Limit': String(decision.limit), 'RateLimit-Remaining': String(decision.remaining) };
    }),
  );
  const statuses: number[] = [];
  for (const path of ['/api/count/', '/api/count/', '/api/count/', '/api/nothing/', '/api/count/']) {
    statuses.push((await fetch(`${url}${path}`)).status);
  }
  // The 404 reached no rate limit: the two answers from the store are reported again with the next request.
  t.same(statuses, [200, 200, 200, 404, 429]);
});

t.test('a conditional read of an answer the front does not keep still gets its 304', async (t) => {
  const { url } = await startFront(t, { frontReuseMs: 0 }, (server) =>
    server.route('test', route({ path: '/api/fixed/', handler: () => ({ body: { same: true } }) })),
  );
  const first = await fetch(`${url}/api/fixed/`);
  const etag = first.headers.get('etag')!;
  const again = await fetch(`${url}/api/fixed/`, { headers: { 'If-None-Match': etag } });
  t.equal(again.status, 304);
  t.equal(again.headers.get('etag'), etag);
  t.equal(again.headers.get('content-type'), null, 'a 304 describes no body');
});

t.test('everything else goes through to the bot: bodies, errors, other methods', async (t) => {
  const { url } = await startFront(t, {}, (server) => {
    server.route(
      'test',
      route({
        method: 'POST',
        path: '/api/echo/',
        body: { type: 'object' },
        handler: (request) => ({ status: 201, body: { got: request.body } }),
      }),
    );
  });
  const posted = await fetch(`${url}/api/echo/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ hello: 'world' }),
  });
  t.equal(posted.status, 201);
  t.same(await posted.json(), { got: { hello: 'world' } });
  const missing = await fetch(`${url}/api/nothing/`);
  t.equal(missing.status, 404);
  t.match(await missing.json(), { error: { code: 'not_found' } });
  const wrongMethod = await fetch(`${url}/api/count/`, { method: 'DELETE' });
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
});

t.test('closing stops the front and removes the private socket', async (t) => {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger, front: true });
  const { url } = await server.listen();
  const socketPath = server.frontSocketPath!;
  t.ok(existsSync(socketPath), 'a private socket while it runs');
  t.equal(statSync(path.dirname(socketPath)).mode & 0o777, 0o700, 'in a directory only this user can enter');
  await server.close();
  await t.rejects(fetch(url), 'nothing listens any more');
  t.notOk(existsSync(path.dirname(socketPath)), 'its directory is gone');
  t.equal(server.frontSocketPath, undefined);
});

t.test('a port in use is an error naming it', async (t) => {
  const { url } = await startFront(t);
  const port = Number(new URL(url).port);
  const log = captureLog();
  const second = new HttpServer({ host: '127.0.0.1', port, logger: log.logger, front: true });
  await t.rejects(second.listen(), new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}`));
});

t.test('behind a trusted proxy, the front passes on the client the proxy names, and its scheme', async (t) => {
  const { url, seen, log } = await startFront(t, { trustProxy: 'loopback', frontReuseMs: 0 });
  await fetch(`${url}/api/count/`, { headers: { 'X-Forwarded-For': '198.51.100.23', 'X-Forwarded-Proto': 'https' } });
  t.equal(seen.at(-1)?.ip, '198.51.100.23', 'the bot sees the client behind the proxy');
  t.equal(seen.at(-1)?.secure, true, 'who came over HTTPS');
  await fetch(`${url}/api/count/`);
  t.equal(seen.at(-1)?.ip, '127.0.0.1', 'without the header: the proxy itself');
  t.equal(seen.at(-1)?.secure, false);
  const line = await log.waitForLine(/GET \/api\/count\/ .*ip=198\.51\.100\.23/);
  t.match(line, / route=test\.route$/, "the front's access line names the client and the route");
});

t.test('behind a proxy that writes Forwarded, the front reads that header alone', async (t) => {
  const { url, seen } = await startFront(t, { trustProxy: 'loopback', proxyHeader: 'forwarded', frontReuseMs: 0 });
  await fetch(`${url}/api/count/`, {
    headers: { Forwarded: 'for=198.51.100.24;proto=https', 'X-Forwarded-For': '10.1.2.3' },
  });
  t.equal(seen.at(-1)?.ip, '198.51.100.24', "the client the proxy's Forwarded names");
  t.equal(seen.at(-1)?.secure, true);
  await fetch(`${url}/api/count/`, { headers: { 'X-Forwarded-For': '10.1.2.3', 'X-Forwarded-Proto': 'https' } });
  t.equal(seen.at(-1)?.ip, '127.0.0.1', 'a forged X-Forwarded-For alone: the proxy itself');
  t.equal(seen.at(-1)?.secure, false);
});
