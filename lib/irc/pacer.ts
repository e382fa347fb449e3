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

export class Pacer {
  private readonly queue: { line: string; onWrite: (() => void) | undefined }[] = [];
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
    return this.queue.length;
  }

  /** Queue a line; `onWrite` runs when it is actually written. */
  enqueue(line: string, onWrite?: () => void): void {
    this.queue.push({ line, onWrite });
    this.drain();
  }

  /** Drop everything queued (the connection is gone) and refill the bucket for the next one. */
  clear(): void {
    this.queue.length = 0;
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
    while (this.queue.length > 0 && this.tokens > 0) {
      this.tokens--;
      const next = this.queue.shift()!;
      this.options.write(next.line);
      next.onWrite?.();
    }
    if (this.queue.length > 0) {
      const wait = Math.max(1, this.lastRefill + this.options.intervalMs - this.now());
      this.timer = setTimeout(() => {
        this.timer = null;
        this.drain();
      }, wait);
      this.timer.unref();
    }
  }
}
