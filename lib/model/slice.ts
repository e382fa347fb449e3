/**
 * What a model slice may declare: its name, and optionally what it persists.
 * The model knows nothing of files; the host hands each persisting slice to the store.
 */

export interface Persistence<T = unknown> {
  /** A JSON-serialisable copy of what the slice keeps across restarts. */
  snapshot(): T;
  /** Put back what snapshot() returned (possibly from an older run). */
  restore(data: T): void;
  /**
   * Optional, for big slices: the JSON text of what snapshot() would return, in pieces (strings,
   * or UTF-8 bytes), taken lazily. The store writes them to the file a few at a time and lets
   * the event loop run in between, so producing one piece must be quick (well under a
   * millisecond) and the slice may change between two pieces. Each record should then be read
   * from the model at one moment, so that every record in the file is whole and consistent;
   * the change itself reaches the file with the next write, because a change marks the store
   * dirty again. The bytes of a piece are copied before the next piece is taken, so one buffer
   * may serve every piece.
   */
  snapshotJson?(): Iterable<string | Uint8Array>;
  /**
   * Its changes are confirmed to people (a token created, a grant, a revocation), so a crash after the
   * confirmation must not undo them. The store keeps such slices in a small file of their own, which a
   * plugin has written at once with `context.store.persisted()` before it confirms a change. Keep
   * durable slices small, or give them a {@link journal}: without one, each such write rewrites all of them.
   */
  durable?: boolean;
  /**
   * For a durable slice: its changes as records, which the store appends to a journal, so that a confirmed
   * change costs the change, not the slice; at startup they are replayed over the last snapshot. See the
   * store's `SliceJournal` for what drain() and replay() must do.
   */
  journal?: {
    /** The changes since the last call, as JSON records, in the order replay() must apply them. */
    drain(): unknown[];
    /** Apply one record drain() gave (possibly in an older run), without announcing a change. */
    replay(record: unknown): void;
  };
}

/** A change to the model, emitted after it happened. */
export interface ModelChange {
  /** The slice that changed (`users`, `channels`, `servers`, `network`, ...). */
  slice: string;
  /** What happened, in the slice's own words (`join`, `part`, `rename`, `synced`, ...). */
  kind: string;
  /** The name of the thing that changed, when there is one (a nick, a channel). */
  name?: string;
}

export interface ModelSlice {
  readonly name: string;
  readonly persistence?: Persistence;
}
