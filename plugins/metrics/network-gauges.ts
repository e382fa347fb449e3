/**
 * The network's numbers as gauges, named as the IRC exporters name them (`irc_users`, `irc_channels`,
 * ...), read from the shared model each time the metrics are scraped: nothing is kept twice.
 */
import type { NetworkModel, PluginMetrics } from '../../lib/sdk.js';

export function registerNetworkGauges(metrics: PluginMetrics, model: NetworkModel): void {
  const stat = (name: string, help: string, read: () => number | null): void => {
    metrics.gauge({
      name,
      help,
      collect(gauge) {
        const value = read();
        // A number not known yet (before the first sync) is left out rather than shown as 0.
        if (value === null) gauge.reset();
        else gauge.set(value);
      },
    });
  };
  stat('irc_connected', 'Whether the bot is connected to the IRC network (1) or not (0).', () =>
    model.connected ? 1 : 0,
  );
  stat('irc_users', 'Users on the network (LUSERS), at the last sync.', () => model.stats.users);
  stat('irc_channels', 'Channels on the network (LUSERS), at the last sync.', () => model.stats.channels);
  stat('irc_operators', 'IRC operators online (LUSERS), at the last sync.', () => model.stats.operators);
  stat('irc_servers', 'Servers linked to the network (LUSERS), at the last sync.', () => model.stats.servers);
  stat(
    'irc_users_max',
    "The most users the bot's server has seen at once (LUSERS), at the last sync.",
    () => model.stats.maxUsers,
  );
  stat('irc_bot_sync_duration_seconds', 'How long the last full sync took.', () =>
    model.stats.syncMs === null ? null : model.stats.syncMs / 1000,
  );
  stat('irc_bot_last_sync_timestamp_seconds', 'When the last full sync finished (Unix time).', () =>
    model.stats.syncedAt === null ? null : Date.parse(model.stats.syncedAt) / 1000,
  );
  stat(
    'irc_bot_model_users',
    "Users in the bot's model now: every user it knows of, as WHO found them and the server's lines since keep them.",
    () => (model.stats.syncedAt === null ? null : model.users.size),
  );
  metrics.gauge<'visibility'>({
    name: 'irc_bot_model_channels',
    help:
      "Channels in the bot's model now: public (on the public lists) and hidden (secret, private, server-local, " +
      'or formed a moment ago and their modes not known yet). Their sum follows irc_channels.',
    labelNames: ['visibility'],
    collect(gauge) {
      gauge.reset();
      if (model.stats.syncedAt === null) return;
      let hidden = 0;
      for (const channel of model.channels.all()) if (channel.hidden) hidden++;
      gauge.set({ visibility: 'public' }, model.channels.size - hidden);
      gauge.set({ visibility: 'hidden' }, hidden);
    },
  });

  // Per server; a server seen since the start that is no longer linked stays, as down.
  const seen = new Map<string, string>();
  const perServer = <Label extends 'server'>(
    name: string,
    help: string,
    read: (server: { name: string; users: number | null; latencyMs: number | null } | undefined) => number | null,
  ): void => {
    metrics.gauge<Label>({
      name,
      help,
      labelNames: ['server' as Label],
      collect(gauge) {
        gauge.reset();
        const linked = new Map<string, { name: string; users: number | null; latencyMs: number | null }>();
        for (const server of model.servers.all()) {
          const key = model.fold(server.name);
          linked.set(key, server);
          seen.set(key, server.name);
        }
        for (const [key, serverName] of seen) {
          const value = read(linked.get(key));
          if (value !== null) gauge.set({ server: serverName } as Record<Label, string>, value);
        }
      },
    });
  };
  perServer(
    'irc_server_up',
    'Whether the server is linked (1) or was linked since the bot started and split (0).',
    (server) => (server ? 1 : 0),
  );
  perServer(
    'irc_server_users',
    'Users on the server (LUSERS of that server), at the last sync.',
    (server) => server?.users ?? null,
  );
  perServer('irc_latency_seconds', "The server's answer time to the bot, at the last measure.", (server) =>
    server?.latencyMs == null ? null : server.latencyMs / 1000,
  );
}
