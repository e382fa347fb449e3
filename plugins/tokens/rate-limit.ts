/**
 * Rate limits as token buckets: each key (a client IP, an API token) holds up to
 * `capacity` requests and gets `refill_per_second` back continuously. Answers
 * carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds
 * until the bucket is full again); an empty bucket is `429 rate_limited` with
 * `Retry-After` (seconds until one request is allowed).
 */
import { ApiError, type ApiRequest, type Decision, type RateLimiter, type RouteDefinition } from '../../lib/sdk.js';

export { RateLimiter, type Decision } from '../../lib/sdk.js';

export function rateLimitHeaders(decision: Decision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

/** 429 with the rate limit headers and `Retry-After`. */
export function rateLimited(decision: Decision, who: string): ApiError {
  return new ApiError(
    429,
    'rate_limited',
    `Too many requests ${who}: at most ${decision.limit} at once; retry in ${decision.retryAfterSeconds} s`,
    undefined,
    { ...rateLimitHeaders(decision), 'Retry-After': String(decision.retryAfterSeconds) },
  );
}

/**
 * Public routes draw from the client IP's bucket, token and staff routes from the token's. The public
 * answers the HTTP front gave the client from its store since its last request count first; the
 * front renewing a stored answer is no client's request and draws from no bucket.
 */
export function rateLimitHook(
  limiters: { public: RateLimiter; token: RateLimiter },
  onLimited: (bucket: 'public' | 'token') => void = () => undefined,
  /** The key of a client address's bucket (an IPv6 address's network); the address itself by default. */
  group: (ip: string) => string = (ip) => ip,
) {
  return (request: ApiRequest, route: RouteDefinition): Record<string, string> => {
    if (request.front?.renew) return {};
    // Keyed by the token's id or the client's address group: each limiter holds one kind of key.
    if (request.front && request.front.served > 0) limiters.public.charge(group(request.ip), request.front.served);
    const tokenId = route.tier === 'public' && !route.grantable ? undefined : request.tokenId;
    const byToken = tokenId !== undefined;
    const decision = byToken ? limiters.token.take(tokenId) : limiters.public.take(group(request.ip));
    if (!decision.allowed) {
      onLimited(byToken ? 'token' : 'public');
      throw rateLimited(decision, byToken ? `for token #${request.tokenId}` : 'from this address');
    }
    return rateLimitHeaders(decision);
  };
}
