/**
 * The network's history: a point of its numbers (users, channels, operators,
 * servers, max users) at every interval. Points are kept at full resolution
 * for a while, then as hourly points, then as daily points, then dropped.
 *
 * Aggregation, both when points are thinned out and when a query asks for
 * buckets, takes the maximum of each number within the bucket (the peak), and
 * the bucket's start as its time. A maximum of maxima is still the maximum, so
 * thinning out loses no peak. A number the network did not report is null and
 * does not count; a bucket where it is null throughout keeps null.
 */
import type { ModelSlice, Persistence } from '../../../lib/sdk.js';
import type { HistoryPoint } from '../contract.js';

export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;

/** The shape of a point is the contract of the service `stats.history` (the SDK's). */
export type { HistoryPoint };

/** The numbers of a point, in the order the store file keeps them after the time. */
const FIELDS = ['users', 'channels', 'operators', 'servers', 'maxUsers'] as const;

export interface HistoryRetention {
  /** How long points stay at full resolution. */
  fullMs: number;
  /** How long (from now) hourly points are kept; older ones become daily points. */
  hourlyMs: number;
  /** How long (from now) daily points are kept. */
  dailyMs: number;
}

type StoredPoint = [number, ...(number | null)[]];

/** The slice's file format: each point as `[time_ms, users, channels, operators, servers, max_users]`. */
interface StoredHistory {
  full: StoredPoint[];
  hourly: StoredPoint[];
  daily: StoredPoint[];
}

function maxOf(left: number | null, right: number | null): number | null {
  if (left === null) return right;
  if (right === null) return left;
  return Math.max(left, right);
}

/** Fold `point` into `into` (the bucket's point). */
function mergeInto(into: HistoryPoint, point: HistoryPoint): void {
  for (const field of FIELDS) into[field] = maxOf(into[field], point[field]);
}

/**
 * Points grouped into buckets of `bucketMs` (aligned to the epoch, so daily buckets start at
 * midnight UTC), each the maximum of every number, timed at the bucket's start. Sorted input.
 */
export function bucketPoints(points: readonly HistoryPoint[], bucketMs: number): HistoryPoint[] {
  const buckets: HistoryPoint[] = [];
  for (const point of points) {
    const start = Math.floor(point.time / bucketMs) * bucketMs;
    const last = buckets.at(-1);
    if (last && last.time === start) mergeInto(last, point);
    else buckets.push({ ...point, time: start });
  }
  return buckets;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function pointsFrom(stored: unknown): HistoryPoint[] {
  if (!Array.isArray(stored)) return [];
  const points: HistoryPoint[] = [];
  for (const entry of stored) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'number' || !Number.isFinite(entry[0])) continue;
    const [time, users, channels, operators, servers, maxUsers] = entry as unknown[];
    points.push({
      time: time as number,
      users: numberOrNull(users),
      channels: numberOrNull(channels),
      operators: numberOrNull(operators),
      servers: numberOrNull(servers),
      maxUsers: numberOrNull(maxUsers),
    });
  }
  return points.sort((a, b) => a.time - b.time);
}

function storedOf(points: readonly HistoryPoint[]): StoredPoint[] {
  return points.map((point) => [point.time, ...FIELDS.map((field) => point[field])]);
}

export class HistorySlice implements ModelSlice {
  readonly name = 'history';
  readonly persistence: Persistence<StoredHistory>;
  private full: HistoryPoint[] = [];
  private hourly: HistoryPoint[] = [];
  private daily: HistoryPoint[] = [];

  constructor(private readonly retention: HistoryRetention) {
    this.persistence = { snapshot: () => this.snapshot(), restore: (data) => this.restore(data) };
  }

  /** Points kept, at every resolution. */
  get size(): number {
    return this.full.length + this.hourly.length + this.daily.length;
  }

  /** Add a point, then thin out what has aged past each resolution. */
  add(point: HistoryPoint): void {
    const last = this.full.at(-1);
    this.full.push({ ...point });
    // A clock that stepped back must not leave the points out of order.
    if (last && last.time > point.time) this.full.sort((a, b) => a.time - b.time);
    this.compact(point.time);
  }

  /**
   * Move full-resolution points older than the full window into hourly points, hourly points
   * older than the hourly window into daily points, and drop daily points past the daily window.
   */
  compact(now: number): void {
    const { fullMs, hourlyMs, dailyMs } = this.retention;
    this.hourly = this.thin(this.full, now - fullMs, HOUR_MS, this.hourly, (rest) => (this.full = rest));
    this.daily = this.thin(this.hourly, now - hourlyMs, DAY_MS, this.daily, (rest) => (this.hourly = rest));
    const dailyCutoff = now - dailyMs;
    const firstKept = this.daily.findIndex((point) => point.time >= dailyCutoff);
    if (firstKept !== 0) this.daily = firstKept === -1 ? [] : this.daily.slice(firstKept);
  }

  /** Points from `since` to `until` (inclusive, ms), oldest first, each at the resolution it is kept at. */
  query(since = -Infinity, until = Infinity): HistoryPoint[] {
    const points = [...this.daily, ...this.hourly, ...this.full].filter(
      (point) => point.time >= since && point.time <= until,
    );
    // Each resolution holds older points than the next (a bucket starts before the points it is
    // followed by), so the list is in order already, unless a stored file was not.
    if (points.some((point, index) => index > 0 && points[index - 1]!.time > point.time)) {
      points.sort((a, b) => a.time - b.time);
    }
    return points.map((point) => ({ ...point }));
  }

  /** The newest point, if there is one. */
  latest(): HistoryPoint | undefined {
    const last = this.full.at(-1) ?? this.hourly.at(-1) ?? this.daily.at(-1);
    return last ? { ...last } : undefined;
  }

  /** Points of `from` older than `cutoff` merged into `into` per bucket; `keep` receives the rest of `from`. */
  private thin(
    from: HistoryPoint[],
    cutoff: number,
    bucketMs: number,
    into: HistoryPoint[],
    keep: (rest: HistoryPoint[]) => void,
  ): HistoryPoint[] {
    let aged = 0;
    while (aged < from.length && from[aged]!.time < cutoff) aged++;
    if (aged === 0) return into;
    const merged = [...into];
    for (const bucket of bucketPoints(from.slice(0, aged), bucketMs)) {
      const last = merged.at(-1);
      if (last && last.time === bucket.time) mergeInto(last, bucket);
      else merged.push(bucket);
    }
    keep(from.slice(aged));
    return merged;
  }

  private snapshot(): StoredHistory {
    return { full: storedOf(this.full), hourly: storedOf(this.hourly), daily: storedOf(this.daily) };
  }

  private restore(data: StoredHistory): void {
    if (typeof data !== 'object' || data === null) {
      throw new Error('the "history" slice must be an object with "full", "hourly" and "daily" arrays');
    }
    this.full = pointsFrom(data.full);
    this.hourly = pointsFrom(data.hourly);
    this.daily = pointsFrom(data.daily);
  }
}
