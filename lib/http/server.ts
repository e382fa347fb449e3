/**
 * The JSON API server. Plugins register routes (data, see `types.ts`); this
 * file enforces the HTTP contract around their handlers: JSON everywhere,
 * `API-Version`, ETag and 304, Cache-Control by tier, HEAD, 404/405, the body
 * limit and schema, the tier guards, and one access-log line per request.
 *
 * The per-request path is kept short, so that a cached answer costs little
 * more than writing it:
 * - Routing: a static path is one lookup in a map from the exact path (both slash forms
 *   of each static route) to its routes by method; only paths with parameters go to
 *   polka's router, which matches them against the compiled patterns in registration order.
 * - A request runs synchronously from the socket to the response. Only a guard,
 *   hook, body read or handler that returns a promise makes the rest wait for it.
 * - The query string is parsed only when a handler reads `request.query`.
 * - Each route's `Cache-Control` is worked out at registration. An answer whose
 *   body is a {@link SerializedJson} and that adds no headers of its own is written
 *   with the contract's headers, its ETag and its length as one list, without
 *   merging or validating them.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import polka, { type Handler as PolkaHandler } from 'polka';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import {
  ClientGoneError,
  DEFAULT_BODY_LIMIT,
  checkDeclaredLength,
  checkJsonContentType,
  compileBodySchema,
  parseJsonBody,
  readBody,
  type BodyValidator,
} from './body.js';
import { ApiError, invalidParameter, notFound, unavailable } from './errors.js';
import { etagOf, ifNoneMatchMatches } from './etag.js';
import { connectNotImplemented, expectationFailed, missingHost, protocolError } from './protocol-errors.js';
import { SerializedJson } from './serialized-json.js';
import type { ApiRequest, ApiResponse, HttpMethod, RouteDefinition, Tier, TierGuard } from './types.js';

export { paginate, type Page, type PaginateOptions } from './paging.js';

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
}

/**
 * Runs before every routed request, after the tier guard (so `request.tokenId` is set on
 * token routes) and before the body is read. Throw an ApiError to refuse (e.g. 429);
 * return headers to add to the response, whatever its outcome.
 */
export type RequestHook = (
  request: ApiRequest,
  route: RouteDefinition,
) => void | Record<string, string> | Promise<void | Record<string, string>>;

/** A registered route and the plugin that owns it. */
export interface RegisteredRoute {
  plugin: string;
  route: RouteDefinition;
}

interface RouteEntry extends RegisteredRoute {
  pattern: RegExp;
  /** method + pattern with parameter names erased: two routes with the same key collide. */
  key: string;
  /** Whether the path has `:param` segments (and so is matched by `pattern`, not looked up). */
  parameterised: boolean;
  validateBody: BodyValidator | undefined;
  /** `Cache-Control` of a successful answer, by the route's tier and method. */
  cacheControl: string;
}

/** A path's routes by method. */
type RoutesByMethod = Map<string, RouteEntry>;

const JSON_TYPE = 'application/json; charset=utf-8';
const API_VERSION = '1';
const DEFAULT_MAX_AGE = 10;
const INTERNAL_MESSAGE = 'Internal server error; the failure has been logged';
const INTERNAL_BODY = Buffer.from(JSON.stringify(new ApiError(500, 'internal', INTERNAL_MESSAGE).toBody()), 'utf8');
/** The headers of the plain 500, which must go out even when nothing else can be trusted. Never changed. */
const INTERNAL_HEADERS: string[] = [
  'Cache-Control',
  'no-store',
  'Content-Type',
  JSON_TYPE,
  'API-Version',
  API_VERSION,
  'Content-Length',
  String(INTERNAL_BODY.length),
];
const NO_STORE: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store' };
const SLASH = 0x2f;
/** Node's defaults: its connection checker looks for requests past these every 30 s. */
const DEFAULT_HEADERS_TIMEOUT = 60_000;
const DEFAULT_REQUEST_TIMEOUT = 300_000;
const DEFAULT_CHECK_INTERVAL = 30_000;

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

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'] as const;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Compile a route path (`/api/irc/channels/:name/`) to a case-sensitive pattern with named
 * groups holding the raw (still percent-encoded) parameters.
 */
function compilePath(plugin: string, route: RouteDefinition): { pattern: RegExp; key: string; parameterised: boolean } {
  const culprit = `route ${route.method} ${route.path} of plugin "${plugin}"`;
  if (!route.path.startsWith('/')) throw new Error(`The path of ${culprit} must start with "/"`);
  if (route.path === '/') return { pattern: /^\/$/, key: `${route.method} /`, parameterised: false };
  const trailingSlash = route.path.length > 1 && route.path.endsWith('/');
  const segments = route.path.split('/').slice(1, trailingSlash ? -1 : undefined);
  const names = new Set<string>();
  let source = '';
  let key = '';
  for (const segment of segments) {
    if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || names.has(name)) {
        throw new Error(
          `Parameter "${segment}" in ${culprit} must be a unique identifier (optional and wildcard segments are not supported)`,
        );
      }
      names.add(name);
      source += `/(?<${name}>[^/]+)`;
      key += '/:';
    } else {
      if (segment === '' || segment.includes('*') || segment.includes('?'))
        throw new Error(`Segment "${segment}" in ${culprit} is not supported; use static or :param segments`);
      source += `/${escapeRegExp(segment)}`;
      key += `/${segment}`;
    }
  }
  return {
    pattern: new RegExp(`^${source}${trailingSlash ? '/?' : ''}$`),
    key: `${route.method} ${key}/`,
    parameterised: names.size > 0,
  };
}

/** The request paths a static route answers: its own and, for a path ending in a slash, the one without. */
function staticForms(path: string): string[] {
  return path.length > 1 && path.endsWith('/') ? [path, path.slice(0, -1)] : [path];
}

/** Merge header sets case-insensitively into a flat `writeHead` list; a later set wins. */
function mergeHeaders(sets: readonly (Record<string, string> | undefined)[]): string[] {
  const merged = new Map<string, [string, string]>();
  for (const set of sets) {
    if (!set) continue;
    for (const name of Object.keys(set)) merged.set(name.toLowerCase(), [name, set[name]!]);
  }
  const flat: string[] = [];
  for (const [name, value] of merged.values()) flat.push(name, value);
  return flat;
}

/** A flat `writeHead` list without the header `lowerName` (given in lower case). */
function withoutHeader(flat: readonly string[], lowerName: string): string[] {
  const kept: string[] = [];
  for (let index = 0; index < flat.length; index += 2) {
    if (flat[index]!.toLowerCase() !== lowerName) kept.push(flat[index]!, flat[index + 1]!);
  }
  return kept;
}

/** Percent-decode each raw parameter exactly once; a malformed escape is the client's error. */
function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  if (!raw) return params;
  for (const name of Object.keys(raw)) {
    const value = raw[name]!;
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      throw invalidParameter(name, `is not a valid percent-encoded path segment: ${JSON.stringify(value)}`);
    }
  }
  return params;
}

function stageName(stage: Stage, entry: RouteEntry | undefined): string {
  switch (stage) {
    case 'router':
      return 'the router';
    case 'guard':
      return `the ${entry?.route.tier ?? 'tier'} guard`;
    case 'hook':
      return 'a request hook';
    case 'body':
      return 'the body reader';
    case 'handler':
      return `plugin "${entry?.plugin ?? '?'}"`;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** `query` with each repeated parameter set to its last value, in the place of its first. */
function lastValues(query: URLSearchParams): URLSearchParams {
  const keys = new Set(query.keys());
  if (keys.size === query.size) return query;
  for (const key of keys) {
    const values = query.getAll(key);
    if (values.length > 1) query.set(key, values[values.length - 1]!);
  }
  return query;
}

/** What a handler sees; the query string is parsed the first time it is read. */
class RoutedRequest implements ApiRequest {
  body: unknown = undefined;
  tokenId?: string;
  private parsedQuery: URLSearchParams | undefined;

  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    readonly search: string,
    readonly params: Record<string, string>,
    readonly headers: IncomingHttpHeaders,
    readonly ip: string,
  ) {}

  /** The parsed query string; a parameter given more than once keeps its last value, as Django's QueryDict.get. */
  get query(): URLSearchParams {
    return (this.parsedQuery ??= lastValues(new URLSearchParams(this.search)));
  }
}

/** The part of the server a request is in, for the failure log. */
type Stage = 'router' | 'guard' | 'hook' | 'body' | 'handler';

/** One request from arrival to the access log: where it is, and what it has collected on the way. */
class Exchange {
  stage: Stage = 'router';
  entry: RouteEntry | undefined = undefined;
  request: RoutedRequest | undefined = undefined;
  /** Headers the hooks returned; they ride on every answer, errors included. */
  hookHeaders: Record<string, string> | undefined = undefined;
  answer: ApiResponse | undefined = undefined;
  /** How many hooks this request runs, fixed when it starts; -1 before. */
  hookCount = -1;
  /** Body bytes sent, for the access log. */
  sentBytes = 0;
  /**
   * The client sent `Expect: 100-continue` with a body and waits for the 100, which goes out only when
   * the body is read. An answer given before then closes the connection: the body will not come.
   */
  awaitingContinue = false;

  constructor(
    readonly raw: IncomingMessage,
    readonly response: ServerResponse,
    readonly method: string,
    /** The path without query string or fragment, as received. */
    readonly path: string,
    readonly search: string,
    readonly started: number,
  ) {}
}

/** An open connection: how many of its requests are unanswered, and the last one that came in. */
interface Connection {
  pending: number;
  latest: Exchange | undefined;
  /** An error answer has been given for a request on it that could not be read; it is closing. */
  refused: boolean;
}

export class HttpServer {
  private readonly logger: Logger;
  private readonly bodyLimit: number;
  private readonly timeouts: { headers: number; request: number };
  private readonly entries: RouteEntry[] = [];
  /** Static routes by exact request path. */
  private readonly staticPaths = new Map<string, RoutesByMethod>();
  /**
   * polka matches the paths with parameters; it is used as a router only (the server runs its own
   * lean request path), so each route's polka handler is just a key to its entry. Of the routes that
   * match, the first registered answers.
   */
  private readonly router = polka();
  private readonly entryOf = new Map<PolkaHandler, RouteEntry>();
  private readonly guards = new Map<Tier, TierGuard>();
  private readonly hooks: RequestHook[] = [];
  /** Open connections, so close() can drop idle ones and a parser error can be told apart by request. */
  private readonly connections = new Map<Socket, Connection>();
  private server: http.Server | undefined;
  private closing = false;

  constructor(private readonly options: HttpServerOptions) {
    this.logger = options.logger.child('http');
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
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
  }

  /** Register a route; `plugin` names its owner in logs. Throws on a duplicate method and path, naming both owners. */
  route(plugin: string, route: RouteDefinition): void {
    const { pattern, key, parameterised } = compilePath(plugin, route);
    const existing = this.entries.find((entry) => entry.key === key);
    if (existing) {
      throw new Error(
        `Route ${route.method} ${route.path} of plugin "${plugin}" is already registered as ${existing.route.method} ${existing.route.path} by plugin "${existing.plugin}"`,
      );
    }
    let validateBody: BodyValidator | undefined;
    try {
      validateBody = route.body ? compileBodySchema(route.body) : undefined;
    } catch (error) {
      throw new Error(
        `The body schema of route ${route.method} ${route.path} of plugin "${plugin}" is invalid: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    let cacheControl = 'no-store';
    if (route.tier !== 'public') cacheControl = 'private, no-store';
    else if (route.method === 'GET') cacheControl = `public, max-age=${route.maxAge ?? DEFAULT_MAX_AGE}`;
    const entry: RouteEntry = { plugin, route, pattern, key, parameterised, validateBody, cacheControl };
    this.entries.push(entry);
    if (parameterised) {
      const key: PolkaHandler = () => undefined;
      this.entryOf.set(key, entry);
      this.router.add(route.method, pattern, key);
      return;
    }
    for (const form of staticForms(route.path)) {
      // A route with parameters registered earlier that matches this path keeps answering it.
      if (this.router.find(route.method, form).handlers.length > 0) continue;
      const byMethod = this.staticPaths.get(form) ?? new Map<string, RouteEntry>();
      if (!byMethod.has(route.method)) byMethod.set(route.method, entry);
      this.staticPaths.set(form, byMethod);
    }
  }

  /**
   * Set the check run before every route of a tier; until one is set, the token and staff tiers answer 503.
   * A public tier's guard is optional: without one, public routes are not checked at all.
   */
  setGuard(tier: Tier, guard: TierGuard): void {
    this.guards.set(tier, guard);
  }

  /** Add a hook run before every routed request; see {@link RequestHook}. */
  addHook(hook: RequestHook): void {
    this.hooks.push(hook);
  }

  /** Every registered route with its owner, in registration order (for the OpenAPI document). */
  routes(): readonly RegisteredRoute[] {
    return this.entries.map(({ plugin, route }) => ({ plugin, route }));
  }

  /** Start listening; with port 0 the answer carries the port the system picked. */
  async listen(): Promise<{ host: string; port: number; url: string }> {
    if (this.server)
      throw new Error(`The HTTP server is already listening on ${this.options.host}:${this.options.port}`);
    const { headers, request } = this.timeouts;
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
      this.connections.set(socket, { pending: 0, latest: undefined, refused: false });
      socket.once('close', () => this.connections.delete(socket));
    });
    this.server = server;
    this.closing = false;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.options.port, this.options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      this.server = undefined;
      throw new Error(`Cannot listen on ${this.options.host}:${this.options.port}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    server.on('error', (error) => this.logger.error('server error', { error: errorMessage(error) }));
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.logger.info('listening', { url: `http://${host}:${address.port}` });
    return { host: address.address, port: address.port, url: `http://${host}:${address.port}` };
  }

  /** Stop accepting connections, drop idle keep-alive ones, and resolve once the last one is gone. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.closing = true;
    const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    for (const [socket, { pending }] of this.connections) {
      if (pending === 0) socket.destroy();
    }
    await closed;
    this.server = undefined;
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
      connection = { pending: 0, latest: undefined, refused: false };
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
    const exchange = new Exchange(raw, response, raw.method ?? '?', path, search, started);
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
      this.answerFailure(exchange, refusal);
      return;
    }
    const entry = this.find(exchange.method, path);
    if (entry) {
      exchange.entry = entry;
      this.run(exchange, 0, false, undefined);
    } else {
      this.answerUnrouted(exchange);
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
      this.answerFailure(reading, refusal);
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

  /** The route answering `method` on `path`; HEAD is answered by the GET route. */
  private find(method: string, path: string): RouteEntry | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const entry = this.staticPaths.get(path)?.get(wanted);
    if (entry) return entry;
    if (this.entryOf.size === 0) return undefined;
    // polka lists every matching route in registration order; the first one answers.
    const first = this.router.find(wanted, path).handlers[0];
    return first ? this.entryOf.get(first) : undefined;
  }

  /**
   * Run a routed request's steps from `step`: the tier guard (0), each hook (1..n), the body
   * (n + 1) and the handler (n + 2). A step that returns a promise suspends the run, which
   * resumes with the step's value once it settles. `resumed` says that `step` has already
   * run and `value` is its outcome.
   */
  private run(exchange: Exchange, step: number, resumed: boolean, value: unknown): void {
    const entry = exchange.entry!;
    const hooks = this.hooks;
    // Hooks added while a request waits apply from the next request on.
    if (exchange.hookCount < 0) exchange.hookCount = hooks.length;
    const last = exchange.hookCount + 2;
    try {
      exchange.request ??= this.requestOf(exchange, entry);
      for (; step <= last; step++) {
        let outcome: unknown = value;
        if (!resumed) {
          outcome = this.start(exchange, entry, step, exchange.hookCount, hooks);
          if (isPromiseLike(outcome)) {
            const suspended = step;
            // A hand-written thenable may call back more than once; only its first settlement counts.
            let settledOnce = false;
            outcome.then(
              (settled) => {
                if (settledOnce) return;
                settledOnce = true;
                this.run(exchange, suspended, true, settled);
              },
              (error: unknown) => {
                if (settledOnce) return;
                settledOnce = true;
                this.answerFailure(exchange, error);
              },
            );
            return;
          }
        }
        resumed = false;
        this.settle(exchange, entry, step, last, outcome);
      }
      this.answer(exchange, entry, exchange.answer!);
    } catch (error) {
      this.answerFailure(exchange, error);
    }
  }

  private requestOf(exchange: Exchange, entry: RouteEntry): RoutedRequest {
    const { raw } = exchange;
    // The raw (still encoded) match is decoded once here, so a malformed escape is told apart from a literal "%".
    const params = entry.parameterised ? decodeParams(entry.pattern.exec(exchange.path)?.groups) : {};
    const ip = raw.socket.remoteAddress ?? '';
    return new RoutedRequest(entry.route.method, exchange.path, exchange.search, params, raw.headers, ip);
  }

  /** Begin one step; its outcome (or a promise of it) goes to {@link settle}. */
  private start(
    exchange: Exchange,
    entry: RouteEntry,
    step: number,
    hookCount: number,
    hooks: readonly RequestHook[],
  ): unknown {
    const { route } = entry;
    const request = exchange.request!;
    if (step === 0) {
      const guard = this.guards.get(route.tier);
      if (route.tier === 'public' && !guard) return undefined;
      exchange.stage = 'guard';
      if (!guard)
        throw unavailable(
          `${route.tier === 'token' ? 'Token' : 'Staff'} routes are not available yet: no access guard is configured`,
        );
      return guard(request, route);
    }
    if (step <= hookCount) {
      exchange.stage = 'hook';
      return hooks[step - 1]!(request, route);
    }
    if (step === hookCount + 1) {
      if (route.method !== 'POST' && route.method !== 'PATCH') return undefined;
      exchange.stage = 'body';
      checkJsonContentType(exchange.raw);
      if (exchange.awaitingContinue) {
        // Ask for the body only once it is wanted, so a client refused (401, 413, 415, ...) never sends it.
        checkDeclaredLength(exchange.raw, this.bodyLimit);
        exchange.awaitingContinue = false;
        exchange.response.writeContinue();
      }
      return readBody(exchange.raw, this.bodyLimit);
    }
    exchange.stage = 'handler';
    return route.handler(request);
  }

  /** Take one step's outcome: hook headers, the parsed body, or the handler's answer. */
  private settle(exchange: Exchange, entry: RouteEntry, step: number, last: number, outcome: unknown): void {
    if (step === last) {
      exchange.answer = outcome as ApiResponse;
    } else if (step === last - 1) {
      if (outcome !== undefined) exchange.request!.body = parseJsonBody(outcome as Buffer, entry.validateBody);
    } else if (step > 0 && outcome !== undefined && outcome !== null) {
      exchange.hookHeaders = Object.assign(exchange.hookHeaders ?? {}, outcome as Record<string, string>);
    }
  }

  /** Write a successful answer: JSON, cache headers by tier, and for a GET 200 the ETag and 304. */
  private answer(exchange: Exchange, entry: RouteEntry, answer: ApiResponse): void {
    const { route, cacheControl } = entry;
    const status = answer.status ?? 200;
    const { body } = answer;
    if (body instanceof SerializedJson && answer.headers === undefined && exchange.hookHeaders === undefined) {
      // The fast path: every header is known to be valid, so nothing is merged or checked.
      if (route.method === 'GET' && status === 200) {
        if (ifNoneMatchMatches(exchange.raw.headers['if-none-match'], body.etag)) {
          this.write(exchange, 304, undefined, [
            'Cache-Control',
            cacheControl,
            'ETag',
            body.etag,
            'API-Version',
            API_VERSION,
          ]);
          return;
        }
        this.write(exchange, 200, body.bytes, [
          'Cache-Control',
          cacheControl,
          'ETag',
          body.etag,
          'Content-Type',
          JSON_TYPE,
          'API-Version',
          API_VERSION,
          'Content-Length',
          body.contentLength,
        ]);
        return;
      }
    }
    // Serialize before anything is written, so a body that cannot be serialized still gets a clean 500.
    let bytes: Buffer | undefined;
    let etag: string | undefined;
    if (status === 204) {
      // No content: a body the handler gave anyway is not sent, nor its length.
    } else if (body instanceof SerializedJson) {
      bytes = body.bytes;
      etag = body.etag;
    } else {
      bytes = Buffer.from(JSON.stringify(body ?? null), 'utf8');
    }
    const base: Record<string, string> = { 'Cache-Control': cacheControl };
    let answerStatus = status;
    if (route.method === 'GET' && status === 200 && bytes) {
      base.ETag = etag ??= etagOf(bytes);
      if (ifNoneMatchMatches(exchange.raw.headers['if-none-match'], etag)) {
        answerStatus = 304;
        bytes = undefined;
      }
    }
    this.send(exchange, answerStatus, bytes, [base, exchange.hookHeaders, answer.headers]);
  }

  /**
   * Answer a thrown value: an ApiError as itself, anything else as a logged 500 that reveals
   * nothing. It never throws: if even the error answer cannot be built (an error that cannot be
   * turned into text, details that cannot be serialised), the plain 500 goes out instead, so no
   * request is left unanswered.
   */
  private answerFailure(exchange: Exchange, error: unknown): void {
    try {
      this.answerError(exchange, error);
    } catch (failure) {
      this.logger.error(`${exchange.method} ${exchange.path}: the error answer could not be built`, {
        error: errorMessage(failure),
      });
      this.write(exchange, 500, INTERNAL_BODY, INTERNAL_HEADERS);
    }
  }

  private answerError(exchange: Exchange, error: unknown): void {
    if (error instanceof ClientGoneError) return;
    let apiError: ApiError;
    if (error instanceof ApiError) {
      apiError = error;
    } else {
      const { entry } = exchange;
      const where = entry ? `${entry.route.method} ${entry.route.path}` : exchange.path;
      this.logger.error(`${where} failed in ${stageName(exchange.stage, entry)}`, {
        plugin: entry?.plugin,
        error: errorMessage(error),
      });
      apiError = new ApiError(500, 'internal', INTERNAL_MESSAGE);
    }
    const bytes = Buffer.from(JSON.stringify(apiError.toBody()), 'utf8');
    this.send(exchange, apiError.status, bytes, [exchange.hookHeaders, apiError.headers, NO_STORE]);
  }

  /** 405 with `Allow` when another method serves the path, else 404. */
  private answerUnrouted(exchange: Exchange): void {
    const { path } = exchange;
    const methods = new Set<string>();
    for (const { route, pattern } of this.entries) {
      if (pattern.test(path)) {
        methods.add(route.method);
        if (route.method === 'GET') methods.add('HEAD');
      }
    }
    if (methods.size === 0) {
      this.answerFailure(exchange, notFound('not_found', `No API path matches ${path}`));
      return;
    }
    const allow = METHOD_ORDER.filter((method) => methods.has(method)).join(', ');
    const error = new ApiError(
      405,
      'method_not_allowed',
      `${exchange.method} is not allowed on ${path}; allowed: ${allow}`,
      undefined,
      { Allow: allow },
    );
    this.answerFailure(exchange, error);
  }

  /**
   * Write an answer whose headers came from handlers, hooks or errors: they are checked
   * first, and headers Node would refuse (a bug) turn into a plain 500. `Content-Type`,
   * `API-Version` and `Content-Length` are always the server's; a 304 has neither
   * `Content-Type` nor `Content-Length`.
   */
  private send(
    exchange: Exchange,
    status: number,
    bytes: Buffer | undefined,
    headerSets: (Record<string, string> | undefined)[],
  ): void {
    const contract: Record<string, string> = { 'Content-Type': JSON_TYPE, 'API-Version': API_VERSION };
    if (bytes && status !== 304) contract['Content-Length'] = String(bytes.length);
    let flat = mergeHeaders([...headerSets, contract]);
    // RFC 9110 §15.4.5: a 304 should not carry representation metadata, and without a body there is nothing to type.
    if (status === 304) flat = withoutHeader(flat, 'content-type');
    try {
      for (let index = 0; index < flat.length; index += 2) {
        http.validateHeaderName(flat[index]!);
        http.validateHeaderValue(flat[index]!, flat[index + 1]!);
      }
    } catch (error) {
      this.logger.error(`${exchange.method} ${exchange.path} produced an invalid response header`, {
        error: errorMessage(error),
      });
      status = 500;
      bytes = INTERNAL_BODY;
      flat = INTERNAL_HEADERS;
    }
    this.write(exchange, status, bytes, flat);
  }

  /**
   * The one place a response is written, from a flat list of valid headers. It never
   * throws: once a response has started it is not written again.
   */
  private write(exchange: Exchange, status: number, bytes: Buffer | undefined, headers: string[]): void {
    const { response } = exchange;
    // The client is gone: nobody to answer.
    if (response.destroyed) return;
    if (response.headersSent) {
      this.logger.warn(`${exchange.method} ${exchange.path} was answered already; dropped a second answer`, {
        status,
      });
      return;
    }
    if (exchange.awaitingContinue) response.setHeader('Connection', 'close');
    response.writeHead(status, headers);
    const sent = exchange.method === 'HEAD' || status === 304 ? undefined : bytes;
    exchange.sentBytes = sent?.length ?? 0;
    response.end(sent);
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
    // Never headers or bodies: they carry tokens and passwords. Nor the query string, for the same reason.
    this.logger.info(`${exchange.method} ${exchange.path}`, {
      status: response.statusCode,
      ms: Math.round((performance.now() - exchange.started) * 10) / 10,
      bytes: exchange.sentBytes,
      ip: socket.remoteAddress ?? 'unknown',
      aborted: response.writableFinished ? undefined : true,
    });
  }
}
