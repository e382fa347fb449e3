/**
 * Each channel's record: the most users the collector has seen in it at once, and when it first saw that
 * many. Kept for every channel the model knows, whether the bot sits in it (its members, counted at each
 * JOIN) or not (the count LIST gives at each sync), and kept across restarts.
 *
 * A record only changes when a channel's count goes past it, which a busy network does far less often than
 * it sends lines: the store hears of the changes at the owner's pace, with the activity counts. A channel
 * that empties is gone from the model; its record stays, so that it is there when the channel forms again,
 * until {@link ChannelRecordsSlice.forget} drops the records of channels that have been gone, and unbeaten,
 * for the retention.
 */
import { detached, type ModelSlice, type Persistence } from '../../../lib/sdk.js';
import type { ChannelRecord } from '../contract.js';

/** The shape of a record is the contract of the service `stats.records` (the SDK's). */
export type { ChannelRecord };

/** The slice's file format: each record as `[name, users, at_ms]`, and the day records were last thinned out. */
interface StoredRecords {
  forgotten_on: string | null;
  channels: [string, number, number][];
}

/** Records in one piece of the store file's text. */
const RECORDS_PER_PIECE = 1000;

export class ChannelRecordsSlice implements ModelSlice {
  readonly name = 'channel-records';
  readonly persistence: Persistence<StoredRecords>;
  private readonly byKey = new Map<string, ChannelRecord>();
  private changedSinceTaken = false;
  /** The day (`YYYY-MM-DD`) {@link forget} last ran on; stored, so that a restart does not run it again that day. */
  private forgottenOn: string | null = null;

  /** @param fold folds channel names as the model does (the network's CASEMAPPING) */
  constructor(private readonly fold: (name: string) => string) {
    this.persistence = {
      snapshot: () => this.snapshot(),
      restore: (data) => this.restore(data),
      snapshotJson: () => this.pieces(),
    };
  }

  /** Channels with a record. */
  get size(): number {
    return this.byKey.size;
  }

  /** The record of channel `name`, if the collector ever saw users in it (and has not forgotten it). */
  channel(name: string): Readonly<ChannelRecord> | undefined {
    return this.byKey.get(this.fold(name));
  }

  /**
   * Channel `name` has `users` now: a new record when that is more than its record. Returns whether it was.
   * @param key `name` folded, when the caller has it already
   */
  note(name: string, users: number, at: number, key = this.fold(name)): boolean {
    if (!(users > 0)) return false;
    const record = this.byKey.get(key);
    if (record) {
      if (users <= record.users) return false;
      record.users = users;
      record.at = at;
      record.name = name;
    } else {
      this.byKey.set(detached(key), { name, users, at });
    }
    this.changedSinceTaken = true;
    return true;
  }

  /** Whether a record changed since the last call (the owner announces changes at its own pace). */
  takeChanges(): boolean {
    const changed = this.changedSinceTaken;
    this.changedSinceTaken = false;
    return changed;
  }

  /**
   * Once a day (`date`, the owner's calendar day): drop the records of channels that are gone now (`exists`
   * says no) and were set before `before` (ms). A channel that is there keeps its record however old it is.
   * Returns how many were dropped, or null when it ran on `date` already.
   */
  forget(date: string, exists: (key: string) => boolean, before: number): number | null {
    if (this.forgottenOn === date) return null;
    this.forgottenOn = date;
    let dropped = 0;
    for (const [key, record] of this.byKey) {
      if (record.at < before && !exists(key)) {
        this.byKey.delete(key);
        dropped++;
      }
    }
    // The day it ran is stored too: a restart later that day must not run it again.
    this.changedSinceTaken = true;
    return dropped;
  }

  private snapshot(): StoredRecords {
    const channels: [string, number, number][] = [];
    for (const record of this.byKey.values()) channels.push([record.name, record.users, record.at]);
    return { forgotten_on: this.forgottenOn, channels };
  }

  /**
   * The text of {@link snapshot}, {@link RECORDS_PER_PIECE} records at a time, each batch written by
   * `JSON.stringify` (the store's general encoder took several times as long), so that a piece is well under
   * a millisecond. A record that changes between two pieces is written whole, as it is when its piece is taken.
   */
  private *pieces(): Generator<string, void, undefined> {
    yield `{"forgotten_on":${JSON.stringify(this.forgottenOn)},"channels":[`;
    let batch: [string, number, number][] = [];
    let first = true;
    const text = (): string => {
      const json = JSON.stringify(batch);
      const piece = `${first ? '' : ','}${json.slice(1, -1)}`;
      first = false;
      batch = [];
      return piece;
    };
    for (const record of this.byKey.values()) {
      batch.push([record.name, record.users, record.at]);
      if (batch.length === RECORDS_PER_PIECE) yield text();
    }
    yield `${batch.length > 0 ? text() : ''}]}`;
  }

  /** Put back stored records; a malformed entry is skipped, so one bad record never costs the rest. */
  private restore(data: StoredRecords): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.channels)) {
      throw new Error('the "channel-records" slice must be an object with a "channels" array');
    }
    this.byKey.clear();
    this.forgottenOn = typeof data.forgotten_on === 'string' ? data.forgotten_on : null;
    for (const entry of data.channels as unknown[]) {
      if (!Array.isArray(entry)) continue;
      const [name, users, at] = entry as unknown[];
      if (typeof name !== 'string' || !Number.isInteger(users) || (users as number) <= 0) continue;
      if (typeof at !== 'number' || !Number.isFinite(at)) continue;
      const key = this.fold(name);
      const known = this.byKey.get(key);
      // Two names that fold alike (a changed CASEMAPPING): the higher record stands.
      if (!known || known.users < (users as number)) this.byKey.set(key, { name, users: users as number, at });
    }
  }
}
