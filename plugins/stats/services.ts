/**
 * What the stats plugin offers the other plugins: today's and earlier days' chat activity
 * (`stats.activity`), the history of the network's counts (`stats.history`), and each channel's record of
 * users (`stats.records`). Their contracts are in contract.ts (`ActivityService`, `HistoryService` and
 * `RecordsService`, entries of the SDK's `Services`; the package's public SDK exports them), so a plugin that
 * uses them, an outside one included, imports nothing from this folder; the slices are provided as they are,
 * and the compiler holds them to those contracts.
 */
import type { HistoryService } from './contract.js';
import { bucketPoints, type HistorySlice } from './model/history.js';

export function historyService(history: HistorySlice): HistoryService {
  return { query: (since, until) => history.query(since, until), buckets: bucketPoints };
}
