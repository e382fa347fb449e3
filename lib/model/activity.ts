/**
 * Chat activity the bot sees in its channels: lines (PRIVMSG, NOTICE, CTCP
 * ACTION) per channel and per nick. Today is kept per hour, with who spoke in
 * which channel; earlier days keep their totals only, for `retentionDays` days
 * (today included). Days are calendar days in the configured time zone.
 *
 * Each line is recorded with whether its channel was hidden (secret, private)
 * at the time, so public views can leave those lines out.
 */
import { ActivityCodec, activitySnapshot, type StoredActivity } from './activity-codec.js';
import type { ModelSlice, Persistence } from './slice.js';
import { addDays, TimeZone } from './time-zone.js';
import { detached } from './users.js';

const HOURS = 24;
/** Nicks whose hours share one buffer. */
const HOURS_PER_BLOCK = 1024;
/** Every UTC offset in use is a whole number of quarter hours, so one quarter hour has one date and one hour. */
const QUARTER_HOUR_MS = 15 * 60 * 1000;

/** One channel on one day. */
export interface ChannelDay {
  name: string;
  lines: number;
  /** Whether the channel was hidden when its last line (or member count) was seen. */
  hidden: boolean;
  /** The most members the bot saw in it at once that day. */
  peakUsers: number;
  /** Today only: lines per hour of the day; null on earlier days. */
  hourly: Uint32Array | null;
  /** Today only: lines per folded nick; null on earlier days. */
  speakers: Map<string, number> | null;
}

/** One nick on one day. */
export interface NickDay {
  nick: string;
  lines: number;
  /** Of those, lines in channels that were hidden at the time. */
  hiddenLines: number;
  /** Today only: lines per hour; null on earlier days. */
  hourly: Uint32Array | null;
  /** Today only: hidden lines per hour, allocated at the first one. */
  hiddenHourly: Uint32Array | null;
}

/** A nick-day as counted here: with its key in `nicks` (a restored one is given it at its first line). */
interface CountedNickDay extends NickDay {
  key?: string;
}

export interface DayActivity {
  /** `YYYY-MM-DD` in the slice's time zone. */
  date: string;
  lines: number;
  /** By folded channel name. */
  channels: Map<string, ChannelDay>;
  /** By folded nick. */
  nicks: Map<string, NickDay>;
}

export interface NickCount {
  nick: string;
  lines: number;
}

export interface ChannelCount {
  name: string;
  lines: number;
}

/** Which channels a view may count; public views leave hidden ones out. */
export type ChannelFilter = (channel: ChannelDay) => boolean;

export interface ActivityOptions {
  /** IANA time zone whose midnight starts a new day. */
  timeZone: string;
  /** Days kept, today included. */
  retentionDays: number;
  /** Folds nicks and channel names (the network's CASEMAPPING). */
  fold: (name: string) => string;
}

/** Order of a leaderboard: most lines first, then by folded name, so ties always come out the same. */
function byLinesThenKey(a: [string, number], b: [string, number]): number {
  return b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function hoursFrom(value: unknown): Uint32Array {
  const hours = new Uint32Array(HOURS);
  if (Array.isArray(value)) value.slice(0, HOURS).forEach((lines, hour) => (hours[hour] = count(lines)));
  return hours;
}

export class ActivitySlice implements ModelSlice {
  readonly name = 'activity';
  readonly persistence: Persistence<StoredActivity>;
  readonly timeZone: TimeZone;
  /** Oldest first; the last one is the current day. */
  private readonly dayList: DayActivity[] = [];
  private changedSinceTaken = false;
  /** What {@link currentDay} found last, for the quarter hour `cachedQuarter`; every line asks it again. */
  private cachedDay: DayActivity | null = null;
  private cachedQuarter = NaN;
  private currentHour = 0;
  /** The block {@link newHours} cuts nicks' hours from, and how much of it is used. */
  private hoursBlock = new Uint32Array(0);
  private hoursUsed = HOURS_PER_BLOCK * HOURS;

  constructor(private readonly options: ActivityOptions) {
    if (!Number.isInteger(options.retentionDays) || options.retentionDays < 1) {
      throw new Error(`ActivitySlice: retentionDays must be a whole number of days >= 1, got ${options.retentionDays}`);
    }
    this.timeZone = new TimeZone(options.timeZone);
    // The codec keeps the text of days before the current one: they must not change once over.
    const codec = new ActivityCodec();
    this.persistence = {
      snapshot: () => activitySnapshot(this.timeZone.name, this.dayList),
      restore: (data) => this.restore(data),
      snapshotJson: () => codec.pieces(this.timeZone.name, this.dayList),
    };
  }

  /** The calendar date of `time` in the slice's time zone. */
  dateOf(time: Date): string {
    return this.timeZone.at(time).date;
  }

  /** Every kept day, oldest first. */
  days(): readonly DayActivity[] {
    return this.dayList;
  }

  /** The day `time` falls on, if anything was recorded on it. */
  day(time: Date): DayActivity | undefined {
    const date = this.dateOf(time);
    return this.dayList.find((day) => day.date === date);
  }

  /** Whether anything changed since the last call (the owner announces changes at its own pace). */
  takeChanges(): boolean {
    const changed = this.changedSinceTaken;
    this.changedSinceTaken = false;
    return changed;
  }

  /** Count one line by `nick` in `channel`; `hidden` says whether the channel is hidden now. */
  record(channel: string, nick: string, hidden: boolean, at: Date): void {
    const { fold } = this.options;
    this.recordFolded(fold(channel), channel, fold(nick), nick, hidden, at);
  }

  /**
   * {@link record} for a caller that has the names folded already, as the slice's `fold` folds them:
   * the collector folds each name of a line once, for the model and the counts alike.
   */
  recordFolded(channelKey: string, channel: string, nickKey: string, nick: string, hidden: boolean, at: Date): void {
    const day = this.currentDay(at);
    const hour = this.currentHour;
    const channelDay = this.channelDay(day, channelKey, channel, hidden);
    let nickDay: CountedNickDay | undefined = day.nicks.get(nickKey);
    if (!nickDay) {
      // Kept all day: copies, so they do not keep the lines they were cut from alive.
      const key = detached(nickKey);
      nickDay = { nick: detached(nick), lines: 0, hiddenLines: 0, hourly: this.newHours(), hiddenHourly: null, key };
      day.nicks.set(key, nickDay);
    } else if (nickDay.nick !== nick) {
      nickDay.nick = detached(nick);
    }
    // Every channel's speakers share the nick's one key string, not a copy each from the line that added them.
    nickDay.key ??= detached(nickKey);
    const speakerKey = nickDay.key;
    day.lines++;
    channelDay.lines++;
    channelDay.hourly![hour]!++;
    channelDay.speakers!.set(speakerKey, (channelDay.speakers!.get(speakerKey) ?? 0) + 1);
    nickDay.lines++;
    nickDay.hourly![hour]!++;
    if (hidden) {
      nickDay.hiddenLines++;
      nickDay.hiddenHourly ??= new Uint32Array(HOURS);
      nickDay.hiddenHourly[hour]!++;
    }
    this.changedSinceTaken = true;
  }

  /** A channel the bot is in has `users` members now: keep today's peak. */
  notePeak(channel: string, users: number, hidden: boolean, at: Date): void {
    const day = this.currentDay(at);
    const key = this.options.fold(channel);
    const existing = day.channels.get(key);
    if (existing && existing.peakUsers >= users) return;
    this.channelDay(day, key, channel, hidden).peakUsers = users;
    this.changedSinceTaken = true;
  }

  /**
   * Start a new day when `at` is past the current one: the day before keeps its totals only,
   * and days beyond the retention are dropped. Returns whether anything changed.
   */
  rollover(at: Date): boolean {
    const date = this.dateOf(at);
    const current = this.dayList.at(-1);
    if (current && current.date >= date) return false;
    if (current) compact(current);
    this.dayList.push({ date, lines: 0, channels: new Map(), nicks: new Map() });
    const oldest = addDays(date, 1 - this.options.retentionDays);
    while (this.dayList.length > 0 && this.dayList[0]!.date < oldest) this.dayList.shift();
    this.changedSinceTaken = true;
    return true;
  }

  /** The top `limit` nicks of a day; with `include`, counting only lines in the channels it accepts. */
  topNicks(day: DayActivity, limit: number, include?: ChannelFilter): NickCount[] {
    let totals: Iterable<[string, number]>;
    if (include) {
      const sums = new Map<string, number>();
      for (const channel of day.channels.values()) {
        if (!include(channel)) continue;
        for (const [key, lines] of channel.speakers ?? []) sums.set(key, (sums.get(key) ?? 0) + lines);
      }
      totals = sums;
    } else {
      totals = [...day.nicks].map(([key, nickDay]): [string, number] => [key, nickDay.lines]);
    }
    return [...totals]
      .filter(([, lines]) => lines > 0)
      .sort(byLinesThenKey)
      .slice(0, limit)
      .map(([key, lines]) => ({ nick: day.nicks.get(key)?.nick ?? key, lines }));
  }

  /** The top `limit` channels of a day among those `include` accepts. */
  topChannels(day: DayActivity, limit: number, include: ChannelFilter = () => true): ChannelCount[] {
    return [...day.channels]
      .filter(([, channel]) => channel.lines > 0 && include(channel))
      .map(([key, channel]): [string, number] => [key, channel.lines])
      .sort(byLinesThenKey)
      .slice(0, limit)
      .map(([key, lines]) => ({ name: day.channels.get(key)!.name, lines }));
  }

  /** The top `limit` speakers of one channel on a day. */
  topSpeakers(day: DayActivity, channel: string, limit: number): NickCount[] {
    const speakers = day.channels.get(this.options.fold(channel))?.speakers ?? new Map<string, number>();
    return [...speakers]
      .sort(byLinesThenKey)
      .slice(0, limit)
      .map(([key, lines]) => ({ nick: day.nicks.get(key)?.nick ?? key, lines }));
  }

  channelOn(day: DayActivity, channel: string): ChannelDay | undefined {
    return day.channels.get(this.options.fold(channel));
  }

  nickOn(day: DayActivity, nick: string): NickDay | undefined {
    return day.nicks.get(this.options.fold(nick));
  }

  /**
   * The current day (after a rollover, if `at` is past it); sets {@link currentHour} to the hour of `at`.
   * Within the quarter hour of the call before, both are what they were then, so the time zone is not asked.
   */
  private currentDay(at: Date): DayActivity {
    const quarter = Math.floor(at.getTime() / QUARTER_HOUR_MS);
    const cached = this.cachedDay;
    // The list may have changed since (a rollover by the owner, a restore): the day must still be the last one.
    if (quarter === this.cachedQuarter && cached !== null && cached === this.dayList[this.dayList.length - 1]) {
      return cached;
    }
    this.rollover(at);
    const day = this.dayList[this.dayList.length - 1]!;
    this.cachedDay = day;
    this.cachedQuarter = quarter;
    this.currentHour = this.timeZone.at(at).hour;
    return day;
  }

  /**
   * Zeroed hours for a nick's first line of the day. A Uint32Array of 24 is too big for V8 to keep on its
   * heap, so each would get a buffer of its own, allocated and freed outside it: instead they are cut
   * from blocks shared by {@link HOURS_PER_BLOCK} nicks, which go together when the day is compacted.
   */
  private newHours(): Uint32Array {
    if (this.hoursUsed === HOURS_PER_BLOCK * HOURS) {
      this.hoursBlock = new Uint32Array(HOURS_PER_BLOCK * HOURS);
      this.hoursUsed = 0;
    }
    const hours = this.hoursBlock.subarray(this.hoursUsed, this.hoursUsed + HOURS);
    this.hoursUsed += HOURS;
    return hours;
  }

  private channelDay(day: DayActivity, key: string, name: string, hidden: boolean): ChannelDay {
    let channel = day.channels.get(key);
    if (!channel) {
      channel = { name, lines: 0, hidden, peakUsers: 0, hourly: new Uint32Array(HOURS), speakers: new Map() };
      day.channels.set(detached(key), channel);
    } else {
      channel.hidden = hidden;
      channel.name = name;
    }
    return channel;
  }

  /** Put back stored days; malformed entries are skipped, so one bad record never costs the rest. */
  private restore(data: StoredActivity): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.days)) {
      throw new Error('the "activity" slice must be an object with a "days" array');
    }
    const { fold } = this.options;
    const days: DayActivity[] = [];
    // Hours are only read for the newest day: a million nick-days of hours made only to be dropped cost seconds.
    const isDate = (date: unknown): date is string => typeof date === 'string' && /^\d{4}-\d\d-\d\d$/.test(date);
    let newest = '';
    for (const stored of data.days) if (isDate(stored?.date) && stored.date > newest) newest = stored.date;
    for (const stored of data.days) {
      if (!isDate(stored?.date)) continue;
      const current = stored.date === newest;
      const day: DayActivity = { date: stored.date, lines: count(stored.lines), channels: new Map(), nicks: new Map() };
      for (const channel of Array.isArray(stored.channels) ? stored.channels : []) {
        if (typeof channel?.name !== 'string') continue;
        const speakers =
          current && channel.speakers && typeof channel.speakers === 'object'
            ? new Map(Object.entries(channel.speakers).map(([key, lines]) => [key, count(lines)]))
            : new Map<string, number>();
        day.channels.set(fold(channel.name), {
          name: channel.name,
          lines: count(channel.lines),
          hidden: channel.hidden !== false,
          peakUsers: count(channel.peak_users),
          hourly: current ? hoursFrom(channel.hourly) : null,
          speakers: current ? speakers : null,
        });
      }
      for (const nick of Array.isArray(stored.nicks) ? stored.nicks : []) {
        if (typeof nick?.nick !== 'string') continue;
        day.nicks.set(fold(nick.nick), {
          nick: nick.nick,
          lines: count(nick.lines),
          hiddenLines: count(nick.hidden_lines),
          hourly: current ? hoursFrom(nick.hourly) : null,
          hiddenHourly: current && nick.hidden_hourly ? hoursFrom(nick.hidden_hourly) : null,
        });
      }
      days.push(day);
    }
    days.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    // Only the newest day may be the current one; the others keep their totals only.
    for (const day of days.slice(0, -1)) compact(day);
    this.dayList.splice(0, this.dayList.length, ...days);
  }
}

/** A day that is over keeps its totals; the hourly detail and the speakers per channel go. */
function compact(day: DayActivity): void {
  for (const channel of day.channels.values()) {
    channel.hourly = null;
    channel.speakers = null;
  }
  for (const nick of day.nicks.values()) {
    nick.hourly = null;
    nick.hiddenHourly = null;
  }
}
