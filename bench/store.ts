/**
 * Store: one flush of the persisted slices at 100,000 users, 20,000 channels' records and 30 days of
 * history, its duration, the file's size and the longest the event loop was
 * blocked meanwhile (perf_hooks.monitorEventLoopDelay); the process's memory
 * around the flushes, and how long loading the file back takes.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLogger } from '../lib/logger.js';
import { ActivitySlice } from '../plugins/stats/model/activity.js';
import { ChannelRecordsSlice } from '../plugins/stats/model/channel-records.js';
import { DAY_MS, HistorySlice } from '../plugins/stats/model/history.js';
import type { ModelSlice } from '../lib/model/slice.js';
import { Store, type PersistedSlice } from '../lib/store/store.js';
import { historyRetention } from '../plugins/stats/history.js';
import { formatCount, formatMs, isSmoke, median, runBench, seededRandom } from './common.js';
import { channelOf, nickOf } from './model.js';

const DAYS = 30;
const HISTORY_SECONDS = 300;
const HISTORY_RETENTION = historyRetention({ history_full_days: 7, history_hourly_days: 90, history_daily_days: 730 });

/** 30 days of activity: every user spoke today; a third of them on each earlier day. */
function buildActivity(users: number): ActivitySlice {
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: DAYS, fold: (name) => name.toLowerCase() });
  const random = seededRandom(3);
  const today = Date.now();
  for (let day = DAYS - 1; day >= 0; day--) {
    const at = new Date(today - day * DAY_MS);
    const speakers = day === 0 ? users : Math.floor(users / 3);
    for (let index = 0; index < speakers; index++) {
      const lines = 1 + Math.floor(5 * random());
      for (let line = 0; line < lines; line++) {
        activity.record(channelOf(Math.floor(200 * random() ** 2)), nickOf(index), index % 50 === 49, at);
      }
    }
  }
  return activity;
}

/** Each channel's record of users, set over the last 30 days. */
function buildRecords(channels: number): ChannelRecordsSlice {
  const records = new ChannelRecordsSlice((name) => name.toLowerCase());
  const random = seededRandom(5);
  const now = Date.now();
  for (let index = 0; index < channels; index++) {
    records.note(channelOf(index), 1 + Math.floor(3000 * random() ** 8), now - Math.floor(DAYS * DAY_MS * random()));
  }
  return records;
}

function buildHistory(users: number): HistorySlice {
  const history = new HistorySlice(HISTORY_RETENTION);
  const end = Date.now();
  for (let time = end - DAYS * DAY_MS; time <= end; time += HISTORY_SECONDS * 1000) {
    history.add({ time, users, channels: 5000, operators: 100, servers: 5, maxUsers: users });
  }
  return history;
}

/** What the host hands to the store for a model slice (lib/host.ts, persistNewSlices). */
function persisted(slice: ModelSlice): PersistedSlice {
  const persistence = slice.persistence!;
  return {
    key: slice.name,
    snapshot: () => persistence.snapshot(),
    restore: (data) => persistence.restore(data),
    ...(persistence.snapshotJson ? { snapshotJson: () => persistence.snapshotJson!() } : {}),
  };
}

const MB = 1024 * 1024;

function formatMb(bytes: number): string {
  return `${formatCount(bytes / MB)} MB`;
}

async function main() {
  const smoke = isSmoke();
  const users = smoke ? 2000 : 100_000;
  const channels = users / 5;
  const rounds = smoke ? 1 : 5;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-store-'));
  const file = path.join(dir, 'store.json');
  const store = new Store({ path: file, logger: createLogger({ level: 'error', sink: () => undefined }) });
  try {
    await store.load();
    const activity = buildActivity(users);
    const history = buildHistory(users);
    const records = buildRecords(channels);
    store.register(persisted(activity));
    store.register(persisted(history));
    store.register(persisted(records));
    const before = process.memoryUsage();
    const times: number[] = [];
    const blocks: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      // A tick to let the monitor's timer start before the flush.
      await new Promise((resolve) => setTimeout(resolve, 20));
      delay.enable();
      store.markDirty();
      const started = performance.now();
      await store.flush();
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
      delay.disable();
      blocks.push(delay.max / 1e6);
    }
    const after = process.memoryUsage();
    const peakRss = process.resourceUsage().maxRSS * 1024;
    const block = median(blocks);

    // Loading is allowed to block (it runs once, before the bot connects), but its time is worth knowing.
    const loadStarted = performance.now();
    const reader = new Store({ path: file, logger: createLogger({ level: 'error', sink: () => undefined }) });
    await reader.load();
    const parsed = performance.now();
    const restoredActivity = new ActivitySlice({
      timeZone: 'UTC',
      retentionDays: DAYS,
      fold: (name) => name.toLowerCase(),
    });
    reader.register(persisted(restoredActivity));
    reader.register(persisted(new HistorySlice(HISTORY_RETENTION)));
    const restoredRecords = new ChannelRecordsSlice((name) => name.toLowerCase());
    reader.register(persisted(restoredRecords));
    const restored = performance.now();
    await reader.close();
    if (restoredRecords.size !== records.size) {
      throw new Error(`the file restored ${restoredRecords.size} channel records, not ${records.size}`);
    }
    if (restoredActivity.days().length !== activity.days().length) {
      throw new Error(
        `the file restored ${restoredActivity.days().length} days of activity, not ${activity.days().length}`,
      );
    }
    return {
      title: 'Store',
      setup:
        `${rounds} flushes (medians) of the activity slice (${DAYS} days: ${formatCount(users)} speakers today with ` +
        `hourly counts, a third of them on each earlier day), the history slice (a point every ${HISTORY_SECONDS} s ` +
        `for ${DAYS} days) and the records of ${formatCount(channels)} channels through the real Store (lowdb, ` +
        `atomic write). Users themselves are not persisted.`,
      figures: [
        {
          name: 'flush time',
          value: `${formatMs(median(times))} (first flush ${formatMs(times[0]!)})`,
        },
        { name: 'file size', value: `${formatCount(statSync(file).size / 1024 / 1024, 1)} MB` },
        {
          name: 'longest event-loop block',
          value: `${formatMs(block)} (worst round ${formatMs(Math.max(...blocks))})`,
          target: '≤ 20 ms',
          pass: block <= 20,
        },
        {
          name: 'memory before / after the flushes',
          value:
            `heap ${formatMb(before.heapUsed)} / ${formatMb(after.heapUsed)}, ` +
            `buffers ${formatMb(before.arrayBuffers)} / ${formatMb(after.arrayBuffers)}, ` +
            `RSS ${formatMb(before.rss)} / ${formatMb(after.rss)} (peak ${formatMb(peakRss)})`,
        },
        {
          name: 'load at startup (read + parse / restore)',
          value: `${formatMs(parsed - loadStarted)} / ${formatMs(restored - parsed)}`,
        },
      ],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench('Store', main);
