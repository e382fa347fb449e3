/**
 * What the api plugin offers the other plugins: `api.public`, the answers of its public GET routes without
 * HTTP — the same bodies the JSON API sends, made by the same handlers. A plugin that shows the network to
 * people (the website) reads them, so it shows exactly what the public API shows and nothing a public
 * answer leaves out (no IP, host, ident, realname, account or hidden channel). Its contract is contract.ts
 * (`PublicApi`, in the SDK's `Services`); a user imports nothing from this folder. A route with guards of its
 * own is left out: what it answers depends on who asks, and nobody asks here.
 */
import { SerializedJson, type ApiRequest, type GuardFindings, type RouteDefinition } from '../../lib/sdk.js';
import type { PublicApi } from './contract.js';

export function publicApi(routes: readonly RouteDefinition[]): PublicApi {
  const byName = new Map<string, RouteDefinition>();
  for (const route of routes) {
    if (route.tier === 'public' && route.method === 'GET' && !route.guards?.length) byName.set(route.name, route);
  }
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
      const { body } = await route.handler(request, nothingFound(route));
      return body instanceof SerializedJson ? (JSON.parse(body.bytes.toString('utf8')) as unknown) : body;
    },
  };
}

/** What an unguarded route's handler is given: no guard ran, so nothing was found. */
function nothingFound(route: RouteDefinition): GuardFindings {
  return {
    get(guard) {
      throw new Error(`The public route ${route.name} reads what guard "${guard.name}" found, but has no guards`);
    },
  };
}
