/**
 * Store: one flush of the persisted slices at 100,000 users and 30 days of
 * history, its duration, the file's size and the longest the event loop was
 * blocked meanwhile (perf_hooks.monitorEventLoopDelay).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createLogger } from '../lib/logger.js';
import { ActivitySlice } from '../lib/model/activity.js';
import { DAY_MS, HistorySlice } from '../lib/model/history.js';
import { Store } from '../lib/store/store.js';
import { historyRetention } from '../plugins/stats/history.js';
import { formatCount, formatMs, isSmoke, median, runBench, seededRandom } from './common.js';
import { channelOf, nickOf } from './model.js';

const DAYS = 30;
const HISTORY_SECONDS = 300;

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

function buildHistory(users: number): HistorySlice {
  const history = new HistorySlice(
    historyRetention({ history_full_days: 7, history_hourly_days: 90, history_daily_days: 730 }),
  );
  const end = Date.now();
  for (let time = end - DAYS * DAY_MS; time <= end; time += HISTORY_SECONDS * 1000) {
    history.add({ time, users, channels: 5000, operators: 100, servers: 5, maxUsers: users });
  }
  return history;
}

async function main() {
  const smoke = isSmoke();
  const users = smoke ? 2000 : 100_000;
  const rounds = smoke ? 1 : 5;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-store-'));
  const file = path.join(dir, 'store.json');
  const store = new Store({ path: file, logger: createLogger({ level: 'error', sink: () => undefined }) });
  try {
    await store.load();
    const activity = buildActivity(users);
    const history = buildHistory(users);
    store.register({ key: activity.name, snapshot: () => activity.persistence.snapshot(), restore: () => undefined });
    store.register({ key: history.name, snapshot: () => history.persistence.snapshot(), restore: () => undefined });
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
    const block = median(blocks);
    return {
      title: 'Store',
      setup:
        `${rounds} flushes (medians) of the activity slice (${DAYS} days: ${formatCount(users)} speakers today with ` +
        `hourly counts, a third of them on each earlier day) and the history slice (a point every ${HISTORY_SECONDS} s ` +
        `for ${DAYS} days) through the real Store (lowdb, atomic write). Users themselves are not persisted.`,
      figures: [
        { name: 'flush time', value: formatMs(median(times)) },
        { name: 'file size', value: `${formatCount(statSync(file).size / 1024 / 1024, 1)} MB` },
        {
          name: 'longest event-loop block',
          value: `${formatMs(block)} (worst round ${formatMs(Math.max(...blocks))})`,
          target: '≤ 20 ms',
          pass: block <= 20,
        },
      ],
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench('Store', main);
