/**
 * History points: at every `history_seconds`, the network's own numbers as the
 * last sync read them (LUSERS). Nothing is recorded while the bot is not
 * connected or has not synced: a gap is better than made-up numbers.
 */
import type { HistoryRetention, HistorySlice } from './model/history.js';
import { DAY_MS } from './model/history.js';
import type { NetworkModel } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import type { StatsConfig } from './schema.js';
import type { CollectorUnit } from './unit.js';

/** The retention windows of the history, from the config. */
export function historyRetention(
  config: Pick<StatsConfig, 'history_full_days' | 'history_hourly_days' | 'history_daily_days'>,
): HistoryRetention {
  return {
    fullMs: config.history_full_days * DAY_MS,
    hourlyMs: config.history_hourly_days * DAY_MS,
    dailyMs: config.history_daily_days * DAY_MS,
  };
}

/** Add a point now; returns whether one was added. */
export function recordHistoryPoint(model: NetworkModel, history: HistorySlice, now: Date): boolean {
  if (!model.ready) return false;
  const { stats } = model;
  history.add({
    time: now.getTime(),
    users: stats.users,
    channels: stats.channels,
    operators: stats.operators,
    servers: stats.servers,
    maxUsers: stats.maxUsers,
  });
  return true;
}

/** The history as a unit of the collector: a point every `history_seconds`, and the store told of it. */
export function historyUnit({ model, config }: CollectorContext, history: HistorySlice): CollectorUnit {
  const record = (): void => {
    if (recordHistoryPoint(model, history, new Date())) model.changed({ slice: 'history', kind: 'point' });
  };
  return { name: 'history', timers: [{ everyMs: config.history_seconds * 1000, run: record }] };
}
