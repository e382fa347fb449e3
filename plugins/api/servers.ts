/**
 * `GET /api/irc/servers/`, `/api/irc/servers/{name}/` and `/api/irc/latency/`:
 * the linked servers (LINKS, MAP) and the last round trip to each.
 */
import {
  notFound,
  paginate,
  type FromJsonSchema,
  type NetworkModel,
  type RouteDefinition,
  type Server,
} from '../../lib/sdk.js';
import { listQueryParameters, nullableTime, pageSchema } from './lists.js';
import { requireReady } from './network.js';
import type { ApiConfig } from './schema.js';

const latencyMs = {
  type: ['number', 'null'],
  minimum: 0,
  description: 'Round trip of the last probe in milliseconds; null while unmeasured or when the server did not answer.',
} as const;
const measuredAt = {
  ...nullableTime,
  description: 'When the last probe ended (answered, or given up on); null while unmeasured.',
} as const;

export const serverSchema = {
  type: 'object',
  required: ['name', 'description', 'hops', 'uplink', 'users', 'latency_ms', 'measured_at', 'is_services'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    hops: { type: 'integer', minimum: 0, description: 'Links between this server and the one the collector uses.' },
    uplink: { type: ['string', 'null'], description: 'The server it links to; null for the root of the tree.' },
    users: {
      type: ['integer', 'null'],
      minimum: 0,
      description: 'Users on it (MAP), null when the network does not say.',
    },
    latency_ms: latencyMs,
    measured_at: measuredAt,
    is_services: { type: 'boolean', description: 'Whether network services (NickServ, ...) run on it.' },
  },
} as const;

export const latencyItemSchema = {
  type: 'object',
  required: ['server', 'latency_ms', 'measured_at'],
  additionalProperties: false,
  properties: { server: { type: 'string' }, latency_ms: latencyMs, measured_at: measuredAt },
} as const;

const SERVER_ORDERING = ['name', 'hops', 'users', 'latency_ms'];
const LATENCY_ORDERING = ['server', 'latency_ms'];

/** A server as the API shows it; its type is the schema's. */
export function serverBody(server: Server): FromJsonSchema<typeof serverSchema> {
  return {
    name: server.name,
    description: server.description,
    hops: server.hops,
    uplink: server.uplink,
    users: server.users,
    latency_ms: server.latencyMs,
    measured_at: server.measuredAt,
    is_services: server.isServices,
  };
}

const serverPageSchema = pageSchema(serverSchema);
const latencyPageSchema = pageSchema(latencyItemSchema);

function serversByName(model: NetworkModel): Server[] {
  return [...model.servers.all()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function serverRoutes(model: NetworkModel, config: ApiConfig): RouteDefinition[] {
  return [
    {
      method: 'GET',
      path: '/api/irc/latency/',
      name: 'irc.latency',
      summary: 'Server latency measurements',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: latencyPageSchema,
      queryParameters: listQueryParameters('the server name', LATENCY_ORDERING, 'server'),
      handler(request): { body: FromJsonSchema<typeof latencyPageSchema> } {
        requireReady(model);
        const items = serversByName(model).map((server): FromJsonSchema<typeof latencyItemSchema> => ({
          server: server.name,
          latency_ms: server.latencyMs,
          measured_at: server.measuredAt,
        }));
        return {
          body: paginate(request, items, {
            orderingFields: LATENCY_ORDERING,
            defaultOrdering: 'server',
            searchField: (item) => item.server,
          }),
        };
      },
    },
    {
      method: 'GET',
      path: '/api/irc/servers/',
      name: 'irc.servers',
      summary: 'List of linked servers',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: serverPageSchema,
      queryParameters: listQueryParameters('the server name', SERVER_ORDERING, 'hops'),
      handler(request): { body: FromJsonSchema<typeof serverPageSchema> } {
        requireReady(model);
        return {
          body: paginate(request, serversByName(model).map(serverBody), {
            orderingFields: SERVER_ORDERING,
            defaultOrdering: 'hops',
            searchField: (item) => item.name,
          }),
        };
      },
    },
    {
      method: 'GET',
      path: '/api/irc/servers/:name/',
      name: 'irc.server',
      summary: 'Details of one server',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: serverSchema,
      handler(request) {
        requireReady(model);
        const name = request.params.name ?? '';
        const server = model.servers.get(name);
        if (!server) throw notFound('server_not_found', `No linked server named ${name}`);
        return { body: serverBody(server) };
      },
    },
  ];
}
