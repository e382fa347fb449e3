/**
 * Outgoing line pacing: a token bucket that lets `burst` lines go at once and
 * then one line every `intervalMs`. IRC servers disconnect clients that send
 * faster than their flood limits; a bot that syncs a big network sends many
 * queries, so every line after registration goes through this queue.
 */

export interface PacerOptions {
  burst: number;
  intervalMs: number;
  /**
   * The least interval the server allows, asked at each line: `intervalMs` goes no faster (the transport's
   * {@link penaltyIntervalFor} the server's profile); none by default.
   */
  minIntervalMs?: () => number;
  /**
   * Asked before each line: false holds the queue until {@link Pacer.resume} (the transport's `ReadGauge`, while
   * the server has not read the lines before); always true by default.
   */
  mayWrite?: () => boolean;
  write: (line: string) => void;
  now?: () => number;
}

/**
 * The interval between lines on a server that penalises commands (ISUPPORT `PENALTY`, ircd 2.11): past its first
 * five, it reads a client's PRIVMSG or NOTICE 2.2 s after the last, and a client whose unread lines pass its
 * receive queue is closed for `Excess Flood` (400 CTCP VERSION lines written at once were; 80 were not). At the
 * configured pace (a CTCP VERSION a second to users newly seen), the unread lines would grow by one every two
 * seconds; at this one the server keeps up, and the bot's requests wait behind a few lines at most. The same on a
 * server seen holding the bot's lines (`lagged`: InspIRCd's fake lag reads a plain user's next line a second after
 * the last): a line a second would take all of the server's reading, and every request would wait behind them.
 */
export const PENALTY_INTERVAL_MS = 2500;

/**
 * The least interval between lines: {@link PENALTY_INTERVAL_MS} where the server's profile says it penalises commands,
 * or where it is seen holding the bot's lines.
 */
export function penaltyIntervalFor(state: {
  readonly profile: { readonly commandPenalty: boolean };
  readonly lagged?: boolean;
}): number {
  return state.profile.commandPenalty || state.lagged === true ? PENALTY_INTERVAL_MS : 0;
}

/** How one line is queued. */
export interface LineOptions {
  /**
   * An answer to a person: it goes ahead of the other lines, which still get a turn after at most
   * `URGENT_RUN` (2) urgent lines in a row, so that answers cannot stop a sync.
   */
  urgent?: boolean;
  /** Urgent lines of different keys (the nicks answered) take turns: one client's long answer holds up no other's. */
  key?: string;
  /** Asked right before the line is written; a line no longer wanted is dropped, costing no token. */
  stillWanted?: () => boolean;
}

/** Urgent lines written in a row while other lines wait. */
export const URGENT_RUN = 2;

interface QueuedLine {
  line: string;
  onWrite: (() => void) | undefined;
  stillWanted: (() => boolean) | undefined;
}

export class Pacer {
  private readonly queue: QueuedLine[] = [];
  /** By key, in turn order: a key whose line was taken goes to the back. */
  private readonly urgent = new Map<string, QueuedLine[]>();
  private urgentCount = 0;
  private urgentInARow = 0;
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
    return this.queue.length + this.urgentCount;
  }

  /** Queue a line; `onWrite` runs when it is actually written. */
  enqueue(line: string, onWrite?: () => void, options: LineOptions = {}): void {
    const queued: QueuedLine = { line, onWrite, stillWanted: options.stillWanted };
    if (options.urgent) {
      const key = options.key ?? '';
      const lines = this.urgent.get(key);
      if (lines) lines.push(queued);
      else this.urgent.set(key, [queued]);
      this.urgentCount++;
    } else {
      this.queue.push(queued);
    }
    this.drain();
  }

  /** Write what may be written now: the gate ({@link PacerOptions.mayWrite}) may have opened. */
  resume(): void {
    if (this.pending > 0) this.drain();
  }

  /** Drop everything queued (the connection is gone) and refill the bucket for the next one. */
  clear(): void {
    this.queue.length = 0;
    this.urgent.clear();
    this.urgentCount = 0;
    this.urgentInARow = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.tokens = this.options.burst;
    this.lastRefill = this.now();
  }

  /** The line whose turn it is: urgent ones first, by key in turn, but never more than {@link URGENT_RUN} in a row. */
  private next(): QueuedLine {
    if (this.urgentCount > 0 && (this.queue.length === 0 || this.urgentInARow < URGENT_RUN)) {
      this.urgentInARow++;
      this.urgentCount--;
      const [key, lines] = this.urgent.entries().next().value!;
      const taken = lines.shift()!;
      this.urgent.delete(key);
      if (lines.length > 0) this.urgent.set(key, lines);
      return taken;
    }
    this.urgentInARow = 0;
    return this.queue.shift()!;
  }

  /** The interval between lines now: the configured one, or the server's least where that is longer. */
  private intervalMs(): number {
    return Math.max(this.options.intervalMs, this.options.minIntervalMs?.() ?? 0);
  }

  private refill(): void {
    const now = this.now();
    const interval = this.intervalMs();
    const earned = Math.floor((now - this.lastRefill) / interval);
    if (earned > 0) {
      this.tokens = Math.min(this.options.burst, this.tokens + earned);
      this.lastRefill += earned * interval;
    }
    if (this.tokens === this.options.burst) this.lastRefill = now;
  }

  private drain(): void {
    if (this.timer) return;
    this.refill();
    while (this.pending > 0 && this.tokens > 0) {
      // Held: resume() goes on, without a timer meanwhile.
      if (this.options.mayWrite && !this.options.mayWrite()) return;
      const next = this.next();
      if (next.stillWanted && !next.stillWanted()) continue;
      this.tokens--;
      this.options.write(next.line);
      next.onWrite?.();
    }
    if (this.pending > 0) {
      const wait = Math.max(1, this.lastRefill + this.intervalMs() - this.now());
      this.timer = setTimeout(() => {
        this.timer = null;
        this.drain();
      }, wait);
      this.timer.unref();
    }
  }
}
