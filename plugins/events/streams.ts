/**
 * The open event streams, and how each event reaches them. Events are not written one by one as the collector
 * tells them: they are gathered and written once the line that made them is handled (one write per stream per
 * flush, whatever the number of events; with `write_interval_ms`, at most one per interval while events keep
 * coming), and readers who see the same (same view, same filters) share the one text made for them. A flush is
 * written to a hundred readers a turn of the event loop, so that the bot's other work (HTTP answers, IRC lines)
 * goes on between rather than waiting for a thousand writes; events that come meanwhile go out in the next flush,
 * once this one is done. A reader who falls behind by more than `max_buffered_kb` is sent an `end` event and
 * disconnected, so that no reader can make the bot hold more than that for it; every `heartbeat_seconds` each
 * stream gets a comment line, which keeps proxies from closing a quiet one.
 */
import type { OpenStream, TokenApprovals } from '../../lib/sdk.js';
import type { Journal, JournalEntry, View } from './journal.js';

/** Why a stream was ended by the bot (the `end` event's `reason`). */
export type EndReason = 'slow_consumer' | 'token_revoked' | 'approval_withdrawn' | 'shutting_down';

const END_MESSAGES: Record<EndReason, string> = {
  slow_consumer:
    'The client read too slowly: more than the bot keeps for a stream was waiting for it. Reconnect with Last-Event-ID to resume.',
  token_revoked: 'The API token this stream was opened with was revoked.',
  approval_withdrawn:
    "The API token's approval for what this stream showed was withdrawn. Reconnect for what it may see now.",
  shutting_down: 'The bot is shutting down. Reconnect with Last-Event-ID to resume once it is back.',
};

/** How long a stream the bot ended has to take what waits for it before its connection is closed. */
const END_GRACE_MS = 5000;

/** What a reader asked to see: null where it did not narrow it. */
export interface EventFilter {
  types: ReadonlySet<string> | null;
  /** A channel, folded. */
  channel: string | null;
  /** A server, in lower case. */
  server: string | null;
}

/** One open stream. */
export class Reader {
  /** The number of the last event written to it. */
  last: number;

  constructor(
    readonly stream: OpenStream,
    readonly view: View,
    readonly filter: EventFilter,
    /** The client's address as `max_streams_per_address` counts it (an IPv6 address by its network). */
    readonly address: string,
    /** The token the request presented, if any (its revocation ends the stream). */
    readonly approvals: TokenApprovals | undefined,
    /** The token counted against `max_streams_per_token`: one approved for the stream's route. */
    readonly tokenId: string | undefined,
    last: number,
  ) {
    this.last = last;
    const { types, channel, server } = filter;
    this.key = `${view}|${types ? [...types].sort().join(',') : ''}|${channel ?? ''}|${server ?? ''}`;
  }

  /** Readers with the same key see the same text. */
  readonly key: string;
  /**
   * The events still to be written while a replay goes out, a part at a time as the client takes it (null once
   * it is out): new events wait behind it, in order.
   */
  backlog: JournalEntry[] | null = null;
}

export interface FanoutOptions {
  journal: Journal;
  /**
   * The least time between two writes of new events, in milliseconds (`write_interval_ms`): 0 writes once the
   * work at hand is done. An event after a quiet spell goes out at once either way; under a steady flow the
   * events of the interval go out together, in fewer and larger writes.
   */
  writeIntervalMs?: number;
  /** Clock for the interval, in milliseconds; tests pin it. */
  now?: () => number;
  /** Readers written to in one turn of the event loop ({@link READERS_PER_TURN} by default); tests make it small. */
  readersPerTurn?: number;
  /** Folds a channel name the way the network does. */
  fold: (name: string) => string;
  maxBufferedBytes: number;
  /** The most events a replay may have waiting behind it (the journal's size). */
  maxBacklog: number;
  /** Told of each stream the bot ends, and why. */
  onEnded?: (reason: EndReason) => void;
}

/**
 * Readers written to in one turn of the event loop. A write costs the bot about 10 µs (most of it the kernel's), so
 * a flush to a thousand readers would hold its event loop for 10 ms; a hundred hold it about a millisecond.
 */
export const READERS_PER_TURN = 100;

/** A flush under way: what it writes, the readers as they were when it began, and the next of them to write to. */
interface Writing {
  entries: JournalEntry[];
  /** The text made for each reader key, encoded once. */
  shared: Map<string, Buffer>;
  readers: Reader[];
  next: number;
  /** The next slice, on the next turn. */
  immediate: NodeJS.Immediate | null;
}

export class Fanout {
  private readonly readers = new Set<Reader>();
  private pending: JournalEntry[] = [];
  /** The flush to come, where one is set: on the next turn, or at the end of the write interval. */
  private scheduled: { immediate: NodeJS.Immediate } | { timeout: NodeJS.Timeout } | null = null;
  /**
   * The flush being written, a slice of readers a turn; null when none is. While it is, nothing is scheduled: what
   * is published meanwhile is scheduled once it is done, so that each reader keeps its order.
   */
  private writing: Writing | null = null;
  private readonly readersPerTurn: number;
  /** When new events were last written, on {@link FanoutOptions.now}'s clock. */
  private lastWrite = -Infinity;
  private readonly now: () => number;
  private readonly byAddress = new Map<string, number>();
  private readonly byToken = new Map<string, number>();

  constructor(private readonly options: FanoutOptions) {
    this.now = options.now ?? (() => performance.now());
    this.readersPerTurn = options.readersPerTurn ?? READERS_PER_TURN;
  }

  get size(): number {
    return this.readers.size;
  }

  /** Streams open from `address` (as {@link Reader.address} has it). */
  openFrom(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  openWith(tokenId: string): number {
    return this.byToken.get(tokenId) ?? 0;
  }

  /** Whether `entry` is one `reader` asked for (its filters, read on what its view shows). */
  matches(entry: JournalEntry, view: View, filter: EventFilter): boolean {
    const data = entry.data(view);
    if (data === null) return false;
    if (filter.types && !filter.types.has(entry.event.type)) return false;
    if (filter.channel !== null) {
      const { fold } = this.options;
      const channel = data.channel;
      const channels = data.channels;
      const named =
        (typeof channel === 'string' && fold(channel) === filter.channel) ||
        (Array.isArray(channels) && channels.some((name) => typeof name === 'string' && fold(name) === filter.channel));
      if (!named) return false;
    }
    if (filter.server !== null) {
      const server = data.server;
      if (typeof server !== 'string' || server.toLowerCase() !== filter.server) return false;
    }
    return true;
  }

  /** The frames of `entries` a reader of this view and filter sees, as one text. */
  private textOf(entries: readonly JournalEntry[], view: View, filter: EventFilter, after = 0): string {
    let text = '';
    for (const entry of entries) {
      if (entry.number <= after || !this.matches(entry, view, filter)) continue;
      text += entry.frame(view)!;
    }
    return text;
  }

  /**
   * Start sending to `reader`: `opening` (its first lines), the events it resumes from (up to the latest kept,
   * which its `last` says), then each new one.
   */
  add(reader: Reader, opening: string, replay: readonly JournalEntry[]): void {
    const { stream } = reader;
    this.readers.add(reader);
    this.byAddress.set(reader.address, this.openFrom(reader.address) + 1);
    if (reader.tokenId !== undefined) this.byToken.set(reader.tokenId, this.openWith(reader.tokenId) + 1);
    stream.onEnd(() => this.remove(reader));
    stream.write(opening);
    const wanted = replay.filter((entry) => this.matches(entry, reader.view, reader.filter));
    if (wanted.length === 0) return;
    // A replay may be the whole journal: it goes out a part at a time, each when the client took the last.
    reader.backlog = wanted;
    stream.onDrain(() => this.catchUp(reader));
    this.catchUp(reader);
  }

  /**
   * Write the next part of `reader`'s backlog: up to `max_buffered_kb` of frames. The next part follows at the
   * stream's drain, or on the next turn of the event loop where the connection took this one at once.
   */
  private catchUp(reader: Reader): void {
    const { backlog, stream } = reader;
    if (backlog === null || stream.ended) return;
    let text = '';
    let taken = 0;
    while (taken < backlog.length && text.length < this.options.maxBufferedBytes) {
      text += backlog[taken++]!.frame(reader.view)!;
    }
    backlog.splice(0, taken);
    if (backlog.length === 0) reader.backlog = null;
    if (stream.write(text) && reader.backlog !== null) setImmediate(() => this.catchUp(reader));
  }

  private remove(reader: Reader): void {
    if (!this.readers.delete(reader)) return;
    const decrement = (map: Map<string, number>, key: string) => {
      const left = (map.get(key) ?? 1) - 1;
      if (left > 0) map.set(key, left);
      else map.delete(key);
    };
    decrement(this.byAddress, reader.address);
    if (reader.tokenId !== undefined) decrement(this.byToken, reader.tokenId);
  }

  /**
   * A new event: written to the streams that want it once the work at hand is done (and the flush under way, if
   * one is), and no sooner than the write interval after the last write.
   */
  publish(entry: JournalEntry): void {
    this.pending.push(entry);
    if (this.writing === null) this.schedule();
  }

  /** Set the next flush for what is pending: on the next turn, or at the end of the write interval. */
  private schedule(): void {
    if (this.scheduled !== null || this.pending.length === 0) return;
    const wait = this.lastWrite + (this.options.writeIntervalMs ?? 0) - this.now();
    if (wait > 0) {
      const timeout = setTimeout(() => this.due(), wait);
      // The plugin's stop writes what waits: the timer alone never keeps the process alive.
      timeout.unref();
      this.scheduled = { timeout };
    } else {
      this.scheduled = { immediate: setImmediate(() => this.due()) };
    }
  }

  /** The scheduled flush (none is while one is being written). */
  private due(): void {
    this.scheduled = null;
    this.begin(this.readersPerTurn);
  }

  /**
   * Write what was published since the last flush, to every reader now (a heartbeat, the plugin's stop), after what
   * a flush under way had still to write; readers with the same key share one text.
   */
  flush(): void {
    // Its end schedules what waits; that is written here instead.
    if (this.writing !== null) this.writeSlice(Infinity);
    const { scheduled } = this;
    if (scheduled !== null) {
      if ('timeout' in scheduled) clearTimeout(scheduled.timeout);
      else clearImmediate(scheduled.immediate);
      this.scheduled = null;
    }
    this.begin(Infinity);
  }

  /** Begin writing what was published, to up to `perTurn` readers a turn. */
  private begin(perTurn: number): void {
    const entries = this.pending;
    if (entries.length === 0) return;
    this.pending = [];
    // No stream open (the usual case): nothing to write, nor to keep for a next turn.
    if (this.readers.size === 0) return;
    this.writing = {
      entries,
      // Encoded once for all the readers who see the same: a thousand streams cost a thousand writes, not encodings.
      shared: new Map(),
      // A reader opened from now on starts after these events (its `last`), so it is not among them.
      readers: [...this.readers],
      next: 0,
      immediate: null,
    };
    this.writeSlice(perTurn);
  }

  /** Write the flush under way to its next `count` readers; the rest at the next turn. */
  private writeSlice(count: number): void {
    const writing = this.writing!;
    if (writing.immediate !== null) clearImmediate(writing.immediate);
    writing.immediate = null;
    const { entries, shared, readers } = writing;
    const first = entries[0]!.number;
    const latest = entries.at(-1)!.number;
    const end = Math.min(readers.length, writing.next + count);
    let wrote = false;
    while (writing.next < end) {
      // Counted before it is written to: a write that throws does not leave the flush stuck on its reader.
      const reader = readers[writing.next++]!;
      // Ended meanwhile.
      if (!this.readers.has(reader) || reader.last >= latest) continue;
      if (reader.backlog !== null) {
        this.queue(reader, entries);
        continue;
      }
      let chunk: string | Buffer;
      if (reader.last < first) {
        const key = reader.key;
        let bytes = shared.get(key);
        if (bytes === undefined) {
          bytes = Buffer.from(this.textOf(entries, reader.view, reader.filter));
          shared.set(key, bytes);
        }
        chunk = bytes;
      } else {
        // Opened while these waited, and sent some of them with its replay.
        chunk = this.textOf(entries, reader.view, reader.filter, reader.last);
      }
      reader.last = latest;
      if (this.send(reader, chunk)) wrote = true;
    }
    // The interval runs from a write: events no stream took (none open, or every filter left them out) start none.
    if (wrote) this.lastWrite = this.now();
    if (writing.next < readers.length) {
      writing.immediate = setImmediate(() => this.writeSlice(this.readersPerTurn));
      return;
    }
    this.writing = null;
    // Events that came meanwhile wait for the interval from this flush's writes, as any others would.
    this.schedule();
  }

  /**
   * New events for a reader whose replay is still going out: they wait behind it. A backlog that grows beyond the
   * journal's own size is a reader that does not keep up: it is cut off.
   */
  private queue(reader: Reader, entries: readonly JournalEntry[]): void {
    for (const entry of entries) {
      if (entry.number > reader.last && this.matches(entry, reader.view, reader.filter)) reader.backlog!.push(entry);
    }
    reader.last = entries.at(-1)!.number;
    if (reader.backlog!.length > this.options.maxBacklog) this.end(reader, 'slow_consumer');
  }

  /**
   * Write `text` to `reader`, unless more than it may have waiting waits already: then it is cut off. So what waits
   * for a reader is at most the bound and one flush's events (those that came while the last flush was going out, or
   * within one write interval). Whether it was written.
   */
  private send(reader: Reader, chunk: string | Buffer): boolean {
    if (chunk.length === 0 || reader.stream.ended) return false;
    if (reader.stream.buffered > this.options.maxBufferedBytes) {
      this.end(reader, 'slow_consumer');
      return false;
    }
    reader.stream.write(chunk);
    return true;
  }

  /**
   * A comment to every stream (which also finds the readers who stopped reading), with the id of the latest event
   * of the reader's view: a reader whose filters let nothing through for a while then resumes from there, not
   * from its last event, and is not told of events dropped meanwhile that it would not have seen anyway.
   */
  heartbeat(): void {
    this.flush();
    const texts = new Map<View, Buffer>();
    for (const reader of this.readers) {
      let text = texts.get(reader.view);
      if (text === undefined) {
        const id = this.options.journal.latestId(reader.view);
        text = Buffer.from(id === null ? ': heartbeat\n\n' : `: heartbeat\nid: ${id}\n\n`);
        texts.set(reader.view, text);
      }
      // One catching up is written to as fast as it reads.
      if (reader.backlog === null) this.send(reader, text);
    }
  }

  /** End the streams `which` picks, each with an `end` event saying why. */
  endWhere(which: (reader: Reader) => EndReason | null): void {
    for (const reader of [...this.readers]) {
      const reason = which(reader);
      if (reason) this.end(reader, reason);
    }
  }

  /**
   * End `reader`'s stream with an `end` event. Its connection is closed if the client has not read everything
   * within {@link END_GRACE_MS}: once out of the caps, a client that does not read must not keep its socket and
   * what waits for it (a token revoked on purpose would otherwise leave streams no cap counts).
   */
  end(reader: Reader, reason: EndReason): void {
    const { stream } = reader;
    if (stream.ended) return;
    this.remove(reader);
    stream.write(`event: end\ndata: ${JSON.stringify({ reason, message: END_MESSAGES[reason] })}\n\n`);
    stream.end();
    this.options.onEnded?.(reason);
    setTimeout(() => stream.abort(), END_GRACE_MS).unref();
  }
}
