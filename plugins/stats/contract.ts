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

/** The kinds of {@link NetworkEvent}. */
export type NetworkEventType =
  | 'join'
  | 'part'
  | 'kick'
  | 'quit'
  | 'nick'
  | 'topic'
  | 'mode'
  | 'away'
  | 'account'
  | 'connect'
  | 'channel_created'
  | 'channel_emptied'
  | 'server_linked'
  | 'server_split'
  | 'counts';

/**
 * An event's data: JSON in the contract's field names. What says who a user is (`ident`, `host`, `ip`,
 * `realname`, `account`, where the collector knows them) is in one field, `identity`, so that a reader not
 * allowed to see users' details gets the event without it.
 */
export type NetworkEventData = Readonly<Record<string, unknown>>;

/**
 * Something the collector saw happen on the network, as it happened: a line it read (a JOIN, a QUIT, a server
 * notice of a client that connected), or a change of the model a line or a query made (a channel that formed
 * or emptied, a server that linked or split, new counts). Each comes in two forms, taken when it happened, so
 * that nobody has to look at the model afterwards (a user who quit is gone by then, with their channels).
 */
export interface NetworkEvent {
  readonly type: NetworkEventType;
  /** When the collector saw it, ms since the epoch. */
  readonly time: number;
  /**
   * Everything the collector knows of it, for readers who may see every channel and user: null when only the
   * public form exists (a channel a public reader now sees appear, which a full reader saw before).
   */
  readonly data: NetworkEventData | null;
  /**
   * What a public reader may see (the public API's rules: no hidden channel, no user seen only in hidden
   * channels, no `identity`): null when nothing of it is public.
   */
  readonly publicData: NetworkEventData | null;
  /**
   * For readers who may see every channel but not who users are, where that is less than `data` without its
   * `identity` (a mode change's ban masks are left out): absent where it is not.
   */
  readonly tokenData?: NetworkEventData | null;
  /** The channel it is about, as named, if any (for filters). */
  readonly channel?: string;
  /** The server it is about, if any (for filters). */
  readonly server?: string;
}

/** `stats.events`: the network's events as the collector sees them. */
export interface EventsService {
  /** Call `listener` with each event from now on, in the order they happened; returns the call that stops it. */
  subscribe(listener: (event: NetworkEvent) => void): () => void;
}

declare module '../../lib/sdk.js' {
  interface Services {
    /** Chat activity by day, channel and nick (the stats plugin). */
    'stats.activity': ActivityService;
    /** The network's counts over time (the stats plugin). */
    'stats.history': HistoryService;
    /** Each channel's record of users (the stats plugin). */
    'stats.records': RecordsService;
    /** The network's events as they happen (the stats plugin). */
    'stats.events': EventsService;
  }
}
