/**
 * Brute-force protection: failed checks counted per key (a casefolded nick,
 * a token) in a sliding window. A key with `maxFailures` failures inside the
 * window is refused until the oldest of them leaves it.
 *
 * A check must be admitted before it runs. So that a burst of guesses cannot
 * slip past the limit before the first answers arrive, a key never has more
 * checks running than it has failures left (`maxFailures` minus its failures);
 * the others wait in line, in arrival order, and run as the running ones end.
 * A running check is not a failure: a burst of right passwords all run, a few
 * at a time. Only a line longer than `maxQueued` is refused.
 */

export interface FailureWindowOptions {
  maxFailures: number;
  windowMs: number;
  /** Checks of one key that may wait while others of it run; one more is refused. */
  maxQueued: number;
  /** What to tell a check refused because the line is full: the running checks end within this. */
  queueFullRetryMs: number;
  /** A check that waited this long without its turn gives up (its client has surely given up too). */
  maxWaitMs: number;
  /** A success forgets the key's failures (right for a nick; a token's stuffing counts across nicks). */
  clearOnSuccess: boolean;
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
}

/** How an admitted check ended. `unknown`: services could not say (503), which is neither. */
export type CheckResult = 'failed' | 'succeeded' | 'unknown';

/** An admitted check; call {@link Admission.finish} exactly once, however it ends. */
export interface Admission {
  finish(result: CheckResult): void;
}

/** Why a key may not check now, and when to try again. */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
  constructor(
    /**
     * `failures`: the limit is reached; `queue`: too many checks of the key are waiting; `wait`: this
     * one waited its longest without its turn.
     */
    readonly reason: 'failures' | 'queue' | 'wait',
    readonly retryMs: number,
  ) {
    super(
      reason === 'failures'
        ? 'too many failed checks'
        : reason === 'queue'
          ? 'too many checks waiting'
          : 'no turn within the longest wait',
    );
  }
}

interface Waiting {
  admit: (admission: Admission) => void;
  refuse: (error: RefusedError) => void;
  timer: NodeJS.Timeout;
}

interface KeyState {
  /** Times of failures still inside the window, oldest first. */
  failures: number[];
  /** Checks admitted and not yet finished. */
  running: number;
  /** Checks waiting to be admitted, oldest first. */
  waiting: Waiting[];
}

export class FailureWindow {
  private readonly keys = new Map<string, KeyState>();
  private readonly now: () => number;

  constructor(private readonly options: FailureWindowOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Resolves once a check of `key` may run; rejects with {@link RefusedError} when the key has
   * reached its limit (now, or while waiting) or its line is full.
   */
  admit(key: string): Promise<Admission> {
    const state = this.current(key) ?? { failures: [], running: 0, waiting: [] };
    this.keys.set(key, state);
    const limited = this.limitedMs(state);
    if (limited > 0) {
      this.forgetIfIdle(key, state);
      return Promise.reject(new RefusedError('failures', limited));
    }
    if (state.waiting.length === 0 && this.hasRoom(state)) return Promise.resolve(this.start(key, state));
    if (state.waiting.length >= this.options.maxQueued) {
      return Promise.reject(new RefusedError('queue', this.options.queueFullRetryMs));
    }
    return new Promise((admit, refuse) => {
      const entry: Waiting = {
        admit: (admission) => {
          clearTimeout(entry.timer);
          admit(admission);
        },
        refuse: (error) => {
          clearTimeout(entry.timer);
          refuse(error);
        },
        timer: setTimeout(() => {
          state.waiting.splice(state.waiting.indexOf(entry), 1);
          this.forgetIfIdle(key, state);
          refuse(new RefusedError('wait', 1000));
        }, this.options.maxWaitMs),
      };
      state.waiting.push(entry);
    });
  }

  /** Milliseconds until `key` may try again because of its failures; 0 when it may try now. */
  waitMs(key: string): number {
    const state = this.current(key);
    return state ? this.limitedMs(state) : 0;
  }

  /** Failures of `key` inside the window (for tests and logs). */
  failures(key: string): number {
    return this.current(key)?.failures.length ?? 0;
  }

  /** Checks of `key` running now (for tests). */
  running(key: string): number {
    return this.keys.get(key)?.running ?? 0;
  }

  /** Checks of `key` waiting to run (for tests). */
  queued(key: string): number {
    return this.keys.get(key)?.waiting.length ?? 0;
  }

  /** Drop expired failures of every key, so idle keys cost no memory. */
  sweep(): void {
    for (const key of [...this.keys.keys()]) this.current(key);
  }

  /** How many keys are tracked (for tests). */
  get size(): number {
    return this.keys.size;
  }

  private start(key: string, state: KeyState): Admission {
    state.running++;
    let finished = false;
    return {
      finish: (result) => {
        if (finished) return;
        finished = true;
        state.running--;
        if (result === 'failed') state.failures.push(this.now());
        else if (result === 'succeeded' && this.options.clearOnSuccess) state.failures = [];
        this.admitWaiting(key, state);
      },
    };
  }

  /** Let the waiting checks in while there is room; once the limit is reached, refuse them all. */
  private admitWaiting(key: string, state: KeyState): void {
    this.dropExpired(state);
    const limited = this.limitedMs(state);
    if (limited > 0) {
      for (const waiting of state.waiting.splice(0)) waiting.refuse(new RefusedError('failures', limited));
    }
    while (state.waiting.length > 0 && this.hasRoom(state)) state.waiting.shift()!.admit(this.start(key, state));
    this.forgetIfIdle(key, state);
  }

  /** Whether one more check may run without the key risking more failures than it has left. */
  private hasRoom(state: KeyState): boolean {
    return state.running + state.failures.length < this.options.maxFailures;
  }

  private limitedMs(state: KeyState): number {
    const { maxFailures, windowMs } = this.options;
    if (state.failures.length < maxFailures) return 0;
    // Enough failures must leave the window to get below the limit: wait for the one at this index.
    const blocking = state.failures[state.failures.length - maxFailures]!;
    return Math.max(1, blocking + windowMs - this.now());
  }

  private dropExpired(state: KeyState): void {
    const horizon = this.now() - this.options.windowMs;
    let expired = 0;
    while (expired < state.failures.length && state.failures[expired]! <= horizon) expired++;
    if (expired > 0) state.failures.splice(0, expired);
  }

  /** The state of `key` with expired failures dropped (waiting checks let in if that made room); undefined when nothing is left. */
  private current(key: string): KeyState | undefined {
    const state = this.keys.get(key);
    if (!state) return undefined;
    this.dropExpired(state);
    if (state.waiting.length > 0) this.admitWaiting(key, state);
    return this.forgetIfIdle(key, state) ? undefined : state;
  }

  private forgetIfIdle(key: string, state: KeyState): boolean {
    if (state.failures.length > 0 || state.running > 0 || state.waiting.length > 0) return false;
    this.keys.delete(key);
    return true;
  }
}
