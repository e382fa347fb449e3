/**
 * The stats plugin's metrics: the network's records (the most users and channels its history holds)
 * and the CTCP VERSION queue (users whose client is still to be asked).
 */
import type { PluginMetrics } from '../../lib/sdk.js';
import type { HistorySlice } from './model/history.js';

export function registerStatsMetrics(
  metrics: PluginMetrics,
  {
    history,
    versionsWaiting,
    now,
  }: {
    history: HistorySlice;
    versionsWaiting: () => number;
    now: () => { users: number | null; channels: number | null };
  },
): void {
  const record = (name: string, help: string, field: 'users' | 'channels'): void => {
    metrics.gauge({
      name,
      help,
      collect(gauge) {
        // The count now may be above what the history has kept so far (a new network, a point not yet due).
        let best: number | null = now()[field];
        for (const point of history.query()) {
          const value = point[field];
          if (value !== null && (best === null || value > best)) best = value;
        }
        if (best === null) gauge.reset();
        else gauge.set(best);
      },
    });
  };
  record(
    'irc_users_record',
    'The most users the history holds (as long as history_daily_days keeps it), or the count now if higher.',
    'users',
  );
  record('irc_channels_record', 'The most channels the history holds, or the count now if higher.', 'channels');
  metrics.gauge({
    name: 'irc_bot_ctcp_version_queue',
    help: 'Users waiting to be asked for their client by CTCP VERSION.',
    collect(gauge) {
      gauge.set(versionsWaiting());
    },
  });
}
