/**
 * The collector's network tasks run one at a time in each queue (the plugin has
 * three: syncs and latency; the LISTs between syncs; the services' HELP):
 * a latency probe queued behind a megabyte of WHO replies would measure the
 * queue, not the network. Asking for a task that is already waiting or running
 * joins it instead of running it twice; {@link TaskQueue.runFresh} asks for one
 * that starts after now.
 */
import { errorMessage, type Logger } from '../../lib/sdk.js';

interface Entry {
  promise: Promise<void>;
  started: boolean;
}

export class TaskQueue {
  private tail: Promise<void> = Promise.resolve();
  /** The last task asked for under each name, until it ends. */
  private readonly active = new Map<string, Entry>();

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
    return this.active.get(name)?.promise ?? this.enqueue(name, task);
  }

  /**
   * Like {@link run}, but a task of this name that is already running does not count: what it learns may
   * predate something that just happened, so another one is queued (one waiting is joined).
   */
  runFresh(name: string, task: () => Promise<void>): Promise<void> {
    const existing = this.active.get(name);
    return existing && !existing.started ? existing.promise : this.enqueue(name, task);
  }

  private enqueue(name: string, task: () => Promise<void>): Promise<void> {
    const entry: Entry = { promise: Promise.resolve(), started: false };
    entry.promise = this.tail.then(async () => {
      entry.started = true;
      const started = Date.now();
      try {
        await task();
        this.logger.debug('task done', { task: name, ms: Date.now() - started });
      } catch (error) {
        if (this.interrupted()) this.logger.info(`${name} interrupted`, { error: errorMessage(error) });
        else this.logger.warn(`${name} failed`, { error: errorMessage(error) });
      } finally {
        if (this.active.get(name) === entry) this.active.delete(name);
      }
    });
    this.active.set(name, entry);
    this.tail = entry.promise;
    return entry.promise;
  }
}
