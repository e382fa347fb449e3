/**
 * Outgoing line pacing: a token bucket that lets `burst` lines go at once and
 * then one line every `intervalMs`. IRC servers disconnect clients that send
 * faster than their flood limits; a bot that syncs a big network sends many
 * queries, so every line after registration goes through this queue.
 */

export interface PacerOptions {
  burst: number;
  intervalMs: number;
  write: (line: string) => void;
  now?: () => number;
}

/** How one line is queued. */
export interface LineOptions {
  /** Ahead of every line that is not urgent (answers to people), in the order queued. */
  urgent?: boolean;
  /** Asked right before the line is written; a line no longer wanted is dropped, costing no token. */
  stillWanted?: () => boolean;
}

interface QueuedLine {
  line: string;
  onWrite: (() => void) | undefined;
  stillWanted: (() => boolean) | undefined;
}

export class Pacer {
  private readonly queue: QueuedLine[] = [];
  private readonly urgent: QueuedLine[] = [];
  private tokens: number;
  private lastRefill: number;
  private timer: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly options: PacerOptions) {
    this.tokens = options.burst;
    this.now = options.now ?? Date.now;
    this.lastRefill = this.now();
  }

  get pending(): number {
    return this.queue.length + this.urgent.length;
  }

  /** Queue a line; `onWrite` runs when it is actually written. */
  enqueue(line: string, onWrite?: () => void, options: LineOptions = {}): void {
    (options.urgent ? this.urgent : this.queue).push({ line, onWrite, stillWanted: options.stillWanted });
    this.drain();
  }

  /** Drop everything queued (the connection is gone) and refill the bucket for the next one. */
  clear(): void {
    this.queue.length = 0;
    this.urgent.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.tokens = this.options.burst;
    this.lastRefill = this.now();
  }

  private refill(): void {
    const now = this.now();
    const earned = Math.floor((now - this.lastRefill) / this.options.intervalMs);
    if (earned > 0) {
      this.tokens = Math.min(this.options.burst, this.tokens + earned);
      this.lastRefill += earned * this.options.intervalMs;
    }
    if (this.tokens === this.options.burst) this.lastRefill = now;
  }

  private drain(): void {
    if (this.timer) return;
    this.refill();
    while (this.pending > 0 && this.tokens > 0) {
      const next = this.urgent.length > 0 ? this.urgent.shift()! : this.queue.shift()!;
      if (next.stillWanted && !next.stillWanted()) continue;
      this.tokens--;
      this.options.write(next.line);
      next.onWrite?.();
    }
    if (this.pending > 0) {
      const wait = Math.max(1, this.lastRefill + this.options.intervalMs - this.now());
      this.timer = setTimeout(() => {
        this.timer = null;
        this.drain();
      }, wait);
      this.timer.unref();
    }
  }
}
