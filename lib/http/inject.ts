/**
 * A request handed to the server without a socket (fastify's `inject`): the same routing, stages and
 * answers as over HTTP, for tests that read like a conversation. Node's request and response are
 * stood in for by the little of them the server uses.
 */
import { EventEmitter } from 'node:events';
import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';

export interface InjectRequest {
  method: string;
  /** The path with its query string, e.g. `/api/irc/channels/?limit=5`. */
  path: string;
  /** Request headers (any case); `host` defaults to `localhost`. */
  headers?: Record<string, string>;
  /** A body; an object is sent as JSON with `Content-Type: application/json`. */
  body?: string | Buffer | object;
  /** The client's address; default `127.0.0.1`. */
  ip?: string;
  /** Whether it came over TLS, as a socket of an HTTPS server would say; default false. */
  secure?: boolean;
}

export interface InjectResponse {
  status: number;
  /** Response headers, by lower-case name. */
  headers: Record<string, string>;
  /** The body as text ('' for HEAD and 304). */
  text: string;
  /** The body parsed as JSON (undefined when there is none, or it is not JSON: a page's HTML is in `text`). */
  body: unknown;
}

/** What stands in for the connection: an address, whether it is TLS, and nothing to close. */
class NoSocket extends EventEmitter {
  writable = true;
  constructor(
    readonly remoteAddress: string,
    readonly encrypted: boolean,
  ) {
    super();
  }
  destroy(): void {
    this.writable = false;
  }
}

/** The request and response pair for {@link InjectRequest}, and the answer once it is written. */
export function injected(request: InjectRequest): {
  raw: IncomingMessage;
  response: ServerResponse;
  answered: Promise<InjectResponse>;
} {
  const headers: Record<string, string> = { host: 'localhost' };
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  let bytes: Buffer | undefined;
  if (typeof request.body === 'string') bytes = Buffer.from(request.body, 'utf8');
  else if (Buffer.isBuffer(request.body)) bytes = request.body;
  else if (request.body !== undefined) {
    bytes = Buffer.from(JSON.stringify(request.body), 'utf8');
    headers['content-type'] ??= 'application/json';
  }
  if (bytes) headers['content-length'] ??= String(bytes.length);

  const socket = new NoSocket(request.ip ?? '127.0.0.1', request.secure === true);
  const raw = Object.assign(Readable.from(bytes ? [bytes] : []), {
    method: request.method,
    url: request.path,
    headers,
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    complete: false,
    socket,
  });
  raw.once('end', () => (raw.complete = true));

  let resolve: (answer: InjectResponse) => void = () => undefined;
  const answered = new Promise<InjectResponse>((done) => (resolve = done));
  const set: Record<string, string> = {};
  const response = Object.assign(new EventEmitter(), {
    statusCode: 200,
    headersSent: false,
    destroyed: false,
    writableFinished: false,
    setHeader(name: string, value: string) {
      set[name.toLowerCase()] = value;
    },
    writeContinue() {},
    writeHead(status: number, ...rest: [string[]] | [string, string[]]) {
      const flat = rest.length === 2 ? rest[1] : rest[0];
      // As Node does: every header is checked before any is taken, and a refused one throws.
      for (let index = 0; index < flat.length; index += 2) {
        validateHeaderName(flat[index]!);
        validateHeaderValue(flat[index]!, flat[index + 1]!);
      }
      response.statusCode = status;
      response.headersSent = true;
      for (let index = 0; index < flat.length; index += 2) set[flat[index]!.toLowerCase()] = flat[index + 1]!;
    },
    end(body?: Buffer) {
      response.writableFinished = true;
      // As a client does, the body is read gzip'd or not.
      const bytes = body && set['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
      const text = bytes ? bytes.toString('utf8') : '';
      const json = text !== '' && (set['content-type'] ?? '').startsWith('application/json');
      resolve({ status: response.statusCode, headers: set, text, body: json ? JSON.parse(text) : undefined });
      response.emit('close');
    },
  });
  return {
    raw: raw as unknown as IncomingMessage,
    response: response as unknown as ServerResponse,
    answered,
  };
}
