/**
 * A long loop's share of the event loop: work until the slice is spent, then let the other callbacks due
 * (HTTP requests, IRC lines) run before going on.
 *
 * ```ts
 * const slice = new TimeSlice();
 * for (const item of items) {
 *   if (slice.spent()) await slice.pause();
 *   handle(item);
 * }
 * ```
 */
export class TimeSlice {
  private deadline: number;

  /** `now` is the clock in milliseconds (tests give a fake one). */
  constructor(
    private readonly ms = 4,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.deadline = now() + ms;
  }

  spent(): boolean {
    return this.now() >= this.deadline;
  }

  /** Resolves once the event loop has run; a new slice starts then. */
  async pause(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.deadline = this.now() + this.ms;
  }
}
