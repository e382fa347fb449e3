/**
 * The contract of the api plugin's service `api.public`, added to the SDK's `Services` here. Types only: the
 * package's public SDK (app/sdk.ts, `irc-network-data/sdk`) re-exports it, so that a plugin from outside
 * this repository types its use with that entry alone; the website uses it through `Services` without
 * importing this folder. public-service.ts implements it.
 */

/** What {@link PublicApi.read} passes to a route. */
export interface PublicReadOptions {
  /** Path parameters (`{ channel: '#chat' }`). */
  params?: Record<string, string>;
  /** Query parameters, as the route takes them (`{ limit: 50, search: 'rust' }`). */
  query?: Record<string, string | number | undefined>;
}

/**
 * `api.public`: the answers of the api plugin's public GET routes without HTTP, the same bodies the JSON API
 * sends, made by the same handlers, so a plugin that shows them shows nothing a public answer leaves out.
 */
export interface PublicApi {
  /**
   * The body the public GET route `name` (`network.status`, `irc.channels`, ...) answers, as JSON values.
   * Rejects with the route's ApiError where the API would answer one (a hidden channel's 404, a bad
   * parameter's 400, 503 before the first sync).
   */
  read(name: string, options?: PublicReadOptions): Promise<unknown>;
  /** The names `read` takes. */
  readonly names: readonly string[];
}

declare module '../../lib/sdk.js' {
  interface Services {
    /** The public routes' answers without HTTP (the api plugin). */
    'api.public': PublicApi;
  }
}
