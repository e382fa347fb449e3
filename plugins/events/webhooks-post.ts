/**
 * One POST of a webhook batch and the answer's status (lib/post.ts: no redirect followed, a connection of its own;
 * a batch at most every `batch_wait_ms` needs no more).
 */
import { errorMessage, postOnce } from '../../lib/sdk.js';

/** What the receiver answered. */
export interface PostAnswer {
  status: number;
  /** The wait it asked for (`Retry-After`), in ms. */
  retryAfterMs: number | undefined;
  /** Where a redirect pointed (not followed), for the log. */
  location: string | undefined;
}

/** The most of a `Location` header the log shows. */
const SHOWN_LOCATION = 200;

/** `Retry-After` in ms: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * POST `body` to `url` with `headers`; resolves with the answer's status once its headers are in (the rest of it
 * is read and thrown away). Rejects when there is none: the connection failed, `timeoutMs` passed, `signal` aborted.
 */
export function postBatch(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<PostAnswer> {
  return postOnce<PostAnswer>(
    {
      url,
      headers,
      body: Buffer.from(body, 'utf8'),
      timeoutMs,
      signal,
      reasons: {
        timedOut: `no answer within ${timeoutMs / 1000} s`,
        aborted: () => 'the bot is stopping',
        unreachable: errorMessage,
      },
      error: (reason) => new Error(reason),
    },
    (response, settle) => {
      response.resume();
      response.on('error', () => undefined);
      const location = response.headers.location;
      settle.resolve({
        status: response.statusCode ?? 0,
        retryAfterMs: retryAfterMs(response.headers['retry-after'], Date.now()),
        location: location === undefined ? undefined : location.slice(0, SHOWN_LOCATION),
      });
    },
  );
}
