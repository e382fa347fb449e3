/**
 * The activity slice's file format, and its JSON text written in pieces.
 *
 * At 100,000 speakers a day and 30 days kept the slice is tens of MB of JSON. Building it as one
 * object and stringifying it held the event loop for seconds, so the text is produced in small
 * pieces the store writes with other work in between. Days before the current one never change
 * (only the current day counts lines), so their text is kept, as strings, from the first
 * write that made it and written again as it is.
 */
import type { ChannelDay, DayActivity } from './activity-day.js';
import type { NickRecords, SpeakerGrouping } from './nick-counts.js';

/** The slice's file format. */
export interface StoredActivity {
  time_zone: string;
  days: {
    date: string;
    lines: number;
    channels: {
      name: string;
      lines: number;
      hidden: boolean;
      peak_users: number;
      hourly?: number[];
      speakers?: Record<string, number>;
    }[];
    nicks: { nick: string; lines: number; hidden_lines: number; hourly?: number[]; hidden_hourly?: number[] }[];
  }[];
}

/** The stored form of the slice as one object, for tests and small slices. */
export function activitySnapshot(timeZone: string, days: readonly DayActivity[]): StoredActivity {
  return {
    time_zone: timeZone,
    days: days.map((day) => {
      const speakers = speakersByChannel(day);
      return {
        date: day.date,
        lines: day.lines,
        channels: [...day.channels.values()].map((channel) => ({
          name: channel.name,
          lines: channel.lines,
          hidden: channel.hidden,
          peak_users: channel.peakUsers,
          ...(channel.hourly ? { hourly: [...channel.hourly] } : {}),
          ...(speakers ? { speakers: speakers.get(channel.id) ?? {} } : {}),
        })),
        nicks: [...day.nicks.values()].map((nick) => ({
          nick: nick.nick,
          lines: nick.lines,
          hidden_lines: nick.hiddenLines,
          ...(nick.hourly ? { hourly: [...nick.hourly] } : {}),
          ...(nick.hiddenHourly ? { hidden_hourly: [...nick.hiddenHourly] } : {}),
        })),
      };
    }),
  };
}

/** Each channel's lines per folded nick, by channel id, grouped as a write groups them; null for a day that keeps none. */
function speakersByChannel(day: DayActivity): Map<number, Record<string, number>> | null {
  if (!day.speakers) return null;
  const channels = [...day.channels.values()];
  const grouping = day.speakers.grouping(idLimit(channels));
  while (!grouping.step());
  const { offsets, nicks, lines } = grouping;
  // fromEntries, not assignment: a nick may be "__proto__".
  return new Map(
    channels.map(({ id }) => {
      const speakers: [string, number][] = [];
      for (let at = offsets[id]!; at < offsets[id + 1]!; at++) speakers.push([day.nicks.keyAt(nicks[at]!), lines[at]!]);
      return [id, Object.fromEntries(speakers)];
    }),
  );
}

/** One more than the highest channel id: the number of places a grouping by channel needs. */
function idLimit(channels: readonly ChannelDay[]): number {
  let limit = 0;
  for (const channel of channels) limit = Math.max(limit, channel.id + 1);
  return limit;
}

/**
 * Bytes of text per piece: a hundred records or so, a fraction of a millisecond of work once V8 has optimised
 * the encoder. The first write after a start runs before that, when a 64 KB piece took 5–20 ms.
 */
const PIECE_BYTES = 16 * 1024;

/** A past day's text, and what the day looked like when it was made. */
interface KeptDay {
  /**
   * As text, in the pieces it was made in. Strings live in the JavaScript heap; the same text as
   * buffers was tens of megabytes outside it, made all at once by the first write after a start:
   * that first write held the event loop for more than 20 ms in 8 of 14 bench runs (up to 58 ms),
   * against 3 of 12 with strings. Later writes are the same either way.
   */
  parts: string[];
  bytes: number;
  lines: number;
  channels: number;
  nicks: number;
}

/**
 * Writes the activity slice as JSON text in pieces, keeping the text of past days.
 *
 * A kept text belongs to the day object it was made from, so days dropped by the retention or
 * replaced by a restore take theirs with them. It is made again if the day's totals no longer
 * match (a past day that changed after all).
 */
export class ActivityCodec {
  private readonly kept = new WeakMap<DayActivity, KeptDay>();
  private readonly memory: WriteMemory = {};

  /**
   * The UTF-8 length of past days' text kept now, over the days given (the slice's current list):
   * what the kept text adds to each write. Its size in the heap is that or up to twice that.
   */
  keptBytes(days: readonly DayActivity[]): number {
    let bytes = 0;
    for (const day of days) bytes += this.kept.get(day)?.bytes ?? 0;
    return bytes;
  }

  /**
   * The text of {@link activitySnapshot}'s object, in pieces, read lazily from `days`. The list
   * is copied when the first piece is taken: days added or dropped later are in the next write.
   * Each channel and each nick is read at one moment; the day's own total is read before its
   * channels and nicks, so it may lag behind them by the lines counted in between.
   *
   * A piece of bytes is only good until the next piece is taken (its buffer is reused), as
   * `Persistence.snapshotJson` allows.
   */
  *pieces(timeZone: string, days: readonly DayActivity[]): Generator<string | Uint8Array, void, undefined> {
    const list = [...days];
    yield `{"time_zone":${JSON.stringify(timeZone)},"days":[`;
    const out = new JsonBytes();
    for (let index = 0; index < list.length; index++) {
      if (index > 0) yield ',';
      const day = list[index]!;
      if (index < list.length - 1) yield* this.pastDay(day, out);
      else yield* dayPieces(day, out, this.memory);
    }
    yield ']}';
  }

  private *pastDay(day: DayActivity, out: JsonBytes): Generator<string | Uint8Array, void, undefined> {
    const kept = this.kept.get(day);
    if (kept && kept.lines === day.lines && kept.channels === day.channels.size && kept.nicks === day.nicks.size) {
      yield* kept.parts;
      return;
    }
    const stamp = { lines: day.lines, channels: day.channels.size, nicks: day.nicks.size };
    const parts: string[] = [];
    let bytes = 0;
    for (const piece of dayPieces(day, out, this.memory)) {
      parts.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('utf8'));
      bytes += piece.byteLength;
      yield piece;
    }
    this.kept.set(day, { parts, bytes, ...stamp });
  }
}

/** What a write may lend the next one: the speakers' grouping, whose memory is reused. */
interface WriteMemory {
  grouping?: SpeakerGrouping;
}

/** One day's record, in pieces written into `out`. */
function* dayPieces(day: DayActivity, out: JsonBytes, memory: WriteMemory): Generator<Uint8Array, void, undefined> {
  out.ascii('{"date":');
  out.string(day.date);
  out.ascii(',"lines":');
  out.count(day.lines);
  out.ascii(',"channels":[');
  // Channels and their speakers are taken at one moment, so a channel's speakers add up to its lines:
  // there are few channels, and the speakers come in one pass.
  const channels = [...day.channels.values()].map((channel): ChannelDay => ({
    ...channel,
    hourly: channel.hourly?.slice() ?? null,
  }));
  // The nicks as they are now: a rollover during the write makes the day's nicks its totals only.
  const { nicks } = day;
  let speakers: SpeakerGrouping | null = null;
  // The grouping's memory is the next write's once this one has written the channels, and not before:
  // a write running alongside (the store runs none) finds none to reuse meanwhile.
  if (day.speakers) {
    speakers = day.speakers.grouping(idLimit(channels), memory.grouping);
    memory.grouping = undefined;
  }
  try {
    if (speakers) while (!speakers.step()) yield out.take();
    let first = true;
    for (const channel of channels) {
      if (!first) out.comma();
      first = false;
      channelHead(channel, out);
      if (speakers) {
        const { id } = channel;
        out.ascii(',"speakers":{');
        for (let at = speakers.offsets[id]!; at < speakers.offsets[id + 1]!; at++) {
          if (at > speakers.offsets[id]!) out.comma();
          out.string(nicks.keyAt(speakers.nicks[at]!));
          out.colon();
          out.count(speakers.lines[at]!);
          if (out.length >= PIECE_BYTES) yield out.take();
        }
        out.ascii('}');
      }
      out.ascii('}');
      if (out.length >= PIECE_BYTES) yield out.take();
    }
  } finally {
    if (speakers) memory.grouping = speakers;
  }
  out.ascii('],"nicks":[');
  // Read by index at each record's turn: a nick first counted after this point is in the next write.
  const size = nicks.size;
  for (let index = 0; index < size; index++) {
    if (index > 0) out.comma();
    nickRecord(nicks, index, out);
    if (out.length >= PIECE_BYTES) yield out.take();
  }
  out.ascii(']}');
  yield out.take();
}

/** A channel's record up to its speakers, without the closing brace. */
function channelHead(channel: ChannelDay, out: JsonBytes): void {
  out.ascii('{"name":');
  out.string(channel.name);
  out.ascii(',"lines":');
  out.count(channel.lines);
  out.ascii(channel.hidden ? ',"hidden":true,"peak_users":' : ',"hidden":false,"peak_users":');
  out.count(channel.peakUsers);
  if (channel.hourly) {
    out.ascii(',"hourly":');
    out.counts(channel.hourly);
  }
}

function nickRecord(nicks: NickRecords, index: number, out: JsonBytes): void {
  out.ascii('{"nick":');
  out.string(nicks.nickAt(index));
  out.ascii(',"lines":');
  out.count(nicks.linesAt(index));
  out.ascii(',"hidden_lines":');
  out.count(nicks.hiddenLinesAt(index));
  if (nicks.hasHours) {
    out.ascii(',"hourly":[');
    for (let hour = 0; hour < 24; hour++) {
      if (hour > 0) out.comma();
      out.count(nicks.hourAt(index, hour));
    }
    out.ascii(']');
    if (nicks.hasHiddenHoursAt(index)) {
      out.ascii(',"hidden_hourly":[');
      for (let hour = 0; hour < 24; hour++) {
        if (hour > 0) out.comma();
        out.count(nicks.hiddenHourAt(index, hour));
      }
      out.ascii(']');
    }
  }
  out.ascii('}');
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const ZERO = 0x30;

/**
 * JSON text written straight into one reused buffer as UTF-8. At 100,000 records a write,
 * building the text from strings made several times its size in garbage, and the collector's
 * pauses that came with it were the longest stalls left in a write.
 */
class JsonBytes {
  private buffer = Buffer.allocUnsafe(2 * PIECE_BYTES);
  /** Bytes written since the last {@link take}. */
  length = 0;

  /** What was written since the last take; good until the next write. */
  take(): Uint8Array {
    const piece = this.buffer.subarray(0, this.length);
    this.length = 0;
    return piece;
  }

  /** Text known to need no escaping and to be ASCII: the format's own keys and punctuation. */
  ascii(text: string): void {
    this.reserve(text.length);
    const buffer = this.buffer;
    let at = this.length;
    for (let index = 0; index < text.length; index++) buffer[at++] = text.charCodeAt(index);
    this.length = at;
  }

  comma(): void {
    this.reserve(1);
    this.buffer[this.length++] = COMMA;
  }

  colon(): void {
    this.reserve(1);
    this.buffer[this.length++] = COLON;
  }

  /** A string as JSON.stringify writes it. */
  string(value: string): void {
    this.reserve(value.length + 2);
    const buffer = this.buffer;
    let at = this.length;
    buffer[at++] = QUOTE;
    for (let index = 0; index < value.length; index++) {
      const code = value.charCodeAt(index);
      // Printable ASCII but the quote and the backslash is written as it is; anything else as JSON.stringify does.
      if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) {
        this.text(JSON.stringify(value));
        return;
      }
      buffer[at++] = code;
    }
    buffer[at++] = QUOTE;
    this.length = at;
  }

  /** A count (a whole number >= 0); anything else as JSON.stringify writes it. */
  count(value: number): void {
    if (!(value >= 0 && value <= 0xffffffff && Number.isInteger(value))) {
      this.text(JSON.stringify(value));
      return;
    }
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.reserve(digits);
    const buffer = this.buffer;
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      buffer[--at] = ZERO + (rest % 10);
      rest = Math.floor(rest / 10);
    } while (rest > 0);
  }

  /** An array of counts. */
  counts(values: Uint32Array): void {
    this.ascii('[');
    for (let index = 0; index < values.length; index++) {
      if (index > 0) this.comma();
      this.count(values[index]!);
    }
    this.ascii(']');
  }

  private text(text: string): void {
    this.reserve(3 * text.length);
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  /** Room for `bytes` more; a string longer than the buffer makes it grow. */
  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.length + bytes));
    this.buffer.copy(bigger, 0, 0, this.length);
    this.buffer = bigger;
  }
}
