/**
 * How far behind the server reads the bot's lines, and a gate that keeps the paced lines from running ahead of it.
 *
 * A server may read a client's lines only as fast as its penalties allow: InspIRCd, for anyone without the
 * `users/flood/no-fakelag` privilege, reads the next line only while the client's penalty is under 10 s, adds a
 * second per command (5 s per LIST, 5 ms per WHO row) and takes one off per second. The bot's paced lines (a CTCP
 * VERSION a second to users newly seen, JOINs, questions to the services) then come in faster than they are read,
 * the lines the server has not read pile up in its receive queue, and every request written behind them waits
 * longer and longer: a plain user's LUSERS was not answered within 15 s of its turn, sync after sync, on a network
 * of 5,000 users. Once a request is seen held that long ({@link LAGGED_MS}), the paced lines wait while
 * {@link UNREAD_LINES} of the bot's lines are unread; a PING written after them tells when they are (its answer
 * comes once the server has read it). A server that reads every line at once never holds a request that long, and
 * nothing is gated or written for it.
 */
import type { LaneFlow } from './requests.js';

/** A request answered this long after its turn means the server holds the bot's lines; well under it, it no longer does. */
export const LAGGED_MS = 2000;
const UNLAGGED_MS = LAGGED_MS / 4;

/** While the server holds the bot's lines, paced lines wait while this many lines are unread. */
export const UNREAD_LINES = 5;

export interface ReadGaugeOptions {
  /** Write a line whose answer tells that the server has read every line before it (a PING, as a request). */
  mark: () => Promise<unknown>;
  /** Whether a request is unanswered: its reply (or its end) tells how far the server has read, and no marker is needed. */
  busy: () => boolean;
  /** The gate may have opened: paced lines may go on. */
  opened: () => void;
  /** The server started (`true`) or stopped holding the bot's lines; `lagMs` is the hold that told. */
  changed?: (lagged: boolean, lagMs: number) => void;
}

export class ReadGauge implements LaneFlow {
  private count = 0;
  private readUpTo = 0;
  private isLagged = false;
  private markerOut = false;

  constructor(private readonly options: ReadGaugeOptions) {}

  /** Whether the last reply said the server holds the bot's lines. */
  get lagged(): boolean {
    return this.isLagged;
  }

  /** A line was written on the connection. */
  wrote(): void {
    this.count++;
  }

  written(): number {
    return this.count;
  }

  heard(seq: number, holdMs: number | null): void {
    this.readUpTo = Math.max(this.readUpTo, seq);
    // A reply that came before its turn says nothing of the hold.
    const lagged = holdMs === null ? this.isLagged : holdMs >= (this.isLagged ? UNLAGGED_MS : LAGGED_MS);
    if (holdMs !== null && lagged !== this.isLagged) {
      this.isLagged = lagged;
      this.options.changed?.(lagged, holdMs);
    }
    this.options.opened();
  }

  idle(): void {
    this.options.opened();
  }

  /**
   * Whether a paced line may be written now. Not while the server holds the bot's lines and {@link UNREAD_LINES} are
   * unread: then, unless a request is unanswered (its reply or end tells), a marker is written (one at a time), and
   * `opened` is called once it is answered, or given up on.
   */
  mayWrite(): boolean {
    if (!this.isLagged || this.count - this.readUpTo < UNREAD_LINES) return true;
    if (!this.markerOut && !this.options.busy()) {
      this.markerOut = true;
      const upTo = this.count;
      void this.options
        .mark()
        // Never answered (the connection dropped, a server that keeps it longer): taken as read, not waited on for ever.
        .catch(() => (this.readUpTo = Math.max(this.readUpTo, upTo)))
        .finally(() => {
          this.markerOut = false;
          this.options.opened();
        });
    }
    return false;
  }

  /** A new connection: nothing written, nothing held. */
  reset(): void {
    this.count = 0;
    this.readUpTo = 0;
    this.isLagged = false;
  }
}
