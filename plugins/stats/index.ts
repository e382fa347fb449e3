/**
 * The collector (`plugins.stats`): keeps the model equal to the network's
 * truth. A full sync at every connect and every `refresh_seconds`, and live
 * tracking of every change the bot sees in between.
 */
import { errorMessage } from '../../lib/logger.js';
import { definePlugin } from '../../lib/plugin.js';
import { track } from './live.js';
import { statsConfigSchema, type StatsConfig } from './schema.js';
import { fullSync, type SyncContext } from './sync.js';

export default definePlugin<StatsConfig>({
  name: 'stats',
  description: 'Collects the network: numbers, servers, channels, users, live changes.',
  configSchema: statsConfigSchema,
  start({ irc, model, logger, config, timers, commands }) {
    const context: SyncContext = { irc, model, logger, config };
    let running: Promise<void> | null = null;

    /** One sync at a time; a request while one runs joins it. */
    const sync = (): Promise<void> => {
      if (!irc.state.registered) return Promise.resolve();
      running ??= fullSync(context)
        .catch((error: unknown) => logger.warn('sync failed', { error: errorMessage(error) }))
        .finally(() => (running = null));
      return running;
    };

    irc.on('message', (message) => track(message, { irc, model }));
    irc.on('ready', () => void sync());
    timers.every(config.refresh_seconds * 1000, sync);

    commands.register({
      name: 'SYNC',
      usage: '',
      help: 'Runs a full sync of the network now (LUSERS, LINKS, LIST, WHO) and reports the counts.',
      adminOnly: true,
      async handle({ reply }) {
        await sync();
        const { stats } = model;
        reply(
          `Synced at ${stats.syncedAt ?? 'never'}: ${model.users.size} users, ${model.channels.size} channels, ` +
            `${model.servers.size} servers (network says ${stats.users ?? '?'} users)${stats.syncedAsOperator ? ', as an operator' : ''}.`,
        );
      },
    });
  },
});
