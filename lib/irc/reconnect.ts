/**
 * Reconnecting: exponential backoff with full jitter, so many bots dropped by one netsplit do not come
 * back in step; the count of attempts starts again once a connection registers.
 */
import type { Logger } from '../logger.js';

export class Reconnector {
  private attempts = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly delays: { minMs: number; maxMs: number },
    private readonly logger: Logger,
  ) {}

  /** Run `reopen` after the next backoff delay, unless a reconnect is already due or it is cancelled first. */
  schedule(reopen: () => void): void {
    if (this.timer) return;
    const { minMs, maxMs } = this.delays;
    const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(this.attempts, 20));
    const wait = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.attempts++;
    this.logger.info('reconnecting', { attempt: this.attempts, wait_ms: wait });
    this.timer = setTimeout(() => {
      this.timer = null;
      reopen();
    }, wait);
  }

  /** A connection registered: the next drop starts from the shortest delay. */
  succeeded(): void {
    this.attempts = 0;
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
