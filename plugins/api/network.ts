/** `GET /api/irc/stats/`: the network's own numbers, as the collector last saw them. */
import { unavailable, type FromJsonSchema, type NetworkModel, type RouteDefinition } from '../../lib/sdk.js';
import { ChangeCache, type ModelChangeSubscriber } from './lists.js';
import type { ApiConfig } from './schema.js';

export const networkStatsSchema = {
  type: 'object',
  required: [
    'users',
    'invisible',
    'channels',
    'operators',
    'servers',
    'max_users',
    'synced_at',
    'synced_as_operator',
    'sync_ms',
  ],
  additionalProperties: false,
  properties: {
    users: { type: ['integer', 'null'], description: 'Users online, as the network counts them (LUSERS).' },
    invisible: { type: ['integer', 'null'], description: 'Of those, users with mode +i.' },
    channels: { type: ['integer', 'null'], description: 'Channels formed.' },
    operators: { type: ['integer', 'null'], description: 'IRC operators online.' },
    servers: { type: ['integer', 'null'], description: 'Linked servers, services included.' },
    max_users: { type: ['integer', 'null'], description: 'The most users the network has seen at once.' },
    synced_at: { type: 'string', format: 'date-time', description: 'When the bot last completed a full sync.' },
    synced_as_operator: {
      type: 'boolean',
      description: 'Whether the bot was an IRC operator during that sync (and so saw invisible users too).',
    },
    sync_ms: {
      type: ['integer', 'null'],
      minimum: 0,
      description: 'How long that sync took, in milliseconds.',
    },
  },
} as const;

/**
 * The network stats object, as /api/irc/stats/ and the netstats snapshot show it; its type is the schema's.
 * There is none before the first sync (503, as {@link requireReady} answers).
 */
export function networkStatsBody(model: NetworkModel): FromJsonSchema<typeof networkStatsSchema> {
  const { stats } = model;
  if (stats.syncedAt === null) throw unavailable('The bot has not finished its first sync yet');
  return {
    users: stats.users,
    invisible: stats.invisible,
    channels: stats.channels,
    operators: stats.operators,
    servers: stats.servers,
    max_users: stats.maxUsers,
    synced_at: stats.syncedAt,
    synced_as_operator: stats.syncedAsOperator,
    sync_ms: stats.syncMs,
  };
}

/** 503 until the bot is connected and has synced once: there is nothing true to say before that. */
export function requireReady(model: NetworkModel): void {
  if (!model.ready) {
    throw unavailable(
      model.connected
        ? 'The bot is connected but has not finished its first sync yet'
        : 'The bot is not connected to the network',
    );
  }
}

export function networkRoutes(
  model: NetworkModel,
  config: ApiConfig,
  onChange: ModelChangeSubscriber = (listener) => model.on('change', listener),
): RouteDefinition[] {
  // Every field of the body, and whether the model is ready, changes only with a network change.
  const stats = new ChangeCache(onChange, ['network'], { reuseMs: config.reuse_ms });
  return [
    {
      method: 'GET',
      path: '/api/irc/stats/',
      name: 'irc.stats',
      summary: 'Network statistics: users, channels, operators online',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: networkStatsSchema,
      handler() {
        requireReady(model);
        return { body: stats.get(() => networkStatsBody(model)) };
      },
    },
  ];
}
