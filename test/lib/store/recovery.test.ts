import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Store } from '../../../lib/store/store.js';
import { captureLogger, makeTempDir, problems, readStoreFile, writeStoreFile } from './fixtures/temp-store.js';

const CORRUPT_NAME = /^store\.json\.corrupt-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function corruptFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.includes('.corrupt-'));
}

async function loadWithSlice(file: string) {
  const capture = captureLogger();
  const store = new Store({ path: file, logger: capture.logger, debounceMs: 60_000 });
  await store.load();
  const restored: unknown[] = [];
  store.register({ key: 'users', snapshot: () => ({ after: 'recovery' }), restore: (data) => restored.push(data) });
  return { store, restored, lines: capture.lines };
}

t.test('a missing file is an empty start with an info line', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  const { store, restored, lines } = await loadWithSlice(file);
  t.same(restored, []);
  t.same(problems(lines), []);
  t.match(lines, [{ level: 'info', line: /no store file at .*store\.json yet; starting empty/ }]);
  await store.close();
  t.same(fs.readdirSync(dir), [], 'nothing written, nothing moved');
});

t.test('a corrupt file without a backup is moved aside and the store starts empty', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  fs.writeFileSync(file, 'garbage {');
  const { store, restored, lines } = await loadWithSlice(file);

  t.same(restored, []);
  t.notOk(fs.existsSync(file), 'the corrupt file is no longer in the way');
  const [moved, ...others] = corruptFiles(dir);
  t.match(moved, CORRUPT_NAME);
  t.same(others, []);
  t.equal(fs.readFileSync(path.join(dir, moved!), 'utf8'), 'garbage {', 'kept as it was for the operator');
  const reported = problems(lines);
  t.equal(reported.length, 1, 'exactly one line');
  t.match(reported[0], / ERROR /);
  t.match(reported[0], `store file ${file} is not JSON`);
  t.match(reported[0], `moved it to ${path.join(dir, moved!)}`);
  t.match(reported[0], `there is no backup ${file}.bak, so starting empty`);
  await store.close();
});

t.test('a corrupt file with a good backup: moved aside, backup loaded and written back', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  writeStoreFile(`${file}.bak`, { users: { from: 'backup' }, other: [1] });
  fs.writeFileSync(file, '{"schema_version": 1, "slices": {"users": '); // cut short
  const { store, restored, lines } = await loadWithSlice(file);

  t.same(restored, [{ from: 'backup' }]);
  const [moved] = corruptFiles(dir);
  t.match(moved, CORRUPT_NAME);
  const reported = problems(lines);
  t.equal(reported.length, 1, 'exactly one line');
  t.match(reported[0], / WARN /);
  t.match(reported[0], `store file ${file} is not JSON`);
  t.match(reported[0], `moved it to ${path.join(dir, moved!)}`);
  t.match(reported[0], `loaded the backup ${file}.bak (saved at 2026-11-21T12:00:00.000Z) instead`);

  await store.close(); // recovery marked the store dirty
  t.same(readStoreFile(file).slices, { users: { after: 'recovery' }, other: [1] }, 'the file is back');
  t.same(readStoreFile(`${file}.bak`).slices, { users: { from: 'backup' }, other: [1] }, 'the backup is untouched');
});

t.test('a corrupt file with a corrupt backup starts empty and says so', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  fs.writeFileSync(file, '');
  fs.writeFileSync(`${file}.bak`, '[1, 2]');
  const { store, restored, lines } = await loadWithSlice(file);
  t.same(restored, []);
  t.equal(corruptFiles(dir).length, 1);
  const reported = problems(lines);
  t.equal(reported.length, 1);
  t.match(reported[0], new RegExp(`the backup ${file}\\.bak is not a JSON object .* too, so starting empty`));
  await store.close();
});

t.test('JSON that is not a store file counts as corrupt', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['an array', '[]', /not a JSON object \(found an array\)/],
    ['null', 'null', /not a JSON object \(found null\)/],
    ['a string', '"store"', /not a JSON object/],
    ['no schema_version', '{"slices": {}}', /not a store file \(schema_version is missing/],
    ['a fractional schema_version', '{"schema_version": 1.5, "slices": {}}', /schema_version is 1\.5/],
    ['slices is an array', '{"schema_version": 1, "slices": []}', /"slices" is not an object/],
    ['no slices', '{"schema_version": 1}', /"slices" is missing/],
  ];
  for (const [name, text, reason] of cases) {
    await t.test(name, async (t) => {
      const dir = makeTempDir(t);
      const file = path.join(dir, 'store.json');
      fs.writeFileSync(file, text);
      const { store, lines } = await loadWithSlice(file);
      t.equal(corruptFiles(dir).length, 1, 'moved aside');
      t.match(problems(lines), [reason]);
      await store.close();
    });
  }
});

t.test('an unreadable file (here: a directory) is moved aside too', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  fs.mkdirSync(file);
  const { store, lines } = await loadWithSlice(file);
  t.equal(corruptFiles(dir).length, 1);
  t.match(problems(lines), [/store file .*store\.json is unreadable \(EISDIR/]);
  await store.close();
});
