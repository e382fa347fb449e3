/**
 * The store's lock file, `<store file>.lock`: one process at a time reads and writes a store. Two bots on one
 * store, or the command line (`irc-network-data token …`) beside a running bot, would each write the files from
 * what they hold and lose the other's changes; the second is refused instead, naming the first.
 *
 * The file holds the owner's PID and, on Linux, the process's start time (field 22 of `/proc/<pid>/stat`), so
 * that a PID reused by another process after a crash does not keep the store locked. A lock whose process is
 * gone is stale and taken over; so is one of this very process (a test that opens a store again).
 */
import { readFileSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';

/** The store is in use by another process. */
export class StoreLockedError extends Error {
  constructor(
    readonly lockPath: string,
    readonly pid: number,
  ) {
    super(
      `the store is in use by process ${pid} (another irc-network-data, or its command line): stop it first, ` +
        `or give this one a store of its own (store.path). The lock is ${lockPath}.`,
    );
    this.name = 'StoreLockedError';
  }
}

interface LockOwner {
  pid: number;
  /** The process's start time in clock ticks since boot, where /proc tells it. */
  started: string | null;
}

/** When the process `pid` started (clock ticks since boot), from /proc; null where that cannot be read. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function alive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists, run by another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = startTimeOf(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0) return null;
    return { pid: value.pid, started: typeof value.started === 'string' ? value.started : null };
  } catch {
    return null;
  }
}

/** A held lock; {@link release} removes the file. */
export interface StoreLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Takes the lock `lockPath` for this process, or rejects with {@link StoreLockedError} while a live process
 * other than this one holds it.
 */
export async function lockStore(lockPath: string): Promise<StoreLock> {
  const mine: LockOwner = { pid: process.pid, started: startTimeOf(process.pid) };
  const text = `${JSON.stringify(mine)}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      try {
        await handle.writeFile(text);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
    }
    let owner: LockOwner | null = null;
    try {
      owner = parseOwner(await readFile(lockPath, 'utf8'));
    } catch {
      // gone in between, or unreadable: try to take it
    }
    if (owner && owner.pid !== process.pid && alive(owner)) throw new StoreLockedError(lockPath, owner.pid);
    // Stale (its process is gone), half written, or this process's own: taken over.
    await rm(lockPath, { force: true });
  }
  let released = false;
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      // Only a lock that is still this process's own.
      const owner = parseOwner(await readFile(lockPath, 'utf8').catch(() => ''));
      if (owner?.pid === process.pid) await rm(lockPath, { force: true });
    },
  };
}
