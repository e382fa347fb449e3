/**
 * What a store on disk holds, as a restart would find it: the durable slices are in their file and in its
 * journal, so a test that asks "is this on disk?" reads both.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../lib/logger.js';
import type { ModelSlice } from '../../lib/model/slice.js';
import { journalPrefixOf } from '../../lib/store/journal.js';
import { Store, durablePathOf } from '../../lib/store/store.js';

/** The journal files of the store at `storePath`, oldest first. */
export function journalFiles(storePath: string): string[] {
  const prefix = journalPrefixOf(durablePathOf(storePath));
  return readdirSync(path.dirname(prefix))
    .filter((name) => name.startsWith(path.basename(prefix)))
    .map((name) => path.join(path.dirname(prefix), name))
    .sort((a, b) => generationOf(a) - generationOf(b));
}

function generationOf(file: string): number {
  return Number(/journal-(\d+)\.jsonl$/.exec(file)?.[1] ?? 0);
}

/** The text of every file of the store at `storePath`: the store file, the durable file and its journal. */
export function storedText(storePath: string): string {
  return [storePath, durablePathOf(storePath), ...journalFiles(storePath)]
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
}

/**
 * `slice` restored as a restart would restore it from the store at `storePath` (its file and journal), read
 * without writing anything: the store it uses is never closed.
 */
export async function restoredFromDisk<T extends ModelSlice>(storePath: string, slice: T): Promise<T> {
  const store = new Store({ path: storePath, logger: createLogger({ level: 'error', sink: () => undefined }) });
  await store.load();
  const persistence = slice.persistence!;
  store.register({
    key: slice.name,
    durable: persistence.durable === true,
    snapshot: () => persistence.snapshot(),
    restore: (data) => persistence.restore(data),
    ...(persistence.journal ? { journal: persistence.journal } : {}),
  });
  return slice;
}
