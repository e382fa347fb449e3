/**
 * The collector's network tasks (sync, latency, service HELP) run one at a time:
 * a latency probe queued behind a megabyte of WHO replies would measure the
 * queue, not the network. Asking for a task that is already waiting or running
 * joins it instead of running it twice.
 */
import { errorMessage, type Logger } from '../../lib/logger.js';

export class TaskQueue {
  private tail: Promise<void> = Promise.resolve();
  private readonly active = new Map<string, Promise<void>>();

  /** `interrupted` tells a failure caused by a lost connection (logged quietly) from a real one. */
  constructor(
    private readonly logger: Logger,
    private readonly interrupted: () => boolean = () => false,
  ) {}

  /** Whether a task of this name is waiting or running. */
  has(name: string): boolean {
    return this.active.has(name);
  }

  /** Run `task` after those before it; resolves when it is done (failures are logged, never thrown). */
  run(name: string, task: () => Promise<void>): Promise<void> {
    const existing = this.active.get(name);
    if (existing) return existing;
    const run = this.tail.then(async () => {
      try {
        await task();
      } catch (error) {
        if (this.interrupted()) this.logger.info(`${name} interrupted`, { error: errorMessage(error) });
        else this.logger.warn(`${name} failed`, { error: errorMessage(error) });
      } finally {
        this.active.delete(name);
      }
    });
    this.active.set(name, run);
    this.tail = run;
    return run;
  }
}
