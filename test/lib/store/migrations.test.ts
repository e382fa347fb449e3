import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { MIGRATIONS } from '../../../lib/store/migrations.js';
import { CURRENT_SCHEMA_VERSION, Store, type Migration } from '../../../lib/store/store.js';
import { captureLogger, makeTempDir, problems, readStoreFile, writeStoreFile } from './fixtures/temp-store.js';

/** v1 → v2: users keyed by nick become a list; v2 → v3: the list moves under "people". */
const steps: Migration[] = [
  {
    from: 2,
    migrate: ({ users, ...rest }) => ({ ...rest, people: { list: users } }),
  },
  {
    from: 1,
    migrate: (slices) => ({ ...slices, users: Object.keys(slices.users as Record<string, unknown>) }),
  },
];

t.test('the project ships a chain that reaches CURRENT_SCHEMA_VERSION', async (t) => {
  const froms = MIGRATIONS.map((migration) => migration.from).sort((a, b) => a - b);
  t.same(
    froms,
    Array.from({ length: CURRENT_SCHEMA_VERSION - 1 }, (_, index) => index + 1),
  );
});

t.test('an older file is migrated step by step, logged, and saved at the new version', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, { users: { alice: {}, bob: {} }, stats: { joins: 1 } }, 1);
  const original = fs.readFileSync(file, 'utf8');
  const { logger, lines } = captureLogger();
  const store = new Store({ path: file, logger, schemaVersion: 3, migrations: steps, debounceMs: 60_000 });
  await store.load();

  const restored: unknown[] = [];
  store.register({
    key: 'people',
    snapshot: () => ({ list: ['alice', 'bob'] }),
    restore: (data) => restored.push(data),
  });
  t.same(restored, [{ list: ['alice', 'bob'] }]);
  t.match(
    lines.filter((entry) => entry.level === 'info').map((entry) => entry.line),
    [
      `migrated store file ${file} from schema_version 1 to 2`,
      `migrated store file ${file} from schema_version 2 to 3`,
    ],
  );
  t.same(problems(lines), []);

  await store.close(); // migration marked the store dirty
  const saved = readStoreFile(file);
  t.equal(saved.schema_version, 3);
  t.same(saved.slices, { people: { list: ['alice', 'bob'] }, stats: { joins: 1 } });
  t.equal(fs.readFileSync(`${file}.bak`, 'utf8'), original, 'the pre-migration file is the backup');
});

t.test('a file at the current version is not migrated', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, { users: ['alice'] }, 3);
  const { logger, lines } = captureLogger();
  const store = new Store({ path: file, logger, schemaVersion: 3, migrations: steps });
  await store.load();
  t.same(
    lines.filter((entry) => /migrated/.test(entry.line)),
    [],
  );
  await store.close();
  t.notOk(fs.existsSync(`${file}.bak`), 'nothing to write');
});

t.test('a missing step fails naming the versions, leaving the file alone', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  writeStoreFile(file, { users: { alice: {} } }, 1);
  const original = fs.readFileSync(file, 'utf8');
  const { logger } = captureLogger();
  const store = new Store({ path: file, logger, schemaVersion: 4, migrations: steps });
  await t.rejects(store.load(), {
    message: new RegExp(
      `store file ${file} has schema_version 1 but there is no migration from schema_version 3 to 4 \\(needed to reach 4\\)`,
    ),
  });
  t.throws(() => store.markDirty(), /was loaded/, 'a store that failed to load does not write');
  t.equal(fs.readFileSync(file, 'utf8'), original);
  t.same(fs.readdirSync(dir), ['store.json']);
});

t.test('a migration that throws fails naming the step', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  writeStoreFile(file, {}, 1);
  const { logger } = captureLogger();
  const broken: Migration = {
    from: 1,
    migrate: () => {
      throw new Error('users slice is missing');
    },
  };
  const store = new Store({ path: file, logger, schemaVersion: 2, migrations: [broken] });
  await t.rejects(store.load(), {
    message: /migration from schema_version 1 to 2 failed on .*store\.json: users slice is missing/,
  });
});

t.test('two migrations from the same version are refused', async (t) => {
  const { logger } = captureLogger();
  const twice: Migration[] = [
    { from: 1, migrate: (slices) => slices },
    { from: 1, migrate: (slices) => slices },
  ];
  t.throws(
    () => new Store({ path: 'unused.json', logger, schemaVersion: 2, migrations: twice }),
    /two store migrations start at schema_version 1/,
  );
});

t.test('a file newer than the code is refused and left untouched', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  writeStoreFile(file, { users: { shape: 'from the future' } }, CURRENT_SCHEMA_VERSION + 4);
  const original = fs.readFileSync(file, 'utf8');
  const { logger, lines } = captureLogger();
  const store = new Store({ path: file, logger });
  await t.rejects(store.load(), {
    message: new RegExp(
      `store file ${file} has schema_version ${CURRENT_SCHEMA_VERSION + 4}, newer than the ${CURRENT_SCHEMA_VERSION} this build understands; ` +
        'run a newer build or restore an older file \\(the file was left untouched\\)',
    ),
  });
  t.throws(() => store.markDirty(), /was loaded/);
  await store.close();
  t.equal(fs.readFileSync(file, 'utf8'), original);
  t.same(fs.readdirSync(dir), ['store.json'], 'not moved aside, no backup, no temp file');
  t.same(problems(lines), []);
});

t.test('a newer file is refused even when the rest of its shape is unfamiliar', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  fs.writeFileSync(file, JSON.stringify({ schema_version: CURRENT_SCHEMA_VERSION + 1, data: ['new layout'] }));
  const { logger } = captureLogger();
  await t.rejects(
    new Store({ path: file, logger }).load(),
    new RegExp(`schema_version ${CURRENT_SCHEMA_VERSION + 1}, newer than the ${CURRENT_SCHEMA_VERSION}`),
  );
  t.same(fs.readdirSync(path.dirname(file)), ['store.json']);
});
