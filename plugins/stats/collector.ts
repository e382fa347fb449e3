/**
 * What the collector's units share, and the one loop that registers them (unit.ts): their line handlers
 * become one table from command to handler, their model reactions one model listener, their timers,
 * commands and connection hooks the plugin's own.
 */
import type { PluginContext, PluginTimers } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';
import { EventTap } from './events.js';
import type { StatsConfig } from './schema.js';
import { createSyncState, type SyncState } from './sync.js';
import { TaskQueue } from './task-queue.js';
import type { CollectorUnit, LineHandler } from './unit.js';

/** The state of one connection: made anew at each `ready`. */
export interface CollectorConnection {
  /** Set once registration, OPER and bot mode are done: a sync before that would run as a non-operator. */
  ready: boolean;
  /** What the bot asked and learnt about the network's answers on this connection. */
  sync: SyncState;
}

/**
 * The collector's network work runs in turns (task-queue.ts): syncs and latency probes in one queue, so that no
 * probe waits behind a megabyte of WHO replies; the LISTs between syncs in their own, so that they go on during
 * a long sync (a refresh's WHO slice takes 20 s at 50,000 users: channels form and empty meanwhile); the
 * services' HELP in its own, a conversation with them rather than a server query, so that a slow one (tens of
 * seconds on a loaded network) never holds up the counts and syncs.
 */
export interface CollectorQueues {
  network: TaskQueue;
  lists: TaskQueue;
  services: TaskQueue;
}

/** What every unit works with. */
export interface CollectorContext extends SyncContext {
  timers: PluginTimers;
  connection: CollectorConnection;
  queues: CollectorQueues;
  /** The time now, one Date per millisecond: shared, so nobody may change it. */
  now: () => Date;
  /** The network's events, told by the units that read them (`stats.events`). */
  events: EventTap;
}

/**
 * The time now, as one Date per millisecond: every line asks for it, and a Date of its own for each
 * was a third of what the collector allocated per line.
 */
export function millisecondClock(): () => Date {
  let millisecond = NaN;
  let date = new Date();
  return () => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      date = new Date(now);
    }
    return date;
  };
}

export function createCollectorContext({
  irc,
  model,
  logger,
  config,
  timers,
}: PluginContext<StatsConfig>): CollectorContext {
  // A task that fails because the connection went is logged quietly.
  const interrupted = (): boolean => !irc.state.connected;
  return {
    irc,
    model,
    logger,
    config,
    timers,
    connection: { ready: false, sync: createSyncState() },
    queues: {
      network: new TaskQueue(logger, interrupted),
      lists: new TaskQueue(logger, interrupted),
      services: new TaskQueue(logger, interrupted),
    },
    now: millisecondClock(),
    events: new EventTap(model, logger),
  };
}

/**
 * The units' line handlers as one table, in the units' order within a command: a command with one handler maps
 * to it, one with several to a function that runs them in turn.
 */
export function lineTable(units: readonly CollectorUnit[]): ReadonlyMap<string, LineHandler> {
  const byCommand = new Map<string, LineHandler[]>();
  for (const unit of units) {
    for (const [command, handler] of Object.entries(unit.lines ?? {})) {
      const handlers = byCommand.get(command) ?? [];
      handlers.push(handler);
      byCommand.set(command, handlers);
    }
  }
  const table = new Map<string, LineHandler>();
  for (const [command, handlers] of byCommand) {
    const [only] = handlers;
    table.set(
      command,
      handlers.length === 1
        ? only!
        : (message) => {
            for (const handler of handlers) handler(message);
          },
    );
  }
  return table;
}

/**
 * One model listener for every unit's reactions (each user or channel is looked up once for all), and for the
 * events the model's changes tell.
 */
function registerReactions(
  plugin: PluginContext<StatsConfig>,
  units: readonly CollectorUnit[],
  events: EventTap,
): void {
  const { model } = plugin;
  const userChanged = units.flatMap((unit) => unit.reactions?.userChanged ?? []);
  const channelCounted = units.flatMap((unit) => unit.reactions?.channelCounted ?? []);
  const synced = units.flatMap((unit) => unit.reactions?.synced ?? []);
  plugin.onModelChange((change) => {
    events.changed(change);
    if (change.slice === 'network' && change.kind === 'synced') for (const react of synced) react();
    if (!change.name) return;
    if (change.slice === 'users' && change.kind === 'upsert') {
      const user = model.users.get(change.name);
      if (user) for (const react of userChanged) react(user);
    } else if (change.slice === 'channels' && (change.kind === 'join' || change.kind === 'upsert')) {
      const key = model.fold(change.name);
      const channel = model.channels.byKey(key);
      if (channel) for (const react of channelCounted) react(channel, key);
    }
  });
}

/**
 * Register the units with the plugin's context, in their order: lines, model reactions, the connection's
 * start and end, timers and commands. Returns the plugin's stop function.
 */
export function registerUnits(
  plugin: PluginContext<StatsConfig>,
  { connection, events }: CollectorContext,
  units: readonly CollectorUnit[],
): () => void {
  const { irc } = plugin;
  const table = lineTable(units);
  irc.on('message', (message) => table.get(message.command)?.(message));
  registerReactions(plugin, units, events);
  irc.on('ready', () => {
    connection.ready = true;
    connection.sync = createSyncState();
    for (const unit of units) unit.onReady?.();
  });
  irc.on('disconnected', () => {
    connection.ready = false;
    for (const unit of units) unit.onDisconnected?.();
  });
  for (const unit of units) {
    for (const timer of unit.timers ?? []) plugin.timers.every(timer.everyMs, timer.run);
    for (const command of unit.commands ?? []) plugin.commands.register(command);
  }
  return () => {
    for (const unit of units) unit.onStop?.();
  };
}
