/**
 * An answer as it went over the wire, captured from one server so that a raw node:http server can send the same
 * bytes: the baseline the benchmarks compare the bot's HTTP path with.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answer as it went over the wire: status line, headers in order and spelling, body. */
export interface Captured {
  status: number;
  statusMessage: string;
  /** Name, value, name, value, ... as received. */
  rawHeaders: string[];
  body: Buffer;
}

/** Headers Node's server adds to every answer by itself: the raw server must not send them twice. */
export const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive']);

export function capture(url: string, headers: Record<string, string>): Promise<Captured> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            statusMessage: response.statusMessage ?? '',
            rawHeaders: response.rawHeaders,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The headers without those named in `names` (lower case). */
export function withoutHeaders(rawHeaders: readonly string[], names: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    if (!names.has(rawHeaders[index]!.toLowerCase())) kept.push(rawHeaders[index]!, rawHeaders[index + 1]!);
  }
  return kept;
}

/** Everything of an answer but its `Date`, for comparing two answers. */
export function withoutDate(answer: Captured): string {
  const headers = withoutHeaders(answer.rawHeaders, new Set(['date']));
  return JSON.stringify([answer.status, answer.statusMessage, headers, answer.body.toString('base64')]);
}

/**
 * node:http replaying `answers` (by request path): our status line and headers (Node adds Date, Connection and
 * Keep-Alive to both), and our body. Each replayed answer is checked against ours, Date apart, before it is used.
 */
export async function startRawReplay(
  answers: ReadonlyMap<string, Captured>,
  requestHeaders: (path: string) => Record<string, string>,
): Promise<{ url: string; close(): void }> {
  const replies = new Map(
    [...answers].map(([url, answer]) => [
      url,
      { ...answer, rawHeaders: withoutHeaders(answer.rawHeaders, ADDED_BY_NODE) },
    ]),
  );
  const raw = http.createServer((request, response) => {
    const reply = replies.get(request.url ?? '');
    if (!reply) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(reply.status, reply.statusMessage, reply.rawHeaders);
    response.end(reply.body);
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  for (const [path, answer] of answers) {
    const ours = withoutDate(answer);
    const replayed = withoutDate(await capture(`${url}${path}`, requestHeaders(path)));
    if (ours !== replayed) {
      raw.close();
      throw new Error(`The raw server's answer to ${path} differs from ours: ${replayed} versus ${ours}`);
    }
  }
  return { url, close: () => raw.close() };
}
