/**
 * The route table's types. A route is data: the server serves it, its guards are listed on it, and the
 * api plugin's OpenAPI document is generated from the same definitions.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Who may call a route: anyone, a token approved for the route's endpoint name, or a staff token. */
export type Tier = 'public' | 'token' | 'staff';

/** A JSON Schema object (draft 2020-12, as OpenAPI 3.1 uses). */
export type JsonSchema = Record<string, unknown>;

export interface ApiRequest {
  method: HttpMethod;
  /** The request path without the query string, as received. */
  path: string;
  /** Path parameters, percent-decoded once (`%23chat` is `#chat`). */
  params: Record<string, string>;
  /** The query string as received, with its leading `?`; empty when there is none. */
  search: string;
  /** The parsed query string. */
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The client's address: the socket's peer, or, from a trusted proxy (`http.trust_proxy`), the client it names. */
  ip: string;
  /** Whether the client used HTTPS: over a TLS socket, or as a trusted proxy (`http.trust_proxy`) says. */
  readonly secure: boolean;
  /**
   * The body of a POST or PATCH: parsed JSON (already checked against `route.body` when given), or, on a
   * route marked `form`, the form's fields as `URLSearchParams`.
   */
  body: unknown;
  /**
   * Set by the tier guard for token and staff routes: the token's id; on a {@link RouteDefinition.grantable}
   * public route, the id of a token approved for it.
   */
  tokenId?: string;
  /** Set by the tier guard wherever a request presents a live token: what it is approved for, read when asked. */
  approvals?: TokenApprovals;
  /**
   * Set when the request came through the HTTP front (lib/http/front/): `served` is how many public
   * answers the front gave this client from its store since the client's last request that reached the
   * bot (a rate limit counts them first); `renew` marks the front renewing a stored answer, a request
   * of no client (a rate limit lets it through).
   */
  readonly front?: { readonly served: number; readonly renew: boolean } | undefined;
}

/**
 * What a live token a request presented is approved for, as the tokens plugin knows it when asked: a grant,
 * a denial or a revocation after the request shows at the next call (a stream that stays open re-checks).
 */
export interface TokenApprovals {
  readonly tokenId: string;
  /** Whether the token is still live (not revoked). */
  readonly live: boolean;
  /** Whether the token is live and approved for the endpoint `name` (a token route's, or a grantable one's). */
  approves(name: string): boolean;
}

export interface ApiResponse {
  status?: number;
  /** JSON (any value, or a `SerializedJson`), or a rendered page (an `HtmlDocument`). */
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteDefinition {
  method: HttpMethod;
  /** The path, with `:name` segments for parameters and a trailing slash, e.g. `/api/irc/channels/:name/`. */
  path: string;
  /** Stable endpoint name that an administrator grants (token tier), e.g. `irc.users`. */
  name: string;
  summary: string;
  tier: Tier;
  /**
   * On a public route: a token may be approved for its `name`, as for a token route (an administrator grants
   * it), and a request presenting such a token sees more (`request.approvals` says what). Such a request counts
   * against its token's rate limit, not its address's.
   */
  grantable?: boolean;
  /** Seconds for `Cache-Control: public, max-age=<n>` on public GETs (default 10). */
  maxAge?: number;
  /** Schema of the JSON body (POST/PATCH); a body that fails it is `400 invalid_body`. */
  body?: JsonSchema;
  /**
   * The body is an HTML form (`application/x-www-form-urlencoded`, as a browser sends it), not JSON: it
   * reaches the handler as `URLSearchParams`, and the handler checks its fields (`body` is not used).
   */
  form?: boolean;
  /**
   * Schema of the 200 response body, for the OpenAPI document and response checks in tests; for a stream
   * (`streamType`), the schema of one item of it.
   */
  response?: JsonSchema;
  /**
   * The 200 is a stream (a `StreamBody`) of this media type, e.g. `text/event-stream`: the OpenAPI document
   * describes its items with `response`, and no 304.
   */
  streamType?: string;
  /** Query parameters (and, with `in: 'header'`, request headers the route reads), for the OpenAPI document. */
  queryParameters?: { name: string; description: string; schema: JsonSchema; in?: 'query' | 'header' }[];
  /**
   * `'page'` for a route that answers HTML for people (an `HtmlDocument`) rather than the JSON API:
   * it is left out of the OpenAPI document. `'operations'` for what an operator's tools call (health,
   * readiness, metrics): left out of the OpenAPI document, never cached (`no-store`), and no hook runs
   * for it, so no rate limit counts it. Default `'api'`.
   */
  document?: 'api' | 'page' | 'operations';
  /** A request this accepts skips the tier's guard (e.g. a metrics scraper from an allowed address). */
  admit?: (request: ApiRequest) => boolean;
  /**
   * The route's own guards, run in this order, each at its {@link RouteGuard.point}, after the tier's guard
   * and the request hooks. A route with guards is never answered from the HTTP front's store of public
   * answers: its answer depends on who asks.
   */
  guards?: readonly RouteGuard[];
  /**
   * How the route answers an ApiError that its own guards or its handler throw, instead of the contract's
   * JSON error body (e.g. the website's refusal page). Errors of the tier's guard, the hooks and the body
   * reader keep the contract's body.
   */
  renderError?: (error: ApiError, request: ApiRequest) => ApiResponse;
  /** Answers the request; `found` holds what the route's guards found (see {@link GuardFindings}). */
  handler(request: ApiRequest, found: GuardFindings): ApiResponse | Promise<ApiResponse>;
}

/** Where a route's own guard runs: before the body is read (`request`), or once it is read and checked (`body`). */
export type GuardPoint = 'request' | 'body';

/** What a guard decided: the request goes on, with what the guard found, or this is its answer. */
export type GuardOutcome<Found> = { readonly found: Found } | { readonly answer: ApiResponse };

/**
 * A check that a route lists among its {@link RouteDefinition.guards} (fastify's per-route hooks): signed
 * in, an administrator, a form's CSRF token. The server runs a route's guards in the order listed, each at
 * its point, before the handler. A guard lets the request on with what it found (`{ found }`, read by the
 * handler and later guards through {@link GuardFindings}), answers it itself (`{ answer }`, e.g. a refusal
 * page), or throws an ApiError. It may return a promise; a route whose guards all answer at once stays on
 * the synchronous path.
 */
export interface RouteGuard<Found = unknown> {
  /** Names the guard in errors and logs, e.g. `signedIn`; unique among a route's guards. */
  readonly name: string;
  readonly point: GuardPoint;
  /** The guards whose findings this one reads: a route lists them before it (checked at registration). */
  readonly needs?: readonly RouteGuard[];
  check(
    request: ApiRequest,
    found: GuardFindings,
    route: RouteDefinition,
  ): GuardOutcome<Found> | PromiseLike<GuardOutcome<Found>>;
}

/** What a route's guards found so far, by guard. */
export interface GuardFindings {
  /** What `guard` found; throws when `guard` has not run for this request (the route does not list it). */
  get<Found>(guard: RouteGuard<Found>): Found;
}

/** Checks a request before a token or staff route's handler runs; throws an ApiError to refuse. */
export type TierGuard = (request: ApiRequest, route: RouteDefinition) => void | Promise<void>;

/**
 * The guard of each tier, as one plugin provides them (the service `http.guard`). Without a token or a
 * staff guard, the routes of that tier answer 503; without a public guard, public routes are not checked.
 */
export interface TierGuards {
  readonly public?: TierGuard;
  readonly token?: TierGuard;
  readonly staff?: TierGuard;
}
