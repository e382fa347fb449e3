/**
 * How long a piece of asynchronous work held the event loop at most: the longest stretch of synchronous
 * work between two of its awaits. A store write marks where each stretch ends (before it awaits) and
 * where the next begins (once the await resumed), so the figure is the write's own, whatever else
 * (IRC lines, HTTP requests) runs in between.
 */
export class HoldMeter {
  /** The longest stretch so far, in milliseconds. */
  longestMs = 0;
  /** When that stretch began, in epoch milliseconds. */
  longestAt = 0;
  private since: number;

  /** `now` is a monotonic clock in milliseconds (tests give a fake one); a stretch starts now. */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.since = now();
  }

  /** The work is about to await: the stretch that began at the last {@link resume} ends. */
  pause(): void {
    const now = this.now();
    const ms = now - this.since;
    if (ms > this.longestMs) {
      this.longestMs = ms;
      this.longestAt = performance.timeOrigin + this.since;
    }
    this.since = now;
  }

  /** The await resumed: a new stretch begins. */
  resume(): void {
    this.since = this.now();
  }
}
