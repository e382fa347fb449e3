/**
 * One POST of a webhook batch and the answer's status. node:http(s) and not fetch: it never follows a redirect
 * (only the configured URL is called), and it sends a URL's user name and password as Basic authentication,
 * which fetch refuses. Each POST has a connection of its own (`Connection: close`), so that no attempt races a
 * receiver closing an idle kept-alive one; a batch at most every `batch_wait_ms` does not need more.
 */
import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '../../lib/sdk.js';

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
  const client = url.protocol === 'https:' ? https : http;
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (reason: string): void => {
      finish(() => reject(new Error(reason)));
      request.destroy();
    };
    const onAbort = (): void => fail('the bot is stopping');
    const timer = setTimeout(() => fail(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    const request = client.request(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'Content-Length': String(payload.length), Connection: 'close' },
    });
    request.on('error', (error) => fail(errorMessage(error)));
    request.on('response', (response) => {
      response.resume();
      response.on('error', () => undefined);
      const location = response.headers.location;
      finish(() =>
        resolve({
          status: response.statusCode ?? 0,
          retryAfterMs: retryAfterMs(response.headers['retry-after'], Date.now()),
          location: location === undefined ? undefined : location.slice(0, SHOWN_LOCATION),
        }),
      );
    });
    if (signal.aborted) onAbort();
    else request.end(payload);
  });
}
