/**
 * The collector (`plugins.stats`): keeps the model equal to the network's
 * truth. A full sync at every connect and every `refresh_seconds`, live
 * tracking of every change the bot sees in between, latency probes every
 * `latency_seconds`, and the services' command lists every `commands_refresh_seconds`.
 */
import { definePlugin } from '../../lib/plugin.js';
import { noteJoinRefusal } from './joins.js';
import { measureLatency, type ProbeChoice } from './latency.js';
import { track } from './live.js';
import { statsConfigSchema, type StatsConfig } from './schema.js';
import { fetchServiceCommands } from './service-help.js';
import { createSyncState, fullSync, type SyncContext } from './sync.js';
import { TaskQueue } from './task-queue.js';

/** The longest a latency probe waits for its answer. */
const MAX_PROBE_TIMEOUT_MS = 5000;

export default definePlugin<StatsConfig>({
  name: 'stats',
  description: 'Collects the network: numbers, servers, channels, users, latency, service commands, live changes.',
  configSchema: statsConfigSchema,
  start({ irc, model, logger, config, timers, commands }) {
    const context: SyncContext = { irc, model, logger, config };
    const tasks = new TaskQueue(logger, () => !irc.state.connected);
    // Bookkeeping of one connection: what the bot asked and learnt about the network's answers.
    let syncState = createSyncState();
    let probeChoice: ProbeChoice = new Map();
    // Set once registration, OPER and bot mode are done: a sync before that would run as a non-operator.
    let ready = false;
    // Until the services have answered once, they are asked after every sync.
    let commandsMissing = true;

    const sync = (): Promise<void> =>
      ready ? tasks.run('sync', () => fullSync(context, syncState)) : Promise.resolve();
    const latency = (): Promise<void> =>
      ready && model.ready
        ? tasks.run('latency', () =>
            measureLatency(context, probeChoice, Math.min(MAX_PROBE_TIMEOUT_MS, config.latency_seconds * 1000)),
          )
        : Promise.resolve();
    const serviceCommands = (): Promise<void> =>
      ready
        ? tasks.run('commands', async () => {
            const lists = await fetchServiceCommands(context);
            if (!irc.state.connected) return;
            model.setServiceCommands(lists);
            commandsMissing = lists.length === 0;
          })
        : Promise.resolve();

    irc.on('message', (message) => {
      track(message, { irc, model });
      noteJoinRefusal(message, syncState.joins, (name) => model.fold(name));
    });
    irc.on('ready', () => {
      ready = true;
      syncState = createSyncState();
      probeChoice = new Map();
      void sync().then(() => {
        void latency();
        if (commandsMissing) void serviceCommands();
      });
    });
    irc.on('disconnected', () => {
      ready = false;
    });
    timers.every(config.refresh_seconds * 1000, () => {
      void sync().then(() => {
        if (commandsMissing) void serviceCommands();
      });
    });
    timers.every(config.latency_seconds * 1000, () => void latency());
    timers.every(config.commands_refresh_seconds * 1000, () => void serviceCommands());

    commands.register({
      name: 'SYNC',
      usage: '',
      help: 'Runs a full sync of the network now (LUSERS, LINKS, LIST, WHO, STATS P) and reports the counts.',
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
