/**
 * A small JSON-RPC 2.0 client over HTTP(S) for the services' RPC interfaces.
 * Each call uses a fresh connection (`Connection: close`): Atheme's httpd
 * closes after every answer anyway, and a client that reuses a connection it
 * is closing races it (on the test network, one such race crashed Atheme's
 * jsonrpc module). Ids are strings, because Atheme never answers a number.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '../../../lib/sdk.js';
import { abortReason, ServiceUnavailableError } from './backend.js';

export interface JsonRpcOptions {
  url: URL;
  timeoutMs: number;
  signal: AbortSignal;
  /** Extra request headers (e.g. `Authorization`). */
  headers?: Record<string, string>;
}

/** A JSON-RPC answer: either a result or the service's error. */
export type JsonRpcAnswer = { result: unknown } | { error: { code: number; message: string } };

/** An RPC answer bigger than this is not an answer to a credential check. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The URL for messages: no user name, password or query (they may hold secrets). */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function readAnswer(text: string, id: string): JsonRpcAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ServiceUnavailableError('the RPC interface answered something that is not JSON');
  }
  if (body === null || typeof body !== 'object') {
    throw new ServiceUnavailableError('the RPC interface answered JSON that is not a JSON-RPC response');
  }
  const answer = body as { id?: unknown; error?: unknown; result?: unknown };
  if (answer.id !== undefined && answer.id !== null && String(answer.id) !== id) {
    throw new ServiceUnavailableError(`the RPC interface answered request ${String(answer.id)} instead of ${id}`);
  }
  const { error } = answer;
  if (error !== undefined && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code !== 'number') throw new ServiceUnavailableError('the RPC interface sent an error without a code');
    return { error: { code, message: typeof message === 'string' ? message : '' } };
  }
  return { result: answer.result };
}

/**
 * Call `method` with `params`. Resolves with the result or the service's error
 * object; rejects with ServiceUnavailableError when there is no usable answer
 * (connection refused, timeout, HTTP status other than 200, not JSON-RPC).
 */
export function callJsonRpc(method: string, params: unknown[], options: JsonRpcOptions): Promise<JsonRpcAnswer> {
  // The id only pairs this call's answer with it: each call is a request of its own.
  const id = randomUUID();
  const payload = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method, params, id }), 'utf8');
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
        'Content-Type': 'application/json',
        Accept: 'application/json',
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
      response.on('end', () => {
        try {
          const answer = readAnswer(Buffer.concat(chunks).toString('utf8'), id);
          finish(() => resolve(answer));
        } catch (error) {
          finish(() => reject(error));
        }
      });
    });
    if (options.signal.aborted) onAbort();
    else request.end(payload);
  });
}
