/**
 * What waits for each webhook endpoint, kept across restarts: the batch being delivered (its id and events fixed
 * until it is taken, so a receiver that saw it before sees the same message again) and the events behind it, as
 * the endpoint's view shows them. A durable model slice (`webhooks`, in the store's durable file): its changes go
 * to the store's journal, fsynced with the store's next write (within `store`'s debounce, a second by default,
 * and before each new batch is first sent), so a stop loses nothing and a crash at most the events of that last
 * moment. Bounded per endpoint by `max_queued_events`: over it, the oldest events not yet in a batch are dropped,
 * and the next batch says how many (`dropped`).
 *
 * Each endpoint's events are numbered (`seq`) from 1 across restarts, and those not yet in a batch are always
 * the numbers from the oldest to the newest. So the journal needs one record per endpoint per write, however
 * many events came and went: the number of the oldest still waiting, the ones added since, the batch if it
 * changed, and the count of dropped events. Replayed over the state before it, that gives the state after it.
 */
import type { ModelSlice, Persistence } from '../../lib/sdk.js';
import type { View } from './journal.js';
import type { NetworkEventType } from './service-types.js';

/** One event for an endpoint, as its view shows it: its fields are the file's format. */
export interface QueuedEvent {
  /** Counts from 1 per endpoint, across restarts. */
  seq: number;
  /** The event's id, as the stream gives it (`<run>-<number>`). */
  id: string;
  type: NetworkEventType;
  /** When it happened, ms since the epoch. */
  time: number;
  data: Readonly<Record<string, unknown>>;
}

/** One message: the events of one POST, retried as they are until a 2xx answer. */
export interface Batch {
  /** The `webhook-id`. */
  id: string;
  /** When it was made, ms since the epoch: the payload's `timestamp`. */
  made: number;
  /** Events dropped (queue full) between the previous batch and this one's first. */
  dropped: number;
  events: QueuedEvent[];
}

/** What the slice needs to know of an endpoint. */
export interface QueuedEndpoint {
  name: string;
  view: View;
  types: ReadonlySet<string> | null;
  maxQueuedEvents: number;
}

/** One endpoint's state as the file keeps it (snapshot), and as a journal record says it changed. */
interface StoredQueue {
  view: View;
  next_seq: number;
  dropped: number;
  batch: Batch | null;
  events: QueuedEvent[];
}

interface QueueRecord {
  endpoint: string;
  view: View;
  /** The number of the oldest event not in a batch (the next one's when none waits). */
  first: number;
  next_seq: number;
  dropped: number;
  /** The batch now, when it changed since the last record (null: delivered, none made since). */
  batch?: Batch | null;
  /** The events queued since the last record that still wait. */
  add: QueuedEvent[];
}

const SNAPSHOT_VERSION = 1;

/** The queue of one endpoint. */
export class EndpointQueue {
  nextSeq = 1;
  batch: Batch | null = null;
  /** Dropped since the last batch was made. */
  dropped = 0;
  /** The events not in a batch, oldest first, from `head` on. */
  private waiting: QueuedEvent[] = [];
  /** When each was queued in this run (0 for those restored: they have waited long enough). */
  private queuedAt: number[] = [];
  private head = 0;
  /** Changed since the journal last took its record; the batch too. */
  touched = false;
  batchChanged = false;
  /** `nextSeq` when the journal last took a record. */
  recordedSeq = 1;

  constructor(readonly endpoint: QueuedEndpoint) {}

  /** Events waiting, in the batch and behind it. */
  get size(): number {
    return this.waitingCount + (this.batch?.events.length ?? 0);
  }

  /** Events waiting behind the batch. */
  get waitingCount(): number {
    return this.waiting.length - this.head;
  }

  /** When the oldest event not in a batch was queued (ms; 0 when restored); undefined when none waits. */
  get oldestQueuedAt(): number | undefined {
    return this.head < this.queuedAt.length ? this.queuedAt[this.head] : undefined;
  }

  /** When the oldest undelivered event happened (ms since the epoch); undefined when there is none. */
  get oldestTime(): number | undefined {
    return this.batch?.events[0]?.time ?? this.waiting[this.head]?.time;
  }

  /** The number of the oldest event not in a batch (the next one's when none waits). */
  get first(): number {
    return this.waiting[this.head]?.seq ?? this.nextSeq;
  }

  /** Queue an event (it gets its number); returns how many of the oldest were dropped to stay in the bound. */
  push(event: Omit<QueuedEvent, 'seq'>, now: number): number {
    this.waiting.push({ seq: this.nextSeq++, ...event });
    this.queuedAt.push(now);
    this.touched = true;
    return this.keepBound();
  }

  /** Drop the oldest events not in a batch while there are more than the bound; returns how many. */
  keepBound(): number {
    const over = Math.min(this.size - this.endpoint.maxQueuedEvents, this.waitingCount);
    if (over <= 0) return 0;
    this.head += over;
    this.dropped += over;
    this.touched = true;
    this.compact();
    return over;
  }

  /** Make the next batch from up to `most` waiting events. */
  seal(id: string, made: number, most: number): Batch {
    const count = Math.min(most, this.waitingCount);
    const batch: Batch = { id, made, dropped: this.dropped, events: this.waiting.slice(this.head, this.head + count) };
    this.head += count;
    this.compact();
    this.batch = batch;
    this.dropped = 0;
    this.touched = true;
    this.batchChanged = true;
    return batch;
  }

  /** The batch `id` was taken. */
  delivered(id: string): void {
    if (this.batch?.id !== id) return;
    this.batch = null;
    this.touched = true;
    this.batchChanged = true;
  }

  /** Forget what is before `head` once it is half the array, so that dropping and sealing stay cheap. */
  private compact(): void {
    if (this.head < 1024 || this.head * 2 < this.waiting.length) return;
    this.waiting = this.waiting.slice(this.head);
    this.queuedAt = this.queuedAt.slice(this.head);
    this.head = 0;
  }

  /** The events not in a batch, oldest first. */
  waitingEvents(): QueuedEvent[] {
    return this.waiting.slice(this.head);
  }

  /** Put back a stored state or apply a record: events before `first` go, `add` joins the end. */
  load(state: { first: number; next_seq: number; dropped: number; batch?: Batch | null; add: QueuedEvent[] }): void {
    const kept = this.waitingEvents().filter((event) => event.seq >= state.first);
    const last = kept.at(-1)?.seq ?? state.first - 1;
    const types = this.endpoint.types;
    for (const event of state.add) {
      if (event.seq > last && event.seq >= state.first && (!types || types.has(event.type))) kept.push(event);
    }
    this.waiting = kept;
    this.queuedAt = kept.map(() => 0);
    this.head = 0;
    this.nextSeq = Math.max(this.nextSeq, state.next_seq, (kept.at(-1)?.seq ?? 0) + 1);
    this.recordedSeq = this.nextSeq;
    this.dropped = state.dropped;
    if (state.batch !== undefined) this.batch = state.batch;
  }

  stored(): StoredQueue {
    const { view } = this.endpoint;
    return { view, next_seq: this.nextSeq, dropped: this.dropped, batch: this.batch, events: this.waitingEvents() };
  }

  /** The change since the last record, and from now on nothing. */
  record(): QueueRecord {
    const record: QueueRecord = {
      endpoint: this.endpoint.name,
      view: this.endpoint.view,
      first: this.first,
      next_seq: this.nextSeq,
      dropped: this.dropped,
      ...(this.batchChanged ? { batch: this.batch } : {}),
      add: this.waiting.slice(Math.max(this.head, this.waiting.length - (this.nextSeq - this.recordedSeq))),
    };
    this.touched = false;
    this.batchChanged = false;
    this.recordedSeq = this.nextSeq;
    return record;
  }
}

/** What a start found stored that it does not deliver, by endpoint. */
export interface SetAside {
  endpoint: string;
  events: number;
  why: string;
}

/** A journal record saying that queues set aside at a start are gone: the file is then written without them. */
interface ForgetRecord {
  forgotten: string[];
}

/** The `webhooks` slice: one queue per configured endpoint. */
export class WebhookQueues implements ModelSlice {
  readonly name = 'webhooks';
  readonly persistence: Persistence<unknown>;
  readonly queues = new Map<string, EndpointQueue>();
  /**
   * What the stored state held for endpoints no longer configured, or configured with another view, by name and
   * view: loaded as if configured, to say how much is dropped, and never delivered.
   */
  private readonly aside = new Map<string, { queue: EndpointQueue; why: string }>();
  /** Whether the next drain says that the queues set aside are gone. */
  private forget = false;

  constructor(endpoints: readonly QueuedEndpoint[]) {
    for (const endpoint of endpoints) this.queues.set(endpoint.name, new EndpointQueue(endpoint));
    this.persistence = {
      durable: true,
      snapshot: () => this.snapshot(),
      restore: (data) => this.restore(data),
      journal: {
        drain: () => this.drain(),
        replay: (record) => this.replay(record as QueueRecord),
      },
    };
  }

  private snapshot(): unknown {
    const endpoints: Record<string, StoredQueue> = {};
    // The records drained with a snapshot go to the journal's generation before it; they are whole all the same
    // (a record applied over a state that has it changes nothing), in case the snapshot's file is not written.
    for (const [name, queue] of this.queues) endpoints[name] = queue.stored();
    return { version: SNAPSHOT_VERSION, endpoints };
  }

  private restore(data: unknown): void {
    const endpoints = (data as { endpoints?: Record<string, StoredQueue> } | null)?.endpoints ?? {};
    for (const [name, stored] of Object.entries(endpoints)) {
      const queue = this.accept(name, stored.view);
      queue.load({ ...stored, first: stored.events[0]?.seq ?? stored.next_seq, add: stored.events });
    }
  }

  private drain(): (QueueRecord | ForgetRecord)[] {
    const records: (QueueRecord | ForgetRecord)[] = [];
    // A line in the journal also has the store write the file whole at the next stop, without what was set aside.
    if (this.forget)
      records.push({ forgotten: [...new Set([...this.aside.values()].map(({ queue }) => queue.endpoint.name))] });
    this.forget = false;
    for (const queue of this.queues.values()) if (queue.touched) records.push(queue.record());
    return records;
  }

  private replay(record: QueueRecord | ForgetRecord): void {
    // What was set aside then is set aside now as well, as its records come.
    if ('forgotten' in record) return;
    this.accept(record.endpoint, record.view).load(record);
  }

  /** The queue of `name` if it is configured with `view`; otherwise one to set aside what it held. */
  private accept(name: string, view: View): EndpointQueue {
    const queue = this.queues.get(name);
    if (queue && queue.endpoint.view === view) return queue;
    const key = `${name} ${view}`;
    let aside = this.aside.get(key);
    if (!aside) {
      const why = queue
        ? `it was queued for the view "${view}", and the endpoint's view is "${queue.endpoint.view}" now`
        : 'no endpoint of that name is configured any more';
      aside = { queue: new EndpointQueue({ name, view, types: null, maxQueuedEvents: Infinity }), why };
      this.aside.set(key, aside);
      this.forget = true;
    }
    return aside.queue;
  }

  /** Whether the stored state held queues that are not delivered (the store must then forget them). */
  get anySetAside(): boolean {
    return this.aside.size > 0;
  }

  /** What was set aside, for the log: each endpoint and view that held events. */
  get setAside(): SetAside[] {
    return [...this.aside.values()]
      .filter(({ queue }) => queue.size > 0)
      .map(({ queue, why }) => ({ endpoint: queue.endpoint.name, events: queue.size, why }));
  }
}
