/**
 * The lines the server sends, handed to the bot a slice of time at a time. A sync on a big network
 * brings tens of thousands of replies in 64 KB reads of about 600 lines each; handled in one go, each
 * read held the event loop for tens of milliseconds, and every HTTP request waited behind it. Here at
 * most {@link SLICE_MS} of lines are handled per turn of the event loop; the rest wait until the other
 * callbacks due (HTTP requests, timers) have run. While lines wait the socket is paused, so what the
 * bot has not handled yet stays with the server (in its send queue for the bot) and not in the bot's memory.
 */
import { StringDecoder } from 'node:string_decoder';
import { TimeSlice } from '../time-slice.js';

/** Work done on received lines in one turn of the event loop before the loop is let go, in ms. */
export const SLICE_MS = 2;

/** Splits a byte stream into lines (CR LF, LF or CR); a partial line or UTF-8 character waits for the rest. */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  push(chunk: Buffer | string): string[] {
    const lines = (this.rest + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk))).split(/\r\n|\r|\n/);
    this.rest = lines.pop() ?? '';
    return lines.filter((line) => line.length > 0);
  }
}

/** What the slicer stops and starts while lines wait: the socket. */
export interface Flow {
  pause(): void;
  resume(): void;
}

export class LineSlicer {
  private readonly splitter = new LineSplitter();
  private queue: string[] = [];
  private next = 0;
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

  /** Lines waiting to be handled. */
  get waiting(): number {
    return this.queue.length - this.next;
  }

  /** Bytes read: their whole lines are handled now if nothing waits, or after those that wait. */
  push(chunk: Buffer | string): void {
    if (this.cleared) return;
    const lines = this.splitter.push(chunk);
    if (lines.length === 0) return;
    if (this.waiting === 0) {
      this.queue = lines;
      this.next = 0;
    } else for (const line of lines) this.queue.push(line);
    if (!this.scheduled) this.handleSlice();
  }

  /** Calls `then` once every line read so far is handled (at once if none waits): the socket closed. */
  end(then: () => void): void {
    if (this.waiting === 0 || this.cleared) then();
    else this.afterLast = then;
  }

  /** Drops the lines that wait: the connection is being thrown away. A close waiting for them is passed on. */
  clear(): void {
    this.cleared = true;
    this.queue = [];
    this.next = 0;
    const then = this.afterLast;
    this.afterLast = null;
    then?.();
  }

  private handleSlice(): void {
    this.scheduled = false;
    const slice = new TimeSlice(this.sliceMs, this.now);
    try {
      while (this.next < this.queue.length && !this.cleared) {
        this.deliver(this.queue[this.next++]!);
        if (slice.spent()) break;
      }
    } finally {
      // A line whose handler threw is not handed over again; the others still are.
      this.afterSlice();
    }
  }

  private afterSlice(): void {
    if (this.cleared) return;
    if (this.waiting > 0) {
      if (!this.paused) {
        this.paused = true;
        this.flow.pause();
      }
      this.scheduled = true;
      setImmediate(() => this.handleSlice());
      return;
    }
    this.queue = [];
    this.next = 0;
    if (this.paused) {
      this.paused = false;
      this.flow.resume();
    }
    const then = this.afterLast;
    this.afterLast = null;
    then?.();
  }
}
