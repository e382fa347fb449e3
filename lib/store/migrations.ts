/**
 * The store file's schema versions and the steps between them.
 *
 * When a change to any slice's persisted shape would make an older file load wrongly, raise
 * {@link CURRENT_SCHEMA_VERSION} by one and append the step that turns the old data into the new.
 * The store has two files (the durable slices have their own); each is migrated on its own, so a
 * step sees the slices of one file at a time and must leave alone keys it does not find.
 */

/** One step of the store file's schema, from version `from` to `from + 1`. */
export interface Migration {
  /** The schema version this step reads. */
  from: number;
  /** Returns the file's `slices` for version `from + 1` (called once per store file). */
  migrate(slices: Record<string, unknown>): Record<string, unknown>;
}

/** The schema version this build writes. */
export const CURRENT_SCHEMA_VERSION = 2;

/** Every step up to {@link CURRENT_SCHEMA_VERSION}, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  // 1 → 2: the durable file has a journal beside it (journal.ts). The slices are as they were; the version
  // rises so that a build of version 1, which knows nothing of the journal, refuses the file instead of
  // loading it without the changes in its journal.
  { from: 1, migrate: (slices) => slices },
];
