/**
 * The front's store of public answers, as a caching reverse proxy keeps them: by path and query, each
 * fresh for the reuse time its route declared, then served stale while one renewal is under way.
 */

/** One answer as the bot gave it, ready to be written again. */
export interface StoredAnswer {
  status: number;
  /** Flat `writeHead` list without `Date`, the rate limit headers and the front's own headers. */
  headers: readonly string[];
  /** The same list without `Content-Type` and `Content-Length`: the headers of a 304. */
  notModifiedHeaders: readonly string[];
  etag: string | undefined;
  body: Buffer;
  /** The route that gave it, for the access log. */
  route: string | undefined;
}

interface Entry {
  answer: StoredAnswer;
  freshUntil: number;
  /** Past this it is not served at all: its max-age from when the bot gave it, or `maxStaleMs` past fresh. */
  servableUntil: number;
  /** A renewal was asked for and has not come back. */
  renewing: boolean;
  /** When the entry was last used: an entry nobody asked for in a while goes. */
  usedAt: number;
}

export interface AnswerCacheOptions {
  /** Most answers kept; the least recently used goes first. Default 2,000. */
  maxEntries?: number;
  /** Most body bytes kept in all. Default 32 MiB. */
  maxBytes?: number;
  /** Milliseconds a stale answer may still be served while its renewal is under way. Default 60 s. */
  maxStaleMs?: number;
}

export type Lookup = { answer: StoredAnswer; renew: boolean } | undefined;

export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly maxStaleMs: number;

  constructor(options: AnswerCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 2000;
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    this.maxStaleMs = options.maxStaleMs ?? 60_000;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The answer for `key` if there is one to serve: fresh, or stale with `renew` set for the first
   * caller after it went stale (who asks the bot for a new one). An answer stale for longer than
   * `maxStaleMs` is not served: the bot is not answering, and the request goes to it and waits.
   */
  get(key: string, now: number): Lookup {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now >= entry.servableUntil) return undefined;
    // Kept in use order: the first entry is the least recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    entry.usedAt = now;
    if (now < entry.freshUntil || entry.renewing) return { answer: entry.answer, renew: false };
    entry.renewing = true;
    return { answer: entry.answer, renew: true };
  }

  /**
   * Keep `answer` for `key`, fresh for `reuseMs`; `maxAgeMs`, the answer's own max-age, bounds how long it
   * is served at all (a client keeps what it gets for its max-age again).
   */
  put(key: string, answer: StoredAnswer, reuseMs: number, now: number, maxAgeMs = Infinity): void {
    this.drop(key);
    if (answer.body.length > this.maxBytes / 4) return;
    const freshUntil = now + reuseMs;
    const servableUntil = Math.min(freshUntil + this.maxStaleMs, now + Math.max(reuseMs, maxAgeMs));
    this.entries.set(key, { answer, freshUntil, servableUntil, renewing: false, usedAt: now });
    this.bytes += answer.body.length;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.answer.body.length;
    }
  }

  /** A renewal failed: the next request after this one tries again. */
  renewalFailed(key: string): void {
    const entry = this.entries.get(key);
    if (entry) entry.renewing = false;
  }

  /** Forget `key`: the bot no longer gives a reusable answer for it. */
  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.answer.body.length;
  }
}
