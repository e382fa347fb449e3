/**
 * The durable file's journal: a durable slice with a journal has its changes appended and fsynced, so a
 * confirmed change costs the change; the file is written whole again (compacted) in the background once the
 * journal has grown as big as it; at load, the records after the file's snapshot are replayed.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Store, durablePathOf, type WriteReport } from '../../../lib/store/store.js';
import { journalPrefixOf } from '../../../lib/store/journal.js';
import { captureLogger, makeTempDir, problems, readStoreFile } from './fixtures/temp-store.js';
import { listSlice } from './fixtures/journal-slice.js';

async function open(file: string, options: { compactAfterBytes?: number } = {}) {
  const capture = captureLogger();
  const writes: WriteReport[] = [];
  const store = new Store({
    path: file,
    logger: capture.logger,
    debounceMs: 60_000,
    onWrite: (report) => writes.push(report),
    ...options,
  });
  await store.load();
  return { store, writes, ...capture };
}

function journalFiles(file: string): string[] {
  const prefix = path.basename(journalPrefixOf(durablePathOf(file)));
  return fs
    .readdirSync(path.dirname(file))
    .filter((name) => name.startsWith(prefix))
    .sort();
}

t.test('a confirmed change is one appended line, not a rewrite; a restart replays it', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store, writes } = await open(file);
  const list = listSlice();
  store.register(list);
  for (let item = 1; item <= 3; item++) {
    list.add(item);
    store.markDirty('list');
    await store.persisted();
  }
  t.equal(list.snapshots, 0, 'no snapshot was taken: the durable file was not written');
  t.notOk(fs.existsSync(durablePathOf(file)), 'nor exists yet');
  t.same(
    writes.map((write) => write.file),
    ['journal', 'journal', 'journal'],
    'each confirmation was one journal write',
  );
  const [journal] = journalFiles(file);
  t.equal(journal, 'store.durable.journal-1.jsonl');
  const lines = fs
    .readFileSync(path.join(path.dirname(file), journal!), 'utf8')
    .trim()
    .split('\n');
  t.same(
    lines.map((line) => JSON.parse(line) as unknown),
    [1, 2, 3].map((item) => ({ slice: 'list', record: { add: item } })),
  );
  t.equal(writes.at(-1)!.bytes, fs.statSync(path.join(path.dirname(file), journal!)).size, 'its size is reported');
  await store.persisted();
  t.equal(writes.length, 3, 'persisted() with nothing new writes nothing');

  // A kill now: no close, so no compaction; the next start replays the journal.
  const again = await open(file);
  const restored = listSlice();
  again.store.register(restored);
  t.same(restored.items, [1, 2, 3]);
  t.equal(restored.replayed, 3);
  t.ok(
    again.lines.some((entry) => /read 3 change\(s\) from the journal/.test(entry.line)),
    'the replay is logged',
  );
  restored.add(4);
  again.store.markDirty('list');
  await again.store.persisted();
  t.same(journalFiles(file), ['store.durable.journal-1.jsonl', 'store.durable.journal-2.jsonl'], 'a new generation');
  await again.store.close();
  t.same(readStoreFile(durablePathOf(file)).slices.list, { items: [1, 2, 3, 4] }, 'close writes the file whole');
  t.same(problems(again.lines), []);
  const third = await open(file);
  const thrice = listSlice();
  third.store.register(thrice);
  t.same(thrice.items, [1, 2, 3, 4]);
  t.equal(thrice.replayed, 0, 'so the next start has nothing to replay');
  await third.store.close();
  // Not a store the test left open: the first one is simply dropped, as a killed process would be.
  await store.close();
});

t.test('the file is compacted in the background while appends go on, and old generations go', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store, writes, lines } = await open(file, { compactAfterBytes: 200 });
  const list = listSlice();
  store.register(list);
  for (let item = 1; item <= 40; item++) {
    list.add(item);
    store.markDirty('list');
    await store.persisted();
  }
  await store.flush();
  const compactions = writes.filter((write) => write.file === 'durable');
  t.ok(compactions.length >= 2, `the durable file was written whole ${compactions.length} times`);
  t.ok(compactions.every((write) => write.ok));
  t.equal(writes.filter((write) => write.file === 'journal').length, 40, 'and every change was appended');
  const durable = readStoreFile(durablePathOf(file)) as unknown as { journal_generation: number };
  const generations = journalFiles(file).map((name) => Number(/journal-(\d+)\.jsonl$/.exec(name)![1]));
  t.ok(
    generations.length <= 3,
    `at most the generations the file and its .bak need are kept: ${generations.join(', ')}`,
  );
  const backup = JSON.parse(fs.readFileSync(`${durablePathOf(file)}.bak`, 'utf8')) as { journal_generation: number };
  t.ok(
    generations.every((generation) => generation >= backup.journal_generation),
    'none older than the .bak needs',
  );
  t.ok(durable.journal_generation > backup.journal_generation);

  const again = await open(file);
  const restored = listSlice();
  again.store.register(restored);
  t.same(restored.items, list.items, 'the file and its journal give back every change');

  // The durable file broken: its .bak and the journal since the .bak give back every change too.
  await again.store.close();
  const beforeClose = [...list.items];
  fs.writeFileSync(durablePathOf(file), '{"schema_version": 1, "slices": {"list": ');
  const broken = await open(file);
  const recovered = listSlice();
  broken.store.register(recovered);
  t.same(recovered.items, beforeClose, 'recovered from the .bak and the journal');
  t.ok(broken.lines.some((entry) => /loaded the backup/.test(entry.line)));
  await broken.store.close();
  t.same(problems(lines), []);
  await store.close();
});

t.test('a line cut short by a crash is skipped with a warning; the lines before it stay', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await open(file);
  const list = listSlice();
  store.register(list);
  list.add(1);
  list.add(2);
  store.markDirty('list');
  await store.persisted();
  const journal = path.join(path.dirname(file), journalFiles(file)[0]!);
  fs.appendFileSync(journal, '{"slice":"list","record":{"ad');

  const again = await open(file);
  const restored = listSlice();
  again.store.register(restored);
  t.same(restored.items, [1, 2]);
  t.match(
    problems(again.lines),
    [/the last line of the journal .*journal-1\.jsonl is unfinished .*skipped it/],
    'one warning names the file',
  );
  restored.add(3);
  again.store.markDirty('list');
  await again.store.persisted();
  const third = await open(file);
  const thrice = listSlice();
  third.store.register(thrice);
  t.same(thrice.items, [1, 2, 3], 'later changes go to a new generation, after the cut line');
  await third.store.close();
  await again.store.close();
  await store.close();
});

t.test('records of a slice not registered are kept through compactions until it comes', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await open(file);
  const absent = listSlice('absent');
  store.register(absent);
  absent.add(7);
  store.markDirty('absent');
  await store.persisted();

  // A run without that slice (its plugin not loaded), which compacts the file twice.
  const without = await open(file, { compactAfterBytes: 0 });
  const other = listSlice('other');
  without.store.register(other);
  for (let item = 0; item < 3; item++) {
    other.add(item);
    without.store.markDirty('other');
    await without.store.persisted();
  }
  await without.store.close();
  t.notOk(journalFiles(file).includes('store.durable.journal-1.jsonl'), 'its journal file is gone');
  t.same(
    (readStoreFile(durablePathOf(file)) as unknown as { carried_records: unknown }).carried_records,
    { absent: [{ add: 7 }] },
    'the durable file carries its records',
  );

  const back = await open(file);
  const returned = listSlice('absent');
  back.store.register(returned);
  t.same(returned.items, [7], 'replayed when the slice is registered again');
  t.equal(returned.replayed, 1);
  returned.add(8);
  back.store.markDirty('absent');
  await back.store.persisted();
  await back.store.close();
  t.same(readStoreFile(durablePathOf(file)).slices.absent, { items: [7, 8] });
  t.notOk(
    'carried_records' in readStoreFile(durablePathOf(file)),
    'and no longer carried once the file holds the slice',
  );
  await store.close();
});

t.test('a slice with records in the journal but no journal of its own is refused, clearly', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await open(file);
  const list = listSlice();
  store.register(list);
  list.add(1);
  store.markDirty('list');
  await store.persisted();
  const again = await open(file);
  t.throws(
    () => again.store.register({ key: 'list', durable: true, snapshot: () => null, restore: () => undefined }),
    /the journal of .*store\.durable\.json has 1 change\(s\) of slice 'list', which has no journal to replay them/,
  );
  const broken = listSlice();
  broken.journal!.replay = () => {
    throw new Error('bad record');
  };
  t.throws(
    () => again.store.register(broken),
    /slice 'list' could not replay change 1 of 1 from the journal .*: bad record/,
  );
  await store.close();
});

t.test('a failed append rejects its callers; the next write is of the whole file, with the change', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store, lines } = await open(file);
  const list = listSlice();
  store.register(list);
  list.add(1);
  store.markDirty('list');
  await store.persisted();
  // The next generation cannot be created: a directory is where it would go.
  await store.close();
  const again = await open(file);
  const restored = listSlice();
  again.store.register(restored);
  // A load starts a new generation: the one after the file's.
  const { journal_generation: generation } = readStoreFile(durablePathOf(file)) as unknown as {
    journal_generation: number;
  };
  const next = `${journalPrefixOf(durablePathOf(file))}${generation + 1}.jsonl`;
  fs.mkdirSync(next);
  restored.add(2);
  again.store.markDirty('list');
  await t.rejects(again.store.persisted(), /EISDIR|directory/);
  t.ok(
    again.lines.some((entry) => entry.level === 'error' && /could not save the store journal of/.test(entry.line)),
    'the failure is logged',
  );
  fs.rmdirSync(next);
  await again.store.persisted();
  t.same(readStoreFile(durablePathOf(file)).slices.list, { items: [1, 2] }, 'written whole, with the change');
  await again.store.close();
  t.same(problems(lines), []);
});

t.test('a recovery from the .bak writes the file again at once; a recovery cut short is finished', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const durable = durablePathOf(file);
  const { store } = await open(file);
  const list = listSlice();
  store.register(list);
  list.add(1);
  store.markDirty('list');
  await store.close(); // the file whole: [1]
  const second = await open(file);
  const more = listSlice();
  second.store.register(more);
  more.add(2);
  second.store.markDirty('list');
  await second.store.close(); // the file [1, 2], its .bak [1]
  const third = await open(file);
  const journaled = listSlice();
  third.store.register(journaled);
  journaled.add(3);
  third.store.markDirty('list');
  await third.store.persisted(); // 3 in the journal only: a kill now

  fs.writeFileSync(durable, '{"broken');
  const recovering = await open(file);
  t.ok(fs.existsSync(durable), 'the file is written again before load() returns, from the .bak and the journal');
  const recovered = listSlice();
  recovering.store.register(recovered);
  t.same(recovered.items, [1, 2, 3], 'the .bak with every generation since it');

  // Killed between moving a broken file aside and writing it again: only the .bak is left.
  fs.renameSync(durable, `${durable}.aside`);
  const cutShort = await open(file);
  t.match(problems(cutShort.lines), [
    /there is no store file at .*store\.durable\.json, but its backup .* is there .*loaded the backup/,
  ]);
  const finished = listSlice();
  cutShort.store.register(finished);
  t.same(finished.items, [1, 2, 3], 'not an empty start');
  await cutShort.store.close();
  await recovering.store.close();
});

t.test('a slice that stops being durable takes its journal records along, once', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  const { store } = await open(file);
  const list = listSlice();
  store.register(list);
  for (const item of [1, 2]) list.add(item);
  store.markDirty('list');
  await store.persisted(); // in the journal only

  const moved = await open(file);
  const now = Object.assign(listSlice(), { durable: false });
  moved.store.register(now);
  t.same(now.items, [1, 2], 'replayed into the slice of the store file');
  await moved.store.close();
  t.notOk(
    'carried_records' in readStoreFile(durablePathOf(file)),
    'the durable file no longer carries them once the store file has the slice',
  );

  const again = await open(file);
  const later = Object.assign(listSlice(), { durable: false });
  again.store.register(later);
  t.same(later.items, [1, 2], 'not replayed a second time');
  await again.store.close();
  await store.close();
});
