/** Token buckets with a fake clock, and the hook in the HTTP server (no socket): headers, 429 and Retry-After. */
import t from 'tap';
import { ApiError } from '../../../lib/http/errors.js';
import { buildOpenApiDocument } from '../../../plugins/api/openapi-document.js';
import { HttpServer } from '../../../lib/http/server.js';
import type { ApiRequest, RouteDefinition } from '../../../lib/http/types.js';
import { createLogger } from '../../../lib/logger.js';
import { RateLimiter, rateLimitHook } from '../../../plugins/tokens/rate-limit.js';
import { OpenApiValidator } from '../api/fixtures/openapi-validator.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

t.test('a bucket allows capacity at once, then refills at its rate', async (t) => {
  const time = clock();
  const limiter = new RateLimiter({ capacity: 3, refill_per_second: 0.5 }, time.now);
  const first = limiter.take('a');
  t.same(first, { allowed: true, limit: 3, remaining: 2, resetSeconds: 2, retryAfterSeconds: 0 });
  t.equal(limiter.take('a').remaining, 1);
  t.equal(limiter.take('a').remaining, 0);
  const refused = limiter.take('a');
  t.equal(refused.allowed, false);
  t.equal(refused.retryAfterSeconds, 2, 'one request comes back after 1 / 0.5 s');
  t.equal(refused.resetSeconds, 6, 'full again after 3 / 0.5 s');
  t.ok(limiter.take('b').allowed, 'each key has its own bucket');
  time.advance(1000);
  const half = limiter.take('a');
  t.equal(half.allowed, false, 'half a request is not enough');
  t.equal(half.retryAfterSeconds, 1);
  time.advance(1000);
  t.ok(limiter.take('a').allowed, 'after 2 s one request is back');
  t.equal(limiter.take('a').allowed, false);
  time.advance(60_000);
  t.equal(limiter.take('a').remaining, 2, 'never more than the capacity');
});

t.test('sweep forgets only buckets that have refilled', async (t) => {
  const time = clock();
  const limiter = new RateLimiter({ capacity: 2, refill_per_second: 1 }, time.now);
  limiter.take('a');
  limiter.take('b');
  limiter.take('b');
  time.advance(1000);
  limiter.sweep();
  t.equal(limiter.size, 1, 'a is full again, b is not');
  time.advance(1000);
  limiter.sweep();
  t.equal(limiter.size, 0);
});

t.test('the hook keys public routes by IP and token routes by token', async (t) => {
  const time = clock();
  const limiters = {
    public: new RateLimiter({ capacity: 1, refill_per_second: 1 }, time.now),
    token: new RateLimiter({ capacity: 2, refill_per_second: 1 }, time.now),
  };
  const hook = rateLimitHook(limiters);
  const request = (ip: string, tokenId?: string) => ({ ip, tokenId }) as ApiRequest;
  const publicRoute = { tier: 'public' } as RouteDefinition;
  const tokenRoute = { tier: 'token' } as RouteDefinition;
  t.same(hook(request('1.1.1.1'), publicRoute), {
    'RateLimit-Limit': '1',
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': '1',
  });
  t.throws(() => hook(request('1.1.1.1'), publicRoute), ApiError);
  t.ok(hook(request('2.2.2.2'), publicRoute), 'another IP');
  t.same(hook(request('1.1.1.1', '7'), tokenRoute)['RateLimit-Limit'], '2', 'a token route uses the token bucket');
  hook(request('3.3.3.3', '7'), tokenRoute);
  try {
    hook(request('4.4.4.4', '7'), tokenRoute);
    t.fail('the token bucket is empty whatever the IP');
  } catch (error) {
    t.ok(error instanceof ApiError);
    const apiError = error as ApiError;
    t.equal(apiError.status, 429);
    t.equal(apiError.code, 'rate_limited');
    t.match(apiError.message, /for token #7/);
    t.equal(apiError.headers['Retry-After'], '1');
  }
});

t.test('through the server: RateLimit-* headers on answers, 429 rate_limited with Retry-After', async (t) => {
  const time = clock();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: createLogger({ sink: () => undefined }) });
  const limiters = {
    public: new RateLimiter({ capacity: 2, refill_per_second: 0.1 }, time.now),
    token: new RateLimiter({ capacity: 2, refill_per_second: 0.1 }, time.now),
  };
  server.addHook(rateLimitHook(limiters));
  server.route('test', {
    method: 'GET',
    path: '/api/irc/stats/',
    name: 'irc.stats',
    summary: 'stats',
    tier: 'public',
    handler: () => ({ body: { ok: true } }),
  });
  const validator = new OpenApiValidator(
    buildOpenApiDocument(server.routes(), { title: 'test', version: '1' }) as unknown as Record<string, unknown>,
  );
  /** Every header of an answer must be one the document lists for its status. */
  const documented = async (path: string, method = 'GET') => {
    const response = await server.inject({ method, path });
    t.same(
      validator.undocumentedHeaders(method, path, response.status, new Headers(response.headers)),
      [],
      `${method} ${path} → ${response.status}: the document lists every header sent`,
    );
    return response;
  };
  const first = await documented('/api/irc/stats/');
  t.equal(first.status, 200);
  t.equal(first.headers['ratelimit-limit'], '2');
  t.equal(first.headers['ratelimit-remaining'], '1');
  t.equal(first.headers['ratelimit-reset'], '10');
  t.equal((await documented('/api/irc/stats/')).status, 200);
  const limited = await documented('/api/irc/stats/');
  t.equal(limited.status, 429);
  t.equal(limited.headers['retry-after'], '10');
  t.equal(limited.headers['ratelimit-remaining'], '0');
  const body = limited.body as { error: { code: string; message: string } };
  t.equal(body.error.code, 'rate_limited');
  t.match(body.error.message, /retry in 10 s/);
  const limitedHead = await documented('/api/irc/stats/', 'HEAD');
  t.equal(limitedHead.status, 429, 'a HEAD draws from the same bucket');
  t.equal(limitedHead.headers['retry-after'], '10');
  time.advance(10_000);
  t.equal((await documented('/api/irc/stats/')).status, 200, 'allowed again after Retry-After');
});
