/**
 * A lowdb adapter for one JSON file that is never seen half-written: each write goes to a
 * temp file in the same directory, is fsynced, and renamed over the target; the file it
 * replaces is kept as `<path>.bak`. The text is streamed to the temp file in pieces (see
 * json-pieces.ts), so a big document never holds the event loop for long.
 */

import { copyFile, link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';
import { errorMessage } from '../logger.js';
import type { HoldMeter } from './hold-meter.js';
import { jsonPieces, writePieces, type JsonPiece } from './json-pieces.js';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The file exists but cannot be used: unreadable, not JSON, or not a JSON object. */
export class UnusableFileError extends Error {
  constructor(
    readonly filePath: string,
    /** What is wrong, e.g. `not JSON (Unexpected token ...)`. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${filePath} is ${reason}`, options);
    this.name = 'UnusableFileError';
  }
}

/**
 * lowdb adapter for a file holding one JSON object, written atomically as compact JSON (no
 * indentation: it made the file 2.5 times bigger and its writing slower). Files written with
 * indentation by earlier versions read the same.
 *
 * `write(data)` takes any JSON-able value; a `PiecewiseJson` (json-pieces.ts) inside it is written from its
 * own pieces.
 *
 * `read()` resolves to null when the file does not exist and throws {@link UnusableFileError}
 * when it exists but is not a JSON object. One instance may write at a time: it uses fixed
 * temp names (`<path>.tmp`, `<path>.bak.tmp`), which also means a temp file left by a killed
 * process is simply overwritten by the next write.
 */
export class AtomicJsonFile implements Adapter<unknown> {
  /** Where the file this write replaces is kept. */
  readonly backupPath: string;
  private readonly tempPath: string;
  private readonly backupTempPath: string;

  constructor(readonly filePath: string) {
    this.backupPath = `${filePath}.bak`;
    this.tempPath = `${filePath}.tmp`;
    this.backupTempPath = `${filePath}.bak.tmp`;
  }

  async read(): Promise<JsonObject | null> {
    let text: string;
    try {
      text = await readFile(this.filePath, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw new UnusableFileError(this.filePath, `unreadable (${errorMessage(error)})`, { cause: error });
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new UnusableFileError(this.filePath, `not JSON (${errorMessage(error)})`, { cause: error });
    }
    if (!isJsonObject(data)) {
      throw new UnusableFileError(
        this.filePath,
        `not a JSON object (found ${Array.isArray(data) ? 'an array' : JSON.stringify(data)})`,
      );
    }
    return data;
  }

  /** The file's size in bytes; undefined when it cannot be read. */
  async size(): Promise<number | undefined> {
    return stat(this.filePath).then(
      (info) => info.size,
      () => undefined,
    );
  }

  /** `meter`, when given, learns the longest the write held the event loop (see {@link HoldMeter}). */
  async write(data: unknown, meter?: HoldMeter): Promise<void> {
    try {
      await writeDurably(this.tempPath, withNewline(jsonPieces(data)), meter);
      await this.keepBackup();
      await rename(this.tempPath, this.filePath);
    } catch (error) {
      await removeIfPresent(this.tempPath).catch(() => undefined);
      throw error;
    }
    await syncDirectory(path.dirname(this.filePath));
  }

  /**
   * Point `<path>.bak` at the current file before it is replaced. A hard link shares the
   * current file's complete contents without copying; the swap via a temp name keeps `.bak`
   * complete at every instant.
   */
  private async keepBackup(): Promise<void> {
    await removeIfPresent(this.backupTempPath);
    try {
      await link(this.filePath, this.backupTempPath);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return; // first write: nothing to keep yet
      // Filesystems without hard links: copy instead.
      await copyFile(this.filePath, this.backupTempPath);
      await syncFile(this.backupTempPath);
    }
    await rename(this.backupTempPath, this.backupPath);
  }
}

function* withNewline(pieces: Iterable<JsonPiece>): Generator<JsonPiece, void, undefined> {
  yield* pieces;
  yield '\n';
}

async function writeDurably(filePath: string, pieces: Iterable<JsonPiece>, meter?: HoldMeter): Promise<void> {
  meter?.pause();
  const handle = await open(filePath, 'w');
  meter?.resume();
  try {
    await writePieces(handle, pieces, meter);
    meter?.pause();
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncFile(filePath: string): Promise<void> {
  const handle = await open(filePath, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Make the renames durable. Platforms that cannot fsync a directory (Windows) are skipped. */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
  } finally {
    await handle?.close();
  }
}

async function removeIfPresent(filePath: string): Promise<void> {
  try {
    await unlink(filePath);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}
