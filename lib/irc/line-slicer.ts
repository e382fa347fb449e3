/**
 * The lines the server sends, handed to the bot a slice of time at a time. A sync on a big network
 * brings tens of thousands of replies in 64 KB reads of about 600 lines each; handled in one go, each
 * read held the event loop for tens of milliseconds, and every HTTP request waited behind it. Here at
 * most {@link SLICE_MS} of lines are handled per turn of the event loop; the rest wait until the other
 * callbacks due (HTTP requests, timers) have run. While lines wait the socket is paused, so what the
 * bot has not handled yet stays with the server (in its send queue for the bot) and not in the bot's memory.
 */
import { TimeSlice } from '../time-slice.js';

/** Work done on received lines in one turn of the event loop before the loop is let go, in ms. */
export const SLICE_MS = 2;

/**
 * The lines of a byte stream taken one at a time, each decoded (UTF-8) when it is taken. The bytes read wait
 * as they came, off the JavaScript heap: a read of 600 lines split at once into strings (and the 64 KB string
 * they were cut from) outlived the young generation's collections while they waited their turn, and was
 * promoted, a third of what the bot promoted under churn at 50,000 users.
 */
export class LineReader {
  private chunks: Buffer[] = [];
  /** The chunk being read, and where in it. */
  private head = 0;
  private offset = 0;
  /** The start of a line whose end has not been read yet (a copy). */
  private carry: Buffer | null = null;

  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length > 0) this.chunks.push(bytes);
  }

  /** The next whole line (ended by CR LF, LF or CR; empty lines are skipped), or null when none waits. */
  next(): string | null {
    while (this.head < this.chunks.length) {
      const chunk = this.chunks[this.head]!;
      const start = this.offset;
      let end = start;
      while (end < chunk.length && chunk[end] !== 10 && chunk[end] !== 13) end++;
      if (end === chunk.length) {
        // No end of line in the rest of this chunk: it waits for the next one.
        const rest = chunk.subarray(start);
        this.carry = this.carry ? Buffer.concat([this.carry, rest]) : Buffer.from(rest);
        this.advance();
        continue;
      }
      this.offset = end + 1;
      let line: string;
      if (this.carry) {
        line = Buffer.concat([this.carry, chunk.subarray(start, end)]).toString('utf8');
        this.carry = null;
      } else line = chunk.toString('utf8', start, end);
      if (this.offset === chunk.length) this.advance();
      if (line.length > 0) return line;
    }
    return null;
  }

  /** Forgets what was read. */
  clear(): void {
    this.chunks = [];
    this.head = 0;
    this.offset = 0;
    this.carry = null;
  }

  private advance(): void {
    this.offset = 0;
    if (++this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    }
  }
}

/** What the slicer stops and starts while lines wait: the socket. */
export interface Flow {
  pause(): void;
  resume(): void;
}

export class LineSlicer {
  private readonly reader = new LineReader();
  /** Whether whole lines may wait: bytes were read since the reader last had none. */
  private unread = false;
  private scheduled = false;
  private paused = false;
  private afterLast: (() => void) | null = null;
  private cleared = false;

  constructor(
    private readonly deliver: (line: string) => void,
    private readonly flow: Flow,
    private readonly sliceMs = SLICE_MS,
    /** The clock the slices are measured by, in milliseconds (tests give a fake one). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether lines read wait to be handled. */
  get waiting(): boolean {
    return this.unread;
  }

  /** Bytes read: their whole lines are handled now if nothing waits, or after those that wait. */
  push(chunk: Buffer | string): void {
    if (this.cleared) return;
    this.reader.push(chunk);
    this.unread = true;
    if (!this.scheduled) this.handleSlice();
  }

  /** Calls `then` once every line read so far is handled (at once if none waits): the socket closed. */
  end(then: () => void): void {
    if (!this.unread || this.cleared) then();
    else this.afterLast = then;
  }

  /** Drops the lines that wait: the connection is being thrown away. A close waiting for them is passed on. */
  clear(): void {
    this.cleared = true;
    this.reader.clear();
    this.unread = false;
    const then = this.afterLast;
    this.afterLast = null;
    then?.();
  }

  private handleSlice(): void {
    this.scheduled = false;
    const slice = new TimeSlice(this.sliceMs, this.now);
    try {
      while (!this.cleared) {
        const line = this.reader.next();
        if (line === null) {
          this.unread = false;
          break;
        }
        this.deliver(line);
        if (slice.spent()) break;
      }
    } finally {
      // A line whose handler threw is not handed over again; the others still are.
      this.afterSlice();
    }
  }

  private afterSlice(): void {
    if (this.cleared) return;
    if (this.unread) {
      if (!this.paused) {
        this.paused = true;
        this.flow.pause();
      }
      this.scheduled = true;
      setImmediate(() => this.handleSlice());
      return;
    }
    if (this.paused) {
      this.paused = false;
      this.flow.resume();
    }
    const then = this.afterLast;
    this.afterLast = null;
    then?.();
  }
}
