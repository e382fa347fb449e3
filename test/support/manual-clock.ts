/**
 * A clock the host's timers run on in tests (`HostOptions.timers`): nothing a plugin set with `timers.every` or
 * `timers.after` runs until the test moves the clock on, and then each runs when it falls due, in order, as many
 * times as it would have in that much time.
 *
 * ```ts
 * const clock = new ManualClock();
 * clock.every(1000, tick);
 * await clock.advance(2500); // tick ran twice, at 1000 and 2000
 * ```
 */
import type { HostTimers } from '../../lib/host.js';

interface Timer {
  /** When it next falls due, in ms of the clock. */
  at: number;
  /** Its period; null for a timer that runs once. */
  everyMs: number | null;
  task: () => void;
  /** Set when it was made, to run timers due at the same time in the order they were set. */
  order: number;
}

export class ManualClock implements HostTimers {
  private time = 0;
  private made = 0;
  private readonly timers = new Set<Timer>();

  /**
   * `between` runs after each timer (and after the last): the test harness lets the bot finish what the timer
   * started (the answers of the fake server), as it would have before the next timer in real time.
   */
  constructor(private readonly between: () => Promise<void> = async () => undefined) {}

  /** How much time the test has let pass, in ms. */
  get elapsed(): number {
    return this.time;
  }

  every(ms: number, task: () => void): () => void {
    return this.add({ at: this.time + ms, everyMs: Math.max(1, ms), task, order: this.made++ });
  }

  after(ms: number, task: () => void): () => void {
    return this.add({ at: this.time + Math.max(0, ms), everyMs: null, task, order: this.made++ });
  }

  /** Let `ms` pass: every timer due meanwhile runs at its time, including those the others set. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (let timer = this.nextDue(until); timer; timer = this.nextDue(until)) {
      this.time = timer.at;
      if (timer.everyMs === null) this.timers.delete(timer);
      else timer.at += timer.everyMs;
      timer.task();
      await this.between();
    }
    this.time = until;
    await this.between();
  }

  private add(timer: Timer): () => void {
    this.timers.add(timer);
    return () => this.timers.delete(timer);
  }

  /** The timer that falls due first, no later than `until`. */
  private nextDue(until: number): Timer | undefined {
    let first: Timer | undefined;
    for (const timer of this.timers) {
      if (timer.at > until) continue;
      if (!first || timer.at < first.at || (timer.at === first.at && timer.order < first.order)) first = timer;
    }
    return first;
  }
}
