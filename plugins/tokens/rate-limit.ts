/**
 * Rate limits as token buckets: each key (a client IP, an API token) holds up to
 * `capacity` requests and gets `refill_per_second` back continuously. Answers
 * carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds
 * until the bucket is full again); an empty bucket is `429 rate_limited` with
 * `Retry-After` (seconds until one request is allowed).
 */
import { ApiError } from '../../lib/http/errors.js';
import type { ApiRequest, RouteDefinition } from '../../lib/http/types.js';
import type { BucketConfig } from './schema.js';

export interface Decision {
  allowed: boolean;
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until the next request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

interface Bucket {
  level: number;
  /** Milliseconds (of the clock) when `level` was computed. */
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly config: BucketConfig,
    /** Milliseconds; tests pass a fake clock. */
    private readonly now: () => number = Date.now,
  ) {}

  /** Take one request from `key`'s bucket, if there is one to take. */
  take(key: string): Decision {
    const { capacity, refill_per_second: refill } = this.config;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { level: capacity, updatedAt: now };
    bucket.level = Math.min(capacity, bucket.level + (Math.max(0, now - bucket.updatedAt) / 1000) * refill);
    bucket.updatedAt = now;
    const allowed = bucket.level >= 1;
    if (allowed) bucket.level -= 1;
    this.buckets.set(key, bucket);
    return {
      allowed,
      limit: capacity,
      remaining: Math.floor(bucket.level),
      resetSeconds: Math.ceil((capacity - bucket.level) / refill),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.level) / refill)),
    };
  }

  /** Forget buckets that have refilled completely: they hold nothing a new bucket would not. */
  sweep(): void {
    const { capacity, refill_per_second: refill } = this.config;
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (bucket.level + ((now - bucket.updatedAt) / 1000) * refill >= capacity) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

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

/** Public routes draw from the client IP's bucket, token and staff routes from the token's. */
export function rateLimitHook(limiters: { public: RateLimiter; token: RateLimiter }) {
  return (request: ApiRequest, route: RouteDefinition): Record<string, string> => {
    const byToken = route.tier !== 'public' && request.tokenId !== undefined;
    const decision = byToken
      ? limiters.token.take(`token:${request.tokenId}`)
      : limiters.public.take(`ip:${request.ip}`);
    if (!decision.allowed) throw rateLimited(decision, byToken ? `for token #${request.tokenId}` : 'from this address');
    return rateLimitHeaders(decision);
  };
}
