/**
 * What the front does with a request (it runs on its own thread, lib/http/front/thread.ts): a public
 * GET or HEAD it holds a reusable answer for is answered at once from its store, as long as the client's
 * rate limit allows (client-budgets.ts); everything else goes to the bot's HTTP server over a private
 * socket, body and all, and its answer comes back the same way. An answer the bot marks reusable
 * (`X-Front-Reuse-Ms`) is kept; once it is older than that, it is still served while one renewal is
 * under way, so no client waits for the bot's thread to rebuild it.
 *
 * The bot learns from private headers, which the front always writes itself: `X-Front-Client` (the
 * client's address), `X-Front-Served` (answers given to that client from the store since its last
 * request to the bot, for its rate limit) and `X-Front-Renew` (a renewal, for no client).
 */
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { clientGroup } from '../client-address.js';
import { ApiError } from '../errors.js';
import { ifNoneMatchMatches } from '../etag.js';
import type { Exchange } from '../exchange.js';
import { STREAM_END_GRACE_MS, type Respond } from '../respond.js';
import { AnswerCache, type StoredAnswer } from './answer-cache.js';
import { ClientBudgets } from './client-budgets.js';
import {
  FRONT_CLIENT,
  FRONT_COUNTED,
  FRONT_RENEW,
  FRONT_REUSE_MS,
  FRONT_ROUTE,
  FRONT_SECURE,
  FRONT_SERVED,
} from './messages.js';

/** Headers that belong to one connection (RFC 9110 §7.6.1), not to the request or answer passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);
/** Headers that describe a body, which a 304 does not carry. */
const ENTITY_HEADERS = new Set(['content-type', 'content-length']);
/** Headers the front writes for each answer it gives from its store. */
const PER_ANSWER = new Set(['date', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']);
const SWEEP_MS = 60_000;
/** Answers about the client, not about the path: 401, 403, 429. */
const CLIENT_STATUSES = new Set([401, 403, 429]);

function isPrivate(name: string): boolean {
  return name.startsWith('x-front-');
}

/** The answer's headers as a flat list, without those of the connection and the front's own. */
function answerHeaders(answer: IncomingMessage, leaveOut?: Set<string>): string[] {
  const flat: string[] = [];
  const raw = answer.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || isPrivate(name) || name === 'transfer-encoding' || leaveOut?.has(name)) continue;
    flat.push(raw[index]!, raw[index + 1]!);
  }
  return flat;
}

function rateHeaders(headers: IncomingHttpHeaders): string[] {
  const flat: string[] = [];
  for (const [name, spelled] of [
    ['ratelimit-limit', 'RateLimit-Limit'],
    ['ratelimit-remaining', 'RateLimit-Remaining'],
    ['ratelimit-reset', 'RateLimit-Reset'],
  ] as const) {
    const value = headers[name];
    if (typeof value === 'string') flat.push(spelled, value);
  }
  return flat;
}

/** The answer's `max-age` in milliseconds, when it has one. */
function maxAgeOf(answer: IncomingMessage): number | undefined {
  const match = /max-age=(\d+)/.exec(answer.headers['cache-control'] ?? '');
  return match ? Number(match[1]) * 1000 : undefined;
}

function stored(answer: IncomingMessage, body: Buffer): StoredAnswer {
  const headers = answerHeaders(answer, PER_ANSWER);
  const notModifiedHeaders: string[] = [];
  for (let index = 0; index < headers.length; index += 2) {
    const name = headers[index]!.toLowerCase();
    if (name !== 'content-type' && name !== 'content-length')
      notModifiedHeaders.push(headers[index]!, headers[index + 1]!);
  }
  const etag = answer.headers.etag;
  const route = answer.headers[FRONT_ROUTE];
  return {
    status: answer.statusCode ?? 200,
    headers,
    notModifiedHeaders,
    etag,
    body,
    route: typeof route === 'string' ? route : undefined,
  };
}

export interface FrontDispatchOptions {
  /** The bot's private socket. */
  socketPath: string;
  clock?: () => number;
  cache?: AnswerCache;
}

/**
 * The key of a client's budget: an IPv6 client's /64, as the public rate limit counts it by default
 * (`plugins.tokens.rate_limit.ipv6_prefix_length`), so that the addresses of one network spend one budget.
 */
function budgetKey(ip: string): string {
  return clientGroup(ip, 64);
}

export class FrontDispatch {
  readonly cache: AnswerCache;
  readonly budgets = new ClientBudgets();
  /** The streams passed on to clients now ({@link endStreams}). */
  private readonly streams = new Set<ServerResponse>();
  // No cap on connections to the bot: a cap would let a few slow clients hold up every other request.
  private readonly agent = new http.Agent({ keepAlive: true });
  private readonly clock: () => number;
  private sweptAt = 0;

  constructor(private readonly options: FrontDispatchOptions) {
    this.cache = options.cache ?? new AnswerCache();
    this.clock = options.clock ?? (() => performance.now());
  }

  /** Answer `exchange` from the store, or pass it on to the bot. */
  dispatch(exchange: Exchange, respond: Respond): void {
    const now = this.clock();
    if (now - this.sweptAt > SWEEP_MS) {
      this.sweptAt = now;
      this.budgets.sweep(now);
    }
    const key = this.storeKey(exchange);
    if (key !== undefined) {
      const found = this.cache.get(key, now);
      if (found) {
        const rate = this.budgets.spend(budgetKey(exchange.ip), now);
        if (found.renew) this.renew(key);
        if (rate) {
          this.serve(exchange, respond, found.answer, rate);
          return;
        }
      }
    }
    this.forward(exchange, respond, key);
  }

  /**
   * The front is closing, after the bot ended its streams: a stream whose client has not taken it all within
   * `graceMs` is cut off. A paused client's connection never reads the bot's end (nor its closing), so it would
   * hold the close.
   */
  endStreams(graceMs = STREAM_END_GRACE_MS): void {
    const open = [...this.streams];
    if (open.length === 0) return;
    setTimeout(() => {
      for (const response of open) if (!response.writableFinished) response.destroy();
    }, graceMs).unref();
  }

  /** Stop: drop the kept connections to the bot. */
  close(): void {
    this.agent.destroy();
  }

  /** A request whose answer may come from the store: a public read that carries no credentials and no body. */
  private storeKey(exchange: Exchange): string | undefined {
    const { method, raw } = exchange;
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    const { headers } = raw;
    if (headers.authorization !== undefined || headers.cookie !== undefined) return undefined;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return undefined;
    return exchange.path + exchange.search;
  }

  private serve(exchange: Exchange, respond: Respond, answer: StoredAnswer, rate: readonly string[]): void {
    exchange.routeName = answer.route;
    if (answer.etag !== undefined && ifNoneMatchMatches(exchange.raw.headers['if-none-match'], answer.etag)) {
      respond.write(exchange, 304, undefined, [...answer.notModifiedHeaders, ...rate]);
      return;
    }
    respond.write(exchange, answer.status, answer.body, [...answer.headers, ...rate]);
  }

  private headersFor(exchange: Exchange, key: string | undefined): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    const raw = exchange.raw.rawHeaders;
    for (let index = 0; index < raw.length; index += 2) {
      const name = raw[index]!.toLowerCase();
      if (HOP_BY_HOP.has(name) || isPrivate(name)) continue;
      // A reusable answer is asked for whole and as it is (not gzip'd): the front answers the condition itself,
      // and keeps one form of the answer for every client.
      if (key !== undefined && (name === 'if-none-match' || name === 'accept-encoding')) continue;
      const value = raw[index + 1]!;
      const before = headers[name];
      headers[name] = before === undefined ? value : `${String(before)}, ${value}`;
    }
    headers[FRONT_CLIENT] = exchange.ip;
    if (exchange.secure) headers[FRONT_SECURE] = '1';
    return headers;
  }

  private forward(exchange: Exchange, respond: Respond, key: string | undefined): void {
    const { raw, response } = exchange;
    const budget = budgetKey(exchange.ip);
    const headers = this.headersFor(exchange, key);
    const served = this.budgets.takeServed(budget);
    headers[FRONT_SERVED] = String(served);
    const request = http.request({
      socketPath: this.options.socketPath,
      agent: this.agent,
      method: exchange.method,
      path: exchange.path + exchange.search,
      headers,
    });
    let continued = false;
    let answered = false;
    const failed = (error: Error) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      respond.fail(exchange, new ApiError(503, 'unavailable', `The bot did not answer: ${error.message}`));
    };
    request.on('error', (error) => {
      // Once the bot answered, a failure to send it the rest of a body (it closed after a 413) is no news.
      if (answered) return;
      this.budgets.putBack(budget, served);
      failed(error);
    });
    // The client went away, or the front answered it itself (its own 408): the request to the bot goes too.
    response.on('close', () => {
      if (!answered || !raw.complete || !response.writableFinished) request.destroy();
    });
    request.on('response', (answer) => {
      answered = true;
      const route = answer.headers[FRONT_ROUTE];
      if (typeof route === 'string') exchange.routeName = route;
      if (answer.headers[FRONT_COUNTED] !== '1') this.budgets.putBack(budget, served);
      // The bot answered without asking for the body: the request to it can never be completed.
      if (exchange.awaitingContinue && !continued) answer.once('end', () => request.destroy());
      const reuseMs = Number(answer.headers[FRONT_REUSE_MS]);
      const reusable = key !== undefined && exchange.method === 'GET' && answer.statusCode === 200 && reuseMs > 0;
      if (!reusable) {
        // The kept answer is no longer the bot's, unless this one was about the client alone.
        if (key !== undefined && exchange.method === 'GET' && !CLIENT_STATUSES.has(answer.statusCode ?? 0)) {
          this.cache.drop(key);
        }
        this.budgets.forget(budget);
        this.pass(exchange, answer, continued, key !== undefined);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('error', failed);
      answer.on('end', () => {
        const kept = stored(answer, Buffer.concat(chunks));
        this.cache.put(key, kept, reuseMs, this.clock(), maxAgeOf(answer));
        this.budgets.learn(budget, answer.headers, this.clock());
        this.serve(exchange, respond, kept, rateHeaders(answer.headers));
      });
    });
    if (exchange.awaitingContinue) {
      // The bot asks for the body when it wants it; so does the front, of the client.
      request.once('continue', () => {
        continued = true;
        response.writeContinue();
        raw.pipe(request);
      });
      request.flushHeaders();
    } else {
      raw.pipe(request);
    }
  }

  /** Pass an answer on as it comes; `conditional`: the client's `If-None-Match` was kept from the bot. */
  private pass(exchange: Exchange, answer: IncomingMessage, continued: boolean, conditional: boolean): void {
    const { response } = exchange;
    // Gone, or answered already (the front's own timeout answered a request whose body never came).
    if (response.destroyed || response.headersSent) {
      answer.resume();
      return;
    }
    if (
      conditional &&
      answer.statusCode === 200 &&
      typeof answer.headers.etag === 'string' &&
      ifNoneMatchMatches(exchange.raw.headers['if-none-match'], answer.headers.etag)
    ) {
      // The front asked for the whole answer, which it did not keep: the client still gets its 304.
      answer.resume();
      response.writeHead(304, answerHeaders(answer, ENTITY_HEADERS));
      response.end();
      return;
    }
    // The client waits for a 100 that never came: the body it holds will not be read. Or the bot closes
    // after its answer (it could not read the request): so does the front, with the client.
    if ((exchange.awaitingContinue && !continued) || answer.headers.connection === 'close') {
      response.setHeader('Connection', 'close');
    }
    response.writeHead(answer.statusCode ?? 502, answerHeaders(answer));
    answer.on('data', (chunk: Buffer) => (exchange.sentBytes += chunk.length));
    answer.on('error', () => response.destroy());
    // A stream (the bot marks each for nginx): kept so that closing can cut off a client that does not read it.
    if (answer.headers['x-accel-buffering'] === 'no') {
      this.streams.add(response);
      response.once('close', () => this.streams.delete(response));
    }
    answer.pipe(response);
  }

  /** Ask the bot for a new answer for `key` in the background. */
  private renew(key: string): void {
    const request = http.request({
      socketPath: this.options.socketPath,
      agent: this.agent,
      method: 'GET',
      path: key,
      headers: { host: 'front', [FRONT_RENEW]: '1' },
    });
    request.on('error', () => this.cache.renewalFailed(key));
    request.on('response', (answer) => {
      const reuseMs = Number(answer.headers[FRONT_REUSE_MS]);
      if (answer.statusCode !== 200 || !(reuseMs > 0)) {
        answer.resume();
        this.cache.drop(key);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('error', () => this.cache.renewalFailed(key));
      answer.on('end', () =>
        this.cache.put(key, stored(answer, Buffer.concat(chunks)), reuseMs, this.clock(), maxAgeOf(answer)),
      );
    });
    request.end();
  }
}
