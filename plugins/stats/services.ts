/**
 * What the stats plugin offers the other plugins (`context.services.get(...)`): today's and earlier days'
 * chat activity, and the history of the network's counts. A plugin that uses them imports these keys only.
 */
import type { ActivitySlice } from './model/activity.js';
import type { HistorySlice } from './model/history.js';
import { ServiceKey } from '../../lib/plugin.js';

/** Lines per channel and per nick, today by the hour and earlier days in total. */
export const ACTIVITY = new ServiceKey<ActivitySlice>('stats.activity');

/** The network's counts over time. */
export const HISTORY = new ServiceKey<HistorySlice>('stats.history');
