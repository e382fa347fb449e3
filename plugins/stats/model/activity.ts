/**
 * Chat activity the bot sees in its channels: lines (PRIVMSG, NOTICE, CTCP
 * ACTION) per channel and per nick. Today is kept per hour, with who spoke in
 * which channel; earlier days keep their totals only, for `retentionDays` days
 * (today included). Days are calendar days in the configured time zone.
 *
 * Each line is recorded with whether its channel was hidden (secret, private)
 * at the time, so public views can leave those lines out.
 */
import { detached, firstInOrder, type ModelSlice, type Persistence } from '../../../lib/sdk.js';
import type { ChannelLines, NickLines } from '../contract.js';
import { ActivityCodec, activitySnapshot, type StoredActivity } from './activity-codec.js';
import type { ChannelDay, DayActivity } from './activity-day.js';
import { NickCounts, NickTotalsBuilder, SpeakerCounts, type NickDay } from './nick-counts.js';
import { addDays, TimeZone } from './time-zone.js';

const HOURS = 24;
/** Every UTC offset in use is a whole number of quarter hours, so one quarter hour has one date and one hour. */
const QUARTER_HOUR_MS = 15 * 60 * 1000;

export type { ChannelDay, DayActivity } from './activity-day.js';
export type { NickDay } from './nick-counts.js';

/** The current day, as it is counted. */
interface CountedDay extends DayActivity {
  nicks: NickCounts;
  speakers: SpeakerCounts;
  /** The day's channels by id. */
  channelList: ChannelDay[];
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
  return b[1] - a[1] || compareKeys(a[0], b[0]);
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
  private cachedDay: CountedDay | null = null;
  private cachedQuarter = NaN;
  private currentHour = 0;

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
    const nickId = day.nicks.add(nickKey, nick, hour, hidden);
    day.speakers.add(nickId, channelDay.id);
    day.lines++;
    channelDay.lines++;
    channelDay.hourly![hour]!++;
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
    this.dayList.push(countedDay(date, 0));
    const oldest = addDays(date, 1 - this.options.retentionDays);
    while (this.dayList.length > 0 && this.dayList[0]!.date < oldest) this.dayList.shift();
    this.changedSinceTaken = true;
    return true;
  }

  /** The top `limit` nicks of a day; with `include`, counting only lines in the channels it accepts. */
  topNicks(day: DayActivity, limit: number, include?: ChannelFilter): NickLines[] {
    const { nicks } = day;
    let totals: Iterable<[number, number]>;
    if (include) {
      // Lines by channel only the current day keeps: an earlier day has none to count then.
      if (!isCounted(day)) return [];
      const sums = new Float64Array(nicks.size);
      const counted = day.channelList.map((channel) => include(channel));
      day.speakers.forEach((nickId, channelId, lines) => {
        if (counted[channelId]) sums[nickId]! += lines;
      });
      totals = withLines(nicks.size, (index) => sums[index]!);
    } else {
      totals = withLines(nicks.size, (index) => nicks.linesAt(index));
    }
    return leaders(totals, limit, (index) => nicks.keyAt(index)).map(([index, lines]) => ({
      nick: nicks.nickAt(index),
      lines,
    }));
  }

  /** The top `limit` channels of a day among those `include` accepts. */
  topChannels(day: DayActivity, limit: number, include: ChannelFilter = () => true): ChannelLines[] {
    const counted = [...day.channels]
      .filter(([, channel]) => channel.lines > 0 && include(channel))
      .map(([key, channel]): [string, number] => [key, channel.lines]);
    return firstInOrder(counted, limit, byLinesThenKey).map(([key, lines]) => ({
      name: day.channels.get(key)!.name,
      lines,
    }));
  }

  /** The top `limit` speakers of one channel on a day. */
  topSpeakers(day: DayActivity, channel: string, limit: number): NickLines[] {
    const speakers = this.speakerLines(day, channel);
    return leaders(speakers, limit, (index) => day.nicks.keyAt(index)).map(([index, lines]) => ({
      nick: day.nicks.nickAt(index),
      lines,
    }));
  }

  /** Lines per folded nick in one channel on a day (the current day only; earlier days keep no speakers). */
  speakersOf(day: DayActivity, channel: string): Map<string, number> {
    return new Map(this.speakerLines(day, channel).map(([index, lines]) => [day.nicks.keyAt(index), lines]));
  }

  channelOn(day: DayActivity, channel: string): ChannelDay | undefined {
    return day.channels.get(this.options.fold(channel));
  }

  nickOn(day: DayActivity, nick: string): NickDay | undefined {
    return day.nicks.get(this.options.fold(nick));
  }

  /** [nick index, lines] of one channel's speakers on a day. */
  private speakerLines(day: DayActivity, channel: string): [number, number][] {
    const id = day.channels.get(this.options.fold(channel))?.id;
    const { speakers } = day;
    if (id === undefined || !speakers) return [];
    return speakers.nicksIn(id).map((nickId): [number, number] => [nickId, speakers.get(nickId, id)]);
  }

  /**
   * The current day (after a rollover, if `at` is past it); sets {@link currentHour} to the hour of `at`.
   * Within the quarter hour of the call before, both are what they were then, so the time zone is not asked.
   */
  private currentDay(at: Date): CountedDay {
    const quarter = Math.floor(at.getTime() / QUARTER_HOUR_MS);
    const cached = this.cachedDay;
    // The list may have changed since (a rollover by the owner, a restore): the day must still be the last one.
    if (quarter === this.cachedQuarter && cached !== null && cached === this.dayList[this.dayList.length - 1]) {
      return cached;
    }
    this.rollover(at);
    // The last day is always a counted one: rollover and restore make it so, and compact only earlier ones.
    const day = this.dayList[this.dayList.length - 1]!;
    if (!isCounted(day)) throw new Error(`ActivitySlice: the current day ${day.date} has no counts`);
    this.cachedDay = day;
    this.cachedQuarter = quarter;
    this.currentHour = this.timeZone.at(at).hour;
    return day;
  }

  private channelDay(day: CountedDay, key: string, name: string, hidden: boolean): ChannelDay {
    let channel = day.channels.get(key);
    if (!channel) {
      channel = { id: day.channelList.length, name, lines: 0, hidden, peakUsers: 0, hourly: new Uint32Array(HOURS) };
      day.channelList.push(channel);
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
    const days: DayActivity[] = [];
    // Hours are only read for the newest day: a million nick-days of hours made only to be dropped cost seconds.
    const isDate = (date: unknown): date is string => typeof date === 'string' && /^\d{4}-\d\d-\d\d$/.test(date);
    let newest = '';
    for (const stored of data.days) if (isDate(stored?.date) && stored.date > newest) newest = stored.date;
    for (const stored of data.days) {
      if (!isDate(stored?.date)) continue;
      days.push(stored.date === newest ? this.restoreCounted(stored) : this.restoreTotals(stored));
    }
    days.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    // Only the newest day may be the current one; the others keep their totals only.
    for (const day of days.slice(0, -1)) compact(day);
    this.dayList.splice(0, this.dayList.length, ...days);
  }

  /** The newest stored day, with its hours and speakers, to go on counting. */
  private restoreCounted(stored: StoredDay): CountedDay {
    const { fold } = this.options;
    const day = countedDay(stored.date, count(stored.lines));
    const { nicks } = day;
    for (const nick of Array.isArray(stored.nicks) ? stored.nicks : []) {
      if (typeof nick?.nick !== 'string') continue;
      const hidden = nick.hidden_hourly ? hoursFrom(nick.hidden_hourly) : null;
      nicks.set(
        fold(nick.nick),
        nick.nick,
        count(nick.lines),
        count(nick.hidden_lines),
        hoursFrom(nick.hourly),
        hidden,
      );
    }
    for (const entry of Array.isArray(stored.channels) ? stored.channels : []) {
      if (typeof entry?.name !== 'string') continue;
      const key = fold(entry.name);
      const channel: ChannelDay = {
        id: day.channels.get(key)?.id ?? day.channelList.length,
        name: entry.name,
        lines: count(entry.lines),
        hidden: entry.hidden !== false,
        peakUsers: count(entry.peak_users),
        hourly: hoursFrom(entry.hourly),
      };
      day.channelList[channel.id] = channel;
      day.channels.set(key, channel);
      if (!entry.speakers || typeof entry.speakers !== 'object') continue;
      for (const [nickKey, lines] of Object.entries(entry.speakers)) {
        // A speaker without a nick record of its own still counts in the channel.
        let nickId = nicks.indexOf(nickKey);
        if (nickId < 0) nickId = nicks.set(nickKey, nickKey, 0, 0, null, null);
        day.speakers.add(nickId, channel.id, count(lines));
      }
    }
    return day;
  }

  /** An earlier stored day: its totals. */
  private restoreTotals(stored: StoredDay): DayActivity {
    const { fold } = this.options;
    const channels = new Map<string, ChannelDay>();
    for (const channel of Array.isArray(stored.channels) ? stored.channels : []) {
      if (typeof channel?.name !== 'string') continue;
      const key = fold(channel.name);
      channels.set(key, {
        id: channels.get(key)?.id ?? channels.size,
        name: channel.name,
        lines: count(channel.lines),
        hidden: channel.hidden !== false,
        peakUsers: count(channel.peak_users),
        hourly: null,
      });
    }
    const nicks = new NickTotalsBuilder();
    for (const nick of Array.isArray(stored.nicks) ? stored.nicks : []) {
      if (typeof nick?.nick !== 'string') continue;
      nicks.add(fold(nick.nick), nick.nick, count(nick.lines), count(nick.hidden_lines));
    }
    return { date: stored.date, lines: count(stored.lines), channels, nicks: nicks.build(), speakers: null };
  }
}

type StoredDay = StoredActivity['days'][number];

function countedDay(date: string, lines: number): CountedDay {
  return {
    date,
    lines,
    channels: new Map(),
    nicks: new NickCounts(),
    speakers: new SpeakerCounts(),
    channelList: [],
  };
}

function isCounted(day: DayActivity): day is CountedDay {
  return day.nicks instanceof NickCounts && day.speakers !== null && 'channelList' in day;
}

/**
 * A day that is over keeps its totals; the hours, and the lines per nick and channel, go.
 * The day stays the same object (the store's writer keeps its text by it).
 */
function compact(day: DayActivity): void {
  for (const channel of day.channels.values()) channel.hourly = null;
  if (day.nicks instanceof NickCounts) day.nicks = day.nicks.totals();
  day.speakers = null;
  if ('channelList' in day) delete (day as { channelList?: ChannelDay[] }).channelList;
}

/**
 * The first `limit` of `[index, lines]` entries, most lines first, then by folded name (`keyOf`),
 * so ties always come out the same.
 */
/** `[index, lines]` of the records with lines, made one at a time: only the leaders are kept. */
function* withLines(size: number, linesAt: (index: number) => number): Generator<[number, number]> {
  for (let index = 0; index < size; index++) {
    const lines = linesAt(index);
    if (lines > 0) yield [index, lines];
  }
}

function leaders(
  entries: Iterable<[number, number]>,
  limit: number,
  keyOf: (index: number) => string,
): [number, number][] {
  // The names are compared only between equal counts, and only for what may make the first `limit`.
  return firstInOrder(entries, limit, (a, b) => b[1] - a[1] || compareKeys(keyOf(a[0]), keyOf(b[0])));
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
