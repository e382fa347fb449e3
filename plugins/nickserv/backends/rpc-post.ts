/**
 * One POST to a services' RPC interface and its answer as text (lib/post.ts: a connection of its own each time;
 * Atheme's httpd closes after every answer anyway).
 */
import { describeUrl, errorMessage, postOnce } from '../../../lib/sdk.js';
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

export { describeUrl };

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
  return postOnce<string>(
    {
      url: options.url,
      headers: { ...options.headers, 'Content-Type': contentType, Accept: contentType },
      body: payload,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      reasons: {
        timedOut: `no answer from ${where} within ${options.timeoutMs} ms`,
        aborted: () => abortReason(options.signal),
        unreachable: (error) => `cannot reach ${where}: ${errorMessage(error)}`,
      },
      error: (reason) => new ServiceUnavailableError(reason),
    },
    (response, settle) => {
      if (response.statusCode !== 200) {
        response.resume();
        settle.fail(`${where} answered HTTP ${response.statusCode ?? '?'} to ${method}`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) settle.fail(`${where} sent an answer over ${MAX_ANSWER_BYTES} bytes`);
        else chunks.push(chunk);
      });
      response.on('error', (error) => settle.fail(`the answer from ${where} broke off: ${errorMessage(error)}`));
      response.on('end', () => settle.resolve(Buffer.concat(chunks).toString('utf8')));
    },
  );
}
