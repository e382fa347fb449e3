/**
 * A store file kept in memory ({@link StoreOptions.memory}): written as the JSON text the file on disk
 * would get, pieces and all, so that a slice's snapshot is taken and serialised as it would be for the
 * disk, but nothing is read from or written to it.
 */

import type { Adapter } from 'lowdb';
import type { JsonObject } from './atomic-json-file.js';
import { jsonPieces } from './json-pieces.js';

export class MemoryJsonFile implements Adapter<unknown> {
  /** Named as on disk, for messages; a file in memory is never unusable, so no backup is ever read. */
  readonly backupPath: string;
  /** The file's text as last written; null before the first write. */
  private text: string | null = null;

  constructor(readonly filePath: string) {
    this.backupPath = `${filePath}.bak`;
  }

  async read(): Promise<JsonObject | null> {
    return this.text === null ? null : (JSON.parse(this.text) as JsonObject);
  }

  async write(data: unknown): Promise<void> {
    // A piece of bytes may share its buffer with the next one: each is copied as it comes.
    const bytes: Buffer[] = [];
    for (const piece of jsonPieces(data)) bytes.push(Buffer.from(piece));
    this.text = `${Buffer.concat(bytes).toString('utf8')}\n`;
  }

  /** The file's size in bytes, as the disk would have it. */
  async size(): Promise<number | undefined> {
    return this.text === null ? undefined : Buffer.byteLength(this.text);
  }
}
