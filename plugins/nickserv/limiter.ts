/**
 * Brute-force protection: failed checks counted per key (a casefolded nick,
 * a token) in a sliding window. A key with `maxFailures` failures inside the
 * window is refused until the oldest of them leaves it.
 *
 * Checks still running count as failures-to-be, so firing many guesses at
 * once cannot slip past the limit before the first answers arrive.
 */

export interface FailureWindowOptions {
  maxFailures: number;
  windowMs: number;
  /** What to tell a key refused only because of its running checks: they end within this. */
  pendingRetryMs: number;
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
}

interface KeyState {
  /** Times of failures still inside the window, oldest first. */
  failures: number[];
  /** Checks started and not yet finished. */
  pending: number;
}

export class FailureWindow {
  private readonly keys = new Map<string, KeyState>();
  private readonly now: () => number;

  constructor(private readonly options: FailureWindowOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds until `key` may try again; 0 when it may try now. */
  waitMs(key: string): number {
    const state = this.current(key);
    if (!state) return 0;
    const { maxFailures, windowMs, pendingRetryMs } = this.options;
    if (state.failures.length >= maxFailures) {
      // Enough failures must leave the window to get below the limit: wait for the one at this index.
      const blocking = state.failures[state.failures.length - maxFailures]!;
      return Math.max(1, blocking + windowMs - this.now());
    }
    if (state.failures.length + state.pending >= maxFailures) return pendingRetryMs;
    return 0;
  }

  /** A check for `key` starts; call {@link finish} when it ends, however it ends. */
  start(key: string): void {
    const state = this.current(key) ?? { failures: [], pending: 0 };
    state.pending++;
    this.keys.set(key, state);
  }

  /** A check for `key` ended; `failed` when the service said the credentials are wrong. */
  finish(key: string, failed: boolean): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.pending = Math.max(0, state.pending - 1);
    if (failed) state.failures.push(this.now());
    this.forgetIfIdle(key, state);
  }

  /** Forget the failures of `key` (a success); its running checks still count. */
  clear(key: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.failures = [];
    this.forgetIfIdle(key, state);
  }

  /** Failures of `key` inside the window (for tests and logs). */
  failures(key: string): number {
    return this.current(key)?.failures.length ?? 0;
  }

  /** Drop expired failures of every key, so idle keys cost no memory. */
  sweep(): void {
    for (const key of [...this.keys.keys()]) this.current(key);
  }

  /** How many keys are tracked (for tests). */
  get size(): number {
    return this.keys.size;
  }

  /** The state of `key` with expired failures dropped; undefined (and forgotten) when nothing is left. */
  private current(key: string): KeyState | undefined {
    const state = this.keys.get(key);
    if (!state) return undefined;
    const horizon = this.now() - this.options.windowMs;
    let expired = 0;
    while (expired < state.failures.length && state.failures[expired]! <= horizon) expired++;
    if (expired > 0) state.failures.splice(0, expired);
    return this.forgetIfIdle(key, state) ? undefined : state;
  }

  private forgetIfIdle(key: string, state: KeyState): boolean {
    if (state.failures.length > 0 || state.pending > 0) return false;
    this.keys.delete(key);
    return true;
  }
}
