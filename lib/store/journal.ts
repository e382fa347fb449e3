/**
 * The journal of the store's durable file: the changes of its slices since the file was last written whole,
 * appended as lines of JSON and fsynced, so that a confirmed change costs its own few hundred bytes, not a
 * rewrite of every token and audit entry (PostgreSQL's and SQLite's write-ahead logs work the same way).
 *
 * The journal is a series of generation files beside the durable file — `store.durable.json` has
 * `store.durable.journal-<n>.jsonl` — each line `{"slice":"<key>","record":<the slice's record>}`. The
 * durable file names the first generation that is not in it (`journal_generation`); at load, the slices are
 * restored from the file and the records of that generation and every later one replayed over them, in order.
 * Writing the file whole again (a compaction) starts a new generation at the instant its snapshot is taken;
 * once it is on disk, the generations the file and its `.bak` both hold are deleted.
 *
 * Every load starts a new generation, so a line cut short by a crash stays the last line of its file, where
 * it is recognised (it is not JSON) and skipped: it was never confirmed, since its fsync had not returned.
 */

import { open, readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { syncDirectory } from './atomic-json-file.js';

/** One line of the journal: a record a slice's journal gave, and the slice it belongs to. */
export interface JournalLine {
  slice: string;
  record: unknown;
}

/** Where the journal of the durable file at `durablePath` is kept: `data/store.durable.json` → `data/store.durable.journal-`. */
export function journalPrefixOf(durablePath: string): string {
  return `${durablePath.endsWith('.json') ? durablePath.slice(0, -'.json'.length) : durablePath}.journal-`;
}

/** The generation files of a journal, appended to one at a time. */
export interface JournalFiles {
  /** The generation appends go to. */
  readonly generation: number;
  /** Bytes appended since the durable file was last written whole (every generation from its own). */
  readonly bytesSinceSnapshot: number;
  /** Read every line of `from` and later generations, in order; the next appends go to a new generation. */
  load(from: number): Promise<JournalLine[]>;
  /**
   * Append `lines` to `generation` (default: the current one) and fsync it; resolves, once they are on disk,
   * with {@link bytesSinceSnapshot}. One append at a time per generation.
   */
  append(lines: readonly JournalLine[], generation?: number): Promise<number>;
  /** Appends from now on go to a new generation; returns it. */
  startGeneration(): number;
  /** The durable file now holds everything before generation `kept`: older generations go. */
  dropBefore(kept: number, snapshotGeneration: number): Promise<void>;
}

/** The journal on disk. */
export class DiskJournal implements JournalFiles {
  generation = 1;
  bytesSinceSnapshot = 0;
  private readonly prefix: string;
  /** Bytes per generation, as far as this run knows them. */
  private readonly sizes = new Map<number, number>();

  constructor(
    durablePath: string,
    private readonly logger: Logger,
  ) {
    this.prefix = journalPrefixOf(durablePath);
  }

  pathOf(generation: number): string {
    return `${this.prefix}${generation}.jsonl`;
  }

  /** The generations on disk, oldest first. */
  async generations(): Promise<number[]> {
    const directory = path.dirname(this.prefix);
    const base = path.basename(this.prefix);
    let names: string[];
    try {
      names = await readdir(directory);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw error;
    }
    const found: number[] = [];
    for (const name of names) {
      if (!name.startsWith(base) || !name.endsWith('.jsonl')) continue;
      const digits = name.slice(base.length, -'.jsonl'.length);
      if (/^[1-9][0-9]*$/.test(digits)) found.push(Number(digits));
    }
    return found.sort((a, b) => a - b);
  }

  async load(from: number): Promise<JournalLine[]> {
    const lines: JournalLine[] = [];
    const generations = await this.generations();
    for (const generation of generations) {
      if (generation < from) continue;
      const file = this.pathOf(generation);
      const text = await readFile(file, 'utf8');
      this.sizes.set(generation, Buffer.byteLength(text));
      this.bytesSinceSnapshot += Buffer.byteLength(text);
      const rows = text.split('\n');
      // The text ends with a newline when its last append was whole: the last row is then empty.
      for (let index = 0; index < rows.length; index++) {
        const row = rows[index]!;
        if (row === '') continue;
        const line = parseLine(row);
        if (line) {
          lines.push(line);
          continue;
        }
        if (index === rows.length - 1) {
          this.logger.warn(
            `the last line of the journal ${file} is unfinished (a write cut short by a crash, never confirmed); skipped it`,
          );
        } else {
          this.logger.error(
            `line ${index + 1} of the journal ${file} is not a journal record; skipped it, the lines after it are replayed`,
          );
        }
      }
    }
    this.generation = Math.max(from, generations.at(-1) ?? 0) + 1;
    return lines;
  }

  async append(lines: readonly JournalLine[], generation = this.generation): Promise<number> {
    const bytes = Buffer.from(lines.map((line) => `${JSON.stringify(line)}\n`).join(''), 'utf8');
    // Opened for each append, not held: an append costs an open more, but a file moved or a folder broken
    // under the bot fails the next append, as it would fail a write of the whole file, instead of writing
    // on to a file no restart will read.
    const handle = await open(this.pathOf(generation), 'a');
    try {
      let written = 0;
      while (written < bytes.byteLength) {
        const result = await handle.write(bytes, written, bytes.byteLength - written);
        written += result.bytesWritten;
      }
      await handle.datasync();
    } finally {
      await handle.close();
    }
    // A new file's name must survive a power cut too.
    if (!this.sizes.has(generation)) await syncDirectory(path.dirname(this.prefix));
    const size = (this.sizes.get(generation) ?? 0) + bytes.byteLength;
    this.sizes.set(generation, size);
    this.bytesSinceSnapshot += bytes.byteLength;
    return this.bytesSinceSnapshot;
  }

  startGeneration(): number {
    this.generation++;
    return this.generation;
  }

  async dropBefore(kept: number, snapshotGeneration: number): Promise<void> {
    this.bytesSinceSnapshot = 0;
    for (const [generation, size] of this.sizes) if (generation >= snapshotGeneration) this.bytesSinceSnapshot += size;
    for (const generation of await this.generations()) {
      if (generation >= kept) continue;
      try {
        await unlink(this.pathOf(generation));
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
      }
      this.sizes.delete(generation);
    }
  }
}

/**
 * The journal of a store kept in memory: lines are serialised as they would be for the disk (so a record that
 * is not JSON fails here too) and counted, then forgotten, since nothing is ever read back.
 */
export class MemoryJournal implements JournalFiles {
  generation = 1;
  bytesSinceSnapshot = 0;

  async load(): Promise<JournalLine[]> {
    return [];
  }

  async append(lines: readonly JournalLine[]): Promise<number> {
    let bytes = 0;
    for (const line of lines) bytes += Buffer.byteLength(`${JSON.stringify(line)}\n`);
    this.bytesSinceSnapshot += bytes;
    return this.bytesSinceSnapshot;
  }

  startGeneration(): number {
    this.generation++;
    return this.generation;
  }

  async dropBefore(): Promise<void> {
    this.bytesSinceSnapshot = 0;
  }
}

function parseLine(row: string): JournalLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(row);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { slice, record } = value as { slice?: unknown; record?: unknown };
  if (typeof slice !== 'string' || record === undefined) return undefined;
  return { slice, record };
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
