/**
 * A bound on the checks talking to services at once: at most `size` run, at
 * most `queueLimit` wait, and a waiting check that does not start within
 * `maxWaitMs` gives up. A burst of requests therefore becomes a steady trickle
 * of connections, never a flood of them at the IRC server or Atheme's httpd
 * (whose listen backlog is 5).
 */

export interface TaskPoolOptions {
  size: number;
  queueLimit: number;
  maxWaitMs: number;
}

/** The pool cannot take the task now (queue full, waited too long, or closed). */
export class PoolBusyError extends Error {
  override readonly name = 'PoolBusyError';
}

interface Waiting {
  start: () => void;
  reject: (error: PoolBusyError) => void;
  timer: NodeJS.Timeout;
}

export class TaskPool {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  private closed = false;

  constructor(private readonly options: TaskPoolOptions) {}

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Run `task` when a slot is free; rejects with PoolBusyError when it cannot be queued or waits too long. */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new PoolBusyError('the credential checker is stopping'));
    if (this.running < this.options.size) return this.execute(task);
    if (this.waiting.length >= this.options.queueLimit) {
      return Promise.reject(
        new PoolBusyError(
          `${this.options.size} checks are running and ${this.waiting.length} are waiting, the most allowed; retry shortly`,
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Waiting = {
        start: () => {
          clearTimeout(entry.timer);
          this.execute(task).then(resolve, reject);
        },
        reject,
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(new PoolBusyError(`no check slot became free within ${this.options.maxWaitMs} ms; retry shortly`));
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  /** Refuse new tasks and reject the waiting ones; running tasks finish on their own. */
  close(): void {
    this.closed = true;
    for (const entry of this.waiting.splice(0)) {
      clearTimeout(entry.timer);
      entry.reject(new PoolBusyError('the credential checker is stopping'));
    }
  }

  private async execute<T>(task: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.start();
    }
  }
}
