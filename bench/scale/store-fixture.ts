/**
 * The store a bot on a big network has after a month: written before the bot starts, through the
 * real slices and the real Store, so the file is exactly what the bot itself would have saved.
 *
 * - Activity: the last 24 hours of chat in the bot's channels (the crowd's planned biggest
 *   `chatChannels`), by the crowd's own nicks: every member speaks, in one to four hours of the day,
 *   a few lines each hour. The times run over the last 24 hours, so part of it may be yesterday (kept
 *   as that day's totals, as the bot keeps it).
 * - History: a point every `historySeconds` for 30 days, thinned as the bot thins it (full resolution
 *   for 7 days, then hourly).
 * - Tokens: one API token allowed `irc.users` and `irc.user`, for counting the model's users.
 */
import { createLogger } from '../../lib/logger.js';
import { casefold } from '../../lib/irc/casemapping.js';
import { ActivitySlice } from '../../plugins/stats/model/activity.js';
import { DAY_MS, HOUR_MS, HistorySlice } from '../../plugins/stats/model/history.js';
import type { ModelSlice } from '../../lib/model/slice.js';
import { TokensSlice } from '../../plugins/tokens/model.js';
import { Store, type PersistedSlice } from '../../lib/store/store.js';
import { seededRandom, type ScalePlan } from '../../scripts/scale-crowd/plan.js';

export interface StoreFixtureOptions {
  /** The bot's store.path. */
  path: string;
  plan: ScalePlan;
  /** The bot's channels: the plan's first this many. */
  chatChannels: number;
  /** Days of history points (default 30). */
  historyDays?: number;
  /** The bot's `history_seconds` (default 300). */
  historySeconds?: number;
  /** The LUSERS counts the history points carry. */
  network: { users: number; channels: number; servers: number; operators: number };
  now?: Date;
}

export interface StoreFixture {
  /** An API token allowed `irc.users` and `irc.user`. */
  token: string;
  speakers: number;
  lines: number;
  historyPoints: number;
}

/** What the host hands to the store for a model slice (lib/host.ts, persistNewSlices). */
function persisted(slice: ModelSlice): PersistedSlice {
  const persistence = slice.persistence!;
  return {
    key: slice.name,
    snapshot: () => persistence.snapshot(),
    restore: (data) => persistence.restore(data),
    ...(persistence.snapshotJson ? { snapshotJson: () => persistence.snapshotJson!() } : {}),
    durable: persistence.durable === true,
  };
}

export async function writeStoreFixture(options: StoreFixtureOptions): Promise<StoreFixture> {
  const now = options.now ?? new Date();
  const random = seededRandom(11);
  const fold = (name: string): string => casefold(name);
  // The bot's defaults: time_zone UTC, retention_days 30, history 7 days full, 90 hourly, 730 daily.
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: 30, fold });
  const history = new HistorySlice({ fullMs: 7 * DAY_MS, hourlyMs: 90 * DAY_MS, dailyMs: 730 * DAY_MS });
  const tokens = new TokensSlice({ onChange: () => undefined, fold });

  // Lines by hours ago (23 = the oldest), so the slice sees time go forward, as the bot does.
  const byHour: [channel: string, nick: string, lines: number][][] = Array.from({ length: 24 }, () => []);
  const speakers = new Set<string>();
  options.plan.users.forEach((user) => {
    for (const channel of user.channels) {
      if (channel >= options.chatChannels) continue;
      speakers.add(user.nick);
      const hours = 1 + Math.floor(random() * 4);
      for (let hour = 0; hour < hours; hour++) {
        byHour[Math.floor(random() * 24)]!.push([
          options.plan.channels[channel]!,
          user.nick,
          1 + Math.floor(random() * 8),
        ]);
      }
    }
  });
  let lines = 0;
  for (let hoursAgo = 23; hoursAgo >= 0; hoursAgo--) {
    const at = new Date(now.getTime() - hoursAgo * HOUR_MS);
    for (const [channel, nick, count] of byHour[hoursAgo]!) {
      for (let line = 0; line < count; line++) activity.record(channel, nick, false, at);
      lines += count;
    }
  }
  const { users, channels, servers, operators } = options.network;
  const step = (options.historySeconds ?? 300) * 1000;
  for (let time = now.getTime() - (options.historyDays ?? 30) * DAY_MS; time <= now.getTime(); time += step) {
    history.add({ time, users, channels, operators, servers, maxUsers: users });
  }
  const { token, secret } = tokens.create('scalebench', 'scale bench', { account: 'scalebench', via: 'irc' });
  tokens.grant(token, ['irc.users', 'irc.user'], { account: 'scalebench', via: 'irc' });

  const store = new Store({ path: options.path, logger: createLogger({ level: 'error', sink: () => undefined }) });
  await store.load();
  for (const slice of [activity, history, tokens]) store.register(persisted(slice));
  store.markDirty();
  await store.close();
  return { token: secret, speakers: speakers.size, lines, historyPoints: history.size };
}
