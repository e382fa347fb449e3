/**
 * Token buckets by key: each key (a client IP, an API token, an IRC client) holds up to `capacity`
 * uses and gets `refill_per_second` back continuously. The HTTP rate limits (plugins/tokens), the
 * limit on IRC commands per client (lib/commands.ts) and on CTCP answers (lib/irc/transport.ts) all
 * count with it.
 */

export interface BucketConfig {
  capacity: number;
  refill_per_second: number;
}

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
    /** Milliseconds of a monotonic clock (a step of the wall clock refills or starves no bucket); tests pass a fake one. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Count `uses` that already happened against `key` (answers given elsewhere, e.g. by the HTTP front):
   * they are not refused, only taken, down to an empty bucket.
   */
  charge(key: string, uses: number): void {
    if (uses <= 0) return;
    const bucket = this.refilled(key);
    bucket.level = Math.max(0, bucket.level - uses);
    this.buckets.set(key, bucket);
  }

  private refilled(key: string): Bucket {
    const { capacity, refill_per_second: refill } = this.config;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { level: capacity, updatedAt: now };
    bucket.level = Math.min(capacity, bucket.level + (Math.max(0, now - bucket.updatedAt) / 1000) * refill);
    bucket.updatedAt = now;
    return bucket;
  }

  /** Take one request from `key`'s bucket, if there is one to take. */
  take(key: string): Decision {
    const { capacity, refill_per_second: refill } = this.config;
    const bucket = this.refilled(key);
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

/** Keys a {@link ClientThrottle} holds before it forgets the ones it can. */
const MAX_CLIENTS = 1000;

/**
 * A {@link RateLimiter} for IRC clients whose requests past the limit are ignored: each run of refusals
 * is reported once (`firstRefusal`), so a flood costs one warning or log line, not one per request.
 * Keys are swept once there are many, so a flood from many clients does not grow it without bound.
 */
export class ClientThrottle {
  private readonly limiter: RateLimiter;
  /** Clients refused since their last allowed request. */
  private readonly refused = new Set<string>();

  constructor(config: BucketConfig, now?: () => number) {
    this.limiter = new RateLimiter(config, now);
  }

  /** Clients with a bucket of their own. */
  get size(): number {
    return this.limiter.size;
  }

  take(key: string): Decision & { firstRefusal: boolean } {
    if (this.limiter.size > MAX_CLIENTS) this.limiter.sweep();
    if (this.refused.size > MAX_CLIENTS) this.refused.clear();
    const decision = this.limiter.take(key);
    if (decision.allowed) {
      this.refused.delete(key);
      return { ...decision, firstRefusal: false };
    }
    const firstRefusal = !this.refused.has(key);
    this.refused.add(key);
    return { ...decision, firstRefusal };
  }
}
