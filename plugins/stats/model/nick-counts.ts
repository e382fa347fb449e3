/**
 * The activity slice's per-nick counts, laid out for the collector's hot path.
 *
 * Every chat line the bot sees counts for a nick chosen, in effect, at random among tens of
 * thousands, while the line's parser has just flushed the CPU caches with its garbage. A
 * `Map` of one object per nick cost about ten cache misses per line (the map's bucket, its
 * entry, the stored key, the object, its hours, and the channel's own map of speakers); that
 * was a quarter of the collector's time. Here a nick is one row of a typed-array hash table
 * that holds its folded name's characters, its counts and its hours side by side, so a line
 * touches one row, and the lines per nick and channel are one slot of a second table.
 *
 * {@link NickCounts} is the current day's; when the day is over it becomes a
 * {@link NickTotals}, which keeps the totals only. Both read as a `ReadonlyMap` of
 * {@link NickDay} records (made when read), and both give their records by index for the
 * store's writer, which reads them without making objects.
 */
import { detached } from '../../../lib/sdk.js';
import type { NickActivity } from '../contract.js';

const HOURS = 24;

/** One nick on one day: the contract of the service `stats.activity` (the SDK's `NickActivity`). */
export type NickDay = NickActivity;

/** A day's nicks as the store's writer reads them: by index `0 <= index < size`, without objects. */
export interface NickRecords extends ReadonlyMap<string, NickDay> {
  keyAt(index: number): string;
  nickAt(index: number): string;
  linesAt(index: number): number;
  hiddenLinesAt(index: number): number;
  /** Whether the records have hours (the current day's do). */
  readonly hasHours: boolean;
  /** Lines of the record in `hour`; 0 when the records have no hours. */
  hourAt(index: number, hour: number): number;
  /** Whether the record has hidden lines per hour. */
  hasHiddenHoursAt(index: number): boolean;
  hiddenHourAt(index: number, hour: number): number;
}

/**
 * A nick's row, in 32-bit slots: 176 bytes. A line reads the first cache line (length, counts and
 * the key's first characters) and the one with its hour.
 */
const ROW = 44;
/** The key's length, with {@link NAME_IS_KEY}. */
const LENGTH = 0;
const LINES = 1;
const HIDDEN = 2;
const CHARS_AT = 3;
const HOURS_AT = 20;
/** Characters of the key kept in the row, two per slot; a longer key is compared with its string too. */
const INLINE_CHARS = (HOURS_AT - CHARS_AT) * 2;
/** Set in {@link LENGTH} while the nick as last seen is its key (nothing to fold): a line then reads no string. */
const NAME_IS_KEY = 1 << 30;
const LENGTH_MASK = NAME_IS_KEY - 1;
/** Index slots (hash, id + 1) at first; the index is kept at most half full. */
const INITIAL_SLOTS = 2048;

/** FNV-1a over the key's UTF-16 code units; never 0, which marks an empty row. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let index = 0; index < key.length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  return hash === 0 ? 1 : hash;
}

/** Two code units of `key` from `index` as one slot (the second 0 past the end). */
function charPair(key: string, index: number): number {
  return index + 1 < key.length ? key.charCodeAt(index) | (key.charCodeAt(index + 1) << 16) : key.charCodeAt(index);
}

/** The ReadonlyMap side both tables share: records made on demand from the indexed side. */
abstract class NickRecordsBase implements NickRecords {
  abstract readonly size: number;
  abstract readonly hasHours: boolean;
  abstract keyAt(index: number): string;
  abstract nickAt(index: number): string;
  abstract linesAt(index: number): number;
  abstract hiddenLinesAt(index: number): number;
  abstract hourAt(index: number, hour: number): number;
  abstract hasHiddenHoursAt(index: number): boolean;
  abstract hiddenHourAt(index: number, hour: number): number;
  /** The index of the folded nick `key`, or -1. */
  abstract indexOf(key: string): number;

  /** The record at `index`, as an object of its own (changing it changes nothing here). */
  recordAt(index: number): NickDay {
    let hourly: Uint32Array | null = null;
    let hiddenHourly: Uint32Array | null = null;
    if (this.hasHours) {
      hourly = new Uint32Array(HOURS);
      for (let hour = 0; hour < HOURS; hour++) hourly[hour] = this.hourAt(index, hour);
      if (this.hasHiddenHoursAt(index)) {
        hiddenHourly = new Uint32Array(HOURS);
        for (let hour = 0; hour < HOURS; hour++) hiddenHourly[hour] = this.hiddenHourAt(index, hour);
      }
    }
    return {
      nick: this.nickAt(index),
      lines: this.linesAt(index),
      hiddenLines: this.hiddenLinesAt(index),
      hourly,
      hiddenHourly,
    };
  }

  get(key: string): NickDay | undefined {
    const index = this.indexOf(key);
    return index < 0 ? undefined : this.recordAt(index);
  }

  has(key: string): boolean {
    return this.indexOf(key) >= 0;
  }

  *keys(): MapIterator<string> {
    for (let index = 0; index < this.size; index++) yield this.keyAt(index);
  }

  *values(): MapIterator<NickDay> {
    for (let index = 0; index < this.size; index++) yield this.recordAt(index);
  }

  *entries(): MapIterator<[string, NickDay]> {
    for (let index = 0; index < this.size; index++) yield [this.keyAt(index), this.recordAt(index)];
  }

  [Symbol.iterator](): MapIterator<[string, NickDay]> {
    return this.entries();
  }

  forEach(callback: (value: NickDay, key: string, map: ReadonlyMap<string, NickDay>) => void, thisArg?: unknown): void {
    for (let index = 0; index < this.size; index++)
      callback.call(thisArg, this.recordAt(index), this.keyAt(index), this);
  }
}

/**
 * The current day's counts per nick: lines, hidden lines, and both per hour. A nick's index
 * (its id) is the order it first spoke in, and does not change.
 */
export class NickCounts extends NickRecordsBase {
  readonly hasHours = true;
  /** Open addressing: (hash, id + 1) per slot, 0 for an empty one. Dense, so its pages stay in the TLB. */
  private index = new Int32Array(2 * INITIAL_SLOTS);
  private mask = INITIAL_SLOTS - 1;
  /** By id: the nick's row. */
  private rows = new Int32Array((INITIAL_SLOTS / 2) * ROW);
  /** By id: the folded nick, as stored. */
  private readonly keyList: string[] = [];
  /** By id: the nick as last seen. */
  private readonly nameList: string[] = [];
  /** By id and hour: hidden lines; made at the first hidden line of the day. */
  private hiddenHours: Int32Array | null = null;

  get size(): number {
    return this.keyList.length;
  }

  /**
   * Count one line by the nick whose folded name is `key`, seen as `nick`, in `hour` (and as
   * hidden when `hidden`). Returns the nick's id.
   */
  add(key: string, nick: string, hour: number, hidden: boolean): number {
    const hash = hashOf(key);
    const id = this.find(key, hash);
    if (id < 0) return this.insert(key, nick, hash, hour, hidden);
    const rows = this.rows;
    const base = id * ROW;
    if (nick === key) {
      if ((rows[base + LENGTH]! & NAME_IS_KEY) === 0) {
        rows[base + LENGTH] = rows[base + LENGTH]! | NAME_IS_KEY;
        this.nameList[id] = this.keyList[id]!;
      }
    } else if (this.nameList[id] !== nick) {
      this.nameList[id] = detached(nick);
      rows[base + LENGTH] = rows[base + LENGTH]! & LENGTH_MASK;
    }
    rows[base + LINES]!++;
    rows[base + HOURS_AT + hour]!++;
    if (hidden) this.countHidden(id, hour);
    return id;
  }

  /**
   * Put a nick's counts back as stored (a restore): `hourly` and `hiddenHourly` hold up to 24
   * counts. A nick already here is replaced. Returns its id.
   */
  set(
    key: string,
    nick: string,
    lines: number,
    hiddenLines: number,
    hourly: ArrayLike<number> | null,
    hiddenHourly: ArrayLike<number> | null,
  ): number {
    let id = this.indexOf(key);
    if (id < 0) id = this.insert(key, nick, hashOf(key), -1, false);
    this.nameList[id] = nick === key ? this.keyList[id]! : detached(nick);
    const rows = this.rows;
    const base = id * ROW;
    rows[base + LENGTH] = key.length | (nick === key ? NAME_IS_KEY : 0);
    rows[base + LINES] = clamp(lines);
    rows[base + HIDDEN] = clamp(hiddenLines);
    for (let hour = 0; hour < HOURS; hour++) rows[base + HOURS_AT + hour] = clamp(hourly?.[hour] ?? 0);
    if (hiddenHourly || this.hiddenHours) {
      const hours = this.hiddenHoursFor(id);
      for (let hour = 0; hour < HOURS; hour++) hours[id * HOURS + hour] = clamp(hiddenHourly?.[hour] ?? 0);
    }
    return id;
  }

  indexOf(key: string): number {
    return this.find(key, hashOf(key));
  }

  keyAt(id: number): string {
    return this.keyList[id]!;
  }

  nickAt(id: number): string {
    return this.nameList[id]!;
  }

  linesAt(id: number): number {
    return this.rows[id * ROW + LINES]!;
  }

  hiddenLinesAt(id: number): number {
    return this.rows[id * ROW + HIDDEN]!;
  }

  hourAt(id: number, hour: number): number {
    return this.rows[id * ROW + HOURS_AT + hour]!;
  }

  hasHiddenHoursAt(id: number): boolean {
    return this.hiddenLinesAt(id) > 0;
  }

  hiddenHourAt(id: number, hour: number): number {
    return this.hiddenHours?.[id * HOURS + hour] ?? 0;
  }

  /** The totals only, as the day keeps them once it is over. */
  totals(): NickTotals {
    const lines = new Uint32Array(this.size);
    const hiddenLines = new Uint32Array(this.size);
    for (let id = 0; id < this.size; id++) {
      lines[id] = this.rows[id * ROW + LINES]!;
      hiddenLines[id] = this.rows[id * ROW + HIDDEN]!;
    }
    return new NickTotals(this.keyList.slice(), this.nameList.slice(), lines, hiddenLines);
  }

  /** The id of `key`, whose hash is `hash`, or -1. */
  private find(key: string, hash: number): number {
    const index = this.index;
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const found = index[2 * slot]!;
      if (found === 0) return -1;
      if (found === hash) {
        const id = index[2 * slot + 1]! - 1;
        if (this.matches(id, key)) return id;
      }
    }
  }

  /** Whether the nick `id` is `key` (its hash matched already). */
  private matches(id: number, key: string): boolean {
    const rows = this.rows;
    const base = id * ROW;
    const length = key.length;
    if ((rows[base + LENGTH]! & LENGTH_MASK) !== length) return false;
    const inline = length < INLINE_CHARS ? length : INLINE_CHARS;
    let slot = base + CHARS_AT;
    for (let at = 0; at < inline; at += 2) if (rows[slot++] !== charPair(key, at)) return false;
    return length <= INLINE_CHARS || this.keyList[id] === key;
  }

  /** A nick's first line of the day (`hour` -1: no line, a restore). */
  private insert(key: string, nick: string, hash: number, hour: number, hidden: boolean): number {
    const id = this.size;
    if (2 * (id + 1) > this.mask + 1) this.growIndex();
    if ((id + 1) * ROW > this.rows.length) {
      const rows = new Int32Array(2 * this.rows.length);
      rows.set(this.rows);
      this.rows = rows;
    }
    // Kept all day: copies, so they do not keep the lines they were cut from alive.
    const storedKey = detached(key);
    this.keyList.push(storedKey);
    this.nameList.push(nick === key ? storedKey : detached(nick));
    this.place(hash, id);
    const rows = this.rows;
    const base = id * ROW;
    rows[base + LENGTH] = key.length | (nick === key ? NAME_IS_KEY : 0);
    const inline = key.length < INLINE_CHARS ? key.length : INLINE_CHARS;
    let slot = base + CHARS_AT;
    for (let at = 0; at < inline; at += 2) rows[slot++] = charPair(key, at);
    if (hour >= 0) {
      rows[base + LINES] = 1;
      rows[base + HOURS_AT + hour] = 1;
      if (hidden) this.countHidden(id, hour);
    }
    return id;
  }

  /** Put `id` in the first free index slot from where `hash` points. */
  private place(hash: number, id: number): void {
    const index = this.index;
    let slot = hash & this.mask;
    while (index[2 * slot] !== 0) slot = (slot + 1) & this.mask;
    index[2 * slot] = hash;
    index[2 * slot + 1] = id + 1;
  }

  private countHidden(id: number, hour: number): void {
    this.rows[id * ROW + HIDDEN]!++;
    this.hiddenHoursFor(id)[id * HOURS + hour]!++;
  }

  /** The hidden hours, with room for `id`. */
  private hiddenHoursFor(id: number): Int32Array {
    let hours = this.hiddenHours;
    if (!hours || (id + 1) * HOURS > hours.length) {
      const bigger = new Int32Array(Math.max(INITIAL_SLOTS, 2 * (id + 1)) * HOURS);
      if (hours) bigger.set(hours);
      hours = this.hiddenHours = bigger;
    }
    return hours;
  }

  /** Twice the index slots, each entry placed again where its hash points in the bigger index. */
  private growIndex(): void {
    const old = this.index;
    this.index = new Int32Array(2 * old.length);
    this.mask = 2 * (this.mask + 1) - 1;
    for (let slot = 0; slot < old.length; slot += 2) {
      if (old[slot] !== 0) this.place(old[slot]!, old[slot + 1]! - 1);
    }
  }
}

/** A day's nicks once the day is over: totals only, in arrays; found by name through an index made when asked. */
export class NickTotals extends NickRecordsBase {
  readonly hasHours = false;
  private index: Map<string, number> | null = null;

  constructor(
    private readonly keyList: string[],
    private readonly nameList: string[],
    private readonly lines: Uint32Array,
    private readonly hiddenLines: Uint32Array,
  ) {
    super();
  }

  get size(): number {
    return this.keyList.length;
  }

  indexOf(key: string): number {
    if (!this.index) {
      this.index = new Map();
      for (let index = 0; index < this.keyList.length; index++) this.index.set(this.keyList[index]!, index);
    }
    return this.index.get(key) ?? -1;
  }

  keyAt(index: number): string {
    return this.keyList[index]!;
  }

  nickAt(index: number): string {
    return this.nameList[index]!;
  }

  linesAt(index: number): number {
    return this.lines[index]!;
  }

  hiddenLinesAt(index: number): number {
    return this.hiddenLines[index]!;
  }

  hourAt(): number {
    return 0;
  }

  hasHiddenHoursAt(): boolean {
    return false;
  }

  hiddenHourAt(): number {
    return 0;
  }
}

/**
 * Builds a {@link NickTotals} from stored records (a restore). A nick stored twice (only a file
 * edited by hand has that) is kept twice, as written; looking it up finds the later record.
 */
export class NickTotalsBuilder {
  private readonly keyList: string[] = [];
  private readonly nameList: string[] = [];
  private readonly lines: number[] = [];
  private readonly hiddenLines: number[] = [];

  add(key: string, nick: string, lines: number, hiddenLines: number): void {
    this.keyList.push(key);
    this.nameList.push(nick);
    this.lines.push(lines);
    this.hiddenLines.push(hiddenLines);
  }

  build(): NickTotals {
    return new NickTotals(
      this.keyList,
      this.nameList,
      Uint32Array.from(this.lines),
      Uint32Array.from(this.hiddenLines),
    );
  }
}

const PAIR = 3;
const INITIAL_PAIRS = 4096;

/**
 * The current day's lines per nick and channel: one open-addressing table of
 * (nick id + 1, channel id, lines) triples, so a line costs one slot, not a lookup in a map per channel.
 */
export class SpeakerCounts {
  private table = new Int32Array(INITIAL_PAIRS * PAIR);
  private mask = INITIAL_PAIRS - 1;
  private used = 0;
  /** By channel id: the ids of the nicks counted in it, so one channel's speakers are found without a scan. */
  private readonly nicksByChannel: number[][] = [];

  /** Pairs counted. */
  get size(): number {
    return this.used;
  }

  /** Count `lines` (one by default) for nick `nickId` in channel `channelId`. */
  add(nickId: number, channelId: number, lines = 1): void {
    const table = this.table;
    const nick = nickId + 1;
    let slot = pairSlot(nick, channelId, this.mask);
    for (;;) {
      const base = slot * PAIR;
      const found = table[base]!;
      if (found === nick && table[base + 1] === channelId) {
        table[base + 2] = clamp(table[base + 2]! + lines);
        return;
      }
      if (found === 0) {
        if (2 * (this.used + 1) > this.mask + 1) {
          this.grow();
          this.add(nickId, channelId, lines);
          return;
        }
        table[base] = nick;
        table[base + 1] = channelId;
        table[base + 2] = clamp(lines);
        this.used++;
        (this.nicksByChannel[channelId] ??= []).push(nickId);
        return;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Lines of nick `nickId` in channel `channelId`. */
  get(nickId: number, channelId: number): number {
    const table = this.table;
    const nick = nickId + 1;
    for (let slot = pairSlot(nick, channelId, this.mask); ; slot = (slot + 1) & this.mask) {
      const base = slot * PAIR;
      if (table[base] === 0) return 0;
      if (table[base] === nick && table[base + 1] === channelId) return table[base + 2]!;
    }
  }

  /** The ids of the nicks counted in channel `channelId`, in the order they first were. */
  nicksIn(channelId: number): readonly number[] {
    return this.nicksByChannel[channelId] ?? [];
  }

  /** Every pair, in no particular order. */
  forEach(callback: (nickId: number, channelId: number, lines: number) => void): void {
    const table = this.table;
    for (let base = 0; base < table.length; base += PAIR) {
      if (table[base] !== 0) callback(table[base]! - 1, table[base + 1]!, table[base + 2]!);
    }
  }

  /**
   * Every pair as it is now, to be grouped by channel a step at a time (see {@link SpeakerGrouping});
   * channel ids must be below `channels`. A finished grouping given as `reuse` lends its memory.
   */
  grouping(channels: number, reuse?: SpeakerGrouping): SpeakerGrouping {
    return new SpeakerGrouping(this.table, this.used, channels, reuse);
  }

  private grow(): void {
    const old = this.table;
    const capacity = 2 * (this.mask + 1);
    const table = new Int32Array(capacity * PAIR);
    const mask = capacity - 1;
    for (let base = 0; base < old.length; base += PAIR) {
      const nick = old[base]!;
      if (nick === 0) continue;
      let slot = pairSlot(nick, old[base + 1]!, mask);
      while (table[slot * PAIR] !== 0) slot = (slot + 1) & mask;
      table[slot * PAIR] = nick;
      table[slot * PAIR + 1] = old[base + 1]!;
      table[slot * PAIR + 2] = old[base + 2]!;
    }
    this.table = table;
    this.mask = mask;
  }
}

/** The largest count a 32-bit slot holds; a count never wraps to a negative number. */
const MAX_COUNT = 0x7fffffff;

function clamp(count: number): number {
  return count < MAX_COUNT ? count : MAX_COUNT;
}

function pairSlot(nick: number, channelId: number, mask: number): number {
  const mixed = Math.imul(nick, 0x9e3779b1) ^ Math.imul(channelId + 1, 0x85ebca6b);
  return (mixed ^ (mixed >>> 16)) & mask;
}

/** Table slots one {@link SpeakerGrouping.step} goes through: well under a millisecond. */
const GROUPING_SLOTS = 16 * 1024;

/**
 * The pairs of a {@link SpeakerCounts} at one moment, grouped by channel in steps, so a big
 * day (hundreds of thousands of pairs) is grouped with other work in between. When
 * {@link step} has returned true, channel `c`'s speakers are `nicks[offsets[c]] ..
 * nicks[offsets[c + 1] - 1]`, with their lines in `lines`.
 */
export class SpeakerGrouping {
  readonly offsets: Uint32Array;
  readonly nicks: Uint32Array;
  readonly lines: Uint32Array;
  /** The table as it was, and the memory behind the arrays, which a later grouping may reuse. */
  private readonly table: Int32Array;
  private readonly memory: { table: Int32Array; nicks: Uint32Array; lines: Uint32Array };
  private readonly channels: number;
  private next: Uint32Array | null = null;
  private slot = 0;

  /**
   * Memory is reused from `reuse` when it is big enough: fresh memory this size is tens of
   * megabytes, and the page faults of its first use alone held the event loop for milliseconds.
   */
  constructor(table: Int32Array, pairs: number, channels: number, reuse?: SpeakerGrouping) {
    const memory = reuse?.memory;
    const copy = memory && memory.table.length >= table.length ? memory.table : new Int32Array(table.length);
    const nicks = memory && memory.nicks.length >= pairs ? memory.nicks : new Uint32Array(pairs);
    const lines = memory && memory.lines.length >= pairs ? memory.lines : new Uint32Array(pairs);
    copy.set(table);
    this.memory = { table: copy, nicks, lines };
    this.table = copy.subarray(0, table.length);
    this.nicks = nicks.subarray(0, pairs);
    this.lines = lines.subarray(0, pairs);
    this.offsets = new Uint32Array(channels + 1);
    this.channels = channels;
  }

  /** Group some more; true once every pair is in place. */
  step(): boolean {
    const { table, offsets, channels } = this;
    const end = Math.min(table.length, this.slot + GROUPING_SLOTS * PAIR);
    if (this.next === null) {
      // First pass: how many pairs each channel has.
      for (let base = this.slot; base < end; base += PAIR) if (table[base] !== 0) offsets[table[base + 1]! + 1]!++;
      this.slot = end;
      if (end < table.length) return false;
      for (let channel = 0; channel < channels; channel++) offsets[channel + 1]! += offsets[channel]!;
      this.next = offsets.slice(0, channels);
      this.slot = 0;
      return false;
    }
    // Second pass: each pair into its channel's place.
    const { next, nicks, lines } = this;
    for (let base = this.slot; base < end; base += PAIR) {
      if (table[base] === 0) continue;
      const at = next[table[base + 1]!]!++;
      nicks[at] = table[base]! - 1;
      lines[at] = table[base + 2]!;
    }
    this.slot = end;
    return end >= table.length;
  }
}
