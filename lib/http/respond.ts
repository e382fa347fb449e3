/**
 * Writing answers: JSON (or a page or other text a handler rendered, {@link TextDocument}), `API-Version`, `Cache-Control` by tier, ETag and 304, HEAD, the
 * contract's error bodies, and the plain 500 when nothing else can be trusted.
 *
 * Every answer's headers are built one way, by a {@link Head}: the server's own headers, valid by
 * construction, and those a handler, hook or error added, which are merged (case-insensitively, a later
 * one winning) and checked. An answer that added none, such as a cached {@link SerializedJson}, is
 * written from the server's own list without merging or checking anything.
 */
import http from 'node:http';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import { ClientGoneError } from './body.js';
import { acceptsGzip, GZIP_MIN_BYTES, gzippedCopy } from './compression.js';
import { ApiError, notFound } from './errors.js';
import { etagOf, ifNoneMatchMatches } from './etag.js';
import type { Exchange } from './exchange.js';
import { FRONT_COUNTED, FRONT_REUSE_MS, FRONT_ROUTE } from './front/messages.js';
import { TextDocument } from './html-document.js';
import { SerializedJson } from './serialized-json.js';
import { ResponseStream, StreamBody } from './stream-body.js';
import type { Responder } from './stages.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
/** How long a stream ended by the server's close has to be taken by its client before its connection is closed. */
export const STREAM_END_GRACE_MS = 1000;
export const API_VERSION = '1';
const INTERNAL_MESSAGE = 'Internal server error; the failure has been logged';
const INTERNAL_BODY = Buffer.from(JSON.stringify(new ApiError(500, 'internal', INTERNAL_MESSAGE).toBody()), 'utf8');
/** The headers of the plain 500, which must go out even when nothing else can be trusted. Never changed. */
const INTERNAL_HEADERS: readonly string[] = [
  'Cache-Control',
  'no-store',
  'Content-Type',
  JSON_TYPE,
  'API-Version',
  API_VERSION,
  'Content-Length',
  String(INTERNAL_BODY.length),
];

/** Every header name the server itself sets on an answer (lower case): an added one of these is merged, not appended. */
const SERVER_HEADER_NAMES: ReadonlySet<string> = new Set([
  'cache-control',
  'etag',
  'content-type',
  'api-version',
  'content-length',
  'vary',
  'content-encoding',
  FRONT_COUNTED,
  FRONT_ROUTE,
  FRONT_REUSE_MS,
]);

/** Lower-case forms of the header names seen and found valid, so the same few names are not checked again. */
const checkedNames = new Map<string, string>();
/** Names kept at most: a handler making up names cannot grow the map without end. */
const MAX_CHECKED_NAMES = 256;

/** The lower case of an added header's name, checked as Node would (throws for a name Node refuses). */
function checkedLowerName(name: string): string {
  let lower = checkedNames.get(name);
  if (lower === undefined) {
    http.validateHeaderName(name);
    lower = name.toLowerCase();
    if (checkedNames.size < MAX_CHECKED_NAMES) checkedNames.set(name, lower);
  }
  return lower;
}

/** The names of the last single set of added headers that could be appended (checked, none the server's, none twice). */
let lastAppendedNames: readonly string[] = [];

function sameNames(names: readonly string[], last: readonly string[]): boolean {
  if (names.length !== last.length) return false;
  for (let index = 0; index < names.length; index++) if (names[index] !== last[index]) return false;
  return true;
}

/**
 * An answer's headers, in one flat `writeHead` list. The server's own come first: `default` ones (the
 * cache headers of a success), which a handler may replace, then `set` ones, which always win. Both are
 * valid by construction. `add` adds a set from a handler, a hook or an error; `list()` gives the
 * server's own list as it is when nothing was added, else everything merged (case-insensitively, a
 * later one winning) and checked.
 */
class Head {
  private readonly flat: string[] = [];
  /** Entries of `flat` before this index are defaults. */
  private defaultsEnd = 0;
  private added: Record<string, string>[] | undefined;

  constructor(readonly status: number) {}

  /** A header an added set may replace; all defaults come before the first `set`. */
  default(name: string, value: string): this {
    this.flat.push(name, value);
    this.defaultsEnd = this.flat.length;
    return this;
  }

  set(name: string, value: string): this {
    this.flat.push(name, value);
    return this;
  }

  add(headers: Record<string, string> | undefined): this {
    if (headers) (this.added ??= []).push(headers);
    return this;
  }

  /** The flat header list; throws when an added header is one Node would refuse. */
  list(): readonly string[] {
    if (!this.added) return this.flat;
    return this.appended() ?? this.merged();
  }

  /**
   * The common case (a rate limit's headers on a success): every added name is new, so the added headers go
   * between the defaults and the server's own, each checked, without merging. Undefined when a name is one the
   * server sets or repeats. No set of names is built: the server's own are a fixed few, and an added name's
   * lower case is looked up, not made again, so that a cached answer costs no hashing of new strings.
   */
  private appended(): readonly string[] | undefined {
    if (this.status === 304) return undefined;
    const flat = this.flat.slice(0, this.defaultsEnd);
    const firstAdded = flat.length;
    const added = this.added!;
    // One set of the names appended last time (a rate limit's, on every answer): its names were checked then.
    const names = added.length === 1 ? Object.keys(added[0]!) : undefined;
    if (names && sameNames(names, lastAppendedNames)) {
      const set = added[0]!;
      for (const name of names) {
        const value = set[name]!;
        http.validateHeaderValue(name, value);
        flat.push(name, value);
      }
    } else {
      for (const set of added) {
        for (const name of Object.keys(set)) {
          const lower = checkedLowerName(name);
          if (SERVER_HEADER_NAMES.has(lower)) return undefined;
          for (let index = firstAdded; index < flat.length; index += 2) {
            if (checkedLowerName(flat[index]!) === lower) return undefined;
          }
          const value = set[name]!;
          http.validateHeaderValue(name, value);
          flat.push(name, value);
        }
      }
      if (names) lastAppendedNames = names;
    }
    for (let index = this.defaultsEnd; index < this.flat.length; index++) flat.push(this.flat[index]!);
    return flat;
  }

  private merged(): readonly string[] {
    const merged = new Map<string, [string, string]>();
    const own = (from: number, to: number) => {
      for (let index = from; index < to; index += 2) {
        merged.set(this.flat[index]!.toLowerCase(), [this.flat[index]!, this.flat[index + 1]!]);
      }
    };
    own(0, this.defaultsEnd);
    for (const set of this.added!) {
      for (const name of Object.keys(set)) merged.set(name.toLowerCase(), [name, set[name]!]);
    }
    // The server's Vary (Accept-Encoding) joins a handler's own, which names what else the answer varies with.
    const added = merged.get('vary');
    own(this.defaultsEnd, this.flat.length);
    const vary = merged.get('vary');
    if (added && vary && added !== vary) merged.set('vary', [vary[0], `${added[1]}, ${vary[1]}`]);
    // A 304 has no body to type, whatever a handler said.
    if (this.status === 304) merged.delete('content-type');
    const flat: string[] = [];
    // Only what is written is checked: a header the server's own replaced never goes out.
    for (const [name, value] of merged.values()) {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
      flat.push(name, value);
    }
    return flat;
  }
}

export class Respond implements Responder {
  /** The streams open now, which {@link endStreams} ends. */
  private readonly streams = new Set<ResponseStream>();

  /** `frontReuseMs`: the longest the front reuses a public answer (lib/http/front/). */
  constructor(
    private readonly logger: Logger,
    private readonly frontReuseMs = 0,
  ) {}

  /** A successful answer: JSON, cache headers by tier, and for a GET 200 the ETag and 304. */
  answer(exchange: Exchange): void {
    const entry = exchange.entry!;
    const answer = exchange.answer!;
    const status = answer.status ?? 200;
    const { body } = answer;
    if (body instanceof StreamBody) {
      this.stream(exchange, status, body);
      return;
    }
    // Serialize before anything is written, so a body that cannot be serialized still gets a clean 500.
    let bytes: Buffer | undefined;
    let etag: string | undefined;
    let contentType = JSON_TYPE;
    // A body answered again and again, which may go gzip'd (compression.ts).
    let reused: SerializedJson | TextDocument | undefined;
    try {
      if (status === 204) {
        // No content: a body the handler gave anyway is not sent, nor its length.
      } else if (body instanceof SerializedJson) {
        bytes = body.bytes;
        etag = body.etag;
        reused = body;
      } else if (body instanceof TextDocument) {
        bytes = body.bytes;
        etag = body.etag;
        contentType = body.contentType;
        reused = body;
      } else {
        bytes = Buffer.from(JSON.stringify(body ?? null), 'utf8');
      }
    } catch (error) {
      this.fail(exchange, error);
      return;
    }
    let answerStatus = status;
    let vary = false;
    let gzipped = false;
    if (entry.route.method === 'GET' && status === 200 && bytes) {
      etag ??= etagOf(bytes);
      const ifNoneMatch = exchange.raw.headers['if-none-match'];
      if (reused && bytes.length >= GZIP_MIN_BYTES) {
        vary = true;
        const copy = acceptsGzip(exchange.raw.headers)
          ? gzippedCopy(reused, (error) =>
              this.logger.warn(`${exchange.method} ${exchange.path}: its answer could not be compressed`, {
                error: errorMessage(error),
              }),
            )
          : undefined;
        // The form the client holds, if it names one, is the one it is told is current (a 304 about it): either
        // form may be sent, and a cache finds what to refresh by the ETag.
        if (copy && (ifNoneMatchMatches(ifNoneMatch, copy.etag) || !ifNoneMatchMatches(ifNoneMatch, etag))) {
          bytes = copy.bytes;
          etag = copy.etag;
          gzipped = true;
        }
      }
      if (ifNoneMatchMatches(ifNoneMatch, etag)) {
        answerStatus = 304;
        bytes = undefined;
      }
    } else {
      etag = undefined;
    }
    const head = this.contractHead(answerStatus, bytes, entry.cacheControl, etag, contentType);
    // RFC 9110 §15.4.5: a 304 says Vary as its 200 would, but not the content coding of a body it has not.
    if (vary) head.set('Vary', 'Accept-Encoding');
    if (gzipped && answerStatus === 200) head.set('Content-Encoding', 'gzip');
    // A public read the front may answer again, for up to its max-age: never an answer a handler or a hook
    // added a header to, other than the rate limit's (which the front writes per client).
    if (
      exchange.front &&
      answerStatus === 200 &&
      entry.publicMaxAgeMs > 0 &&
      !answer.headers &&
      onlyRateLimitHeaders(exchange.hookHeaders)
    ) {
      head.set(FRONT_REUSE_MS, String(Math.min(entry.publicMaxAgeMs, this.frontReuseMs)));
    }
    head.add(exchange.hookHeaders).add(answer.headers);
    this.send(exchange, head, bytes);
  }

  /**
   * End every open stream (the server is closing): each ends after what was written to it, and one whose client
   * has not taken that within `graceMs` is closed, so that a client that stopped reading cannot hold the close.
   */
  endStreams(graceMs = STREAM_END_GRACE_MS): void {
    const ending = [...this.streams];
    for (const stream of ending) stream.end();
    if (ending.length > 0) setTimeout(() => ending.forEach((stream) => stream.abort()), graceMs).unref();
  }

  /** How many streams are open. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * A stream's head (never kept, nor buffered by nginx), then the stream handed to its body's `open`; a HEAD
   * gets the head alone.
   */
  private stream(exchange: Exchange, status: number, body: StreamBody): void {
    const head = new Head(status)
      .set('Content-Type', body.contentType)
      .set('Cache-Control', 'no-store')
      .set('X-Accel-Buffering', 'no')
      .set('API-Version', API_VERSION);
    head.add(exchange.hookHeaders).add(exchange.answer!.headers);
    exchange.streamed = exchange.method !== 'HEAD';
    this.send(exchange, head, undefined, exchange.streamed ? body : undefined);
  }

  /**
   * Answer a thrown value: an ApiError as itself, anything else as a logged 500 that reveals
   * nothing. It never throws: if even the error answer cannot be built (an error that cannot be
   * turned into text, details that cannot be serialised), the plain 500 goes out instead, so no
   * request is left unanswered.
   */
  fail(exchange: Exchange, error: unknown): void {
    try {
      this.answerError(exchange, error);
    } catch (failure) {
      this.logger.error(`${exchange.method} ${exchange.path}: the error answer could not be built`, {
        error: errorMessage(failure),
      });
      this.write(exchange, 500, INTERNAL_BODY, INTERNAL_HEADERS);
    }
  }

  /** 405 with `Allow` when another method serves the path (`allowed`), else 404. */
  unrouted(exchange: Exchange, allowed: readonly string[]): void {
    const { path } = exchange;
    if (allowed.length === 0) {
      this.fail(exchange, notFound('not_found', `No API path matches ${path}`));
      return;
    }
    const allow = allowed.join(', ');
    const message = `${exchange.method} is not allowed on ${path}; allowed: ${allow}`;
    this.fail(exchange, new ApiError(405, 'method_not_allowed', message, undefined, { Allow: allow }));
  }

  private answerError(exchange: Exchange, error: unknown): void {
    if (error instanceof ClientGoneError) return;
    let apiError: ApiError;
    if (error instanceof ApiError) {
      apiError = error;
    } else {
      const { entry } = exchange;
      const where = entry ? `${entry.route.method} ${entry.route.path}` : exchange.path;
      this.logger.error(`${where} failed in ${stageDescription(exchange)}`, {
        plugin: entry?.plugin,
        error: errorMessage(error),
      });
      apiError = new ApiError(500, 'internal', INTERNAL_MESSAGE);
    }
    const bytes = Buffer.from(JSON.stringify(apiError.toBody()), 'utf8');
    // An error is never cached, whatever a hook or the error says.
    const head = this.contractHead(apiError.status, bytes, undefined, undefined).set('Cache-Control', 'no-store');
    head.add(exchange.hookHeaders).add(apiError.headers);
    this.send(exchange, head, bytes);
  }

  /**
   * The server's own headers of an answer: `Content-Type`, `API-Version` and `Content-Length` always
   * (a 304 has neither type nor length), and a success's `Cache-Control` (by its route's tier) and ETag.
   */
  private contractHead(
    status: number,
    bytes: Buffer | undefined,
    cacheControl: string | undefined,
    etag: string | undefined,
    contentType: string = JSON_TYPE,
  ): Head {
    const head = new Head(status);
    if (cacheControl !== undefined) head.default('Cache-Control', cacheControl);
    if (etag !== undefined) head.default('ETag', etag);
    // RFC 9110 §15.4.5: a 304 should not carry representation metadata, and without a body there is nothing to type.
    if (status !== 304) head.set('Content-Type', contentType);
    head.set('API-Version', API_VERSION);
    if (bytes && status !== 304) head.set('Content-Length', String(bytes.length));
    return head;
  }

  /**
   * Write an answer whose headers may be refused: one Node would refuse (a bug) turns it into a plain 500. With
   * `stream`, the body is written over time.
   */
  private send(exchange: Exchange, head: Head, bytes: Buffer | undefined, stream?: StreamBody): void {
    if (exchange.front) {
      if (exchange.hooksSeen) head.set(FRONT_COUNTED, '1');
      if (exchange.entry) head.set(FRONT_ROUTE, exchange.entry.route.name);
    }
    let headers: readonly string[];
    try {
      headers = head.list();
    } catch (error) {
      this.logger.error(`${exchange.method} ${exchange.path} produced an invalid response header`, {
        error: errorMessage(error),
      });
      exchange.streamed = false;
      this.write(exchange, 500, INTERNAL_BODY, INTERNAL_HEADERS);
      return;
    }
    if (stream) this.open(exchange, head.status, headers, stream);
    else this.write(exchange, head.status, bytes, headers);
  }

  /** Write a stream's head and hand the stream to its body; a body whose `open` throws is logged and ended. */
  private open(exchange: Exchange, status: number, headers: readonly string[], body: StreamBody): void {
    const { response } = exchange;
    if (response.destroyed || response.headersSent) {
      exchange.streamed = false;
      this.write(exchange, status, undefined, headers);
      return;
    }
    response.writeHead(status, headers as string[]);
    response.flushHeaders();
    const stream = new ResponseStream(
      response,
      (bytes) => (exchange.sentBytes += bytes),
      (error) =>
        this.logger.error(`${exchange.method} ${exchange.path}: a listener of its stream's end failed`, {
          error: errorMessage(error),
        }),
    );
    this.streams.add(stream);
    stream.onEnd(() => this.streams.delete(stream));
    try {
      body.open(stream);
    } catch (error) {
      this.logger.error(`${exchange.method} ${exchange.path}: its stream failed to open`, {
        error: errorMessage(error),
      });
      stream.end();
    }
  }

  /**
   * The one place a response is written, from a flat list of valid headers. It never
   * throws: once a response has started it is not written again.
   */
  write(exchange: Exchange, status: number, bytes: Buffer | undefined, headers: readonly string[]): void {
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
    response.writeHead(status, headers as string[]);
    const sent = exchange.method === 'HEAD' || status === 304 ? undefined : bytes;
    exchange.sentBytes = sent?.length ?? 0;
    response.end(sent);
  }
}

/** Whether `headers` holds nothing but `RateLimit-*` headers. */
function onlyRateLimitHeaders(headers: Record<string, string> | undefined): boolean {
  if (!headers) return true;
  for (const name of Object.keys(headers)) if (!name.toLowerCase().startsWith('ratelimit-')) return false;
  return true;
}

/** The part of the server a request failed in, for the log. */
function stageDescription(exchange: Exchange): string {
  const { entry } = exchange;
  switch (exchange.stage) {
    case 'route':
      return 'the router';
    case 'guard':
      return `the ${entry?.route.tier ?? 'tier'} guard`;
    case 'hook':
      return 'a request hook';
    case 'guards':
      return `guard "${exchange.guard?.name ?? '?'}" of plugin "${entry?.plugin ?? '?'}"`;
    case 'body':
      return 'the body reader';
    case 'handler':
      return `plugin "${entry?.plugin ?? '?'}"`;
  }
}
