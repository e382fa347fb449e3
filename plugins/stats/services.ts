/**
 * What the stats plugin offers the other plugins: today's and earlier days' chat activity, the
 * history of the network's counts, and each channel's record of users. A plugin that uses them names them in its `uses` and gets them with
 * `context.services.get('stats.activity')`; their types come from the declaration below, so it imports
 * nothing from this folder.
 */
import type { ActivitySlice } from './model/activity.js';
import type { ChannelRecordsSlice } from './model/channel-records.js';
import { bucketPoints, type HistoryPoint, type HistorySlice } from './model/history.js';

/** Lines per channel and per nick, today by the hour and earlier days in total (read only). */
export type ActivityService = Pick<
  ActivitySlice,
  'day' | 'dateOf' | 'timeZone' | 'topNicks' | 'topChannels' | 'topSpeakers' | 'channelOn' | 'nickOn'
>;

/** The network's counts over time. */
export interface HistoryService {
  /** The points from `since` to `until` (epoch ms, both included), oldest first. */
  query(since?: number, until?: number): HistoryPoint[];
  /**
   * Points grouped into buckets of `bucketMs` (aligned to the epoch, so daily buckets start at midnight
   * UTC), each the maximum of every number, timed at the bucket's start.
   */
  buckets(points: readonly HistoryPoint[], bucketMs: number): HistoryPoint[];
}

/**
 * Each channel's record: the most users the collector has seen in it at once, and when it first saw that
 * many (`at`, epoch ms). Undefined for a channel it never saw users in.
 */
export type RecordsService = Pick<ChannelRecordsSlice, 'channel'>;

declare module '../../lib/sdk.js' {
  interface Services {
    'stats.activity': ActivityService;
    'stats.history': HistoryService;
    'stats.records': RecordsService;
  }
}

export function historyService(history: HistorySlice): HistoryService {
  return { query: (since, until) => history.query(since, until), buckets: bucketPoints };
}
