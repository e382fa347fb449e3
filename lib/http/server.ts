/**
 * The JSON API server. Plugins register routes (data, see `types.ts`); this
 * file enforces the HTTP contract around their handlers: JSON everywhere,
 * `API-Version`, ETag and 304, Cache-Control by tier, HEAD, 404/405, the body
 * limit and schema, the tier guards, and one access-log line per request.
 *
 * polka does the routing. Each route is registered once, as a case-sensitive
 * regular expression whose trailing slash is optional, so both path forms reach
 * the same handler (registering both string forms would make polka collect two
 * handlers for one request, since its string patterns already accept either).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import polka, { type Request as PolkaRequest } from 'polka';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import {
  ClientGoneError,
  DEFAULT_BODY_LIMIT,
  checkJsonContentType,
  compileBodySchema,
  parseJsonBody,
  readBody,
  type BodyValidator,
} from './body.js';
import { ApiError, invalidParameter, notFound, unavailable } from './errors.js';
import { etagOf, ifNoneMatchMatches } from './etag.js';
import { SerializedJson } from './serialized-json.js';
import type { ApiRequest, RouteDefinition, TierGuard } from './types.js';

export { paginate, type Page, type PaginateOptions } from './paging.js';

export interface HttpServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Writes the access log and handler failures, as source `http`. */
  logger: Logger;
  /** The largest accepted request body in bytes; default 16 KiB. */
  bodyLimit?: number;
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
  validateBody: BodyValidator | undefined;
}

const DEFAULT_MAX_AGE = 10;
const INTERNAL_MESSAGE = 'Internal server error; the failure has been logged';
const INTERNAL_BODY = Buffer.from(JSON.stringify(new ApiError(500, 'internal', INTERNAL_MESSAGE).toBody()), 'utf8');
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'] as const;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Compile a route path (`/api/irc/channels/:name/`) to a case-sensitive pattern with named
 * groups holding the raw (still percent-encoded) parameters.
 */
function compilePath(plugin: string, route: RouteDefinition): { pattern: RegExp; key: string } {
  const culprit = `route ${route.method} ${route.path} of plugin "${plugin}"`;
  if (!route.path.startsWith('/')) throw new Error(`The path of ${culprit} must start with "/"`);
  if (route.path === '/') return { pattern: /^\/$/, key: `${route.method} /` };
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
  return { pattern: new RegExp(`^${source}${trailingSlash ? '/?' : ''}$`), key: `${route.method} ${key}/` };
}

/** Merge header sets case-insensitively; a later set wins. */
function mergeHeaders(...sets: Record<string, string>[]): Record<string, string> {
  const merged = new Map<string, [string, string]>();
  for (const set of sets) {
    for (const [name, value] of Object.entries(set)) merged.set(name.toLowerCase(), [name, value]);
  }
  return Object.fromEntries(merged.values());
}

/** Percent-decode each raw parameter exactly once; a malformed escape is the client's error. */
function decodeParams(raw: Record<string, string> | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    try {
      params[name] = decodeURIComponent(value);
    } catch {
      throw invalidParameter(name, `is not a valid percent-encoded path segment: ${JSON.stringify(value)}`);
    }
  }
  return params;
}

export class HttpServer {
  private readonly logger: Logger;
  private readonly bodyLimit: number;
  private readonly entries: RouteEntry[] = [];
  private readonly guards = new Map<'token' | 'staff', TierGuard>();
  private readonly hooks: RequestHook[] = [];
  private readonly app = polka({
    onNoMatch: (request, response) => this.answerUnrouted(request, response),
    onError: (error, request, response) =>
      this.answerFailure(response, error, 'the router', `${request.method} ${request.path}`, {}),
  });
  /** Open connections and how many of their requests are unanswered, so close() can drop idle ones. */
  private readonly sockets = new Map<Socket, number>();
  /** Body bytes sent per response, for the access log. */
  private readonly sentBytes = new WeakMap<ServerResponse, number>();
  private server: http.Server | undefined;
  private closing = false;

  constructor(private readonly options: HttpServerOptions) {
    this.logger = options.logger.child('http');
    this.bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  }

  /** Register a route; `plugin` names its owner in logs. Throws on a duplicate method and path, naming both owners. */
  route(plugin: string, route: RouteDefinition): void {
    const { pattern, key } = compilePath(plugin, route);
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
    const entry: RouteEntry = { plugin, route, pattern, key, validateBody };
    this.entries.push(entry);
    this.app.add(route.method, pattern, (request, response) => this.dispatch(entry, request, response));
  }

  /** Set the check run before every route of a tier; until one is set, that tier answers 503. */
  setGuard(tier: 'token' | 'staff', guard: TierGuard): void {
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
    const server = http.createServer((request, response) => this.accept(request, response));
    server.on('connection', (socket: Socket) => {
      this.sockets.set(socket, 0);
      socket.once('close', () => this.sockets.delete(socket));
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
    for (const [socket, pending] of this.sockets) {
      if (pending === 0) socket.destroy();
    }
    await closed;
    this.server = undefined;
  }

  /** Every request starts here: connection bookkeeping and the access log, then polka. */
  private accept(request: IncomingMessage, response: ServerResponse): void {
    const started = performance.now();
    const socket = request.socket;
    this.sockets.set(socket, (this.sockets.get(socket) ?? 0) + 1);
    // While closing, every answer also closes its connection.
    if (this.closing) response.setHeader('Connection', 'close');
    response.once('close', () => {
      const pending = (this.sockets.get(socket) ?? 1) - 1;
      if (this.sockets.has(socket)) this.sockets.set(socket, pending);
      if (this.closing && pending === 0) socket.destroy();
      const path = (request.url ?? '').split('?')[0];
      // Never headers or bodies: they carry tokens and passwords. Nor the query string, for the same reason.
      this.logger.info(`${request.method ?? '?'} ${path}`, {
        status: response.statusCode,
        ms: Math.round((performance.now() - started) * 10) / 10,
        bytes: this.sentBytes.get(response) ?? 0,
        ip: socket.remoteAddress ?? 'unknown',
        aborted: response.writableFinished ? undefined : true,
      });
    });
    this.app.handler(request, response);
  }

  private async dispatch(entry: RouteEntry, raw: PolkaRequest, response: ServerResponse): Promise<void> {
    const { route } = entry;
    const where = `${route.method} ${route.path}`;
    let stage = 'the router';
    const extraHeaders: Record<string, string> = {};
    try {
      const request: ApiRequest = {
        method: route.method,
        path: raw.path,
        // polka decodes its own params too, but leaves a malformed escape as it was; decoding the raw match once here tells the two apart.
        params: decodeParams(entry.pattern.exec(raw.path)?.groups),
        query: new URLSearchParams(raw.search),
        headers: raw.headers,
        ip: raw.socket.remoteAddress ?? '',
        body: undefined,
      };
      if (route.tier !== 'public') {
        stage = `the ${route.tier} guard`;
        const guard = this.guards.get(route.tier);
        if (!guard)
          throw unavailable(
            `${route.tier === 'token' ? 'Token' : 'Staff'} routes are not available yet: no access guard is configured`,
          );
        await guard(request, route);
      }
      stage = 'a request hook';
      for (const hook of this.hooks) Object.assign(extraHeaders, await hook(request, route));
      if (route.method === 'POST' || route.method === 'PATCH') {
        stage = 'the body reader';
        checkJsonContentType(raw);
        request.body = parseJsonBody(await readBody(raw, this.bodyLimit), entry.validateBody);
      }
      stage = `plugin "${entry.plugin}"`;
      const answer = await route.handler(request);
      this.answer(
        raw,
        response,
        route,
        answer.status ?? 200,
        answer.body,
        mergeHeaders(extraHeaders, answer.headers ?? {}),
      );
    } catch (error) {
      this.answerFailure(response, error, stage, where, extraHeaders, entry.plugin);
    }
  }

  /** Write a successful answer: JSON, cache headers by tier, and for a GET 200 the ETag and 304. */
  private answer(
    raw: IncomingMessage,
    response: ServerResponse,
    route: RouteDefinition,
    status: number,
    body: unknown,
    headers: Record<string, string>,
  ): void {
    // Serialize before anything is written, so a body that cannot be serialized still gets a clean 500.
    const serialized = body instanceof SerializedJson ? body : undefined;
    let bytes: Buffer | undefined;
    if (status !== 204) bytes = serialized ? serialized.bytes : Buffer.from(JSON.stringify(body ?? null), 'utf8');
    let cacheControl = 'no-store';
    if (route.tier !== 'public') cacheControl = 'private, no-store';
    else if (route.method === 'GET') cacheControl = `public, max-age=${route.maxAge ?? DEFAULT_MAX_AGE}`;
    const base: Record<string, string> = { 'Cache-Control': cacheControl };
    if (route.method === 'GET' && status === 200 && bytes) {
      const etag = serialized?.etag ?? etagOf(bytes);
      base.ETag = etag;
      if (ifNoneMatchMatches(raw.headers['if-none-match'], etag)) {
        this.send(raw, response, 304, undefined, mergeHeaders(base, headers));
        return;
      }
    }
    this.send(raw, response, status, bytes, mergeHeaders(base, headers));
  }

  /** Answer a thrown value: an ApiError as itself, anything else as a logged 500 that reveals nothing. */
  private answerFailure(
    response: ServerResponse,
    error: unknown,
    stage: string,
    where: string,
    headers: Record<string, string>,
    plugin?: string,
  ): void {
    if (error instanceof ClientGoneError) return;
    let apiError: ApiError;
    if (error instanceof ApiError) {
      apiError = error;
    } else {
      this.logger.error(`${where} failed in ${stage}`, { plugin, error: errorMessage(error) });
      apiError = new ApiError(500, 'internal', INTERNAL_MESSAGE);
    }
    const bytes = Buffer.from(JSON.stringify(apiError.toBody()), 'utf8');
    this.send(
      response.req,
      response,
      apiError.status,
      bytes,
      mergeHeaders(headers, apiError.headers, { 'Cache-Control': 'no-store' }),
    );
  }

  /** 405 with `Allow` when another method serves the path, else 404. */
  private answerUnrouted(raw: PolkaRequest, response: ServerResponse): void {
    const methods = new Set<string>();
    for (const { route, pattern } of this.entries) {
      if (pattern.test(raw.path)) {
        methods.add(route.method);
        if (route.method === 'GET') methods.add('HEAD');
      }
    }
    if (methods.size === 0) {
      this.answerFailure(
        response,
        notFound('not_found', `No API path matches ${raw.path}`),
        'the router',
        raw.path,
        {},
      );
      return;
    }
    const allow = METHOD_ORDER.filter((method) => methods.has(method)).join(', ');
    const error = new ApiError(
      405,
      'method_not_allowed',
      `${raw.method ?? 'This method'} is not allowed on ${raw.path}; allowed: ${allow}`,
      undefined,
      { Allow: allow },
    );
    this.answerFailure(response, error, 'the router', raw.path, {});
  }

  /**
   * The one place a response is written. It never throws: once a response has started it
   * is not written again, and headers Node would refuse (a bug) turn into a plain 500.
   */
  private send(
    raw: IncomingMessage,
    response: ServerResponse,
    status: number,
    bytes: Buffer | undefined,
    headers: Record<string, string>,
  ): void {
    // The client is gone: nobody to answer.
    if (response.destroyed) return;
    const path = (raw.url ?? '').split('?')[0];
    if (response.headersSent) {
      this.logger.warn(`${raw.method ?? '?'} ${path} was answered already; dropped a second answer`, { status });
      return;
    }
    let allHeaders = mergeHeaders(headers, { 'Content-Type': 'application/json; charset=utf-8', 'API-Version': '1' });
    try {
      for (const [name, value] of Object.entries(allHeaders)) {
        http.validateHeaderName(name);
        http.validateHeaderValue(name, value);
      }
    } catch (error) {
      this.logger.error(`${raw.method ?? '?'} ${path} produced an invalid response header`, {
        error: errorMessage(error),
      });
      status = 500;
      bytes = INTERNAL_BODY;
      allHeaders = {
        'Cache-Control': 'no-store',
        'Content-Type': 'application/json; charset=utf-8',
        'API-Version': '1',
      };
    }
    if (bytes && status !== 304) allHeaders = mergeHeaders(allHeaders, { 'Content-Length': String(bytes.length) });
    response.writeHead(status, allHeaders);
    const sent = raw.method === 'HEAD' || status === 304 ? undefined : bytes;
    this.sentBytes.set(response, sent?.length ?? 0);
    response.end(sent);
  }
}
