/**
 * The store's lock file: one process at a time. A live process's lock is refused, naming it; a stale one (its
 * process gone, or its PID reused by another process) and this process's own are taken over.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { createLogger } from '../../../lib/logger.js';
import { lockStore, StoreLockedError } from '../../../lib/store/lock.js';
import { Store } from '../../../lib/store/store.js';

function folder(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'store-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A process that lives until the test ends, and its start time as /proc has it. */
async function otherProcess(t: Test): Promise<{ pid: number; started: string }> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  await once(child, 'spawn');
  t.teardown(() => void child.kill('SIGKILL'));
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  return { pid: child.pid!, started: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]! };
}

t.test("a live process's lock is refused, naming it; released, the file is gone", async (t) => {
  const dir = folder(t);
  const lockPath = path.join(dir, 'store.json.lock');
  const other = await otherProcess(t);
  writeFileSync(lockPath, JSON.stringify(other));
  await t.rejects(lockStore(lockPath), new StoreLockedError(lockPath, other.pid));
  await t.rejects(lockStore(lockPath), { message: new RegExp(`in use by process ${other.pid}`) });
  t.same(JSON.parse(readFileSync(lockPath, 'utf8')), other, 'left as it was');
  rmSync(lockPath);
  const lock = await lockStore(lockPath);
  t.equal(JSON.parse(readFileSync(lockPath, 'utf8')).pid, process.pid);
  await lock.release();
  t.notOk(existsSync(lockPath));
});

t.test('stale locks are taken over: the process gone, its PID reused, half written, or our own', async (t) => {
  const dir = folder(t);
  const lockPath = path.join(dir, 'store.json.lock');
  const other = await otherProcess(t);
  const stale = [
    JSON.stringify({ pid: 2 ** 22 + 12345, started: '1' }),
    JSON.stringify({ pid: other.pid, started: `${Number(other.started) - 1}` }),
    '{"pid": 12',
    JSON.stringify({ pid: process.pid, started: null }),
  ];
  for (const text of stale) {
    writeFileSync(lockPath, text);
    const lock = await lockStore(lockPath);
    t.equal(JSON.parse(readFileSync(lockPath, 'utf8')).pid, process.pid, text);
    await lock.release();
  }
});

t.test("release leaves another process's lock alone", async (t) => {
  const dir = folder(t);
  const lockPath = path.join(dir, 'store.json.lock');
  const lock = await lockStore(lockPath);
  const other = await otherProcess(t);
  writeFileSync(lockPath, JSON.stringify(other));
  await lock.release();
  t.ok(existsSync(lockPath));
});

t.test('a Store holds the lock from load() to close(); another process is refused meanwhile', async (t) => {
  const dir = folder(t);
  const storePath = path.join(dir, 'store.json');
  const logger = createLogger({ sink: () => undefined });
  const store = new Store({ path: storePath, logger });
  await store.load();
  t.equal(JSON.parse(readFileSync(`${storePath}.lock`, 'utf8')).pid, process.pid);
  // Another process trying the same store: a child running this build's lock on it.
  const lockModule = new URL('../../../lib/store/lock.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { lockStore } from ${JSON.stringify(lockModule)};
       lockStore(process.argv[1]).then(() => console.log('locked'), (error) => console.log(error.name, error.message));`,
      `${storePath}.lock`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let said = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
  await once(child, 'close');
  t.match(said, new RegExp(`^StoreLockedError the store is in use by process ${process.pid}`));
  await store.close();
  t.notOk(existsSync(`${storePath}.lock`), 'close() releases it');
});
