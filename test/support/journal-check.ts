/**
 * For the journals of durable slices: a seeded random run, and the check that the slice's snapshot as the store
 * last took it, plus the records drained since, replayed into a fresh slice, give the slice as it is now.
 */
import type { ModelSlice } from '../../lib/model/slice.js';

/** A small deterministic random source (an LCG): the same run every time. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Follows `live` as the store does: `drain()` as at an append, `compact()` as at a compaction (a drain and a
 * snapshot in one turn), and `copy()`: a fresh slice from `fresh()`, restored from the last snapshot with the
 * records drained since replayed, whose snapshot should equal the live one's.
 */
export function journalFollower(live: ModelSlice, fresh: () => ModelSlice) {
  const persistence = live.persistence!;
  let base: unknown = persistence.snapshot();
  let records: unknown[] = [];
  return {
    drain(): void {
      records.push(...persistence.journal!.drain());
    },
    compact(): void {
      persistence.journal!.drain();
      base = persistence.snapshot();
      records = [];
    },
    /** The live slice's snapshot and the copy's, to compare. */
    compare(): { live: unknown; copy: unknown } {
      records.push(...persistence.journal!.drain());
      const copy = fresh().persistence!;
      copy.restore(structuredClone(base));
      for (const record of structuredClone(records)) copy.journal!.replay(record);
      return { live: persistence.snapshot(), copy: copy.snapshot() };
    },
  };
}
