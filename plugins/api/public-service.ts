/**
 * What the api plugin offers the other plugins: the answers of its public GET routes without HTTP — the
 * same bodies the JSON API sends, made by the same handlers. A plugin that shows the network to people
 * (the website) reads them, so it shows exactly what the public API shows and nothing a public answer
 * leaves out (no IP, host, ident, realname, account or hidden channel). Its type comes from the
 * declaration below; a user imports nothing from this folder.
 */
import { SerializedJson, type ApiRequest, type RouteDefinition } from '../../lib/sdk.js';

export interface PublicReadOptions {
  /** Path parameters (`{ channel: '#chat' }`). */
  params?: Record<string, string>;
  /** Query parameters, as the route takes them (`{ limit: 50, search: 'rust' }`). */
  query?: Record<string, string | number | undefined>;
}

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
    'api.public': PublicApi;
  }
}

export function publicApi(routes: readonly RouteDefinition[]): PublicApi {
  const byName = new Map<string, RouteDefinition>();
  for (const route of routes) if (route.tier === 'public' && route.method === 'GET') byName.set(route.name, route);
  return {
    names: [...byName.keys()],
    async read(name, { params = {}, query = {} } = {}) {
      const route = byName.get(name);
      if (!route) throw new Error(`the api plugin has no public GET route named "${name}"`);
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
      const request: ApiRequest = {
        method: 'GET',
        path: route.path.replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(params[key] ?? '')),
        params,
        search: search.size > 0 ? `?${search.toString()}` : '',
        query: search,
        headers: {},
        // Nobody's address: the answer is the one any client would get.
        ip: '',
        secure: false,
        body: undefined,
      };
      const { body } = await route.handler(request);
      return body instanceof SerializedJson ? (JSON.parse(body.bytes.toString('utf8')) as unknown) : body;
    },
  };
}
