import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { AtomicJsonFile } from '../../../lib/store/atomic-json-file.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { HoldMeter } from '../../../lib/store/hold-meter.js';
import {
  CURRENT_SCHEMA_VERSION,
  STORE_WRITE_CHANNEL,
  Store,
  type PersistedSlice,
  type WriteReport,
} from '../../../lib/store/store.js';
import { watchEventLoop } from './fixtures/event-loop.js';
import {
  captureLogger,
  deferred,
  makeTempDir,
  problems,
  readStoreFile,
  writeStoreFile,
} from './fixtures/temp-store.js';

/** A slice whose snapshot() counts calls: one call is one write. */
function countingSlice(key: string, value: () => unknown = () => ({ key })) {
  const slice = {
    key,
    snapshots: 0,
    restored: [] as unknown[],
    snapshot() {
      slice.snapshots++;
      return value();
    },
    restore(data: unknown) {
      slice.restored.push(data);
    },
  };
  return slice;
}

async function loadedStore(filePath: string, debounceMs = 20) {
  const capture = captureLogger();
  const store = new Store({ path: filePath, logger: capture.logger, debounceMs });
  await store.load();
  return { store, ...capture };
}

t.test('round trip: what one store saves, a new store on the same path restores', async (t) => {
  const file = path.join(makeTempDir(t), 'nested', 'data', 'store.json');
  const tokens = { alice: { scopes: ['read'], created: '2026-11-21T12:00:00.000Z' } };
  const stats = { joins: 3, peak: 42 };

  const { store: first } = await loadedStore(file);
  t.equal(first.path, file);
  const firstTokens = countingSlice('tokens', () => tokens);
  first.register(firstTokens);
  first.register(countingSlice('stats', () => stats));
  first.markDirty();
  await first.close();
  t.same(firstTokens.restored, [], 'nothing to restore from a missing file');

  const { store: second, lines } = await loadedStore(file);
  const secondTokens = countingSlice('tokens');
  const secondStats = countingSlice('stats');
  const fresh = countingSlice('fresh');
  second.register(secondTokens);
  second.register(secondStats);
  second.register(fresh);
  t.same(secondTokens.restored, [tokens]);
  t.same(secondStats.restored, [stats]);
  t.same(fresh.restored, [], 'a key not in the file is not restored');
  t.same(problems(lines), []);
  await second.close();
});

t.test('the file is versioned, timestamped and compact', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file);
  store.register(countingSlice('users', () => ({ alice: { nick: 'alice' } })));
  const before = Date.now();
  store.markDirty();
  await store.flush();

  const text = fs.readFileSync(file, 'utf8');
  const contents = readStoreFile(file);
  t.same(Object.keys(contents), ['schema_version', 'saved_at', 'slices']);
  t.equal(contents.schema_version, CURRENT_SCHEMA_VERSION);
  t.equal(CURRENT_SCHEMA_VERSION, 2);
  t.ok(Date.parse(contents.saved_at) >= before - 1, 'saved_at is the write time');
  t.equal(new Date(contents.saved_at).toISOString(), contents.saved_at, 'saved_at is an ISO time');
  t.same(contents.slices, { users: { alice: { nick: 'alice' } } });
  t.equal(text, JSON.stringify(contents) + '\n', 'no indentation');
  t.same(
    fs.readdirSync(path.dirname(file)).filter((name) => name !== 'store.json' && name !== 'store.json.lock'),
    [],
    'no temp file left behind',
  );
  await store.close();
});

t.test('slices in the file that nobody registers are kept on write', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, { disabledPlugin: { kept: [1, 2, 3] }, users: { old: true } });
  const { store } = await loadedStore(file);
  const users = countingSlice('users', () => ({ new: true }));
  store.register(users);
  t.same(users.restored, [{ old: true }]);
  store.markDirty();
  await store.close();
  t.same(readStoreFile(file).slices, { disabledPlugin: { kept: [1, 2, 3] }, users: { new: true } });
});

t.test('registering a key twice throws naming the key', async (t) => {
  const { store } = await loadedStore(path.join(makeTempDir(t), 'store.json'));
  store.register(countingSlice('tokens'));
  t.throws(() => store.register(countingSlice('tokens')), /'tokens' is already registered/);
  await store.close();
});

t.test('register, markDirty and a second load are refused at the wrong time', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { logger } = captureLogger();
  const store = new Store({ path: file, logger });
  t.throws(
    () => store.register(countingSlice('tokens')),
    /'tokens' was registered before .*store\.json was loaded; await store\.load\(\) first/,
  );
  t.throws(() => store.markDirty(), /before the store .*store\.json was loaded/);
  await store.load();
  await t.rejects(store.load(), /load\(\) was called twice/);
  await store.close();
  t.notOk(fs.existsSync(file), 'nothing was written');
});

t.test('bad options are refused by name', async (t) => {
  const { logger } = captureLogger();
  t.throws(() => new Store({ path: 'x.json', logger, debounceMs: -1 }), /debounceMs must be .* got -1/);
  t.throws(
    () => new Store({ path: 'x.json', logger, schemaVersion: 0 }),
    /schemaVersion must be an integer >= 1, got 0/,
  );
});

t.test('a restore() that throws is reported with the slice and file', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, { tokens: 'not what the slice expects' });
  const { store } = await loadedStore(file);
  const broken: PersistedSlice<{ list: string[] }> = {
    key: 'tokens',
    snapshot: () => ({ list: [] }),
    restore: (data) => {
      if (!Array.isArray(data.list)) throw new Error('list is missing');
    },
  };
  t.throws(
    () => store.register(broken),
    /slice 'tokens' could not restore its data from .*store\.json: list is missing/,
  );
  await store.close();
});

t.test('100 changes within the debounce window make one write', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 20);
  const written = deferred();
  let value = 0;
  const slice = countingSlice('counter', () => {
    written.resolve();
    return { value };
  });
  store.register(slice);
  for (let i = 0; i < 100; i++) {
    value = i;
    store.markDirty();
  }
  t.equal(slice.snapshots, 0, 'nothing is written synchronously');
  await written.promise; // the debounce timer fired on its own
  await store.flush();
  t.equal(slice.snapshots, 1, 'exactly one write');
  t.same(readStoreFile(file).slices, { counter: { value: 99 } }, 'the write has the latest data');
  await store.close();
  t.equal(slice.snapshots, 1, 'close has nothing left to write');
});

t.test('flush writes pending changes now, and nothing when clean', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 60_000);
  const slice = countingSlice('counter');
  store.register(slice);
  await store.flush();
  t.equal(slice.snapshots, 0, 'clean: no write');
  t.notOk(fs.existsSync(file));
  store.markDirty();
  await store.flush();
  t.equal(slice.snapshots, 1, 'pending change written without waiting for the debounce');
  t.ok(fs.existsSync(file));
  await store.close();
  t.equal(slice.snapshots, 1);
});

/**
 * Hold every file write at a gate until the test opens it, counting how many are in flight
 * at once, and note what was on disk as each write began.
 */
function gatedWrites(t: { teardown(fn: () => void): void }, file: string) {
  const original = AtomicJsonFile.prototype.write;
  const state = { inFlight: 0, mostInFlight: 0, gate: deferred() };
  AtomicJsonFile.prototype.write = async function (this: AtomicJsonFile, data: unknown) {
    state.inFlight++;
    state.mostInFlight = Math.max(state.mostInFlight, state.inFlight);
    try {
      await state.gate.promise;
      await original.call(this, data);
    } finally {
      state.inFlight--;
    }
  };
  t.teardown(() => {
    AtomicJsonFile.prototype.write = original;
  });

  const firstStarted = deferred();
  const secondStarted = deferred();
  const onDiskAtStart: (number | 'missing')[] = [];
  const slice = countingSlice('gated', () => {
    onDiskAtStart.push(fs.existsSync(file) ? (readStoreFile(file).slices.gated as { write: number }).write : 'missing');
    if (slice.snapshots === 1) firstStarted.resolve();
    if (slice.snapshots === 2) secondStarted.resolve();
    return { write: slice.snapshots };
  });
  return { state, slice, firstStarted: firstStarted.promise, secondStarted: secondStarted.promise, onDiskAtStart };
}

/** Resolves after every timer of `ms` or less that is already set has fired. */
function afterTimersOf(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

t.test('one write in flight: changes during a write make exactly one more write after it', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 1);
  const gated = gatedWrites(t, file);
  store.register(gated.slice);
  store.markDirty();
  await gated.firstStarted;
  for (let i = 0; i < 10; i++) store.markDirty();
  await afterTimersOf(1); // the debounce timer has fired while the first write is held
  t.equal(gated.slice.snapshots, 1, 'no second write while the first is in flight');
  gated.state.gate.resolve();
  await gated.secondStarted; // by the debounce timer, not by flush
  await store.flush();
  t.equal(gated.slice.snapshots, 2, 'exactly one more write');
  t.equal(gated.state.mostInFlight, 1, 'never two writes at once');
  t.same(gated.onDiskAtStart, ['missing', 1], 'the second write began after the first was on disk');
  t.equal((readStoreFile(file).slices.gated as { write: number }).write, 2);
  await store.close();
  t.equal(gated.slice.snapshots, 2);
});

t.test('flush during a write waits for it, then writes the newer changes', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 60_000);
  const gated = gatedWrites(t, file);
  store.register(gated.slice);
  store.markDirty();
  const firstFlush = store.flush();
  await gated.firstStarted;
  store.markDirty();
  const flushes = Promise.all([firstFlush, store.flush(), store.flush()]);
  t.equal(gated.slice.snapshots, 1, 'the later flushes wait for the write in flight');
  gated.state.gate.resolve();
  await flushes;
  t.equal(gated.slice.snapshots, 2);
  t.equal(gated.state.mostInFlight, 1);
  t.same(gated.onDiskAtStart, ['missing', 1]);
  t.equal(
    (readStoreFile(file).slices.gated as { write: number }).write,
    2,
    'flush resolved with the latest data on disk',
  );
  await store.close();
});

t.test('each write keeps the previous file as .bak', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const backup = `${file}.bak`;
  const { store } = await loadedStore(file);
  let version = 1;
  store.register(countingSlice('data', () => ({ version })));
  store.markDirty();
  await store.flush();
  t.notOk(fs.existsSync(backup), 'no previous file, no backup');
  for (version = 2; version <= 4; version++) {
    store.markDirty();
    await store.flush();
    t.same(readStoreFile(file).slices, { data: { version } });
    t.same(
      readStoreFile(backup).slices,
      { data: { version: version - 1 } },
      `after write ${version} the backup is write ${version - 1}`,
    );
  }
  t.same(
    fs.readdirSync(path.dirname(file)).sort(),
    ['store.json', 'store.json.bak', 'store.json.lock'],
    'no temp files left behind (the lock is held until close)',
  );
  await store.close();
});

t.test('close writes pending changes; markDirty after close is ignored with a debug line', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store, lines } = await loadedStore(file, 60_000);
  const slice = countingSlice('data');
  store.register(slice);
  store.markDirty();
  await store.close();
  t.equal(slice.snapshots, 1, 'the pending change was written on close');
  t.ok(fs.existsSync(file));
  store.markDirty();
  await store.flush();
  t.equal(slice.snapshots, 1, 'no write after close');
  t.match(
    lines.filter((entry) => entry.level === 'debug').map((entry) => entry.line),
    [/written file=store ok=true/, /ignored a change after the store .*store\.json was closed/],
  );
});

t.test('a failed write keeps the changes for the next flush', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 60_000);
  store.register(countingSlice('data', () => ({ saved: true })));
  fs.mkdirSync(file); // a directory where the file should go: the write cannot replace it
  store.markDirty();
  await t.rejects(store.flush(), { message: /store\.json/ });
  fs.rmdirSync(file);
  await store.flush();
  t.same(readStoreFile(file).slices, { data: { saved: true } }, 'the retry wrote the data');
  t.notOk(fs.existsSync(`${file}.tmp`), 'the failed write left no temp file');
  await store.close();
});

t.test('a failed debounced write is logged naming the file', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const capture = captureLogger();
  const store = new Store({ path: file, logger: capture.logger, debounceMs: 1 });
  await store.load();
  const logged = deferred<string>();
  capture.onLine = (entry) => {
    if (entry.level === 'error') logged.resolve(entry.line);
  };
  store.register(countingSlice('data'));
  fs.mkdirSync(file);
  store.markDirty();
  t.match(
    await logged.promise,
    /could not save the store .*store\.json: .*; retrying on the next change or at shutdown/,
  );
  fs.rmdirSync(file);
  await store.close();
  t.ok(fs.statSync(file).isFile(), 'close wrote the changes the failed write had');
});

t.test('an indented file from an earlier version loads as before', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, { users: { alice: { nick: 'alice' } } });
  t.match(fs.readFileSync(file, 'utf8'), /\n {2}"schema_version"/, 'the fixture is indented');
  const { store, lines } = await loadedStore(file);
  const users = countingSlice('users');
  store.register(users);
  t.same(users.restored, [{ alice: { nick: 'alice' } }]);
  t.same(problems(lines), []);
  await store.close();
});

/** A slice that writes its JSON in `count` pieces, each taking about `pieceMs` of work. */
function piecewiseSlice(key: string, count: number, pieceMs: number) {
  const slice = {
    key,
    snapshots: 0,
    piecesTaken: 0,
    failAt: -1,
    restored: [] as unknown[],
    snapshot() {
      slice.snapshots++;
      return { never: 'used' };
    },
    *snapshotJson() {
      yield '[';
      const reused = Buffer.alloc(10);
      for (let index = 0; index < count; index++) {
        if (index === slice.failAt) throw new Error(`piece ${index} is broken`);
        const until = performance.now() + pieceMs;
        while (performance.now() < until);
        slice.piecesTaken++;
        reused.write(`"${String(index).padStart(8, '0')}"`);
        if (index > 0) yield ',';
        yield reused;
      }
      yield ']';
    },
    restore(data: unknown) {
      slice.restored.push(data);
    },
  };
  return slice;
}

t.test('a slice with snapshotJson is written from its pieces, with the event loop free in between', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 60_000);
  const big = piecewiseSlice('big', 300, 1);
  store.register(big);
  store.register(countingSlice('small', () => ({ plain: true })));
  const stopWatching = watchEventLoop();
  store.markDirty();
  await store.flush();
  const { ticks, longestGap } = stopWatching();
  t.equal(big.snapshots, 0, 'snapshot() is not called when there are pieces');
  t.equal(big.piecesTaken, 300);
  t.ok(ticks >= 20, `a 1 ms timer ran ${ticks} times during a write of 300 ms of work`);
  t.comment(`the longest the timer waited was ${longestGap.toFixed(1)} ms`);
  const expected = Array.from({ length: 300 }, (_, index) => String(index).padStart(8, '0'));
  t.same(readStoreFile(file).slices, { big: expected, small: { plain: true } });
  await store.close();

  const { store: again } = await loadedStore(file);
  const restored = piecewiseSlice('big', 0, 0);
  again.register(restored);
  t.same(restored.restored, [expected], 'restore() gets the parsed pieces');
  await again.close();
});

t.test(
  'each write reports the longest it held the event loop, in its report, a debug line and a channel',
  async (t) => {
    const file = path.join(makeTempDir(t), 'store.json');
    const reports: WriteReport[] = [];
    const published: unknown[] = [];
    const listener = (message: unknown): void => void published.push(message);
    subscribe(STORE_WRITE_CHANNEL, listener);
    t.teardown(() => unsubscribe(STORE_WRITE_CHANNEL, listener));
    const capture = captureLogger();
    const store = new Store({
      path: file,
      logger: capture.logger,
      debounceMs: 60_000,
      onWrite: (r) => reports.push(r),
    });
    await store.load();
    // 200 ms of encoding in 1 ms pieces, and a snapshot that takes 40 ms in one go.
    store.register(piecewiseSlice('big', 200, 1));
    store.register(
      countingSlice('slow', () => {
        const until = performance.now() + 40;
        while (performance.now() < until);
        return { slow: true };
      }),
    );
    const before = Date.now();
    store.markDirty();
    await store.flush();
    t.equal(reports.length, 1);
    const [report] = reports;
    t.ok(report!.seconds >= 0.24, `the write took ${report!.seconds} s in all`);
    t.ok(report!.blockedSeconds >= 0.04, `its longest stretch (${report!.blockedSeconds} s) is the snapshot's`);
    t.ok(report!.blockedSeconds < 0.12, 'the pieces are not one stretch with it');
    t.ok(report!.blockedAt >= before - 1 && report!.blockedAt <= Date.now(), 'when it began, in epoch ms');
    t.same(published, reports, 'published on the diagnostics channel');
    t.ok(
      capture.lines.some((entry) => /written file=store ok=true bytes=\d+ ms=\d+ blocked_ms=\d/.test(entry.line)),
      'and a debug line',
    );
    await store.close();
  },
);

t.test('a hold meter keeps the longest stretch between pause and resume', async (t) => {
  let now = 0;
  const meter = new HoldMeter(() => now);
  now = 5;
  meter.pause();
  now = 100;
  meter.resume();
  now = 112;
  meter.pause();
  now = 300;
  meter.resume();
  now = 303;
  meter.pause();
  t.equal(meter.longestMs, 12, 'the time awaited does not count');
  t.equal(meter.longestAt, performance.timeOrigin + 100);
});

t.test('a slice whose pieces fail names itself; the file on disk stays as it was', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await loadedStore(file, 60_000);
  const big = piecewiseSlice('big', 50, 0);
  store.register(big);
  store.markDirty();
  await store.flush();
  const before = fs.readFileSync(file, 'utf8');
  big.failAt = 20;
  store.markDirty();
  await t.rejects(store.flush(), {
    message: /slice 'big' failed to take a snapshot for .*store\.json: piece 20 is broken/,
  });
  t.equal(fs.readFileSync(file, 'utf8'), before, 'the last good file is untouched');
  t.notOk(fs.existsSync(`${file}.tmp`), 'no temp file left behind');
  big.failAt = -1;
  await store.flush();
  t.equal((readStoreFile(file).slices.big as string[]).length, 50, 'the next flush writes it');
  await store.close();
});

t.test('a store in memory writes as it would to disk, and leaves nothing on it', async (t) => {
  const file = path.join(makeTempDir(t), 'data', 'store.json');
  fs.mkdirSync(path.dirname(file));
  writeStoreFile(file, { tokens: { on: 'disk' } }, CURRENT_SCHEMA_VERSION);
  const capture = captureLogger();
  const sizes: string[] = [];
  const store = new Store({
    path: file,
    logger: capture.logger,
    debounceMs: 20,
    memory: true,
    onWrite: (report) => sizes.push(`${report.file} ${report.ok} ${report.bytes}`),
  });
  await store.load();
  const tokens = Object.assign(
    countingSlice('tokens', () => ({ in: 'memory' })),
    { durable: true },
  );
  const big = piecewiseSlice('big', 3, 0);
  store.register(tokens);
  store.register(big);
  t.same(tokens.restored, [], 'nothing is read: the file on disk is not its');
  store.markDirty();
  await store.persisted();
  t.equal(tokens.snapshots, 1, 'a durable write took the snapshot');
  await store.close();
  t.equal(big.piecesTaken, 3, 'the pieces were taken');
  // What the durable file would hold: one line of compact JSON (saved_at is always 24 characters).
  const durable = {
    schema_version: CURRENT_SCHEMA_VERSION,
    saved_at: new Date().toISOString(),
    journal_generation: 2,
    slices: { tokens: { in: 'memory' } },
  };
  const durableBytes = JSON.stringify(durable).length + 1;
  t.equal(sizes.length, 2, 'one write of each file');
  t.equal(sizes[0], `durable true ${durableBytes}`, 'each write reports the size the file would have');
  t.match(sizes[1], /^store true \d+$/);
  t.same(fs.readdirSync(path.dirname(file)), ['store.json'], 'no file was written beside the one there');
  t.same(readStoreFile(file).slices, { tokens: { on: 'disk' } }, 'which is untouched');
  t.same(problems(capture.lines), []);
});
