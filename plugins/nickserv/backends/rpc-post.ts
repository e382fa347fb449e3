/**
 * One POST to a services' RPC interface and its answer as text. Each call uses a fresh connection
 * (`Connection: close`): Atheme's httpd closes after every answer anyway, and a client that reuses a
 * connection it is closing races it (on the test network, one such race crashed Atheme's jsonrpc module).
 */
import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '../../../lib/sdk.js';
import { abortReason, ServiceUnavailableError } from './backend.js';

export interface RpcPostOptions {
  url: URL;
  timeoutMs: number;
  signal: AbortSignal;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
}

/** An RPC answer bigger than this is not an answer to a credential check. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The URL for messages: no user name, password or query (they may hold secrets). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * POST `payload` (of `contentType`) for `method`; resolves with the body of a 200 answer. Rejects with
 * ServiceUnavailableError when there is none (connection refused, timeout, abort, another HTTP status,
 * an answer too big).
 */
export function postForText(
  method: string,
  payload: Buffer,
  contentType: string,
  options: RpcPostOptions,
): Promise<string> {
  const where = describeUrl(options.url);
  const client = options.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (reason: string): void => {
      finish(() => reject(new ServiceUnavailableError(reason)));
      request.destroy();
    };
    const onAbort = (): void => fail(abortReason(options.signal));
    const timer = setTimeout(() => fail(`no answer from ${where} within ${options.timeoutMs} ms`), options.timeoutMs);
    options.signal.addEventListener('abort', onAbort, { once: true });

    const request = client.request(options.url, {
      method: 'POST',
      agent: false,
      headers: {
        ...options.headers,
        'Content-Type': contentType,
        Accept: contentType,
        'Content-Length': String(payload.length),
        Connection: 'close',
      },
    });
    request.on('error', (error) => fail(`cannot reach ${where}: ${errorMessage(error)}`));
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        fail(`${where} answered HTTP ${response.statusCode ?? '?'} to ${method}`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) fail(`${where} sent an answer over ${MAX_ANSWER_BYTES} bytes`);
        else chunks.push(chunk);
      });
      response.on('error', (error) => fail(`the answer from ${where} broke off: ${errorMessage(error)}`));
      response.on('end', () => finish(() => resolve(Buffer.concat(chunks).toString('utf8'))));
    });
    if (options.signal.aborted) onAbort();
    else request.end(payload);
  });
}
