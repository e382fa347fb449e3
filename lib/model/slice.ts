/**
 * What a model slice may declare: its name, and optionally what it persists.
 * The model knows nothing of files; the host hands each persisting slice to the store.
 */

export interface Persistence<T = unknown> {
  /** A JSON-serialisable copy of what the slice keeps across restarts. */
  snapshot(): T;
  /** Put back what snapshot() returned (possibly from an older run). */
  restore(data: T): void;
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
