/**
 * A small JSON-RPC 2.0 client over HTTP(S) for the services' RPC interfaces.
 * Each call uses a fresh connection (`Connection: close`): Atheme's httpd
 * closes after every answer anyway, and a client that reuses a connection it
 * is closing races it (on the test network, one such race crashed Atheme's
 * jsonrpc module). Ids are strings, because Atheme never answers a number.
 */
import { randomUUID } from 'node:crypto';
import { ServiceUnavailableError } from './backend.js';
import { postForText, type RpcPostOptions } from './rpc-post.js';

export type JsonRpcOptions = RpcPostOptions;

/** A JSON-RPC answer: either a result or the service's error. */
export type JsonRpcAnswer = { result: unknown } | { error: { code: number; message: string } };

export { describeUrl } from './rpc-post.js';

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
export async function callJsonRpc(method: string, params: unknown[], options: JsonRpcOptions): Promise<JsonRpcAnswer> {
  // The id only pairs this call's answer with it: each call is a request of its own.
  const id = randomUUID();
  const payload = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method, params, id }), 'utf8');
  const text = await postForText(method, payload, 'application/json', options);
  return readAnswer(text, id);
}
