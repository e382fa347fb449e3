/**
 * The contracts of the stats plugin's services: `stats.activity`, `stats.history` and `stats.records`, added
 * to the SDK's `Services` here. Types only: the package's public SDK (app/sdk.ts, `irc-network-data/sdk`)
 * re-exports them, so that a plugin from outside this repository types its use of them with that entry
 * alone, and a built-in plugin that uses them gets them through `Services` without importing this folder.
 * The plugin implements them (services.ts, model/), and the compiler holds it to them where it calls
 * `services.provide`.
 */

/** A day of chat activity: a handle to pass back to {@link ActivityService}'s methods. */
export interface ActivityDay {
  /** `YYYY-MM-DD` in the stats plugin's time zone. */
  readonly date: string;
  /** Every line counted that day. */
  readonly lines: number;
}

/** One channel on one day. */
export interface ChannelActivity {
  /** The channel's name as it was last seen that day. */
  name: string;
  lines: number;
  /** Whether the channel was hidden (secret, private) when its last line (or member count) was seen. */
  hidden: boolean;
  /** The most members the bot saw in it at once that day. */
  peakUsers: number;
  /** Today only: lines per hour of the day; null on earlier days. */
  hourly: Uint32Array | null;
}

/** One nick on one day. */
export interface NickActivity {
  nick: string;
  lines: number;
  /** Of those, lines in channels that were hidden at the time. */
  hiddenLines: number;
  /** Today only: lines per hour; null on earlier days. */
  hourly: Uint32Array | null;
  /** Today only, and only once the nick said something in a hidden channel: hidden lines per hour. */
  hiddenHourly: Uint32Array | null;
}

/** A nick of a leaderboard. */
export interface NickLines {
  nick: string;
  lines: number;
}

/** A channel of a leaderboard. */
export interface ChannelLines {
  name: string;
  lines: number;
}

/** `stats.activity`: lines per channel and per nick, today by the hour and earlier days in total (read only). */
export interface ActivityService {
  /** The time zone whose midnight starts a new day. */
  readonly timeZone: { readonly name: string };
  /** The date (`YYYY-MM-DD`) `time` falls on in that time zone. */
  dateOf(time: Date): string;
  /** The day `time` falls on, if anything was counted on it. */
  day(time: Date): ActivityDay | undefined;
  /** The `limit` nicks with the most lines on `day`, counting only the channels `include` accepts (if given). */
  topNicks(day: ActivityDay, limit: number, include?: (channel: ChannelActivity) => boolean): NickLines[];
  /** The `limit` channels with the most lines on `day` that `include` accepts (if given). */
  topChannels(day: ActivityDay, limit: number, include?: (channel: ChannelActivity) => boolean): ChannelLines[];
  /** The `limit` nicks with the most lines in `channel` on `day` (the current day only). */
  topSpeakers(day: ActivityDay, channel: string, limit: number): NickLines[];
  channelOn(day: ActivityDay, channel: string): ChannelActivity | undefined;
  nickOn(day: ActivityDay, nick: string): NickActivity | undefined;
}

/** The network's counts at one time; a count the collector did not know then is null. */
export interface HistoryPoint {
  /** Milliseconds since the epoch (UTC). */
  time: number;
  users: number | null;
  channels: number | null;
  operators: number | null;
  servers: number | null;
  maxUsers: number | null;
}

/** `stats.history`: the network's counts over time. */
export interface HistoryService {
  /** The points from `since` to `until` (epoch ms, both included), oldest first. */
  query(since?: number, until?: number): HistoryPoint[];
  /**
   * Points grouped into buckets of `bucketMs` (aligned to the epoch, so daily buckets start at midnight
   * UTC), each the maximum of every number, timed at the bucket's start.
   */
  buckets(points: readonly HistoryPoint[], bucketMs: number): HistoryPoint[];
}

/** A channel's record of users. */
export interface ChannelRecord {
  /** The channel's name as it was last seen. */
  name: string;
  /** The most users seen at once. */
  users: number;
  /** When the channel first had that many, in ms since the epoch. */
  at: number;
}

/** `stats.records`: each channel's record of users. */
export interface RecordsService {
  /** The record of `name` (any case); undefined for a channel the collector never saw users in. */
  channel(name: string): Readonly<ChannelRecord> | undefined;
}

declare module '../../lib/sdk.js' {
  interface Services {
    /** Chat activity by day, channel and nick (the stats plugin). */
    'stats.activity': ActivityService;
    /** The network's counts over time (the stats plugin). */
    'stats.history': HistoryService;
    /** Each channel's record of users (the stats plugin). */
    'stats.records': RecordsService;
  }
}
