/**
 * The collector (`plugins.stats`): keeps the model equal to the network's
 * truth. A full sync at every connect and every `refresh_seconds`, live
 * tracking of every change the bot sees in between, latency probes every
 * `latency_seconds`, and the services' command lists every `commands_refresh_seconds`.
 * For the network statistics it also counts chat lines, records a history
 * point every `history_seconds`, asks users' clients (CTCP VERSION) and
 * locates their countries.
 *
 * Each part is a unit (unit.ts) in the file of its topic; start only makes them and registers them.
 */
import { definePlugin } from '../../lib/sdk.js';
import { activityUnit } from './activity.js';
import { versionsUnit, type VersionsUnit } from './clients.js';
import { createCollectorContext, registerUnits, type CollectorContext } from './collector.js';
import { countriesUnit } from './countries.js';
import { historyUnit } from './history.js';
import { joinRefusalsUnit } from './joins.js';
import { latencyUnit } from './latency.js';
import { liveUnit } from './live.js';
import { registerStatsMetrics } from './metrics.js';
import { clientNoticesUnit } from './notices.js';
import { statsConfigSchema, type StatsConfig } from './schema.js';
import { serviceCommandsUnit } from './service-help.js';
import { addSlices, type StatsSlices } from './slices.js';
import { topologyUnit } from './splits.js';
import { syncCommandUnit } from './sync-command.js';
import { countsUnit, syncUnit } from './sync-schedule.js';
import type { CollectorUnit } from './unit.js';
import { whoisUnit } from './whois-fill.js';

/**
 * The collector's units, in the order they run: within a command, the line handlers run in it, and so do the
 * model reactions and the connection hooks.
 */
export function collectorUnits(
  context: CollectorContext,
  { activity, history, records }: StatsSlices,
  versions: VersionsUnit,
): CollectorUnit[] {
  const latency = latencyUnit(context);
  const serviceCommands = serviceCommandsUnit(context);
  const sync = syncUnit(context, {
    afterFirst: () => void latency.measure(),
    afterEach: () => serviceCommands.askUntilAnswered(),
  });
  return [
    // After a split or a link: the servers and counts at once, then a sync that starts after it (for new users).
    topologyUnit(context, () => void sync.whole()),
    clientNoticesUnit(context),
    liveUnit(context),
    joinRefusalsUnit({ ...context, joins: () => context.connection.sync.joins }),
    activityUnit(context, { activity, records }),
    // A user's country first: the clients and WHOIS units then see the user with it.
    countriesUnit(context),
    versions,
    whoisUnit(context),
    historyUnit(context, history),
    latency,
    serviceCommands,
    countsUnit(context),
    // Last: its first sync follows the other units' start of a connection.
    sync,
    syncCommandUnit(context.model, () => sync.whole()),
  ];
}

export default definePlugin<StatsConfig>({
  name: 'stats',
  description: 'Collects the network: numbers, servers, channels, users, latency, service commands, live changes.',
  configSchema: statsConfigSchema,
  provides: ['stats.activity', 'stats.history', 'stats.records', 'stats.events'],
  start(plugin) {
    const context = createCollectorContext(plugin);
    plugin.services.provide('stats.events', context.events.service());
    const slices = addSlices(plugin);
    const versions = versionsUnit(context);
    registerStatsMetrics(plugin.metrics, {
      history: slices.history,
      versionsWaiting: () => versions.waiting,
      now: () => plugin.model.stats,
    });
    return registerUnits(plugin, context, collectorUnits(context, slices, versions));
  },
});
