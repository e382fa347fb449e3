/**
 * A clock the host's timers run on in tests (`HostOptions.timers`): nothing a plugin set with `timers.every` or
 * `timers.after` runs until the test moves the clock on, and then each runs when it falls due, in order, as many
 * times as it would have in that much time.
 *
 * ```ts
 * const clock = new ManualClock();
 * clock.every(1000, tick);
 * await clock.advance(2500); // tick ran twice, at 1000 and 2000
 * await clock.jump(3_600_000); // an hour later: tick ran once
 * ```
 */
import type { HostTimers } from '../lib/host.js';

interface Timer {
  /** When it next falls due, in ms of the clock. */
  at: number;
  /** Its period; null for a timer that runs once. */
  everyMs: number | null;
  task: () => void;
  /** Set when it was made, to run timers due at the same time in the order they were set. */
  order: number;
}

/** The real time in ms, by the performance clock (`Date.now` may be the one a test replaced). */
const realTime = (): number => performance.timeOrigin + performance.now();

export class ManualClock implements HostTimers {
  private time = 0;
  private made = 0;
  private readonly timers = new Set<Timer>();
  /** Real time spent moving the clock on, which {@link now} leaves out. */
  private realSpent = 0;
  /** When the clock started moving on (real time), while it does. */
  private movingSince: number | null = null;

  /**
   * `between` runs after each timer (and after the last): the test harness lets the bot finish what the timer
   * started (the answers of the fake server), as it would have before the next timer in real time.
   */
  constructor(private readonly between: () => Promise<void> = async () => undefined) {}

  /** How much time the test has let pass, in ms. */
  get elapsed(): number {
    return this.time;
  }

  /**
   * The time now, in ms, for a test that replaces `Date.now` with it: the real time plus what the test let pass.
   * While the clock moves on, the real time stands still: whatever a timer runs sees the time it fell due, however
   * long the timers before it took.
   */
  now(): number {
    const real = this.movingSince ?? realTime();
    return Math.floor(real - this.realSpent + this.time);
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
    await this.moving(async () => {
      for (let timer = this.nextDue(until); timer; timer = this.nextDue(until)) {
        this.time = timer.at;
        if (timer.everyMs === null) this.timers.delete(timer);
        else timer.at += timer.everyMs;
        timer.task();
        await this.between();
      }
      this.time = until;
      await this.between();
    });
  }

  /**
   * Let `ms` pass at once, as for a process that was stopped meanwhile: each timer that fell due runs once, at the
   * end, and a periodic one goes on from there. For "much later", where what happened in between does not matter.
   */
  async jump(ms: number): Promise<void> {
    this.time += ms;
    await this.moving(async () => {
      for (let timer = this.nextDue(this.time); timer; timer = this.nextDue(this.time)) {
        if (timer.everyMs === null) this.timers.delete(timer);
        else timer.at = this.time + timer.everyMs;
        timer.task();
        await this.between();
      }
      await this.between();
    });
  }

  /** Runs `move` with the real time standing still for {@link now}. */
  private async moving(move: () => Promise<void>): Promise<void> {
    if (this.movingSince !== null) throw new Error('the clock is moving on already: await advance() or jump() first');
    const since = realTime();
    this.movingSince = since;
    try {
      await move();
    } finally {
      this.realSpent += realTime() - since;
      this.movingSince = null;
    }
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
