/**
 * Calendar days and hours in an IANA time zone, for counts kept "per day":
 * the day rolls over at midnight in that zone (UTC by default).
 */

/** Where a moment falls in a time zone: its calendar date and its hour of the day. */
export interface ZonedTime {
  /** `YYYY-MM-DD` */
  date: string;
  /** 0–23 */
  hour: number;
}

/** Every UTC offset in use is a whole number of quarter hours, so one quarter hour maps to one date and hour. */
const QUARTER_HOUR_MS = 15 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export class TimeZone {
  private readonly format: Intl.DateTimeFormat;
  private cachedQuarter = NaN;
  private cached: ZonedTime = { date: '', hour: 0 };

  /** Throws naming the zone when the runtime does not know it. */
  constructor(readonly name: string) {
    try {
      this.format = new Intl.DateTimeFormat('en-US', {
        timeZone: name,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
      });
    } catch {
      throw new Error(`"${name}" is not a known IANA time zone; use a name like "UTC" or "Europe/Berlin"`);
    }
  }

  /** The date and hour of `time` in this zone. */
  at(time: Date): ZonedTime {
    const quarter = Math.floor(time.getTime() / QUARTER_HOUR_MS);
    if (quarter !== this.cachedQuarter) {
      const parts = new Map(this.format.formatToParts(time).map((part) => [part.type, part.value]));
      this.cached = {
        date: `${parts.get('year')}-${parts.get('month')}-${parts.get('day')}`,
        hour: Number(parts.get('hour')) % 24,
      };
      this.cachedQuarter = quarter;
    }
    return this.cached;
  }
}

/** `YYYY-MM-DD` moved by whole calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
