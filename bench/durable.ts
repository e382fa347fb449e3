/**
 * Durable writes: what a TOKEN command costs on disk. Its answer waits for store.persisted(), which
 * writes the store's durable file (the tokens slice) with fsync and rename. Measured over three
 * stores — tokens only, a day of activity for a few thousand nicks, and the store benchmark's big
 * one — alone and while the store file itself is being written; and, for the design not taken,
 * what each command would cost if the tokens were written with everything else in the one store file.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../lib/logger.js';
import { ActivitySlice } from '../plugins/stats/model/activity.js';
import { DAY_MS, HistorySlice } from '../plugins/stats/model/history.js';
import type { ModelSlice } from '../lib/model/slice.js';
import { TokensSlice, type ApiToken } from '../plugins/tokens/model.js';
import { Store, type PersistedSlice } from '../lib/store/store.js';
import { historyRetention } from '../plugins/stats/history.js';
import { formatCount, formatMs, isSmoke, median, runBench, seededRandom, type Figure } from './common.js';
import { channelOf, nickOf } from './model.js';

const HISTORY_SECONDS = 300;
const HISTORY_RETENTION = historyRetention({ history_full_days: 7, history_hourly_days: 90, history_daily_days: 730 });
/** Tokens in every store, each created and granted (two audit entries), a tenth of them revoked. */
const TOKENS = 200;

interface StoreSize {
  name: string;
  /** Nicks that spoke today; a third of them spoke on each earlier day. */
  nicks: number;
  days: number;
}

/** What the host hands to the store for a model slice (lib/host.ts, persistNewSlices). */
function persistedSlice(slice: ModelSlice, durable = slice.persistence!.durable === true): PersistedSlice {
  const persistence = slice.persistence!;
  return {
    key: slice.name,
    snapshot: () => persistence.snapshot(),
    restore: (data) => persistence.restore(data),
    ...(persistence.snapshotJson ? { snapshotJson: () => persistence.snapshotJson!() } : {}),
    durable,
  };
}

function buildActivity(size: StoreSize): ActivitySlice {
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: 30, fold: (name) => name.toLowerCase() });
  const random = seededRandom(5);
  const today = Date.now();
  for (let day = size.days - 1; day >= 0; day--) {
    const at = new Date(today - day * DAY_MS);
    const speakers = day === 0 ? size.nicks : Math.floor(size.nicks / 3);
    for (let index = 0; index < speakers; index++) {
      const lines = 1 + Math.floor(5 * random());
      for (let line = 0; line < lines; line++) {
        activity.record(channelOf(Math.floor(200 * random() ** 2)), nickOf(index), index % 50 === 49, at);
      }
    }
  }
  return activity;
}

function buildHistory(size: StoreSize): HistorySlice {
  const history = new HistorySlice(HISTORY_RETENTION);
  const end = Date.now();
  for (let time = end - size.days * DAY_MS; time <= end; time += HISTORY_SECONDS * 1000) {
    history.add({ time, users: size.nicks, channels: 200, operators: 10, servers: 3, maxUsers: size.nicks });
  }
  return history;
}

function buildTokens(): { tokens: TokensSlice; live: ApiToken[] } {
  const tokens = new TokensSlice({ onChange: () => undefined, fold: (name) => name.toLowerCase() });
  const actor = { account: 'boss', via: 'irc' } as const;
  const live: ApiToken[] = [];
  for (let index = 0; index < TOKENS; index++) {
    const { token } = tokens.create(`account${index % 60}`, `token ${index}`, actor);
    tokens.grant(token, ['irc.users', 'netstats.*'], actor);
    if (index % 10 === 9) tokens.revoke(token, actor);
    else live.push(token);
  }
  return { tokens, live };
}

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

function describe(times: readonly number[]): string {
  return `${formatMs(median(times))} (max ${formatMs(Math.max(...times))})`;
}

const quiet = () => createLogger({ level: 'error', sink: () => undefined });

/** The figures for one store size. */
async function measure(size: StoreSize, rounds: number): Promise<Figure[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-durable-'));
  const figures: Figure[] = [];
  try {
    const activity = size.nicks > 0 ? buildActivity(size) : null;
    const history = size.nicks > 0 ? buildHistory(size) : null;
    const { tokens, live } = buildTokens();
    const others = [activity, history].filter((slice) => slice !== null);

    // The design taken: the tokens in the durable file, everything else in the store file.
    const store = new Store({ path: path.join(dir, 'store.json'), logger: quiet() });
    await store.load();
    for (const slice of [...others, tokens]) store.register(persistedSlice(slice));
    store.markDirty();
    await store.flush();
    /** One TOKEN GRANT as the command runs it: the change, the host's markDirty, then the write it waits for. */
    const command = async (round: number): Promise<number> => {
      tokens.grant(live[round % live.length]!, [`bench.round${round}`], { account: 'boss', via: 'irc' });
      store.markDirty('tokens');
      const started = performance.now();
      await store.persisted();
      return performance.now() - started;
    };
    const alone: number[] = [];
    for (let round = 0; round < rounds * 4; round++) alone.push(await command(round));
    const durableSize = statSync(store.durablePath).size;
    figures.push({
      name: `${size.name}: TOKEN command's write`,
      value: `${describe(alone)}, p90 ${formatMs(percentile(alone, 0.9))}; durable file ${formatCount(durableSize / 1024)} KB`,
      target: '≤ 100 ms',
      pass: median(alone) <= 100,
    });
    if (others.length > 0) {
      const duringStoreWrite: number[] = [];
      for (let round = 0; round < rounds; round++) {
        store.markDirty('activity');
        const storeWrite = store.flush();
        duringStoreWrite.push(await command(1000 + round));
        await storeWrite;
      }
      figures.push({
        name: `${size.name}: the same while the store file is written`,
        value: `${describe(duringStoreWrite)}; store file ${formatCount(statSync(store.path).size / 1024 / 1024, 1)} MB`,
        target: '≤ 100 ms',
        pass: median(duringStoreWrite) <= 100,
      });
    }
    await store.close();

    if (others.length > 0) {
      // The design not taken: the tokens in the one store file, which each command then rewrites whole.
      const single = new Store({ path: path.join(dir, 'single', 'store.json'), logger: quiet() });
      await single.load();
      for (const slice of others) single.register(persistedSlice(slice));
      single.register(persistedSlice(tokens, false));
      single.markDirty();
      await single.flush();
      const whole: number[] = [];
      for (let round = 0; round < rounds; round++) {
        tokens.grant(live[round % live.length]!, [`bench.single${round}`], { account: 'boss', via: 'irc' });
        single.markDirty();
        const started = performance.now();
        await single.flush();
        whole.push(performance.now() - started);
      }
      await single.close();
      figures.push({
        name: `${size.name}: one store file instead (not taken)`,
        value: `${describe(whole)} per command, plus up to one more such write when one is under way`,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

async function main() {
  const smoke = isSmoke();
  const rounds = smoke ? 2 : 5;
  const sizes: StoreSize[] = [
    { name: 'tokens only', nicks: 0, days: 0 },
    { name: `1 day, ${formatCount(smoke ? 300 : 3000)} nicks`, nicks: smoke ? 300 : 3000, days: 1 },
    { name: `30 days, ${formatCount(smoke ? 2000 : 100_000)} nicks`, nicks: smoke ? 2000 : 100_000, days: 30 },
  ];
  const figures: Figure[] = [];
  for (const size of sizes) figures.push(...(await measure(size, rounds)));
  return {
    title: 'Durable writes (TOKEN commands)',
    setup:
      `What a TOKEN command waits for before it answers: store.persisted() after one grant, which writes the store's ` +
      `durable file (${TOKENS} tokens with their audit log) to a temp file, fsyncs it, keeps the .bak and renames it ` +
      `over the old one. ${rounds * 4} commands one after another per store (median and max), and ${rounds} while the ` +
      `store file (activity, history) is being written. Stores: tokens only; one day of activity for a few thousand ` +
      `nicks; 30 days for 100,000 nicks (today's speakers; a third of them on each earlier day), as in the store ` +
      `benchmark. For comparison, the same command with the tokens kept in the one store file: the whole file written ` +
      `per command (${rounds} rounds).`,
    figures,
  };
}

runBench('Durable writes', main);
