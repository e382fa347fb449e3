/**
 * The plugin's own model slices (activity, history, channel records), made from the config, added to the
 * model (the host hands them to the store when the plugin's start returns, which restores what was saved)
 * and offered to the other plugins as the `stats.*` services.
 */
import { errorMessage, type PluginContext } from '../../lib/sdk.js';
import { historyRetention } from './history.js';
import { ActivitySlice } from './model/activity.js';
import { ChannelRecordsSlice } from './model/channel-records.js';
import { HistorySlice } from './model/history.js';
import type { StatsConfig } from './schema.js';
import { historyService } from './services.js';

export interface StatsSlices {
  activity: ActivitySlice;
  history: HistorySlice;
  records: ChannelRecordsSlice;
}

/** What of the plugin's config the slices are made from. */
export type SlicesConfig = Pick<
  StatsConfig,
  'time_zone' | 'retention_days' | 'history_full_days' | 'history_hourly_days' | 'history_daily_days'
>;

/** Make the slices, add them to the model and provide their services; a bad `time_zone` is an error of the config. */
export function addSlices({
  model,
  config,
  services,
}: Pick<PluginContext<SlicesConfig>, 'model' | 'config' | 'services'>): StatsSlices {
  let activity: ActivitySlice;
  try {
    activity = new ActivitySlice({
      timeZone: config.time_zone,
      retentionDays: config.retention_days,
      fold: (name) => model.fold(name),
    });
  } catch (error) {
    throw new Error(`config.plugins.stats.time_zone: ${errorMessage(error)}`, { cause: error });
  }
  const history = new HistorySlice(historyRetention(config));
  const records = new ChannelRecordsSlice((name) => model.fold(name));
  model.addSlice(activity);
  model.addSlice(history);
  model.addSlice(records);
  services.provide('stats.activity', activity);
  services.provide('stats.history', historyService(history));
  services.provide('stats.records', { channel: (name) => records.channel(name) });
  return { activity, history, records };
}
