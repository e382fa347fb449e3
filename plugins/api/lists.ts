/**
 * What every list route shares: the DRF-style page envelope as a schema, and
 * the `limit`, `offset`, `search`, `ordering` query parameters as the OpenAPI
 * document shows them. `paginate()` (lib/http/paging.ts) applies them.
 */
import { DEFAULT_LIMIT, MAX_LIMIT, SerializedJson, type RouteDefinition, type TypedJsonSchema } from '../../lib/sdk.js';

/** Schema of a page whose `results` are `item`s, with `extra` fields beside them; typed, so a page's type is read off it. */
export function pageSchema<
  Item extends TypedJsonSchema,
  Extra extends Record<string, TypedJsonSchema> = Record<never, never>,
>(item: Item, extra?: Extra) {
  return {
    type: 'object',
    required: ['count', 'next', 'previous', 'results'],
    additionalProperties: false,
    properties: {
      count: { type: 'integer', minimum: 0, description: 'Items matching the query, on all pages.' },
      next: { type: ['string', 'null'], description: 'Path and query of the next page; null on the last page.' },
      previous: { type: ['string', 'null'], description: 'Path and query of the previous page; null on the first.' },
      results: { type: 'array', items: item },
      ...(extra as Extra),
    },
  } as const;
}

/** The query parameters of a list: paging, a search of `searchOf`, ordering by one of `orderingFields`. */
export function listQueryParameters(
  searchOf: string,
  orderingFields: readonly string[],
  defaultOrdering: string,
): NonNullable<RouteDefinition['queryParameters']> {
  return [
    {
      name: 'limit',
      description: `Items per page (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    },
    {
      name: 'offset',
      description: 'Items to skip before the page starts.',
      schema: { type: 'integer', minimum: 0, default: 0 },
    },
    {
      name: 'search',
      description: `Case-insensitive substring of ${searchOf}.`,
      schema: { type: 'string' },
    },
    {
      name: 'ordering',
      description: `Field to order by, "-" first for descending (default ${defaultOrdering}).`,
      schema: { type: 'string', enum: orderingFields.flatMap((field) => [field, `-${field}`]) },
    },
  ];
}

/** Nullable ISO-8601 UTC time. */
export const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

/** Subscribes a listener to the model's change events. */
export type ModelChangeSubscriber = (listener: (change: { slice: string }) => void) => unknown;

/** The model slices whose changes can change a list answer (the network slice: connection and sync state). */
const LIST_SLICES = new Set(['users', 'channels', 'network']);
/** Most queries kept between two rebuilds, so a client looping over random queries cannot grow the cache without end. */
const MAX_QUERIES = 1000;

/** How long an answer may be reused after the model changed, and the clock that tells (tests pin it). */
export interface ReuseOptions {
  /**
   * Milliseconds an answer is reused after a change: answers are rebuilt at most once per this long
   * while the network keeps changing, so they may be that far behind it. 0: rebuilt after every change.
   */
  reuseMs: number;
  now?: () => number;
}

/**
 * When the answers built since `since` must go: a change came, and they are `reuseMs` old. On a
 * network where something changes every millisecond (50,000 users coming and going), rebuilding a
 * sorted page of 10,000 channels on every request would take the server's whole time; with a
 * bound the cost is one rebuild per query per `reuseMs`, whatever the request rate.
 */
class Generation {
  private since: number;
  private changed = false;
  private readonly now: () => number;

  constructor(private readonly options: ReuseOptions) {
    this.now = options.now ?? (() => performance.now());
    this.since = this.now();
  }

  /** The model changed: the answers go now (reuseMs 0) or once they are old enough; true when now. */
  change(): boolean {
    if (this.options.reuseMs === 0) return true;
    this.changed = true;
    return false;
  }

  /** Whether the answers must go before this request (a change came and they are old enough); starts a new generation if so. */
  expired(): boolean {
    if (!this.changed || this.now() - this.since < this.options.reuseMs) return false;
    this.renew();
    return true;
  }

  /** The answers went: the next ones are built from now. */
  renew(): void {
    this.changed = false;
    this.since = this.now();
  }
}

/**
 * Answers of a list route kept per query until the model's users or channels change (no sooner than
 * `reuseMs` after the last rebuild), so a network of 50,000 users is mapped, sorted and paged once
 * per change, not once per request, and at most once per `reuseMs` while it keeps changing.
 *
 * A request finds its answer by its query string as received, without parsing it. A query
 * string seen for the first time is parsed and its parameters sorted: the same query with
 * its parameters in another order shares the answer already built.
 */
export class ListCache<T> {
  /** Answers by their sorted query. */
  private readonly pages = new Map<string, SerializedJson>();
  /** The same answers by query string as received. */
  private readonly received = new Map<string, SerializedJson>();
  private readonly generation: Generation;

  /** `onChange` subscribes to model changes; the plugin passes its context's, so the listener goes when it stops. */
  constructor(onChange: ModelChangeSubscriber, reuse: ReuseOptions = { reuseMs: 0 }) {
    this.generation = new Generation(reuse);
    // A bounded map would need eviction bookkeeping; clearing on every change keeps at most the queries asked since.
    onChange((change) => {
      if (LIST_SLICES.has(change.slice) && this.generation.change()) this.clear();
    });
  }

  /**
   * The cached answer to the query string `search` (as `ApiRequest.search` holds it), or
   * `build()`'s, serialised once and kept until the next change.
   */
  get(search: string, build: () => T): SerializedJson {
    if (this.generation.expired()) this.clear();
    const known = this.received.get(search);
    if (known !== undefined) return known;
    const sorted = new URLSearchParams(search);
    sorted.sort();
    const key = sorted.toString();
    let page = this.pages.get(key);
    if (page === undefined) {
      page = new SerializedJson(build());
      if (this.pages.size >= MAX_QUERIES) this.clear();
      this.pages.set(key, page);
    }
    if (this.received.size >= MAX_QUERIES) this.received.clear();
    this.received.set(search, page);
    return page;
  }

  private clear(): void {
    // Map.clear() allocates a new table even for an empty map, and every live line changes the model: that was a
    // sixth of everything the collector allocated per line. Between two requests the maps are empty anyway.
    if (this.pages.size > 0) this.pages.clear();
    if (this.received.size > 0) this.received.clear();
  }
}

/**
 * One answer kept until one of the model's slices changes (no sooner than `reuseMs` after it was
 * built): the network stats, which change when the collector polls the network, far less often
 * than clients ask for them.
 */
export class ChangeCache {
  private answer: SerializedJson | undefined;
  private readonly generation: Generation;

  /** `onChange` as for {@link ListCache}; the answer is dropped on a change of one of `slices`. */
  constructor(onChange: ModelChangeSubscriber, slices: readonly string[], reuse: ReuseOptions = { reuseMs: 0 }) {
    this.generation = new Generation(reuse);
    const watched = new Set(slices);
    onChange((change) => {
      if (watched.has(change.slice) && this.generation.change()) this.answer = undefined;
    });
  }

  /** The cached answer, or `build()`'s, serialised once and kept until the next change. */
  get(build: () => unknown): SerializedJson {
    if (this.generation.expired()) this.answer = undefined;
    if (this.answer === undefined) this.generation.renew();
    return (this.answer ??= new SerializedJson(build()));
  }
}

/**
 * Answers kept for `reuseMs` from when each was built, by key: for answers made of data that changes
 * with every chat line (today's counts), which no change event announces. 0: nothing is kept.
 */
export class TimedCache {
  private readonly answers = new Map<string, { body: SerializedJson; at: number }>();
  private readonly now: () => number;

  /** `maxEntries`: answers kept at most (old ones go first, then all). */
  constructor(
    private readonly options: ReuseOptions,
    private readonly maxEntries = MAX_QUERIES,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  get(key: string, build: () => unknown): SerializedJson {
    if (this.options.reuseMs === 0) return new SerializedJson(build());
    const now = this.now();
    const kept = this.answers.get(key);
    if (kept && now - kept.at < this.options.reuseMs) return kept.body;
    if (this.answers.size >= this.maxEntries) {
      for (const [other, { at }] of this.answers) if (now - at >= this.options.reuseMs) this.answers.delete(other);
      if (this.answers.size >= this.maxEntries) this.answers.clear();
    }
    const body = new SerializedJson(build());
    this.answers.set(key, { body, at: now });
    return body;
  }
}
