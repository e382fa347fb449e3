/**
 * The JSON API server: the sockets side. It accepts connections, turns what Node hands over into an
 * {@link Exchange}, routes it (routes.ts), runs it through the named stages (stages.ts) and has it
 * answered (respond.ts); it also answers what Node refuses before there is a request (protocol-errors.ts),
 * tracks connections for a graceful close, and writes one access-log line per request.
 *
 * The per-request path is kept short, so that a cached answer costs little more than writing it: a
 * static path is one map lookup, the query string is parsed only when a handler reads it, each route's
 * `Cache-Control` is worked out at registration, and a request whose stages are all synchronous runs
 * from the socket to the response in one go.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import { DEFAULT_BODY_LIMIT } from './body.js';
import type { ApiError } from './errors.js';
import { Exchange, type FrontFacts } from './exchange.js';
import { FrontLink, frontFacts, listening } from './front/link.js';
import type { RequestFacts } from '../metrics.js';
import {
  clientFacts,
  compileTrustProxy,
  type ClientFacts,
  type ProxyHeader,
  type TrustProxy,
} from './client-address.js';
import { injected, type InjectRequest, type InjectResponse } from './inject.js';
import { connectNotImplemented, expectationFailed, missingHost, protocolError } from './protocol-errors.js';
import { API_VERSION, JSON_TYPE, Respond } from './respond.js';
import { RouteTable, type RegisteredRoute } from './routes.js';
import { Pipeline, type RequestHook } from './stages.js';
import type { RouteDefinition, TierGuards } from './types.js';

export { paginate, type Page, type PaginateOptions } from './paging.js';
export type { RegisteredRoute } from './routes.js';
export type { RequestHook } from './stages.js';
export type { InjectRequest, InjectResponse } from './inject.js';

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Writes the access log and handler failures, as source `http`. */
  logger: Logger;
  /** The largest accepted request body in bytes; default 16 KiB. */
  bodyLimit?: number;
  /**
   * Milliseconds a client has to send a request's headers before it gets a 408; default 60 s (Node's),
   * or requestTimeout when that is shorter.
   */
  headersTimeout?: number;
  /** Milliseconds a client has to send a whole request, body included, before it gets a 408; default 300 s (Node's). */
  requestTimeout?: number;
  /** Milliseconds an idle kept-alive connection stays open; default 5 s (Node's). */
  keepAliveTimeout?: number;
  /**
   * Open client connections at most; one beyond it is closed at once, unanswered (Node's `maxConnections`).
   * Unlimited by default. Behind the front, it is the front's: the bot's own socket serves only the front.
   */
  maxConnections?: number;
  /** @internal How often connections closed at `maxConnections` are told in the log; default a minute (tests shorten it). */
  dropWarningEveryMs?: number;
  /**
   * Listen through the front (lib/http/front/): a thread of its own that owns the listening socket,
   * answers public reads from the answers this server marked reusable, and passes everything else on
   * over a private socket. Off by default (tests of the server itself); the host turns it on.
   */
  front?: boolean;
  /** The longest a public answer is reused by the front, in milliseconds (never longer than its max-age); default 1,000. */
  frontReuseMs?: number;
  /**
   * The reverse proxies whose notes of the client are believed (`http.trust_proxy`; see client-address.ts).
   * None by default: the socket's peer is the client.
   */
  trustProxy?: string | readonly string[];
  /** The one header those proxies write the client into (`http.proxy_header`); default `x-forwarded-for`. */
  proxyHeader?: ProxyHeader;
  /** Write one access-log line per request (default true). */
  accessLog?: boolean;
  /** Told of each request the server answered (for the request metrics). */
  onRequest?: (facts: RequestFacts) => void;
  /**
   * Instead of the routes: what the front does with a request (only the front's own server sets it).
   * @internal
   */
  dispatch?: (exchange: Exchange, respond: Respond) => void;
}

const SLASH = 0x2f;
/** Node's defaults: its connection checker looks for requests past these every 30 s. */
const DEFAULT_HEADERS_TIMEOUT = 60_000;
const DEFAULT_REQUEST_TIMEOUT = 300_000;
/** Connections closed at `maxConnections` are told in the log at most this often. */
const DROP_WARNING_EVERY_MS = 60_000;
const DEFAULT_CHECK_INTERVAL = 30_000;
const DEFAULT_FRONT_REUSE_MS = 1000;
const FRONT_TIMEOUT_SLACK_MS = 1000;

/**
 * The path and query of a request target in absolute form (`http://host/path?query`), which RFC 9112
 * (3.2.2) has servers accept; any other target is returned as it is (and is not found).
 */
function originForm(target: string): string {
  const authority = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i.exec(target);
  if (!authority) return target;
  const rest = target.slice(authority[0].length);
  return rest.charCodeAt(0) === SLASH ? rest : `/${rest}`;
}

/**
 * An error answer written straight to the socket, for the requests Node never hands over as a
 * request and response pair (an unreadable one, CONNECT). It carries what {@link HttpServer}'s
 * other errors carry, and closes the connection, since what follows cannot be read.
 */
function rawErrorAnswer(error: ApiError): string {
  const body = JSON.stringify(error.toBody());
  let head =
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? ''}\r\n` +
    `Date: ${new Date().toUTCString()}\r\nCache-Control: no-store\r\nContent-Type: ${JSON_TYPE}\r\n` +
    `API-Version: ${API_VERSION}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(error.headers)) head += `${name}: ${value}\r\n`;
  return `${head}\r\n${body}`;
}

function positiveMilliseconds(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`HttpServerOptions.${name} must be a whole number of milliseconds above 0, got ${value}`);
  return value;
}

/** An open connection: how many of its requests are unanswered, and the last one that came in. */
interface Connection {
  /** A connection of the front, over the private socket. */
  front: boolean;
  pending: number;
  latest: Exchange | undefined;
  /** An error answer has been given for a request on it that could not be read; it is closing. */
  refused: boolean;
}

export class HttpServer {
  private readonly logger: Logger;
  private readonly bodyLimit: number;
  private readonly trustProxy: TrustProxy | undefined;
  private readonly timeouts: { headers: number; request: number };
  private readonly table = new RouteTable();
  private readonly respond: Respond;
  private readonly pipeline: Pipeline;
  /** Open connections, so close() can drop idle ones and a parser error can be told apart by request. */
  private readonly connections = new Map<Socket, Connection>();
  private server: http.Server | undefined;
  private front: FrontLink | undefined;
  private closing = false;

  constructor(private readonly options: HttpServerOptions) {
    this.logger = options.logger.child('http');
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    this.trustProxy = compileTrustProxy(options.trustProxy);
    const request = positiveMilliseconds('requestTimeout', options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT);
    const headers = positiveMilliseconds(
      'headersTimeout',
      options.headersTimeout ?? Math.min(DEFAULT_HEADERS_TIMEOUT, request),
    );
    if (headers > request) {
      throw new Error(
        `HttpServerOptions.headersTimeout (${headers} ms) must not exceed requestTimeout (${request} ms): the headers are part of the request`,
      );
    }
    this.timeouts = { headers, request };
    this.respond = new Respond(this.logger, options.frontReuseMs ?? DEFAULT_FRONT_REUSE_MS);
    this.pipeline = new Pipeline(this.bodyLimit, this.respond);
  }

  /** Register a route; `plugin` names its owner in logs. Throws on a duplicate method and path, naming both owners. */
  route(plugin: string, route: RouteDefinition): void {
    this.table.add(plugin, route);
  }

  /**
   * Where the checks run before every route of a tier come from: `guards` is asked at each request (the
   * host asks for the plugin that provides the service `http.guard`, so that the guards go when it stops).
   * Without a token or staff guard, those tiers answer 503; without a public one, public routes are not
   * checked at all.
   */
  setGuards(guards: () => TierGuards | undefined): void {
    this.pipeline.setGuards(guards);
  }

  /** Add a hook run before every routed request; see {@link RequestHook}. */
  addHook(hook: RequestHook): void {
    this.pipeline.addHook(hook);
  }

  /** The private socket the front passes requests on through, while the front runs (for diagnostics). */
  get frontSocketPath(): string | undefined {
    return this.front?.socketPath;
  }

  /** Every registered route with its owner, in registration order (for the OpenAPI document). */
  routes(): readonly RegisteredRoute[] {
    return this.table.list();
  }

  /** Start listening; with port 0 the answer carries the port the system picked. */
  async listen(): Promise<{ host: string; port: number; url: string }> {
    if (this.server)
      throw new Error(`The HTTP server is already listening on ${this.options.host}:${this.options.port}`);
    this.closing = false;
    if (this.options.front) return this.listenThroughFront();
    const server = this.createServer(false);
    this.server = server;
    try {
      await listening(server, this.options.port, this.options.host);
    } catch (error) {
      this.server = undefined;
      throw new Error(`Cannot listen on ${this.options.host}:${this.options.port}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.logger.info('listening', { url: `http://${host}:${address.port}` });
    return { host: address.address, port: address.port, url: `http://${host}:${address.port}` };
  }

  /** The front listens; this server takes what it passes on over a private socket. */
  private async listenThroughFront(): Promise<{ host: string; port: number; url: string }> {
    const server = this.createServer(true);
    this.server = server;
    const link = await FrontLink.open(server, this.logger, {
      host: this.options.host,
      port: this.options.port,
      bodyLimit: this.bodyLimit,
      headersTimeout: this.timeouts.headers,
      requestTimeout: this.timeouts.request,
      keepAliveTimeout: this.options.keepAliveTimeout,
      maxConnections: this.options.maxConnections,
      trustProxy: this.options.trustProxy,
      proxyHeader: this.options.proxyHeader ?? 'x-forwarded-for',
      accessLog: this.options.accessLog ?? true,
    }).catch((error: unknown) => {
      this.server = undefined;
      throw error;
    });
    this.front = link;
    // The front's own server logged where it listens.
    return { host: link.address.host, port: link.address.port, url: link.address.url };
  }

  /** A Node server whose requests come here; `front`: its connections are the front's. */
  private createServer(front: boolean): http.Server {
    // Behind the front, the front's timeouts are the client's: the bot's own wait a little longer.
    const slack = front ? FRONT_TIMEOUT_SLACK_MS : 0;
    const headers = this.timeouts.headers + slack;
    const request = this.timeouts.request + slack;
    const server = http.createServer(
      {
        headersTimeout: headers,
        requestTimeout: request,
        // Node looks for late requests this often: a request is refused within 1.5 times its timeout.
        connectionsCheckingInterval: Math.min(DEFAULT_CHECK_INTERVAL, Math.ceil(headers / 2)),
        // Node answers a missing Host with a bare 400; accept() answers it in the contract's form.
        requireHostHeader: false,
      },
      (raw, response) => this.accept(raw, response),
    );
    // Each replaces what Node does by itself: a bare 417, a 100 before anything is checked, a bare
    // 400, 408 or 431, or no answer at all to CONNECT or to a body that cannot be read.
    server.on('checkExpectation', (raw, response) => this.accept(raw, response, expectationFailed()));
    server.on('checkContinue', (raw, response) => this.accept(raw, response, undefined, true));
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => this.refuse(error, socket as Socket));
    server.on('connect', (raw: IncomingMessage, socket: Duplex) => this.refuseConnect(raw, socket));
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { front, pending: 0, latest: undefined, refused: false });
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('error', (error) => this.logger.error('server error', { error: errorMessage(error) }));
    if (this.options.keepAliveTimeout !== undefined) {
      server.keepAliveTimeout = positiveMilliseconds('keepAliveTimeout', this.options.keepAliveTimeout);
    }
    // The front's connections to the bot are its own few; the cap is on the clients'.
    if (!front && this.options.maxConnections !== undefined) {
      server.maxConnections = this.options.maxConnections;
      server.on('drop', () => this.droppedOverCap());
    }
    return server;
  }

  /**
   * Connections closed unanswered at the cap since the last warning, when that warning was, and the timer that
   * tells the ones closed since, once the minute is over, should no more come.
   */
  private readonly dropped: { count: number; warnedAt: number; timer: NodeJS.Timeout | undefined } = {
    count: 0,
    warnedAt: -Infinity,
    timer: undefined,
  };

  /**
   * A client connection was closed at `maxConnections`: a warning at most once a minute, with the count; those
   * closed within the minute after a warning are told when it is over (or at close), so none goes untold.
   */
  private droppedOverCap(): void {
    this.dropped.count++;
    const every = this.options.dropWarningEveryMs ?? DROP_WARNING_EVERY_MS;
    const since = performance.now() - this.dropped.warnedAt;
    if (since >= every) {
      this.warnDropped();
      return;
    }
    this.dropped.timer ??= setTimeout(() => this.warnDropped(), every - since).unref();
  }

  private warnDropped(): void {
    clearTimeout(this.dropped.timer);
    this.dropped.timer = undefined;
    if (this.dropped.count === 0) return;
    this.logger.warn('connections closed unanswered: http.max_connections reached', {
      max_connections: this.options.maxConnections,
      closed: this.dropped.count,
    });
    this.dropped.count = 0;
    this.dropped.warnedAt = performance.now();
  }

  /** Stop accepting connections, drop idle keep-alive ones, and resolve once the last one is gone. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    // The front first: it stops taking requests and answers (through this server, still open) those it has.
    const front = this.front;
    this.front = undefined;
    this.warnDropped();
    // Streams first: a client that keeps reading would hold the front's close, and then the server's, for ever.
    this.respond.endStreams();
    try {
      await front?.close();
      this.closing = true;
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      for (const [socket, { pending }] of this.connections) {
        if (pending === 0) socket.destroy();
      }
      await closed;
    } finally {
      await front?.removeSocket();
      this.server = undefined;
    }
  }

  /**
   * Answer `request` without a socket or a listening server: the same routing, stages, answers and
   * access-log line as over HTTP (for tests). Node's own checks of the request line and headers, and
   * its timeouts, are not run.
   */
  inject(request: InjectRequest): Promise<InjectResponse> {
    const { raw, response, answered } = injected(request);
    this.accept(raw, response);
    // No socket will close: its bookkeeping goes with the answer.
    return answered.finally(() => this.connections.delete(raw.socket));
  }

  /**
   * Every request starts here: connection bookkeeping and the access log, then the route, unless
   * `refusal` (or a missing Host) answers it first. `expectsContinue`: Node left the 100 to the server.
   */
  private accept(raw: IncomingMessage, response: ServerResponse, refusal?: ApiError, expectsContinue = false): void {
    const started = performance.now();
    const socket = raw.socket;
    let connection = this.connections.get(socket);
    if (!connection) {
      connection = { front: false, pending: 0, latest: undefined, refused: false };
      this.connections.set(socket, connection);
    }
    connection.pending++;
    // While closing, every answer also closes its connection.
    if (this.closing) response.setHeader('Connection', 'close');
    let url = raw.url ?? '/';
    if (url.charCodeAt(0) !== SLASH) url = originForm(url);
    const fragment = url.indexOf('#');
    const end = fragment === -1 ? url.length : fragment;
    const question = url.indexOf('?');
    const queryStart = question !== -1 && question < end ? question : end;
    const path = url.slice(0, queryStart);
    const search = url.slice(queryStart, end);
    let client: ClientFacts;
    let front: FrontFacts | undefined;
    if (connection.front) {
      // The front read the proxies' headers already (it runs with the same trust).
      const told = frontFacts(raw.headers);
      front = { served: told.served, renew: told.renew };
      client = { ip: told.ip, secure: told.secure };
    } else {
      const tls = (socket as Partial<TLSSocket>).encrypted === true;
      client = clientFacts(socket.remoteAddress ?? '', raw.headers, this.trustProxy, tls, this.options.proxyHeader);
    }
    const exchange = new Exchange(raw, response, raw.method ?? '?', path, search, client.ip, client.secure, started);
    exchange.front = front;
    connection.latest = exchange;
    response.on('close', () => this.finish(exchange));
    if (expectsContinue) {
      const { headers } = raw;
      exchange.awaitingContinue =
        headers['transfer-encoding'] !== undefined ||
        (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    }
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400.
    if (!refusal && raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1)
      refusal = missingHost();
    if (refusal) {
      this.respond.fail(exchange, refusal);
      return;
    }
    if (this.options.dispatch) {
      this.options.dispatch(exchange, this.respond);
      return;
    }
    const entry = this.table.find(exchange.method, path);
    if (entry) {
      exchange.entry = entry;
      this.pipeline.start(exchange);
    } else {
      this.respond.unrouted(exchange, this.table.allowed(path));
    }
  }

  /**
   * Answer an error Node reports on a connection (its `clientError`): a request its parser cannot
   * read, or one that did not arrive in time. The answer is the contract's error with
   * `Connection: close`, since nothing after the fault can be read; it goes out only where the client
   * takes it for the answer to the faulty request, else the connection is just closed.
   */
  private refuse(error: NodeJS.ErrnoException & { reason?: unknown }, socket: Socket): void {
    const connection = this.connections.get(socket);
    // Once refused, the parser repeats its error for every chunk that still comes: the answer stands,
    // and a connection the client keeps open ends at the request timeout.
    if (connection?.refused) {
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.destroy();
      return;
    }
    const ip = socket.remoteAddress ?? 'unknown';
    // A routed request that is not complete is the one being read (its body), so the fault is in it.
    const latest = connection?.latest;
    const reading = latest && !latest.raw.complete ? latest : undefined;
    const refusal = protocolError(error, this.timeouts, reading !== undefined);
    if (!refusal || !socket.writable) {
      this.logger.debug('connection failed', { error: error.code ?? errorMessage(error), ip });
      socket.destroy();
      return;
    }
    // The parser's reason is a fixed text; the bytes it could not read (error.rawPacket) may hold a token.
    const fields = {
      status: refusal.status,
      error: error.code,
      reason: typeof error.reason === 'string' ? error.reason : undefined,
      ip,
    };
    if (reading && connection) {
      // Answered already (e.g. a 413 while the rest of the body was skipped): another answer would be
      // taken for the next request's.
      if (reading.response.headersSent) {
        socket.destroy();
        return;
      }
      this.logger.info(`${reading.method} ${reading.path} refused while its body was read`, fields);
      connection.refused = true;
      reading.response.setHeader('Connection', 'close');
      this.respond.fail(reading, refusal);
      return;
    }
    // A request before it is still being answered: a line written now would be taken for that answer.
    if (connection && connection.pending > 0) {
      socket.destroy();
      return;
    }
    this.logger.info('request refused before it could be read', fields);
    if (connection) connection.refused = true;
    socket.end(rawErrorAnswer(refusal));
  }

  /** CONNECT: Node hands the connection over as a tunnel, which an API does not offer. */
  private refuseConnect(raw: IncomingMessage, socket: Duplex): void {
    const refusal = connectNotImplemented();
    this.logger.info(`CONNECT ${raw.url ?? ''}`, { status: refusal.status, ip: raw.socket.remoteAddress ?? 'unknown' });
    // Nothing reads this connection any more: it is closed once the answer is out.
    socket.end(rawErrorAnswer(refusal), () => socket.destroy());
  }

  /** The response is done or abandoned: connection bookkeeping and the access-log line. */
  private finish(exchange: Exchange): void {
    const { raw, response } = exchange;
    const socket = raw.socket;
    const connection = this.connections.get(socket);
    if (connection) {
      connection.pending--;
      if (this.closing && connection.pending === 0) socket.destroy();
    }
    const ms = performance.now() - exchange.started;
    const route = exchange.entry?.route.name ?? exchange.routeName;
    this.options.onRequest?.({ route, status: response.statusCode, seconds: ms / 1000, streamed: exchange.streamed });
    // The front writes the line of a request it passed on, with the client's address and the whole time.
    if (exchange.front || this.options.accessLog === false) return;
    // Never headers or bodies: they carry tokens and passwords. Nor the query string, for the same reason.
    this.logger.info(`${exchange.method} ${exchange.path}`, {
      status: response.statusCode,
      ms: Math.round(ms * 10) / 10,
      bytes: exchange.sentBytes,
      ip: exchange.ip || 'unknown',
      route,
      aborted: response.writableFinished ? undefined : true,
    });
  }
}
