/**
 * The store: persists the slices of the in-memory model to JSON files.
 *
 * The model knows nothing of persistence. Each owner of persisted state registers a
 * {@link PersistedSlice} and calls {@link Store.markDirty} when it changes; the store takes
 * snapshots and writes them, debounced, one write per file at a time. A file looks like
 * `{ "schema_version": 1, "saved_at": "<ISO time>", "slices": { "<key>": <snapshot> } }`.
 *
 * Slices whose changes are confirmed to people (a token created, a grant, a revocation) are
 * `durable`: they live in a second file, so that an answer can wait until its change is on disk
 * without rewriting megabytes of activity. A durable slice with a {@link SliceJournal} gives its
 * changes as records, which {@link Store.persisted} appends to the durable file's journal
 * (journal.ts) and fsyncs: a confirmed change costs the change, however many tokens and audit
 * entries there are. The durable file itself is written whole again (compacted) in the
 * background once the journal has grown as big as it.
 *
 * A write is streamed to the file in pieces with the event loop free in between (so a big
 * slice does not stall the bot while it is saved). A slice that changes during a write has
 * marked the store dirty again, so the next write has the change.
 */

import { channel } from 'node:diagnostics_channel';
import { mkdir, open, rename } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import { errorMessage, type Logger } from '../logger.js';
import { AtomicJsonFile, UnusableFileError, isJsonObject, syncDirectory } from './atomic-json-file.js';
import { HoldMeter } from './hold-meter.js';
import { DiskJournal, MemoryJournal, type JournalFiles, type JournalLine } from './journal.js';
import { lockStore, type StoreLock } from './lock.js';
import { PiecewiseJson, type JsonPiece } from './json-pieces.js';
import { MemoryJsonFile } from './memory-json-file.js';
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
  /**
   * Its changes are confirmed to people, who must not lose them to a crash: it is kept in the
   * durable file ({@link StoreOptions.durablePath}), which {@link Store.persisted} writes.
   */
  durable?: boolean;
  /** For a durable slice: its changes as records, appended to the durable file's journal. */
  journal?: SliceJournal;
}

/**
 * A durable slice's changes as records of JSON. The store appends what {@link drain} gives to the journal
 * of the durable file, and at startup, after `restore()` of the file's snapshot, gives every record that
 * came after that snapshot to {@link replay}, in order.
 */
export interface SliceJournal<R = unknown> {
  /**
   * The changes since the last call, in the order they must be replayed; [] when there are none. Records
   * may be coalesced (the latest state of a thing instead of each step to it), as long as replaying them
   * over the state at the last call gives the state now. Called synchronously with a snapshot at times,
   * so a record must never repeat what that snapshot holds.
   */
  drain(): R[];
  /**
   * Apply a record {@link drain} gave (possibly in an older run: accept older shapes as `restore` accepts
   * older snapshots). Must not count as a new change: nothing it does is drained again.
   */
  replay(record: R): void;
}

/** How to construct a {@link Store}. */
export interface StoreOptions {
  /** The store file, e.g. `data/store.json`; parent directories are created. */
  path: string;
  /** The file of the durable slices; default {@link durablePathOf}(path), e.g. `data/store.durable.json`. */
  durablePath?: string;
  /** Where {@link Store.archive} appends; default the folder `archive` beside the store file. */
  archiveDir?: string;
  logger: Logger;
  /** How long after the first change a save happens; default 1000. */
  debounceMs?: number;
  /** Steps between schema versions; default: the project's list in `migrations.ts`. */
  migrations?: Migration[];
  /** The version this store writes; default this release's (`CURRENT_SCHEMA_VERSION`). */
  schemaVersion?: number;
  /**
   * The journal's size, in bytes, from which the durable file is written whole again (compacted) once the
   * journal is also as big as the file; default 1 MiB.
   */
  compactAfterBytes?: number;
  /** Told of every write of a file: which, how long it took, whether it succeeded, and the file's size after it. */
  onWrite?: (report: WriteReport) => void;
  /**
   * Keep both files in memory, never on disk (the plugin test harness): the slices are registered,
   * restored, snapshot and written as JSON, debounced and durable alike, but nothing is read at load,
   * so the store starts empty, and nothing is left behind. `path` only names the files in messages.
   */
  memory?: boolean;
}

/** One write of a store file. */
export interface WriteReport {
  /**
   * `store`: the main file; `durable`: the durable slices' file, written whole; `journal`: changes of durable
   * slices appended to its journal.
   */
  file: 'store' | 'durable' | 'journal';
  seconds: number;
  ok: boolean;
  /** The file's size after a write that succeeded (the journal's: every generation since the durable file). */
  bytes: number | undefined;
  /** Why a write failed. */
  error: string | undefined;
  /**
   * The longest the write held the event loop, in seconds: its longest stretch of synchronous work (taking
   * snapshots, encoding a few pieces) between two awaits.
   */
  blockedSeconds: number;
  /** When that stretch began (epoch milliseconds). */
  blockedAt: number;
}

/**
 * Every write's {@link WriteReport} is also published on this diagnostics channel, for a profiler or a
 * benchmark in the same process that the store's owner does not know of.
 */
export const STORE_WRITE_CHANNEL = 'irc-network-data:store:write';
const writeChannel = channel(STORE_WRITE_CHANNEL);

/** A file's shape once checked. Keys are snake_case because they are the file format. */
interface StoreContents {
  schema_version: number;
  saved_at?: unknown;
  /** In the durable file: the first journal generation whose records it does not hold. */
  journal_generation?: unknown;
  slices: Record<string, unknown>;
  /** In the durable file: journal records of slices not registered when it was written (see Store.carried). */
  carried_records?: unknown;
}

type Inspection =
  | { kind: 'missing' }
  | { kind: 'good'; file: StoreContents }
  | { kind: 'newer'; version: number }
  | { kind: 'unusable'; reason: string };

const DEFAULT_DEBOUNCE_MS = 1000;
const DEFAULT_COMPACT_AFTER_BYTES = 1024 * 1024;

/** Where the durable slices of the store at `storePath` are kept: `data/store.json` → `data/store.durable.json`. */
export function durablePathOf(storePath: string): string {
  return `${storePath.endsWith('.json') ? storePath.slice(0, -'.json'.length) : storePath}.durable.json`;
}

/** One file of the store: the slices kept in it, and its writes (one at a time). */
class SliceFile {
  readonly file: AtomicJsonFile | MemoryJsonFile;
  readonly db: Low<unknown>;
  /** Slices read from the file that no registered slice has claimed (yet); kept on write. */
  readonly stored = new Map<string, unknown>();
  readonly slices = new Map<string, PersistedSlice>();
  /**
   * Registered slices whose data was read from the other file (the slice became durable, or stopped
   * being): the other file keeps its copy until this one has written theirs.
   */
  readonly movingIn = new Set<string>();
  dirty = false;
  /** Why its last write failed; undefined once one succeeds. */
  writeError: string | undefined;
  timer: NodeJS.Timeout | undefined;
  inFlight: Promise<void> | undefined;
  /** The write that {@link Store.persisted} callers wait for, until it starts. */
  nextWrite: Promise<void> | undefined;

  constructor(
    readonly path: string,
    memory: boolean,
  ) {
    this.file = memory ? new MemoryJsonFile(path) : new AtomicJsonFile(path);
    this.db = new Low<unknown>(this.file, null);
  }

  /** Whether it has anything to write. */
  get holdsSlices(): boolean {
    return this.slices.size > 0 || this.stored.size > 0;
  }
}

/**
 * Saves registered slices to two JSON files through lowdb — the durable slices to one, the others
 * to the other — each atomically, keeping the previous file as `<file>.bak`, and loads them back at
 * startup (migrating older files, recovering from a corrupt one).
 *
 * Lifecycle: `await load()`, then `register()` each slice, `markDirty(key)` on every change,
 * `await persisted()` before confirming a change of a durable slice, and `await close()` on shutdown.
 */
export class Store {
  /** The store file (the slices that are not durable). */
  readonly path: string;
  /** The file of the durable slices. */
  readonly durablePath: string;
  /** The folder of the archive files ({@link Store.archive}). */
  readonly archiveDir: string;
  /** What was archived, by name, when the store is kept in memory. */
  private readonly archivedInMemory = new Map<string, unknown[]>();
  private readonly logger: Logger;
  private readonly debounceMs: number;
  private readonly onWrite: ((report: WriteReport) => void) | undefined;
  private readonly schemaVersion: number;
  private readonly migrations = new Map<number, Migration>();
  private readonly main: SliceFile;
  private readonly durable: SliceFile;
  private readonly memory: boolean;
  private readonly journal: JournalFiles;
  private readonly compactAfterBytes: number;
  /** The first journal generation the durable file on disk does not hold. */
  private snapshotGeneration = 0;
  /**
   * What `snapshotGeneration` is for the file that becomes the `.bak` at the next write of the durable file
   * (undefined: there is none, so that write leaves no `.bak` the journal must serve).
   */
  private backupGeneration: number | undefined;
  /** The durable file's size as last read or written. */
  private durableBytes = 0;
  /** The durable file is written whole at its next write: a slice without a journal changed, or an append failed. */
  private needsSnapshot = false;
  /** The journal's size when a compaction last failed: the next waits until it has grown by a compaction's worth. */
  private compactionFailedAt = -Infinity;
  /**
   * Journal records not replayed into a durable slice yet, by slice: the slice is not registered (yet), or it
   * became a slice of the main file, which has not been written since. The durable file keeps them.
   */
  private readonly carried = new Map<string, unknown[]>();
  /** The durable file being written whole in the background, while appends go on. */
  private compacting: Promise<void> | undefined;
  private loadCalled = false;
  private loaded = false;
  private closed = false;
  /** This process's hold on the store's files (lock.ts), from load() to close(). */
  private lock: StoreLock | undefined;

  constructor(options: StoreOptions) {
    this.path = options.path;
    this.logger = options.logger;
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.onWrite = options.onWrite;
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
    this.durablePath = options.durablePath ?? durablePathOf(this.path);
    this.archiveDir = options.archiveDir ?? path.join(path.dirname(this.path), 'archive');
    if (path.resolve(this.durablePath) === path.resolve(this.path)) {
      throw new Error(`StoreOptions.durablePath must differ from the store path, got ${this.path} for both`);
    }
    this.memory = options.memory === true;
    this.compactAfterBytes = options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER_BYTES;
    if (!Number.isFinite(this.compactAfterBytes) || this.compactAfterBytes < 0) {
      throw new Error(`StoreOptions.compactAfterBytes must be a number of bytes >= 0, got ${this.compactAfterBytes}`);
    }
    this.journal = this.memory ? new MemoryJournal() : new DiskJournal(this.durablePath, this.logger);
    this.main = new SliceFile(this.path, this.memory);
    this.durable = new SliceFile(this.durablePath, this.memory);
  }

  /**
   * Read both files (or recover), migrate. Call once, before register().
   *
   * A missing file is an empty start. A corrupt or unreadable file is moved aside to
   * `<file>.corrupt-<time>` and its backup is loaded if it is good. Rejects, leaving the files
   * untouched, when a file is newer than this build or a migration step is missing.
   */
  async load(): Promise<void> {
    if (this.loadCalled) throw new Error(`Store.load() was called twice for ${this.path}; call it once at startup`);
    this.loadCalled = true;
    if (this.memory) {
      this.logger.info(`the store ${this.path} is kept in memory, not on disk; starting empty`);
      this.loaded = true;
      return;
    }
    await mkdir(path.dirname(this.path), { recursive: true });
    await mkdir(path.dirname(this.durablePath), { recursive: true });
    // Before anything is read: another process writing these files would lose this one's changes, or it its.
    this.lock = await lockStore(`${this.path}.lock`);
    const outdated: SliceFile[] = [];
    let durableRecovered = false;
    try {
      for (const file of [this.main, this.durable]) {
        const why = await this.loadFile(file);
        if (why) outdated.push(file);
        if (why === 'recovered' && file === this.durable) durableRecovered = true;
      }
    } catch (error) {
      // A store that failed to load writes nothing: it lets go of the files.
      await this.lock.release();
      throw error;
    }
    this.loaded = true;
    // Bring the files on disk up to date: after a migration the old file becomes the .bak; after a
    // recovery the file is written again.
    for (const file of outdated) this.markFileDirty(file);
    if (durableRecovered) {
      // At once: the journal is replayed over the backup only while the backup is all there is.
      try {
        await this.startWrite(this.durable);
      } catch (error) {
        throw new Error(
          `the store file ${this.durablePath} was recovered from its backup, but writing it again failed: ${errorMessage(error)}`,
          { cause: error },
        );
      }
    }
  }

  /** Read one file into its stored slices; says whether it should be written again, and why. */
  private async loadFile(file: SliceFile): Promise<'recovered' | 'migrated' | undefined> {
    const found = await this.inspect(async () => {
      await file.db.read();
      return file.db.data;
    });
    let contents: StoreContents | undefined;
    let recovered = false;
    switch (found.kind) {
      case 'missing':
        // A recovery cut short (the file moved aside, the backup not written back yet) leaves only the backup.
        contents = await this.orphanedBackup(file);
        recovered = contents !== undefined;
        if (!recovered) this.logger.info(`no store file at ${file.path} yet; starting empty`);
        break;
      case 'newer':
        throw this.newerError(file.path, found.version);
      case 'good':
        contents = found.file;
        break;
      case 'unusable':
        contents = await this.recover(file, found.reason);
        recovered = contents !== undefined;
        break;
    }
    file.db.data = null;
    if (file === this.durable) await this.loadJournal(contents);
    if (!contents) return undefined;
    const slices = this.migrate(contents, recovered ? file.file.backupPath : file.path);
    for (const [key, data] of Object.entries(slices)) file.stored.set(key, data);
    if (recovered) return 'recovered';
    return contents.schema_version < this.schemaVersion ? 'migrated' : undefined;
  }

  /** The backup of a file that is missing, when the backup is there and good; logged. */
  private async orphanedBackup(file: SliceFile): Promise<StoreContents | undefined> {
    if (this.memory) return undefined;
    const backupPath = file.file.backupPath;
    const backup = await this.inspect(() => new AtomicJsonFile(backupPath).read());
    if (backup.kind === 'newer') throw this.newerError(backupPath, backup.version);
    if (backup.kind !== 'good') return undefined;
    this.logger.warn(
      `there is no store file at ${file.path}, but its backup ${backupPath} is there (a recovery cut short?); loaded the backup`,
    );
    return backup.file;
  }

  /** The journal records after the durable file's snapshot (`contents`; none: the whole journal), by slice. */
  private async loadJournal(contents: StoreContents | undefined): Promise<void> {
    const generation = contents?.journal_generation;
    this.snapshotGeneration =
      Number.isSafeInteger(generation) && (generation as number) > 0 ? (generation as number) : 0;
    // The file loaded (after a recovery, the .bak, which stays) is the .bak once the file is written again.
    this.backupGeneration = contents ? this.snapshotGeneration : undefined;
    this.durableBytes = (await this.durable.file.size()) ?? 0;
    const carried = contents?.carried_records;
    if (isJsonObject(carried)) {
      for (const [key, records] of Object.entries(carried))
        if (Array.isArray(records)) this.carried.set(key, [...records]);
    }
    const lines = await this.journal.load(this.snapshotGeneration);
    for (const line of lines) {
      const records = this.carried.get(line.slice);
      if (records) records.push(line.record);
      else this.carried.set(line.slice, [line.record]);
    }
    if (lines.length > 0) {
      this.logger.info(`read ${lines.length} change(s) from the journal of ${this.durablePath}`);
    }
  }

  /**
   * Register a slice; if a loaded file has data under slice.key, slice.restore(data) is called now.
   * Duplicate key → throws naming the key.
   *
   * The data comes from the slice's own file (the durable one for a durable slice); when only the
   * other file has the key — the slice became durable in this version, or stopped being — it comes
   * from there, and that file keeps its copy until the slice's own file has been written, so that a
   * crash in between loses nothing. When both files have it, the slice's own file is the newer.
   */
  register(slice: PersistedSlice): void {
    if (!this.loaded) {
      throw new Error(
        `slice '${slice.key}' was registered before the store ${this.path} was loaded; await store.load() first`,
      );
    }
    if (this.fileOf(slice.key)) {
      throw new Error(`store slice key '${slice.key}' is already registered; give each slice its own key`);
    }
    const own = slice.durable ? this.durable : this.main;
    const other = slice.durable ? this.main : this.durable;
    const source = own.stored.has(slice.key) ? own : other.stored.has(slice.key) ? other : undefined;
    if (source) {
      try {
        slice.restore(source.stored.get(slice.key));
      } catch (error) {
        throw new Error(
          `slice '${slice.key}' could not restore its data from ${source.path}: ${errorMessage(error)}; fix the slice's restore() or add a migration`,
          { cause: error },
        );
      }
    }
    this.replay(slice, own);
    own.stored.delete(slice.key);
    own.slices.set(slice.key, slice);
    if (source === other) {
      this.logger.info(`slice '${slice.key}' moves from ${other.path} to ${own.path}`);
      own.movingIn.add(slice.key);
      this.markFileDirty(own);
    } else if (other.stored.delete(slice.key)) {
      // A copy left behind by a move cut short after the slice's own file was written: that file is newer.
      this.markFileDirty(other);
    }
  }

  /** Give `slice` the journal's records of it, once it is restored. */
  private replay(slice: PersistedSlice, own: SliceFile): void {
    const records = this.carried.get(slice.key);
    if (!records) return;
    if (!slice.journal) {
      throw new Error(
        `the journal of ${this.durablePath} has ${records.length} change(s) of slice '${slice.key}', which has no journal to replay them; ` +
          `give the slice its journal back, or remove the journal files to lose those changes`,
      );
    }
    let index = 0;
    try {
      for (; index < records.length; index++) slice.journal.replay(records[index]);
    } catch (error) {
      throw new Error(
        `slice '${slice.key}' could not replay change ${index + 1} of ${records.length} from the journal of ${this.durablePath}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
    if (own === this.durable) {
      this.carried.delete(slice.key);
    } else {
      // The journal keeps them until the main file has the slice.
      own.movingIn.add(slice.key);
      this.markFileDirty(own);
    }
  }

  /**
   * Something changed: schedule a debounced save of the file of slice `key` (of every file when no
   * key is given). Many calls within debounceMs coalesce into one write.
   *
   * The save comes debounceMs after the first unsaved change (later calls do not push it back), so a
   * steady stream of changes is still saved at least every debounceMs plus the time a write takes.
   */
  markDirty(key?: string): void {
    if (this.closed) {
      this.logger.debug(`ignored a change after the store ${this.path} was closed`);
      return;
    }
    if (!this.loaded) {
      throw new Error(
        `Store.markDirty() was called before the store ${this.path} was loaded; await store.load() first`,
      );
    }
    if (key === undefined) {
      for (const file of [this.main, this.durable]) if (file.holdsSlices) this.markFileDirty(file);
      return;
    }
    const file = this.fileOf(key);
    if (!file) throw new Error(`Store.markDirty('${key}'): no slice '${key}' is registered; register it first`);
    // A journal takes a durable slice's changes; a durable slice without one is written whole.
    this.markFileDirty(file, !(file === this.durable && this.durable.slices.get(key)!.journal));
  }

  /**
   * Resolves once every change to a durable slice made before the call is on disk: when a write of the
   * durable file that started after the call has completed. (A write already under way may have taken
   * its snapshot before the change, so it does not count.) Callers in the same turn of the event loop,
   * and all who come while a write is under way, share one write. Rejects when that write fails — the
   * changes stay in memory and dirty, for the next write — or when the store is closed.
   *
   * The durable file holds only the durable slices, so this costs a small write, not the whole store.
   */
  persisted(): Promise<void> {
    if (!this.loaded) {
      throw new Error(
        `Store.persisted() was called before the store ${this.path} was loaded; await store.load() first`,
      );
    }
    if (this.closed) {
      return Promise.reject(
        new Error(`the store ${this.durablePath} is closed (the bot is stopping), so the change was not saved`),
      );
    }
    // A durable slice without a journal may have changed without a markDirty(): its file is written whole.
    for (const slice of this.durable.slices.values()) if (!slice.journal) this.needsSnapshot = true;
    this.durable.nextWrite ??= this.writeSoon(this.durable);
    return this.durable.nextWrite;
  }

  /**
   * Append `records` to the archive file `<archiveDir>/<name>.jsonl`, one line of JSON each, and fsync it;
   * resolves with the file's path once they are on disk. For what a slice stops keeping (revoked tokens,
   * old audit entries): archive it, then forget it, so that a crash in between repeats a line in the archive
   * rather than losing one. The store never reads the archive; the operator keeps, rotates or deletes it.
   */
  async archive(name: string, records: readonly unknown[]): Promise<string> {
    if (!/^[a-z0-9][a-z0-9_-]*$/i.test(name)) {
      throw new Error(
        `an archive's name is letters, digits, '-' and '_' (it names a file), got ${JSON.stringify(name)}`,
      );
    }
    const lines = records.map((record) => JSON.stringify(record));
    const file = path.join(this.archiveDir, `${name}.jsonl`);
    if (this.memory) {
      const kept = this.archivedInMemory.get(name) ?? [];
      for (const line of lines) kept.push(JSON.parse(line) as unknown);
      this.archivedInMemory.set(name, kept);
      return `${file} (in memory)`;
    }
    if (lines.length === 0) return file;
    await mkdir(this.archiveDir, { recursive: true });
    const handle = await open(file, 'a');
    try {
      await handle.write(lines.map((line) => `${line}\n`).join(''));
      await handle.sync();
    } finally {
      await handle.close();
    }
    // A new file's name (the first archive, or after the operator rotated it) must survive a power cut too.
    await syncDirectory(this.archiveDir);
    return file;
  }

  /** What was archived under `name`, oldest first, when the store is kept in memory (for tests). */
  archivedRecords(name: string): readonly unknown[] {
    return this.archivedInMemory.get(name) ?? [];
  }

  /**
   * Write both files now if dirty, after any write in flight; resolves once the data is on disk (the durable
   * slices' changes in the journal, or in their file when a slice without a journal changed).
   */
  async flush(): Promise<void> {
    const results = await Promise.allSettled([this.flushFile(this.main), this.flushFile(this.durable)]);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }

  /**
   * flush(), write the durable file whole if its journal has anything (so that the next start has nothing to
   * replay), and clear timers; markDirty() after close is ignored with a debug log, persisted() rejects.
   */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.closeFiles();
    } finally {
      await this.lock?.release();
    }
  }

  private async closeFiles(): Promise<void> {
    this.clearTimer(this.main);
    this.clearTimer(this.durable);
    await this.flush();
    while (this.compacting) await this.compacting.catch(() => undefined);
    // A write of one file may have let the other drop a slice that moved (see moved()): that one is dirty now.
    if (this.main.dirty) await this.flushFile(this.main);
    const durableBehind = this.journal.bytesSinceSnapshot > 0 || this.needsSnapshot || this.durable.dirty;
    // Even with no durable slice left: the file then says the journal's records are in the other file now.
    if (durableBehind) {
      this.needsSnapshot = true;
      await this.startWrite(this.durable);
    }
    if (this.main.dirty) await this.flushFile(this.main);
  }

  private fileOf(key: string): SliceFile | undefined {
    if (this.main.slices.has(key)) return this.main;
    if (this.durable.slices.has(key)) return this.durable;
    return undefined;
  }

  /** `whole`: the durable file must be written whole (not only its journal appended to). */
  private markFileDirty(file: SliceFile, whole = true): void {
    file.dirty = true;
    if (file === this.durable && whole) this.needsSnapshot = true;
    // While closing, close() writes what is dirty itself.
    if (!this.closed) file.timer ??= setTimeout(() => this.onTimer(file), this.debounceMs);
  }

  private async flushFile(file: SliceFile): Promise<void> {
    // A write persisted() asked for is waited for, not raced; its failure is its callers' to report.
    await file.nextWrite?.catch(() => undefined);
    // A failed write marks the file dirty again, so its changes go out in the write below.
    while (file.inFlight) await file.inFlight.catch(() => undefined);
    if (!file.dirty) return;
    this.clearTimer(file);
    await this.startWrite(file);
  }

  /** The write persisted() callers share: it starts in the next turn of the event loop, after any write in flight. */
  private async writeSoon(file: SliceFile): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (file.inFlight) await file.inFlight.catch(() => undefined);
    // Callers from here on need a write that starts after them: the next one.
    file.nextWrite = undefined;
    this.clearTimer(file);
    await this.startWrite(file);
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
    return {
      kind: 'good',
      file: {
        schema_version: version,
        saved_at: data.saved_at,
        journal_generation: data.journal_generation,
        carried_records: data.carried_records,
        slices: data.slices,
      },
    };
  }

  /**
   * Move the unusable file aside and fall back to the backup. Logs exactly one line saying
   * what was wrong, where the file went, and whether the backup was used.
   */
  private async recover(file: SliceFile, reason: string): Promise<StoreContents | undefined> {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const corruptPath = `${file.path}.corrupt-${stamp}`;
    try {
      await rename(file.path, corruptPath);
    } catch (error) {
      throw new Error(
        `store file ${file.path} is ${reason}, and moving it aside to ${corruptPath} failed (${errorMessage(error)}); move or delete it by hand`,
        { cause: error },
      );
    }
    const problem = `store file ${file.path} is ${reason}; moved it to ${corruptPath}`;
    const backupPath = file.file.backupPath;
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
  private migrate(file: StoreContents, source: string): Record<string, unknown> {
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

  private onTimer(file: SliceFile): void {
    file.timer = undefined;
    // A write in flight reschedules when it finishes, so there is never more than one.
    if (file.inFlight || !file.dirty) return;
    // A failed write is logged where it is reported.
    this.startWrite(file).catch(() => undefined);
  }

  /** The last write of each file failed (its reason), or undefined when the last writes succeeded. */
  get writeError(): string | undefined {
    return this.main.writeError ?? this.durable.writeError;
  }

  /** Snapshot every slice of `file` now and write; the returned promise is also its `inFlight`. */
  private startWrite(file: SliceFile): Promise<void> {
    if (file === this.durable) return this.startDurableWrite();
    file.dirty = false;
    const moving = [...file.movingIn];
    const started = performance.now();
    const meter = new HoldMeter();
    const report = (ok: boolean, bytes: number | undefined, error: unknown): void =>
      this.reportWrite(file, 'store', started, meter, ok, bytes, error);
    const write = this.write(file, meter).then(
      async () => {
        report(true, await file.file.size(), undefined);
        file.inFlight = undefined;
        if (moving.length > 0) this.moved(file, moving);
        if (file.dirty && !this.closed) file.timer ??= setTimeout(() => this.onTimer(file), this.debounceMs);
      },
      (error: unknown) => {
        report(false, undefined, error);
        file.inFlight = undefined;
        file.dirty = true;
        throw error;
      },
    );
    file.inFlight = write;
    return write;
  }

  /** `keys` moved into `file` are on disk there: the other file lets its copies go with its next write. */
  private moved(file: SliceFile, keys: string[]): void {
    const other = file === this.main ? this.durable : this.main;
    for (const key of keys) {
      file.movingIn.delete(key);
      other.stored.delete(key);
      if (file === this.main) this.carried.delete(key);
    }
    this.markFileDirty(other);
  }

  /**
   * A write of the durable file: its slices' changes appended to the journal; or, when the journal has grown as
   * big as the file (or a slice without a journal changed), the file written whole. The returned promise is
   * the file's `inFlight`, which {@link persisted} callers wait for: an append, or, when a slice without a
   * journal changed, the whole file. A compaction otherwise goes on in the background, while appends go to
   * a new generation of the journal.
   */
  private startDurableWrite(): Promise<void> {
    const file = this.durable;
    file.dirty = false;
    const write = this.writeDurable().then(
      () => {
        file.inFlight = undefined;
        if (file.dirty && !this.closed) file.timer ??= setTimeout(() => this.onTimer(file), this.debounceMs);
      },
      (error: unknown) => {
        file.inFlight = undefined;
        file.dirty = true;
        // What was drained is in memory only: the next write is of the whole file.
        this.needsSnapshot = true;
        throw error;
      },
    );
    file.inFlight = write;
    return write;
  }

  private async writeDurable(): Promise<void> {
    // A write of the whole file waits for the one under way; appends never do.
    if (this.needsSnapshot) while (this.compacting) await this.compacting.catch(() => undefined);
    const waited = this.needsSnapshot;
    let document: Record<string, unknown> | undefined;
    const generation = this.journal.generation;
    if (waited || (!this.compacting && this.compactionDue())) {
      // The snapshot and the drain below are taken in one turn of the event loop: the snapshot holds exactly
      // what was drained, whose lines go to the generation before the snapshot's.
      try {
        document = this.durableDocument(generation + 1);
      } catch (error) {
        if (waited) throw error;
        this.compactionFailed(error);
      }
    }
    const lines = this.drain();
    if (document) {
      this.needsSnapshot = false;
      this.journal.startGeneration();
    }
    const appended = lines.length > 0 ? this.appendLines(lines, generation) : Promise.resolve();
    if (!document) return appended;
    const compaction = this.compact(appended, document, generation + 1, [...this.durable.movingIn]);
    this.compacting = compaction.then(
      () => {
        this.compacting = undefined;
      },
      (error: unknown) => {
        this.compacting = undefined;
        if (!waited) this.compactionFailed(error);
      },
    );
    // Callers of persisted() wait for the lines, not the whole file, unless a slice without a journal changed.
    await (waited ? compaction : appended);
  }

  /** Whether the journal has grown as big as the durable file (and at least {@link StoreOptions.compactAfterBytes}). */
  private compactionDue(): boolean {
    const size = this.journal.bytesSinceSnapshot;
    return (
      size >= Math.max(this.compactAfterBytes, this.durableBytes) &&
      size >= this.compactionFailedAt + this.compactAfterBytes
    );
  }

  private compactionFailed(error: unknown): void {
    this.compactionFailedAt = this.journal.bytesSinceSnapshot;
    this.logger.error(
      `could not write ${this.durablePath} whole (${errorMessage(error)}); its journal keeps every change, and it is tried again once the journal has grown`,
    );
  }

  /** The changes of every durable slice with a journal, as journal lines. */
  private drain(): JournalLine[] {
    const lines: JournalLine[] = [];
    for (const [key, slice] of this.durable.slices) {
      if (!slice.journal) continue;
      let records: unknown[];
      try {
        records = slice.journal.drain();
      } catch (error) {
        throw new Error(`slice '${key}' failed to give its changes for ${this.durablePath}: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      for (const record of records) lines.push({ slice: key, record });
    }
    return lines;
  }

  private async appendLines(lines: readonly JournalLine[], generation: number): Promise<void> {
    const started = performance.now();
    const meter = new HoldMeter();
    try {
      const bytes = await this.journal.append(lines, generation);
      this.reportWrite(this.durable, 'journal', started, meter, true, bytes, undefined);
    } catch (error) {
      this.reportWrite(this.durable, 'journal', started, meter, false, undefined, error);
      // What the failed append left of its lines stays the last thing in its generation: later lines go to a
      // new one, so a cut line is never glued to a whole one.
      if (generation === this.journal.generation) this.journal.startGeneration();
      throw error;
    }
  }

  /** The durable file as it is now, naming `generation` as the first journal generation it does not hold. */
  private durableDocument(generation: number): Record<string, unknown> {
    const slices = new Map(this.durable.stored);
    for (const [key, slice] of this.durable.slices) {
      try {
        slices.set(key, slice.snapshot());
      } catch (error) {
        throw this.snapshotError(this.durable, key, error);
      }
    }
    const sortedKeys = [...slices.keys()].sort();
    return {
      schema_version: this.schemaVersion,
      saved_at: new Date().toISOString(),
      journal_generation: generation,
      ...(this.carried.size > 0 ? { carried_records: Object.fromEntries(this.carried) } : {}),
      slices: Object.fromEntries(sortedKeys.map((key) => [key, slices.get(key)])),
    };
  }

  /**
   * Write the durable file whole from `document` (taken when the journal's generation `generation` began),
   * after the lines drained with it are appended; then the generations neither it nor its `.bak` needs go.
   */
  private async compact(
    appended: Promise<void>,
    document: Record<string, unknown>,
    generation: number,
    moving: string[],
  ): Promise<void> {
    // The lines' own callers hear of their failure; the file holds them anyway.
    await appended.catch(() => undefined);
    const file = this.durable;
    const started = performance.now();
    const meter = new HoldMeter();
    try {
      await file.file.write(document, meter);
      // The file it replaced is the .bak now, which the generations from its own on complete.
      const kept = this.backupGeneration ?? generation;
      this.snapshotGeneration = generation;
      this.backupGeneration = generation;
      this.durableBytes = (await file.file.size()) ?? 0;
      this.compactionFailedAt = -Infinity;
      await this.journal.dropBefore(kept, generation);
    } catch (error) {
      this.reportWrite(file, 'durable', started, meter, false, undefined, error);
      throw error;
    }
    this.reportWrite(file, 'durable', started, meter, true, this.durableBytes, undefined);
    if (moving.length > 0) this.moved(file, moving);
  }

  /** Log and publish one write. */
  private reportWrite(
    file: SliceFile,
    kind: WriteReport['file'],
    started: number,
    meter: HoldMeter,
    ok: boolean,
    bytes: number | undefined,
    error: unknown,
  ): void {
    file.writeError = ok ? undefined : errorMessage(error);
    // Every failed write, debounced or durable, is in the log with its file and reason: /readyz says only
    // that the store cannot be written (a public answer names no path).
    if (!ok) {
      this.logger.error(
        `could not save the store ${kind === 'journal' ? `journal of ${file.path}` : file.path}: ${file.writeError}; retrying on the next change or at shutdown`,
      );
    }
    const written: WriteReport = {
      file: kind,
      seconds: (performance.now() - started) / 1000,
      ok,
      bytes,
      error: file.writeError,
      blockedSeconds: meter.longestMs / 1000,
      blockedAt: meter.longestAt,
    };
    this.logger.debug('written', {
      file: written.file,
      ok,
      bytes,
      ms: Math.round(written.seconds * 1000),
      blocked_ms: Number(meter.longestMs.toFixed(1)),
    });
    this.onWrite?.(written);
    if (writeChannel.hasSubscribers) writeChannel.publish(written);
  }

  private async write(file: SliceFile, meter: HoldMeter): Promise<void> {
    const slices = new Map(file.stored);
    for (const [key, slice] of file.slices) {
      if (slice.snapshotJson) {
        const pieces = () => slice.snapshotJson!();
        slices.set(key, new PiecewiseJson(() => this.namingFailures(file, key, pieces)));
        continue;
      }
      try {
        slices.set(key, slice.snapshot());
      } catch (error) {
        throw this.snapshotError(file, key, error);
      }
    }
    const sortedKeys = [...slices.keys()].sort();
    file.db.data = {
      schema_version: this.schemaVersion,
      saved_at: new Date().toISOString(),
      slices: Object.fromEntries(sortedKeys.map((key) => [key, slices.get(key)])),
    };
    try {
      // What `file.db.write()` does, with the meter handed on.
      await file.file.write(file.db.data, meter);
    } finally {
      file.db.data = null;
    }
  }

  /** The slice's pieces; a failure while they are taken names the slice, as for snapshot(). */
  private *namingFailures(
    file: SliceFile,
    key: string,
    pieces: () => Iterable<JsonPiece>,
  ): Generator<JsonPiece, void, undefined> {
    try {
      yield* pieces();
    } catch (error) {
      throw this.snapshotError(file, key, error);
    }
  }

  private snapshotError(file: SliceFile, key: string, error: unknown): Error {
    return new Error(`slice '${key}' failed to take a snapshot for ${file.path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }

  private clearTimer(file: SliceFile): void {
    if (file.timer) clearTimeout(file.timer);
    file.timer = undefined;
  }
}
