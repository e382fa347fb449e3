/**
 * One request from arrival to the access log (an {@link Exchange}), and the request a route's handler
 * sees ({@link RoutedRequest}).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Findings } from './guards.js';
import type { RouteEntry } from './routes.js';
import type { ApiRequest, ApiResponse, HttpMethod, RouteGuard, TokenApprovals } from './types.js';

/**
 * Where a request is, for the failure log: `route` before it has one, `guard` in its tier's guard, `guards`
 * in one of the route's own.
 */
export type StageName = 'route' | 'guard' | 'hook' | 'guards' | 'body' | 'handler';

/** One named step of a routed request (stages.ts). */
export interface Stage {
  readonly name: StageName;
  /** Begin the stage: its outcome, or a promise of it. Throw (or reject) an ApiError to refuse. */
  begin(exchange: Exchange): unknown;
  /** Take the stage's settled outcome into the exchange. */
  take(exchange: Exchange, outcome: unknown): void;
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

/** What the front (lib/http/front/) says of a request it passed on; see {@link ApiRequest.front}. */
export interface FrontFacts {
  served: number;
  renew: boolean;
}

/** What a handler sees; the query string is parsed the first time it is read. */
export class RoutedRequest implements ApiRequest {
  body: unknown = undefined;
  tokenId?: string;
  approvals?: TokenApprovals;
  private parsedQuery: URLSearchParams | undefined;

  constructor(
    readonly method: HttpMethod,
    readonly path: string,
    readonly search: string,
    readonly params: Record<string, string>,
    readonly headers: IncomingHttpHeaders,
    readonly ip: string,
    readonly secure: boolean,
    readonly front: FrontFacts | undefined,
  ) {}

  /** The parsed query string; a parameter given more than once keeps its last value, as Django's QueryDict.get. */
  get query(): URLSearchParams {
    return (this.parsedQuery ??= lastValues(new URLSearchParams(this.search)));
  }
}

/** One request from arrival to the access log: where it is, and what it has collected on the way. */
export class Exchange {
  /** The stage it is in ('route' until it has one), for the failure log. */
  stage: StageName = 'route';
  entry: RouteEntry | undefined = undefined;
  request: RoutedRequest | undefined = undefined;
  /** The stages it runs, fixed when it starts: a hook added while it waits applies from the next request. */
  stages: readonly Stage[] = [];
  /** What the route's own guards found; made only for a route that has guards. */
  findings: Findings | undefined = undefined;
  /** The route's own guard running now, or the last one that ran (the failure log names it). */
  guard: RouteGuard | undefined = undefined;
  /** Headers the hooks returned; they ride on every answer, errors included. */
  hookHeaders: Record<string, string> | undefined = undefined;
  /** The answer: the handler's, or a guard's that answered the request itself (then no later stage runs). */
  answer: ApiResponse | undefined = undefined;
  /** Body bytes sent, for the access log. */
  sentBytes = 0;
  /**
   * The client sent `Expect: 100-continue` with a body and waits for the 100, which goes out only when
   * the body is read. An answer given before then closes the connection: the body will not come.
   */
  awaitingContinue = false;
  /** Set when the request came through the front: what it says of it. */
  front: FrontFacts | undefined = undefined;
  /** The name of the route that answered, as the bot told the front (the front's access log). */
  routeName: string | undefined = undefined;
  /** The request reached the hooks: the front's `served` count was there to be counted. */
  hooksSeen = false;
  /** The answer is a stream (stream-body.ts): its time is how long it was open, not how long it took. */
  streamed = false;

  constructor(
    readonly raw: IncomingMessage,
    readonly response: ServerResponse,
    readonly method: string,
    /** The path without query string or fragment, as received. */
    readonly path: string,
    readonly search: string,
    /** The client's address (the socket's peer, or the client a trusted proxy names). */
    readonly ip: string,
    /** The client came over HTTPS (as a trusted proxy says). */
    readonly secure: boolean,
    readonly started: number,
  ) {}
}
