/**
 * The network statistics: `/network/data/...` and `/network/netstats/api/index.json`
 * (public) and `/api/netstats/...` (token: `netstats.<name>`). Each endpoint is
 * declared once, in a file of its topic (netstats-status.ts, -profiles.ts, -distributions.ts,
 * -lists.ts), and registered here in both tiers, with the public view or the token view of
 * its shape (netstats-shapes.ts). The index is read from the route table, so it lists exactly
 * what is served.
 */
import {
  openApiPath,
  type FromJsonSchema,
  type NetworkModel,
  type PluginHttp,
  type PluginServices,
  type RouteDefinition,
} from '../../lib/sdk.js';
import { TimedCache } from './lists.js';
import { netstatsContext, type Endpoint } from './netstats-context.js';
import { clientsEndpoint, countriesEndpoint } from './netstats-distributions.js';
import { historyEndpoint, operatorsEndpoint, serversEndpoint } from './netstats-lists.js';
import { channelEndpoint, userEndpoint } from './netstats-profiles.js';
import { indexSchema } from './netstats-shapes.js';
import { statusEndpoint } from './netstats-status.js';
import type { ApiConfig } from './schema.js';

export interface NetstatsOptions {
  model: NetworkModel;
  config: ApiConfig;
  /** The route table, for the index. */
  http: Pick<PluginHttp, 'routes'>;
  /** Where the stats plugin's activity and history are found. */
  services: Pick<PluginServices, 'get'>;
  /** The bot's own nick now: it is not counted in the distributions. */
  selfNick: () => string;
  clock?: () => Date;
}

const PUBLIC_PREFIX = '/network/data';
const TOKEN_PREFIX = '/api/netstats';
const PUBLIC_INDEX = '/network/netstats/api/index.json';

export function netstatsRoutes(options: NetstatsOptions): RouteDefinition[] {
  const { model, config, http, services, selfNick } = options;
  const context = netstatsContext({ model, services, selfNick, clock: options.clock ?? (() => new Date()) });
  const endpoints: Endpoint[] = [
    statusEndpoint(context),
    channelEndpoint(context),
    userEndpoint(context),
    countriesEndpoint(context),
    clientsEndpoint(context),
    historyEndpoint(context),
    operatorsEndpoint(context),
    serversEndpoint(context),
  ];

  const routes: RouteDefinition[] = [];
  const indexRoute = (tier: 'public' | 'token'): RouteDefinition => ({
    method: 'GET',
    path: tier === 'public' ? PUBLIC_INDEX : `${TOKEN_PREFIX}/`,
    name: tier === 'public' ? 'network.index' : 'netstats.index',
    summary: 'Machine-readable index of the network statistics endpoints',
    tier,
    ...(tier === 'public' ? { maxAge: config.cache_seconds } : {}),
    response: indexSchema,
    handler: () => ({ body: { endpoints: indexOf(http.routes()) } }),
  });
  routes.push(indexRoute('public'), indexRoute('token'));
  for (const endpoint of endpoints) {
    for (const view of ['public', 'token'] as const) {
      // Today's counts change with every chat line, which no change event announces: answers are kept for
      // reuse_ms, by query string, and by path too where the path names a channel or a user (1,400 at most
      // over the sixteen routes).
      const byPath = endpoint.path.includes(':');
      const answers = new TimedCache({ reuseMs: config.reuse_ms }, byPath ? 200 : 50);
      routes.push({
        method: 'GET',
        path: `${view === 'public' ? PUBLIC_PREFIX : TOKEN_PREFIX}${endpoint.path}`,
        name: `${view === 'public' ? 'network' : 'netstats'}.${endpoint.name}`,
        summary: endpoint.summary,
        tier: view,
        ...(view === 'public' ? { maxAge: config.cache_seconds } : {}),
        response: endpoint.response(view),
        ...(endpoint.queryParameters ? { queryParameters: endpoint.queryParameters } : {}),
        handler: (request) => ({
          body: answers.get(byPath ? `${request.path}${request.search}` : request.search, () =>
            endpoint.handler(request, view),
          ),
        }),
      });
    }
  }
  return routes;
}

/**
 * The index, read from the route table: every `network.<name>` and `netstats.<name>` route,
 * paired by name, in the order they were registered.
 */
export function indexOf(
  routes: readonly { route: RouteDefinition }[],
): FromJsonSchema<typeof indexSchema>['endpoints'] {
  const entries = new Map<
    string,
    { name: string; public_path: string | null; token_path: string | null; description: string }
  >();
  for (const { route } of routes) {
    const match = /^(network|netstats)\.(.+)$/.exec(route.name);
    if (!match || route.method !== 'GET') continue;
    const name = match[2]!;
    const entry = entries.get(name) ?? { name, public_path: null, token_path: null, description: route.summary };
    if (match[1] === 'network') entry.public_path = openApiPath(route.path);
    else entry.token_path = openApiPath(route.path);
    entries.set(name, entry);
  }
  return [...entries.values()];
}
