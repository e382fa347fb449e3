/**
 * When the collector syncs (sync.ts says how): at the start of each connection, every `refresh_seconds`,
 * again soon after a sync that failed before the model was synced, and whole on SYNC and after a split or
 * link; and, between syncs, the network's counts and channels (LUSERS and LIST), checked eight times a second.
 */
import type { CollectorContext } from './collector.js';
import { fullSync, newChannelsDue, refreshCounts, refreshNewChannels, wholeListDue } from './sync.js';
import type { CollectorUnit } from './unit.js';

/** A failed sync is first tried again this long after it failed, then twice as long each time. */
export const SYNC_RETRY_FIRST_MS = 5000;

/** How often the counts between syncs are checked: a LIST due every half second is asked within an eighth of one. */
const COUNTS_CHECK_MS = 125;

/**
 * How long after its `failures`-th failure in a row a sync is tried again: 5 s, 10 s, 20 s…, at most the
 * refresh interval (a wait that long is left to the refresh).
 */
export function syncRetryDelayMs(failures: number, refreshMs: number): number {
  return Math.min(refreshMs, SYNC_RETRY_FIRST_MS * 2 ** Math.min(20, Math.max(0, failures - 1)));
}

/** What follows a sync, from the units that wait for one. */
export interface SyncFollowUps {
  /** After a connection's first sync, and after a sync tried again: the latency at once. */
  afterFirst: () => void;
  /** After those and after each refresh: the services' commands, until they answer. */
  afterEach: () => void;
}

/**
 * The syncs of one plugin run, one at a time in the network queue. A sync that failed before the model was
 * marked synced, while connected (a reply that never came, a refusal), is tried again before the next
 * refresh: until the first one completes the API answers 503, and a refresh may be minutes away. A retry
 * belongs to its connection.
 */
class Syncs {
  /** The next sync asks every WHO mask (the first of a connection, after a link or split, on SYNC); else a slice. */
  private wholeAsked = false;
  private readonly retry = { failures: 0, pending: false, connection: 0 };

  constructor(
    private readonly context: CollectorContext,
    private readonly followUps: SyncFollowUps,
  ) {}

  /** A sync, unless one is waiting or running (then that one). */
  sync(): Promise<void> {
    return this.context.connection.ready
      ? this.context.queues.network.run('sync', () => this.run())
      : Promise.resolve();
  }

  /** A connection's first sync, or one tried again, and what follows it. */
  first(): Promise<void> {
    return this.sync().then(() => {
      this.followUps.afterFirst();
      this.followUps.afterEach();
    });
  }

  /** A sync of every WHO mask that starts after now (what it learns must postdate what just happened). */
  whole(): Promise<void> {
    if (!this.context.connection.ready) return Promise.resolve();
    this.wholeAsked = true;
    return this.context.queues.network.runFresh('sync', () => this.run());
  }

  /** A new connection, or none: a retry of the last one is forgotten. */
  newConnection(): void {
    this.retry.connection++;
    this.retry.failures = 0;
    this.retry.pending = false;
  }

  private async run(): Promise<void> {
    const { connection, irc } = this.context;
    const state = connection.sync;
    const whole = this.wholeAsked || state.syncs === 0;
    this.wholeAsked = false;
    const completed = state.syncs;
    try {
      await fullSync(this.context, state, whole);
      this.retry.failures = 0;
    } catch (error) {
      // Marked synced already, a step after it failed (a channel's modes, the real hosts): the next refresh asks
      // again, and a whole sync now would cost the server for nothing.
      if (state.syncs > completed) this.retry.failures = 0;
      else if (state === connection.sync && connection.ready && irc.state.connected) {
        if (whole) this.wholeAsked = true;
        this.retryLater();
      }
      throw error;
    }
  }

  private retryLater(): void {
    const { config, logger, timers } = this.context;
    const { retry } = this;
    retry.failures++;
    const refreshMs = config.refresh_seconds * 1000;
    const ms = syncRetryDelayMs(retry.failures, refreshMs);
    // The refresh comes as soon: it is the next try.
    if (retry.pending || ms >= refreshMs) return;
    retry.pending = true;
    const connection = retry.connection;
    logger.info('sync to be retried', { in_ms: ms, failures: retry.failures });
    timers.after(ms, () => {
      if (connection !== retry.connection) return;
      retry.pending = false;
      // A refresh or SYNC completed meanwhile.
      if (retry.failures > 0) void this.first();
    });
  }
}

/** The sync as a unit of the collector; {@link SyncUnit.whole} is for SYNC and the topology checks. */
export interface SyncUnit extends CollectorUnit {
  whole(): Promise<void>;
}

/** A sync at each connection's start and every `refresh_seconds`, each followed by `followUps`. */
export function syncUnit(context: CollectorContext, followUps: SyncFollowUps): SyncUnit {
  const syncs = new Syncs(context, followUps);
  return {
    name: 'sync',
    whole: () => syncs.whole(),
    timers: [
      {
        everyMs: context.config.refresh_seconds * 1000,
        run: () => void syncs.sync().then(followUps.afterEach),
      },
    ],
    onReady: () => {
      syncs.newConnection();
      void syncs.first();
    },
    onDisconnected: () => syncs.newConnection(),
  };
}

/**
 * The counts and channels between syncs as a unit of the collector: the whole LIST (and LUSERS) when due, else,
 * between two whole LISTs of a big network, the channels formed in the last minute. In the LISTs' own turns,
 * beside a sync too (the requests' lane sends one LIST at a time); a sync's own LIST counts as the last one.
 */
export function countsUnit(context: CollectorContext): CollectorUnit {
  const { irc, model, connection, queues } = context;
  const check = (): void => {
    if (!connection.ready || !model.ready || queues.lists.has('counts') || queues.lists.has('new')) return;
    const now = Date.now();
    const channels = model.channels.size;
    const { listedAt, newListedAt, wholeListCostMs } = connection.sync.list;
    const { lagged } = irc.state;
    if (wholeListDue({ now, listedAt, channels, costMs: wholeListCostMs, lagged })) {
      void queues.lists.run('counts', () => refreshCounts(context, connection.sync));
      return;
    }
    const listsNewChannels = irc.state.profile.listsNewChannels;
    if (!newChannelsDue({ now, newListedAt, channels, listsNewChannels, lagged })) return;
    void queues.lists.run('new', () => refreshNewChannels(context, connection.sync));
  };
  return { name: 'counts', timers: [{ everyMs: COUNTS_CHECK_MS, run: check }] };
}
