/**
 * Durable slices: kept in a file of their own, which persisted() writes at once, so that an answer that
 * confirms a change can wait until the change is on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { AtomicJsonFile } from '../../../lib/store/atomic-json-file.js';
import { Store, durablePathOf, type PersistedSlice } from '../../../lib/store/store.js';
import {
  captureLogger,
  deferred,
  makeTempDir,
  problems,
  readStoreFile,
  writeStoreFile,
} from './fixtures/temp-store.js';

/** A slice holding `value`, counting its snapshots (one snapshot is one write of its file). */
function slice(key: string, durable: boolean, initial: unknown = { key }) {
  const result: PersistedSlice & { value: unknown; snapshots: number; restored: unknown[] } = {
    key,
    durable,
    value: initial,
    snapshots: 0,
    restored: [] as unknown[],
    snapshot() {
      result.snapshots++;
      return result.value;
    },
    restore(data: unknown) {
      result.restored.push(data);
      result.value = data;
    },
  };
  return result;
}

async function loadedStore(file: string, debounceMs = 60_000) {
  const capture = captureLogger();
  const store = new Store({ path: file, logger: capture.logger, debounceMs });
  await store.load();
  return { store, ...capture };
}

/**
 * Hold each write of the durable file until the test releases it, one at a time, in order. Each held
 * write's snapshot was already taken, so what it writes is fixed when it is held.
 */
function heldDurableWrites(t: { teardown(fn: () => void): void }, durablePath: string) {
  const original = AtomicJsonFile.prototype.write;
  const held: { release: () => void; started: number }[] = [];
  const waiting: (() => void)[] = [];
  let writes = 0;
  AtomicJsonFile.prototype.write = async function (this: AtomicJsonFile, data: unknown) {
    if (this.filePath !== durablePath) return original.call(this, data);
    const gate = deferred();
    held.push({ release: gate.resolve, started: ++writes });
    for (const wake of waiting.splice(0)) wake();
    await gate.promise;
    await original.call(this, data);
  };
  t.teardown(() => {
    AtomicJsonFile.prototype.write = original;
  });
  return {
    /** How many durable writes have begun. */
    get started() {
      return writes;
    },
    /** Resolves once `count` durable writes have begun. */
    async begun(count: number): Promise<void> {
      while (writes < count) await new Promise<void>((resolve) => waiting.push(resolve));
    },
    /** Let the oldest held write go on to disk. */
    releaseNext(): void {
      const next = held.shift();
      if (!next) throw new Error('no durable write is held');
      next.release();
    },
  };
}

/** Whether `promise` has settled, after everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

t.test('the durable file sits beside the store file', async (t) => {
  t.equal(durablePathOf('data/store.json'), 'data/store.durable.json');
  t.equal(durablePathOf('/var/lib/bot/state'), '/var/lib/bot/state.durable.json');
  const { logger } = captureLogger();
  t.throws(
    () => new Store({ path: 'x.json', durablePath: './x.json', logger }),
    /durablePath must differ from the store path/,
  );
});

t.test(
  'durable slices go to their own file, the others to the store file; each is written when it changed',
  async (t) => {
    const file = path.join(makeTempDir(t), 'store.json');
    const durableFile = durablePathOf(file);
    const { store, lines } = await loadedStore(file);
    const tokens = slice('tokens', true, { secret_sha256: 'abc' });
    const activity = slice('activity', false, { lines: 5 });
    store.register(tokens);
    store.register(activity);

    store.markDirty('tokens');
    await store.flush();
    t.same(readStoreFile(durableFile).slices, { tokens: { secret_sha256: 'abc' } });
    t.notOk(fs.existsSync(file), 'a change of a durable slice does not write the store file');
    t.equal(activity.snapshots, 0);

    store.markDirty('activity');
    await store.flush();
    t.same(readStoreFile(file).slices, { activity: { lines: 5 } });
    t.equal(tokens.snapshots, 1, 'nor does a change of another slice write the durable file');
    t.throws(() => store.markDirty('nothing'), /markDirty\('nothing'\): no slice 'nothing' is registered/);
    await store.close();

    const { store: again } = await loadedStore(file);
    const restoredTokens = slice('tokens', true);
    const restoredActivity = slice('activity', false);
    again.register(restoredTokens);
    again.register(restoredActivity);
    t.same(restoredTokens.restored, [{ secret_sha256: 'abc' }]);
    t.same(restoredActivity.restored, [{ lines: 5 }]);
    t.same(problems(lines), []);
    await again.close();
  },
);

t.test('persisted() resolves only after a write that started after the call', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const durableFile = durablePathOf(file);
  const { store } = await loadedStore(file);
  const held = heldDurableWrites(t, durableFile);
  const tokens = slice('tokens', true, { version: 1 });
  store.register(tokens);

  store.markDirty('tokens');
  const flushed = store.flush();
  await held.begun(1);
  // The change comes after the first write took its snapshot: that write does not have it.
  tokens.value = { version: 2 };
  store.markDirty('tokens');
  const saved = store.persisted();
  held.releaseNext();
  await flushed;
  t.same(
    readStoreFile(durableFile).slices.tokens,
    { version: 1 },
    'the write under way is on disk, without the change',
  );
  t.notOk(await settled(saved), 'and persisted() does not count it');
  await held.begun(2);
  t.notOk(await settled(saved), 'nor resolves while its own write is still held');
  held.releaseNext();
  await saved;
  t.same(readStoreFile(durableFile).slices.tokens, { version: 2 }, 'resolved with the change on disk');
  t.equal(tokens.snapshots, 2);
  await store.close();
  t.equal(held.started, 2, 'close had nothing left to write');
});

t.test('persisted() callers share one write: those in one turn, and all who come during a write', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const durableFile = durablePathOf(file);
  const { store } = await loadedStore(file);
  const held = heldDurableWrites(t, durableFile);
  const tokens = slice('tokens', true, { version: 1 });
  store.register(tokens);

  const first = [store.persisted(), store.persisted(), store.persisted()];
  await held.begun(1);
  t.equal(tokens.snapshots, 1, 'three callers in one turn: one write');
  const second: Promise<void>[] = [];
  for (let version = 2; version <= 4; version++) {
    tokens.value = { version };
    second.push(store.persisted());
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.equal(tokens.snapshots, 1, 'callers during a write wait for it to end');
  held.releaseNext();
  await Promise.all(first);
  await held.begun(2);
  t.equal(tokens.snapshots, 2, 'then one more write serves them all');
  held.releaseNext();
  await Promise.all(second);
  t.same(readStoreFile(durableFile).slices.tokens, { version: 4 }, 'with the last change');
  await store.close();
  t.equal(held.started, 2);
});

t.test('a failed write rejects its persisted() callers; the change stays for the next write', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const durableFile = durablePathOf(file);
  const { store } = await loadedStore(file);
  const tokens = slice('tokens', true, { version: 1 });
  store.register(tokens);
  fs.mkdirSync(durableFile); // a directory where the file should go: the write cannot replace it
  const callers = [store.persisted(), store.persisted()];
  for (const caller of callers) await t.rejects(caller, { message: /store\.durable\.json/ });
  fs.rmdirSync(durableFile);
  await store.persisted();
  t.same(readStoreFile(durableFile).slices.tokens, { version: 1 }, 'the next write has it');
  t.notOk(fs.existsSync(`${durableFile}.tmp`), 'the failed write left no temp file');
  await store.close();
  await t.rejects(store.persisted(), /store .*store\.durable\.json is closed .*the change was not saved/);
});

t.test(
  'a slice that becomes durable moves out of the store file, which keeps it until the durable file has it',
  async (t) => {
    const file = path.join(makeTempDir(t), 'store.json');
    const durableFile = durablePathOf(file);
    writeStoreFile(file, { tokens: { version: 1 }, activity: { lines: 5 } });
    const { store, lines } = await loadedStore(file);
    const tokens = slice('tokens', true);
    const activity = slice('activity', false);
    store.register(tokens);
    store.register(activity);
    t.same(tokens.restored, [{ version: 1 }], 'restored from the store file');
    t.ok(
      lines.some((entry) => /slice 'tokens' moves from .*store\.json to .*store\.durable\.json/.test(entry.line)),
      'the move is logged',
    );

    // The durable file cannot be written yet: a crash now must find the tokens in the store file.
    fs.mkdirSync(durableFile);
    store.markDirty('activity');
    await t.rejects(store.flush(), { message: /store\.durable\.json/ });
    t.same(readStoreFile(file).slices, { activity: { lines: 5 }, tokens: { version: 1 } }, 'still in the store file');
    fs.rmdirSync(durableFile);

    tokens.value = { version: 2 };
    await store.persisted();
    t.same(readStoreFile(durableFile).slices, { tokens: { version: 2 } }, 'in the durable file');
    await store.flush();
    t.same(readStoreFile(file).slices, { activity: { lines: 5 } }, 'then gone from the store file');
    await store.close();

    const { store: again } = await loadedStore(file);
    const restored = slice('tokens', true);
    again.register(restored);
    t.same(restored.restored, [{ version: 2 }]);
    await again.close();
  },
);

t.test("a copy left in the other file by a move cut short loses to the slice's own file, and goes", async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const durableFile = durablePathOf(file);
  writeStoreFile(file, { tokens: { version: 1 }, activity: { lines: 5 } });
  writeStoreFile(durableFile, { tokens: { version: 2 } });
  const { store } = await loadedStore(file);
  const tokens = slice('tokens', true);
  store.register(tokens);
  store.register(slice('activity', false, { lines: 5 }));
  t.same(tokens.restored, [{ version: 2 }], 'the durable file has the newer data');
  await store.flush();
  t.same(readStoreFile(file).slices, { activity: { lines: 5 } }, 'the stale copy is dropped');
  await store.close();
});
