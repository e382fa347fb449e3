/**
 * For the webhook tests: a receiver on a free local port that records each request and answers what the test
 * tells it, and a signature check written from the Standard Webhooks specification alone (none of the plugin's
 * code), so that a test checks the plugin's signatures against the specification rather than against itself.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers a request: a status, and headers. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/** The parsed body of a batch. */
export interface Payload {
  type: string;
  timestamp: string;
  data: { dropped: number; events: ({ id: string; type: string; time: string } & Record<string, unknown>)[] };
}

export class Receiver {
  readonly requests: Received[] = [];
  /** Answers for the next requests, in order; once they are used up, `otherwise`. */
  readonly answers: Answer[] = [];
  otherwise: Answer = { status: 204 };
  private readonly waiters = new Set<() => void>();
  private readonly hanging = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(t: { teardown(fn: () => unknown): void }): Promise<Receiver> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new Receiver(server, `http://127.0.0.1:${port}`);
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => receiver.take(request, Buffer.concat(chunks).toString('utf8'), response));
    });
    t.teardown(() => receiver.close());
    return receiver;
  }

  private take(request: http.IncomingMessage, body: string, response: http.ServerResponse): void {
    this.requests.push({ path: request.url ?? '', headers: request.headers, body });
    const answer = this.answers.shift() ?? this.otherwise;
    if (answer === 'hang') this.hanging.add(response);
    else response.writeHead(answer.status, answer.headers).end();
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `check` holds, asked at every request; rejects naming `what` after 10 s. */
  until(check: () => boolean, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`the receiver waited 10 s for ${what}; it got ${this.requests.length} request(s)`));
      }, 10_000);
      const waiter = (): void => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      };
      this.waiters.add(waiter);
    });
  }

  /** Resolves with request number `count` (from 1) once it came. */
  async request(count: number): Promise<Received> {
    await this.until(() => this.requests.length >= count, `request ${count}`);
    return this.requests[count - 1]!;
  }

  /** The events of every request so far to `path` (all paths when not given), in the order they came. */
  events(path?: string): Payload['data']['events'] {
    return this.requests
      .filter((request) => path === undefined || request.path === path)
      .flatMap((request) => (JSON.parse(request.body) as Payload).data.events);
  }

  close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Whether `headers` carry a valid Standard Webhooks signature of `body` for `secret`: HMAC-SHA256, keyed with the
 * base64-decoded bytes after `whsec_`, over `<webhook-id>.<webhook-timestamp>.<body>`, in a `v1,<base64>` entry of
 * the space-separated `webhook-signature` header.
 */
export function verifySignature(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
