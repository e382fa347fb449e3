/**
 * The events kept for replay: a ring of the latest `buffer_events`, none older than `buffer_seconds`.
 *
 * An event is written for three kinds of reader (views): `public` (the public form), `token` (every channel,
 * without who users are) and `full`. Each view numbers the events it sees from 1 within the run, with no holes,
 * and an event's id in a view is `<run>-<number>` (`public`), `<run>-t<number>` or `<run>-f<number>`: the run is
 * the time the plugin started (base 36). So a reader who gives back the last id it saw is told exactly what it
 * missed of its view (the events after it that are still kept, and how many were dropped before them), and
 * nothing about the events it may not see: a public reader's ids count public events only, so they do not
 * say how many things happened in secret channels. An id of another run (the bot restarted) or of another view
 * (the reader's token changed) gets everything kept, after a gap whose size is unknown. Each view's frame is
 * serialized once, the first time a reader of that view needs it.
 */
import type { NetworkEvent, NetworkEventData } from './service-types.js';

export type View = 'public' | 'token' | 'full';

export const VIEWS: readonly View[] = ['public', 'token', 'full'];

const VIEW_INDEX: Readonly<Record<View, number>> = { public: 0, token: 1, full: 2 };
const VIEW_MARK: Readonly<Record<View, string>> = { public: '', token: 't', full: 'f' };

/** One kept event, with its number in each view and its frames by view (undefined: not made yet). */
export class JournalEntry {
  private readonly frames: (string | null | undefined)[] = [undefined, undefined, undefined];
  /** Its number in each view (public, token, full); 0 where the view sees nothing of it. */
  readonly numbers: [number, number, number] = [0, 0, 0];

  constructor(
    readonly run: string,
    /** Its place among every event of the run, from 1 (in no view's numbering: a view sees some of them only). */
    readonly number: number,
    readonly event: NetworkEvent,
  ) {}

  /** Its id in `view`; null where the view sees nothing of it. */
  idOf(view: View): string | null {
    const number = this.numbers[VIEW_INDEX[view]];
    return number === 0 ? null : `${this.run}-${VIEW_MARK[view]}${number}`;
  }

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
    const index = VIEW_INDEX[view];
    let frame = this.frames[index];
    if (frame === undefined) {
      const data = this.data(view);
      frame =
        data === null
          ? null
          : `id: ${this.idOf(view)!}\nevent: ${this.event.type}\ndata: ${JSON.stringify({
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
  /** Events of the view dropped between the reader's last and the first kept one; null when unknown. */
  lost: number | null;
}

/** An event id, parsed: its run, view and number. */
export interface EventId {
  run: string;
  view: View;
  number: number;
}

export class Journal {
  readonly run: string;
  private readonly ring: (JournalEntry | undefined)[];
  /** The index in `ring` of the oldest kept entry, and how many are kept. */
  private head = 0;
  private size = 0;
  /** The next number of each view (public, token, full). */
  private readonly next: [number, number, number] = [1, 1, 1];
  /** The next entry's place among all. */
  private sequence = 1;
  /** The latest entry of each view. */
  private readonly latest: (JournalEntry | undefined)[] = [undefined, undefined, undefined];

  constructor(
    private readonly limits: { events: number; seconds: number },
    private readonly clock: () => number = Date.now,
  ) {
    this.run = clock().toString(36);
    this.ring = new Array<JournalEntry | undefined>(limits.events);
  }

  /** Keep `event`; returns its entry. */
  append(event: NetworkEvent): JournalEntry {
    const entry = new JournalEntry(this.run, this.sequence++, event);
    for (const view of VIEWS) {
      const index = VIEW_INDEX[view];
      if (entry.data(view) === null) continue;
      entry.numbers[index] = this.next[index]!;
      this.next[index]!++;
      this.latest[index] = entry;
    }
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

  /** The place the next event will have among all: a reader who was sent everything was sent up to one less. */
  get nextNumber(): number {
    return this.sequence;
  }

  get length(): number {
    return this.size;
  }

  /** The id in `view` of the latest event that view sees; null before the first. */
  latestId(view: View): string | null {
    return this.latest[VIEW_INDEX[view]]?.idOf(view) ?? null;
  }

  /** Whether `id` has the form of an event id (`<run>-<number>`, `<run>-t<number>`, `<run>-f<number>`). */
  static parse(id: string): EventId | null {
    const match = /^([0-9a-z]{1,12})-([tf]?)([1-9]\d{0,15})$/.exec(id);
    if (!match) return null;
    const number = Number(match[3]);
    if (!Number.isSafeInteger(number)) return null;
    return { run: match[1]!, view: match[2] === 't' ? 'token' : match[2] === 'f' ? 'full' : 'public', number };
  }

  /** The replay in `view` after the event `id`: what is kept after it, and what was lost before that. */
  after(id: EventId, view: View): Resume {
    this.expire();
    const index = VIEW_INDEX[view];
    const numberOf = (entry: JournalEntry): number => entry.numbers[index]!;
    const next = this.next[index]!;
    const kept = this.from(0).filter((entry) => numberOf(entry) > 0);
    if (id.run !== this.run || id.view !== view) return { entries: kept, lost: null };
    // An id from the future (not given out yet) is taken as the latest: nothing to replay.
    const first = Math.min(id.number + 1, next);
    const oldest = kept.length > 0 ? numberOf(kept[0]!) : next;
    const entries = kept.filter((entry) => numberOf(entry) >= first);
    return { entries, lost: first >= oldest ? 0 : oldest - first };
  }

  /** The kept entries from the `skip`-th oldest on. */
  private from(skip: number): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (let index = skip; index < this.size; index++) entries.push(this.ring[(this.head + index) % this.ring.length]!);
    return entries;
  }
}
