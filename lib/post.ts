/**
 * One HTTP(S) POST to a URL an operator configured (a services' RPC interface, a webhook receiver), with a time
 * limit and a signal that cancels it. node:http(s) and not fetch: it never follows a redirect (only the configured
 * URL is called), and it sends a URL's user name and password as Basic authentication, which fetch refuses. Each
 * POST has a connection of its own (`Connection: close`), so that none races a server closing an idle kept-alive
 * one (on the test network, one such race crashed Atheme's jsonrpc module).
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

export interface PostOptions {
  url: URL;
  /** The request's headers; `Content-Length` and `Connection` are added. */
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  /** Cancels the POST: the promise rejects with `reasons.aborted()`. */
  signal: AbortSignal;
  /** What the rejection says when no answer came. */
  reasons: {
    timedOut: string;
    aborted: () => string;
    unreachable: (error: Error) => string;
  };
  /** The error the promise rejects with, for a reason. */
  error: (reason: string) => Error;
}

/** How the answer's reader settles the POST: with what it read, or failing (which closes the connection). */
export interface PostSettle<T> {
  resolve(value: T): void;
  fail(reason: string): void;
}

/** The URL for messages: no user name, password or query (they may hold secrets). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * POST `options.body` to `options.url`; `read` gets the answer once its headers are in and settles the promise.
 * It rejects without an answer: the connection failed, the time limit passed, or the signal aborted. Whatever
 * settles it first wins; the timer and the signal's listener go with it.
 */
export function postOnce<T>(
  options: PostOptions,
  read: (response: IncomingMessage, settle: PostSettle<T>) => void,
): Promise<T> {
  const { url, body, signal, reasons } = options;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (reason: string): void => {
      finish(() => reject(options.error(reason)));
      request.destroy();
    };
    let request: http.ClientRequest;
    try {
      request = client.request(url, {
        method: 'POST',
        agent: false,
        headers: { ...options.headers, 'Content-Length': String(body.length), Connection: 'close' },
      });
    } catch (error) {
      // A request Node refuses before anything is sent (a header it will not write): no timer or listener yet.
      reject(options.error(reasons.unreachable(error as Error)));
      return;
    }
    const onAbort = (): void => fail(reasons.aborted());
    const timer = setTimeout(() => fail(reasons.timedOut), options.timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => fail(reasons.unreachable(error)));
    request.on('response', (response) => read(response, { resolve: (value) => finish(() => resolve(value)), fail }));
    if (signal.aborted) onAbort();
    else request.end(body);
  });
}
