/**
 * Answers the HTTP layer gives before a route runs (a request Node's parser cannot read, an
 * unsupported expectation, a timeout, CONNECT), sent as raw bytes over TCP to a real server: each is a
 * whole HTTP response with the contract's JSON error, and each is in the access log without header values.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { HttpServer, type HttpServerOptions } from '../../../lib/http/server.js';
import type { RouteDefinition } from '../../../lib/http/types.js';
import { createLogger } from '../../../lib/logger.js';

/** How long a test waits for an answer before failing; the server answers in milliseconds. */
const DEADLINE_MS = 10_000;
const JSON_TYPE = 'application/json; charset=utf-8';
const SECRET = 'hunter2-in-a-header';

interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Map<string, string>;
  body: string;
}

/**
 * The complete responses at the start of `bytes`, in order, 1xx included. A response without
 * `Content-Length` ends at its blank line (every answer of this server that has a body has one).
 */
function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset, 'latin1');
    if (headEnd === -1) return responses;
    const [statusLine = '', ...lines] = bytes.toString('latin1', offset, headEnd).split('\r\n');
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const bodyStart = headEnd + 4;
    const bodyEnd = bodyStart + Number(headers.get('content-length') ?? 0);
    if (bytes.length < bodyEnd) return responses;
    responses.push({
      status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]),
      headers,
      body: bytes.toString('utf8', bodyStart, bodyEnd),
    });
    offset = bodyEnd;
  }
}

/** A TCP connection that sends exactly the bytes it is given and collects what comes back. */
class RawClient {
  private received = Buffer.alloc(0);
  private ended = false;
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.notify();
    });
    // A reset after the answer (the server closed with bytes unread) is a way of closing too.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.ended = true;
      this.notify();
    });
  }

  static async open(t: Test, port: number): Promise<RawClient> {
    const socket = net.connect(port, '127.0.0.1');
    t.teardown(() => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /**
   * The responses so far, once `count` of them are complete: final ones (not 1xx) unless `kind` is
   * `any`. Fails at the deadline.
   */
  responses(count = 1, kind: 'final' | 'any' = 'final'): Promise<RawResponse[]> {
    return this.until(`${count} ${kind} response(s)`, () => {
      const responses = parseResponses(this.received);
      const counted = kind === 'any' ? responses : responses.filter((response) => response.status >= 200);
      return counted.length >= count ? responses : undefined;
    });
  }

  /** Resolves once the server has closed the connection; fails at the deadline. */
  closed(): Promise<true> {
    return this.until('the server to close the connection', () => this.ended || undefined);
  }

  private until<T>(what: string, check: () => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const listener = (): void => {
        const result = check();
        if (result !== undefined) {
          clearTimeout(deadline);
          this.listeners.delete(listener);
          resolve(result);
        } else if (this.ended) {
          clearTimeout(deadline);
          this.listeners.delete(listener);
          reject(new Error(`the connection closed before ${what}; got ${JSON.stringify(this.text())}`));
        }
      };
      const deadline = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${what} within ${DEADLINE_MS} ms; got ${JSON.stringify(this.text())}`));
      }, DEADLINE_MS);
      this.listeners.add(listener);
      listener();
    });
  }

  private text(): string {
    return this.received.toString('latin1');
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** A logger whose lines are kept, and can be awaited (the access-log line comes after the answer). */
function captureLog() {
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  const logger = createLogger({
    level: 'debug',
    sink: (line) => {
      lines.push(line);
      for (const waiter of waiters) {
        if (waiter.pattern.test(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    },
  });
  const waitForLine = (pattern: RegExp): Promise<string> => {
    const found = lines.find((line) => pattern.test(line));
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { pattern, resolve };
      waiters.add(waiter);
      setTimeout(() => {
        if (waiters.delete(waiter)) reject(new Error(`no log line matched ${pattern}; lines: ${lines.join('\n')}`));
      }, DEADLINE_MS);
    });
  };
  return { logger, lines, waitForLine };
}

const okRoute: RouteDefinition = {
  method: 'GET',
  path: '/api/ok/',
  name: 'test.ok',
  summary: 'Answers ok',
  tier: 'public',
  handler: () => ({ body: { ok: true } }),
};

const echoRoute: RouteDefinition = {
  method: 'POST',
  path: '/api/echo/',
  name: 'test.echo',
  summary: 'Answers the body it was sent',
  tier: 'public',
  body: { type: 'object' },
  handler: (request) => ({ body: { echo: request.body } }),
};

async function start(t: Test, options: Partial<HttpServerOptions> = {}) {
  const log = captureLog();
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger, ...options });
  server.route('test', okRoute);
  server.route('test', echoRoute);
  const { port } = await server.listen();
  t.teardown(() => server.close());
  return { port, log, open: () => RawClient.open(t, port) };
}

/** The contract's error answer: status, JSON type, API-Version, no-store, a Date, and the error body. */
function assertContractError(t: Test, response: RawResponse | undefined, status: number, code: string): void {
  if (!response) {
    t.fail(`expected a ${status} answer, got none`);
    return;
  }
  t.equal(response.status, status, 'status');
  t.equal(response.headers.get('content-type'), JSON_TYPE, 'Content-Type');
  t.equal(response.headers.get('api-version'), '1', 'API-Version');
  t.equal(response.headers.get('cache-control'), 'no-store', 'Cache-Control');
  t.ok(response.headers.has('date'), 'Date');
  t.equal(Number(response.headers.get('content-length')), Buffer.byteLength(response.body), 'Content-Length');
  let body: unknown;
  t.doesNotThrow(() => (body = JSON.parse(response.body)), 'the body is JSON');
  t.match(body, { error: { status, code, message: String } }, "the contract's error body");
}

function messageOf(response: RawResponse | undefined): string {
  return (JSON.parse(response?.body ?? '{}') as { error?: { message?: string } }).error?.message ?? '';
}

/** The head of a chunked POST to /api/echo/; each test sends its own chunks after it. */
const chunkedHead =
  'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';

/** Every test, against the server itself and against the same server behind its front (lib/http/front/). */
function suite(t: Test, front: boolean): void {
  t.test('417: an Expect other than 100-continue gets the JSON error, and the connection goes on', async (t) => {
    const { open, log } = await start(t, { front });
    const client = await open();
    client.send(
      'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: a-miracle\r\n\r\n{}' +
        'GET /api/ok/ HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    const [refused, next] = await client.responses(2);
    assertContractError(t, refused, 417, 'expectation_failed');
    t.match(messageOf(refused), /Expect.*100-continue/, 'the message names the header and what is supported');
    t.not(refused?.headers.get('connection'), 'close', 'the body was framed, so the connection can go on');
    t.equal(next?.status, 200, 'the next request on the connection is answered');
    t.match(await log.waitForLine(/POST \/api\/echo\/ status=417/), / INFO /, 'in the access log');
  });

  t.test('100-continue still works: the 100 comes once the body is wanted, then the answer', async (t) => {
    const { open } = await start(t, { front });
    const client = await open();
    client.send(
      'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\nExpect: 100-continue\r\n\r\n',
    );
    // Wait for the 100 before sending the body, as a client that honours it does.
    const [continued] = await client.responses(1, 'any');
    t.equal(continued?.status, 100, '100 Continue');
    client.send('{"a":"b"}');
    const responses = await client.responses(1);
    t.equal(responses.at(-1)?.status, 200);
    t.same(JSON.parse(responses.at(-1)?.body ?? 'null'), { echo: { a: 'b' } }, 'the body arrived');
  });

  t.test(
    '413: a body over the limit is refused before it is sent, or when its chunk extensions overflow',
    async (t) => {
      const { open, log } = await start(t, { front, bodyLimit: 64 });

      await t.test('a declared body over the limit behind Expect: 100-continue gets no 100', async (t) => {
        const client = await open();
        client.send(
          'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 65\r\nExpect: 100-continue\r\n\r\n',
        );
        const responses = await client.responses(1);
        t.same(
          responses.map((response) => response.status),
          [413],
          'no 100 Continue: the client is not asked for a body that would be refused',
        );
        assertContractError(t, responses[0], 413, 'payload_too_large');
        t.equal(
          responses[0]?.headers.get('connection'),
          'close',
          'the unsent body cannot be skipped: the connection closes',
        );
        t.ok(await client.closed(), 'closed');
      });

      await t.test("chunk extensions over Node's limit", async (t) => {
        const client = await open();
        client.send(`${chunkedHead}2;${'x'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`);
        const [refused] = await client.responses(1);
        assertContractError(t, refused, 413, 'payload_too_large');
        t.match(messageOf(refused), /chunk extension/i, 'the message names the culprit');
        t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
        t.ok(await client.closed(), 'closed');
        t.match(await log.waitForLine(/POST \/api\/echo\/ status=413/), / INFO /, 'in the access log');
      });
    },
  );

  t.test('431: headers over the limit, in the head or in the trailers of a chunked body', async (t) => {
    const { open, log } = await start(t, { front });

    await t.test('in the head', async (t) => {
      const client = await open();
      client.send(`GET /api/ok/ HTTP/1.1\r\nHost: x\r\nX-Password: ${SECRET}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 431, 'headers_too_large');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
      const line = await log.waitForLine(/status=431/);
      t.match(line, / INFO .*HPE_HEADER_OVERFLOW/, 'logged for the operator with the parser error');
    });

    await t.test('in the trailers', async (t) => {
      const client = await open();
      client.send(`${chunkedHead}2\r\n{}\r\n0\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 431, 'headers_too_large');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
    });

    t.notOk(
      log.lines.some((line) => line.includes(SECRET)),
      'no header value is logged',
    );
  });

  t.test('400: a malformed request line', async (t) => {
    const { open, log } = await start(t, { front });
    const cases = [
      ['an unknown method', 'FETCH /api/ok/ HTTP/1.1\r\nHost: x\r\n\r\n', /method/i, 'HPE_INVALID_METHOD'],
      ['a space in the target', 'GET /api/o k/ HTTP/1.1\r\nHost: x\r\n\r\n', /HTTP\//, 'HPE_INVALID_CONSTANT'],
      ['a control character in the target', 'GET /api/\x01/ HTTP/1.1\r\nHost: x\r\n\r\n', /target/i, 'HPE_INVALID_URL'],
      ['an unknown version', 'GET /api/ok/ HTTP/1.7\r\nHost: x\r\n\r\n', /version/i, 'HPE_INVALID_VERSION'],
    ] as const;
    for (const [what, request, culprit, parserCode] of cases) {
      await t.test(what, async (t) => {
        const client = await open();
        client.send(request);
        const [refused] = await client.responses(1);
        assertContractError(t, refused, 400, 'parse_error');
        t.match(messageOf(refused), culprit, 'the message names the culprit');
        t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
        t.ok(await client.closed(), 'closed');
        t.match(
          await log.waitForLine(new RegExp(`status=400 .*error=${parserCode}`)),
          / INFO /,
          'logged at the level of the access log',
        );
      });
    }
  });

  t.test('400: a malformed header, a missing Host, a malformed body framing', async (t) => {
    const { open, log } = await start(t, { front });

    await t.test('a header name with a space', async (t) => {
      const client = await open();
      client.send(`GET /api/ok/ HTTP/1.1\r\nHost: x\r\nX-Password: ${SECRET}\r\nBad Header: y\r\n\r\n`);
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 400, 'parse_error');
      t.match(messageOf(refused), /header/i, 'the message names the culprit');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
      t.match(await log.waitForLine(/status=400 .*error=HPE_INVALID_HEADER_TOKEN/), / INFO /, 'logged');
    });

    await t.test('a control character in a header value', async (t) => {
      const client = await open();
      client.send('GET /api/ok/ HTTP/1.1\r\nHost: x\r\nX-Note: a\x01b\r\n\r\n');
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 400, 'parse_error');
      t.ok(await client.closed(), 'closed');
    });

    await t.test('an HTTP/1.1 request without Host (RFC 9112 §3.2)', async (t) => {
      const client = await open();
      client.send('GET /api/ok/ HTTP/1.1\r\n\r\n');
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 400, 'parse_error');
      t.match(messageOf(refused), /Host/, 'the message names the missing header');
      t.match(await log.waitForLine(/GET \/api\/ok\/ status=400/), / INFO /, 'in the access log');
    });

    await t.test('Transfer-Encoding that does not end in chunked (RFC 9112 §6.3)', async (t) => {
      const client = await open();
      client.send(
        'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{}',
      );
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 400, 'parse_error');
      t.match(messageOf(refused), /Transfer-Encoding/, 'the message names the header');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
    });

    await t.test('a chunk size that is not hexadecimal', async (t) => {
      const client = await open();
      client.send(`${chunkedHead}zz\r\n{}\r\n0\r\n\r\n`);
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 400, 'parse_error');
      t.match(messageOf(refused), /chunk/i, 'the message names the culprit');
      t.ok(await client.closed(), 'closed');
      t.match(await log.waitForLine(/POST \/api\/echo\/ status=400/), / INFO /, 'in the access log');
    });

    t.notOk(
      log.lines.some((line) => line.includes(SECRET)),
      'no header value is logged',
    );
  });

  t.test('408: headers or a body that do not arrive in time', async (t) => {
    const { open, log } = await start(t, { front, headersTimeout: 200, requestTimeout: 400 });

    await t.test('headers', async (t) => {
      const client = await open();
      client.send(`GET /api/ok/ HTTP/1.1\r\nHost: x\r\nX-Password: ${SECRET}\r\n`);
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 408, 'request_timeout');
      t.match(messageOf(refused), /headers.*0\.2 s/, 'the message names the part and the timeout');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
      t.match(await log.waitForLine(/status=408/), / INFO .*ERR_HTTP_REQUEST_TIMEOUT/, 'logged');
    });

    await t.test('a body', async (t) => {
      const client = await open();
      client.send(
        'POST /api/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a"',
      );
      const [refused] = await client.responses(1);
      assertContractError(t, refused, 408, 'request_timeout');
      t.match(messageOf(refused), /body.*0\.4 s/, 'the message names the part and the timeout');
      t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
      t.ok(await client.closed(), 'closed');
      t.match(await log.waitForLine(/POST \/api\/echo\/ status=408/), / INFO /, 'in the access log');
    });

    t.notOk(
      log.lines.some((line) => line.includes(SECRET)),
      'no header value is logged',
    );
  });

  t.test('501: CONNECT, which this server does not implement, gets the JSON error', async (t) => {
    const { open, log } = await start(t, { front });
    const client = await open();
    client.send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const [refused] = await client.responses(1);
    assertContractError(t, refused, 501, 'not_implemented');
    t.match(messageOf(refused), /CONNECT/, 'the message names the method');
    t.equal(refused?.headers.get('connection'), 'close', 'Connection: close');
    t.ok(await client.closed(), 'closed');
    t.match(await log.waitForLine(/CONNECT .*status=501/), / INFO /, 'in the access log');
  });

  t.test('the timeouts are checked when the server is made', async (t) => {
    const logger = createLogger({ sink: () => undefined });
    t.throws(
      () => new HttpServer({ host: '127.0.0.1', port: 0, logger, headersTimeout: 500, requestTimeout: 200 }),
      /headersTimeout \(500 ms\) must not exceed requestTimeout \(200 ms\)/,
    );
    t.throws(() => new HttpServer({ host: '127.0.0.1', port: 0, logger, requestTimeout: 0 }), /requestTimeout/);
  });
}

t.test('straight to the server', async (t) => suite(t, false));
t.test('through the front, on its own thread', async (t) => suite(t, true));
