/**
 * The events kept for replay: a ring of the latest `buffer_events`, none older than `buffer_seconds`. Each
 * event gets an id, `<run>-<number>`: the run is the time the plugin started (base 36), the number counts
 * from 1 within the run, with no holes. So a reader who gives back the last id it saw is told exactly what it
 * missed: the events after it that are still kept, and how many were dropped before them; an id of another run
 * (the bot restarted) gets everything kept, after a gap whose size is unknown.
 *
 * An event is written for three kinds of reader (views): `public` (the public form), `token` (the full form
 * without who users are) and `full`. Each is serialized once, the first time a reader of that view needs it.
 */
import type { NetworkEvent, NetworkEventData } from './service-types.js';

export type View = 'public' | 'token' | 'full';

/** One kept event, with its frames by view (undefined: not made yet; null: nothing of it for that view). */
export class JournalEntry {
  private readonly frames: (string | null | undefined)[] = [undefined, undefined, undefined];

  constructor(
    readonly id: string,
    readonly number: number,
    readonly event: NetworkEvent,
  ) {}

  /** The token view's data, once made: the full data without `identity`. */
  private tokenData: NetworkEventData | null | undefined;

  /** What a reader of `view` sees of the event; null when nothing. */
  data(view: View): NetworkEventData | null {
    const { data, publicData } = this.event;
    if (view === 'public') return publicData;
    if (view === 'full' || data === null) return data;
    if (this.event.tokenData !== undefined) return this.event.tokenData;
    if (!('identity' in data)) return data;
    if (this.tokenData === undefined) {
      const { identity: _identity, ...rest } = data;
      // An account change is nothing but who a user is.
      this.tokenData = this.event.type === 'account' ? null : rest;
    }
    return this.tokenData;
  }

  /** The event as a Server-Sent Events frame for `view`; null when the view sees nothing of it. */
  frame(view: View): string | null {
    const index = view === 'public' ? 0 : view === 'token' ? 1 : 2;
    let frame = this.frames[index];
    if (frame === undefined) {
      const data = this.data(view);
      frame =
        data === null
          ? null
          : `id: ${this.id}\nevent: ${this.event.type}\ndata: ${JSON.stringify({
              time: new Date(this.event.time).toISOString(),
              ...data,
            })}\n\n`;
      this.frames[index] = frame;
    }
    return frame;
  }
}

/** Where a replay starts: the entries after the reader's last, and how many it missed before them. */
export interface Resume {
  entries: JournalEntry[];
  /** Events dropped between the reader's last and the first kept one; null when unknown (another run). */
  lost: number | null;
}

export class Journal {
  readonly run: string;
  private readonly ring: (JournalEntry | undefined)[];
  /** The index in `ring` of the oldest kept entry, and how many are kept. */
  private head = 0;
  private size = 0;
  private next = 1;

  constructor(
    private readonly limits: { events: number; seconds: number },
    private readonly clock: () => number = Date.now,
  ) {
    this.run = clock().toString(36);
    this.ring = new Array<JournalEntry | undefined>(limits.events);
  }

  /** Keep `event`; returns its entry. */
  append(event: NetworkEvent): JournalEntry {
    const entry = new JournalEntry(`${this.run}-${this.next}`, this.next, event);
    this.next++;
    if (this.size === this.ring.length) this.dropOldest();
    this.ring[(this.head + this.size) % this.ring.length] = entry;
    this.size++;
    return entry;
  }

  /** Drop what is older than `buffer_seconds`. */
  expire(): void {
    const oldest = this.clock() - this.limits.seconds * 1000;
    while (this.size > 0 && this.ring[this.head]!.event.time < oldest) this.dropOldest();
  }

  private dropOldest(): void {
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.ring.length;
    this.size--;
  }

  /** The number the next event will get: a reader who saw everything has seen up to one less. */
  get nextNumber(): number {
    return this.next;
  }

  get length(): number {
    return this.size;
  }

  /** The oldest kept event's number (the next one's when none is kept). */
  private get oldestNumber(): number {
    return this.size === 0 ? this.next : this.ring[this.head]!.number;
  }

  /**
   * Whether `id` has the form of an event id (`<run>-<number>`); its run and number if so.
   */
  static parse(id: string): { run: string; number: number } | null {
    const match = /^([0-9a-z]{1,12})-([1-9]\d{0,15})$/.exec(id);
    if (!match) return null;
    const number = Number(match[2]);
    return Number.isSafeInteger(number) ? { run: match[1]!, number } : null;
  }

  /** The replay after the event `id` (parsed): what is kept after it, and what was lost before that. */
  after(id: { run: string; number: number }): Resume {
    this.expire();
    const oldest = this.oldestNumber;
    if (id.run !== this.run) return { entries: this.from(oldest), lost: null };
    // An id from the future (not given out yet) is taken as the latest: nothing to replay.
    const first = Math.min(id.number + 1, this.next);
    if (first >= oldest) return { entries: this.from(first), lost: 0 };
    return { entries: this.from(oldest), lost: oldest - first };
  }

  /** The kept entries from number `first` on. */
  private from(first: number): JournalEntry[] {
    const entries: JournalEntry[] = [];
    const skip = Math.max(0, first - this.oldestNumber);
    for (let index = skip; index < this.size; index++) entries.push(this.ring[(this.head + index) % this.ring.length]!);
    return entries;
  }
}
