/**
 * The store: persists the slices of the in-memory model to one JSON file.
 *
 * The model knows nothing of persistence. Each owner of persisted state registers a
 * {@link PersistedSlice} and calls {@link Store.markDirty} when it changes; the store takes
 * snapshots and writes them, debounced, one write at a time. The file looks like
 * `{ "schema_version": 1, "saved_at": "<ISO time>", "slices": { "<key>": <snapshot> } }`.
 *
 * A write is streamed to the file in pieces with the event loop free in between (so a big
 * slice does not stall the bot while it is saved). A slice that changes during a write has
 * marked the store dirty again, so the next write has the change.
 */

import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import { errorMessage, type Logger } from '../logger.js';
import { AtomicJsonFile, UnusableFileError, isJsonObject } from './atomic-json-file.js';
import { PiecewiseJson, type JsonPiece } from './json-pieces.js';
import { CURRENT_SCHEMA_VERSION, MIGRATIONS, type Migration } from './migrations.js';

export { CURRENT_SCHEMA_VERSION };
export type { Migration };

/** One part of the model that is saved to, and restored from, the store file. */
export interface PersistedSlice<T = unknown> {
  /** Top-level key under "slices" in the file, e.g. "tokens". */
  readonly key: string;
  /** A JSON-serialisable copy of what the slice persists. Called at save time. */
  snapshot(): T;
  /** Called once with the stored data for this key (if the file has it). */
  restore(data: T): void;
  /**
   * Optional, for big slices: the JSON text of what snapshot() would return, in pieces. When
   * present the store writes from it instead of snapshot(), taking the pieces a few at a time
   * between other work. The bytes of a piece are copied before the next piece is taken. See the
   * model's `Persistence.snapshotJson`.
   */
  snapshotJson?(): Iterable<JsonPiece>;
}

/** How to construct a {@link Store}. */
export interface StoreOptions {
  /** The store file, e.g. `data/store.json`; parent directories are created. */
  path: string;
  logger: Logger;
  /** How long after the first change a save happens; default 1000. */
  debounceMs?: number;
  /** Steps between schema versions; default: the project's list in `migrations.ts`. */
  migrations?: Migration[];
  /** The version this store writes; default {@link CURRENT_SCHEMA_VERSION}. */
  schemaVersion?: number;
}

/** The file's shape once checked. Keys are snake_case because they are the file format. */
interface StoreFile {
  schema_version: number;
  saved_at?: unknown;
  slices: Record<string, unknown>;
}

type Inspection =
  | { kind: 'missing' }
  | { kind: 'good'; file: StoreFile }
  | { kind: 'newer'; version: number }
  | { kind: 'unusable'; reason: string };

const DEFAULT_DEBOUNCE_MS = 1000;

/**
 * Saves registered slices to one JSON file through lowdb, atomically, keeping the previous
 * file as `<path>.bak`, and loads it back at startup (migrating older files, recovering from
 * a corrupt one).
 *
 * Lifecycle: `await load()`, then `register()` each slice, `markDirty()` on every change,
 * and `await close()` on shutdown.
 */
export class Store {
  /** The store file. */
  readonly path: string;
  private readonly logger: Logger;
  private readonly debounceMs: number;
  private readonly schemaVersion: number;
  private readonly migrations = new Map<number, Migration>();
  private readonly file: AtomicJsonFile;
  private readonly db: Low<unknown>;
  /** Slices read from the file that no registered slice has claimed (yet); kept on write. */
  private readonly storedSlices = new Map<string, unknown>();
  private readonly slices = new Map<string, PersistedSlice>();
  private loadCalled = false;
  private loaded = false;
  private closed = false;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(options: StoreOptions) {
    this.path = options.path;
    this.logger = options.logger;
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.schemaVersion = options.schemaVersion ?? CURRENT_SCHEMA_VERSION;
    if (!Number.isFinite(this.debounceMs) || this.debounceMs < 0) {
      throw new Error(`StoreOptions.debounceMs must be a number of milliseconds >= 0, got ${this.debounceMs}`);
    }
    if (!Number.isInteger(this.schemaVersion) || this.schemaVersion < 1) {
      throw new Error(`StoreOptions.schemaVersion must be an integer >= 1, got ${this.schemaVersion}`);
    }
    for (const migration of options.migrations ?? MIGRATIONS) {
      if (this.migrations.has(migration.from)) {
        throw new Error(`two store migrations start at schema_version ${migration.from}; keep exactly one per version`);
      }
      this.migrations.set(migration.from, migration);
    }
    this.file = new AtomicJsonFile(this.path);
    this.db = new Low<unknown>(this.file, null);
  }

  /**
   * Read the file (or recover), migrate. Call once, before register().
   *
   * A missing file is an empty start. A corrupt or unreadable file is moved aside to
   * `<path>.corrupt-<time>` and the backup is loaded if it is good. Rejects, leaving the file
   * untouched, when the file is newer than this build or a migration step is missing.
   */
  async load(): Promise<void> {
    if (this.loadCalled) throw new Error(`Store.load() was called twice for ${this.path}; call it once at startup`);
    this.loadCalled = true;
    await mkdir(path.dirname(this.path), { recursive: true });

    const main = await this.inspect(async () => {
      await this.db.read();
      return this.db.data;
    });
    let file: StoreFile | undefined;
    let recovered = false;
    switch (main.kind) {
      case 'missing':
        this.logger.info(`no store file at ${this.path} yet; starting empty`);
        break;
      case 'newer':
        throw this.newerError(this.path, main.version);
      case 'good':
        file = main.file;
        break;
      case 'unusable':
        file = await this.recover(main.reason);
        recovered = file !== undefined;
        break;
    }
    this.db.data = null;

    const migrated = file !== undefined && file.schema_version < this.schemaVersion;
    if (file) {
      const source = recovered ? this.file.backupPath : this.path;
      const slices = this.migrate(file, source);
      for (const [key, data] of Object.entries(slices)) this.storedSlices.set(key, data);
    }
    this.loaded = true;
    // Bring the file on disk up to date: after a migration the old file becomes the .bak; after a
    // recovery the store file is written again.
    if (migrated || recovered) this.markDirty();
  }

  /**
   * Register a slice; if the loaded file has data under slice.key, slice.restore(data) is
   * called now. Duplicate key → throws naming the key.
   */
  register(slice: PersistedSlice): void {
    if (!this.loaded) {
      throw new Error(
        `slice '${slice.key}' was registered before the store ${this.path} was loaded; await store.load() first`,
      );
    }
    if (this.slices.has(slice.key)) {
      throw new Error(`store slice key '${slice.key}' is already registered; give each slice its own key`);
    }
    if (this.storedSlices.has(slice.key)) {
      try {
        slice.restore(this.storedSlices.get(slice.key));
      } catch (error) {
        throw new Error(
          `slice '${slice.key}' could not restore its data from ${this.path}: ${errorMessage(error)}; fix the slice's restore() or add a migration`,
          { cause: error },
        );
      }
      this.storedSlices.delete(slice.key);
    }
    this.slices.set(slice.key, slice);
  }

  /**
   * Something changed: schedule a debounced save. Many calls within debounceMs coalesce into one write.
   *
   * The save comes debounceMs after the first unsaved change (later calls do not push it back), so a
   * steady stream of changes is still saved at least every debounceMs plus the time a write takes.
   */
  markDirty(): void {
    if (this.closed) {
      this.logger.debug(`ignored a change after the store ${this.path} was closed`);
      return;
    }
    if (!this.loaded) {
      throw new Error(
        `Store.markDirty() was called before the store ${this.path} was loaded; await store.load() first`,
      );
    }
    this.dirty = true;
    this.timer ??= setTimeout(() => this.onTimer(), this.debounceMs);
  }

  /** Write now if dirty (or if a write is pending), wait for any write in flight; resolves once the data is on disk. */
  async flush(): Promise<void> {
    // A failed write marks the store dirty again, so its changes go out in the write below.
    while (this.inFlight) await this.inFlight.catch(() => undefined);
    if (!this.dirty) return;
    this.clearTimer();
    await this.startWrite();
  }

  /** flush() and clear timers; markDirty() after close is ignored with a debug log. */
  async close(): Promise<void> {
    this.closed = true;
    this.clearTimer();
    await this.flush();
  }

  /** Classify what a read of a store file gave. */
  private async inspect(read: () => Promise<unknown>): Promise<Inspection> {
    let data: unknown;
    try {
      data = await read();
    } catch (error) {
      if (error instanceof UnusableFileError) return { kind: 'unusable', reason: error.reason };
      throw error;
    }
    if (data === null) return { kind: 'missing' };
    if (!isJsonObject(data)) return { kind: 'unusable', reason: 'not a JSON object' };
    const version = data.schema_version;
    if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
      return {
        kind: 'unusable',
        reason: `not a store file (schema_version is ${JSON.stringify(version) ?? 'missing'}, expected an integer >= 1)`,
      };
    }
    if (version > this.schemaVersion) return { kind: 'newer', version };
    if (!isJsonObject(data.slices)) {
      return {
        kind: 'unusable',
        reason: `not a store file ("slices" is ${JSON.stringify(data.slices) === undefined ? 'missing' : 'not an object'})`,
      };
    }
    return { kind: 'good', file: { schema_version: version, saved_at: data.saved_at, slices: data.slices } };
  }

  /**
   * Move the unusable file aside and fall back to the backup. Logs exactly one line saying
   * what was wrong, where the file went, and whether the backup was used.
   */
  private async recover(reason: string): Promise<StoreFile | undefined> {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const corruptPath = `${this.path}.corrupt-${stamp}`;
    try {
      await rename(this.path, corruptPath);
    } catch (error) {
      throw new Error(
        `store file ${this.path} is ${reason}, and moving it aside to ${corruptPath} failed (${errorMessage(error)}); move or delete it by hand`,
        { cause: error },
      );
    }
    const problem = `store file ${this.path} is ${reason}; moved it to ${corruptPath}`;
    const backupPath = this.file.backupPath;
    const backup = await this.inspect(() => new AtomicJsonFile(backupPath).read());
    switch (backup.kind) {
      case 'good': {
        const savedAt = typeof backup.file.saved_at === 'string' ? ` (saved at ${backup.file.saved_at})` : '';
        this.logger.warn(`${problem}; loaded the backup ${backupPath}${savedAt} instead`);
        return backup.file;
      }
      case 'missing':
        this.logger.error(`${problem}; there is no backup ${backupPath}, so starting empty`);
        return undefined;
      case 'unusable':
        this.logger.error(`${problem}; the backup ${backupPath} is ${backup.reason} too, so starting empty`);
        return undefined;
      case 'newer':
        this.logger.error(`${problem}; the backup ${backupPath} is newer than this build, so not loading it`);
        throw this.newerError(backupPath, backup.version);
    }
  }

  /** The file's slices at this store's schema version. Throws before any step runs if one is missing. */
  private migrate(file: StoreFile, source: string): Record<string, unknown> {
    for (let version = file.schema_version; version < this.schemaVersion; version++) {
      if (!this.migrations.has(version)) {
        throw new Error(
          `store file ${source} has schema_version ${file.schema_version} but there is no migration from schema_version ${version} to ${version + 1} ` +
            `(needed to reach ${this.schemaVersion}); add it to lib/store/migrations.ts`,
        );
      }
    }
    let slices = file.slices;
    for (let version = file.schema_version; version < this.schemaVersion; version++) {
      const migration = this.migrations.get(version)!;
      let result: unknown;
      try {
        result = migration.migrate(slices);
      } catch (error) {
        throw new Error(
          `store migration from schema_version ${version} to ${version + 1} failed on ${source}: ${errorMessage(error)}`,
          {
            cause: error,
          },
        );
      }
      if (!isJsonObject(result)) {
        throw new Error(
          `store migration from schema_version ${version} to ${version + 1} returned ${typeof result} instead of an object of slices`,
        );
      }
      slices = result;
      this.logger.info(`migrated store file ${source} from schema_version ${version} to ${version + 1}`);
    }
    return slices;
  }

  private newerError(filePath: string, version: number): Error {
    return new Error(
      `store file ${filePath} has schema_version ${version}, newer than the ${this.schemaVersion} this build understands; ` +
        `run a newer build or restore an older file (the file was left untouched)`,
    );
  }

  private onTimer(): void {
    this.timer = undefined;
    // A write in flight reschedules when it finishes, so there is never more than one.
    if (this.inFlight || !this.dirty) return;
    this.startWrite().catch((error: unknown) => {
      this.logger.error(
        `could not save the store ${this.path}: ${errorMessage(error)}; retrying on the next change or at shutdown`,
      );
    });
  }

  /** Snapshot every slice now and write; the returned promise is also {@link inFlight}. */
  private startWrite(): Promise<void> {
    this.dirty = false;
    const write = this.write().then(
      () => {
        this.inFlight = undefined;
        if (this.dirty && !this.closed) this.timer ??= setTimeout(() => this.onTimer(), this.debounceMs);
      },
      (error: unknown) => {
        this.inFlight = undefined;
        this.dirty = true;
        throw error;
      },
    );
    this.inFlight = write;
    return write;
  }

  private async write(): Promise<void> {
    const slices = new Map(this.storedSlices);
    for (const [key, slice] of this.slices) {
      if (slice.snapshotJson) {
        const pieces = () => slice.snapshotJson!();
        slices.set(key, new PiecewiseJson(() => this.namingFailures(key, pieces)));
        continue;
      }
      try {
        slices.set(key, slice.snapshot());
      } catch (error) {
        throw this.snapshotError(key, error);
      }
    }
    const sortedKeys = [...slices.keys()].sort();
    this.db.data = {
      schema_version: this.schemaVersion,
      saved_at: new Date().toISOString(),
      slices: Object.fromEntries(sortedKeys.map((key) => [key, slices.get(key)])),
    };
    try {
      await this.db.write();
    } finally {
      this.db.data = null;
    }
  }

  /** The slice's pieces; a failure while they are taken names the slice, as for snapshot(). */
  private *namingFailures(key: string, pieces: () => Iterable<JsonPiece>): Generator<JsonPiece, void, undefined> {
    try {
      yield* pieces();
    } catch (error) {
      throw this.snapshotError(key, error);
    }
  }

  private snapshotError(key: string, error: unknown): Error {
    return new Error(`slice '${key}' failed to take a snapshot for ${this.path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
