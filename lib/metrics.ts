/**
 * The bot's metrics, in one prom-client registry per host. The host counts what the core does (IRC
 * lines received, reconnects, store writes, HTTP requests); each plugin registers its own through its
 * context (`metrics`), and the metrics plugin serves them all at `GET /metrics` in the Prometheus text
 * format. A registry per host, not prom-client's global one: several hosts can run in one process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

export { Counter, Gauge, Histogram } from 'prom-client';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Duration buckets in seconds: a fast HTTP answer is a millisecond or less, a slow one a second. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Store writes take milliseconds on a small network, seconds on a big one. */
const STORE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The longest a store write held the event loop: the 20 ms a write may hold it, and around it. */
const BLOCKED_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25];

export interface MetricOptions<Label extends string> {
  /** The metric's name, e.g. `irc_bot_ctcp_version_queue`; a plugin's names are its own. */
  name: string;
  help: string;
  labelNames?: readonly Label[];
}

/** What a plugin registers metrics with; they are removed when it stops. */
export interface PluginMetrics {
  /**
   * A counter; `collect` runs each time the metrics are read, to add what was tallied since (a count kept as a
   * plain number per label value costs an event less than prom-client's hashing of a labels object).
   */
  counter<Label extends string = string>(
    options: MetricOptions<Label> & { collect?: (counter: Counter<Label>) => void },
  ): Counter<Label>;
  /** A gauge; `collect` sets its value each time the metrics are read (e.g. from the model). */
  gauge<Label extends string = string>(
    options: MetricOptions<Label> & { collect?: (gauge: Gauge<Label>) => void },
  ): Gauge<Label>;
  histogram<Label extends string = string>(options: MetricOptions<Label> & { buckets?: number[] }): Histogram<Label>;
  /** Every metric of the host in the Prometheus text format, and its content type. */
  exposition(): Promise<{ text: string; contentType: string }>;
  /** Add prom-client's process and event-loop metrics (once per host; the metrics plugin asks for them). */
  collectDefaults(): void;
}

/** One route's requests: by status, counted since the counter last read them; and their durations. */
interface RouteTally {
  statuses: Map<number, number>;
  /** Requests by duration bucket (not cumulative; the last one is above the highest bound). */
  buckets: Float64Array;
  /** Seconds in all, and requests in all. */
  sum: number;
  count: number;
}

/** One value of a metric as prom-client's registry writes it. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * `http_request_duration_seconds`, a histogram by route, read from the tallies {@link HostMetrics.request} keeps.
 * prom-client's own histogram hashes a labels object on every observation, which was a tenth of what the server
 * added to node:http's cost of a cached answer; this one adds a number to a route's bucket, and the registry
 * writes it as it writes its own (`_bucket` by `le` and route, `_sum`, `_count`).
 */
class RequestDurations {
  readonly name = 'http_request_duration_seconds';
  readonly help = 'Time from a request arriving to its answer being written, by route name.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    private readonly tallies: ReadonlyMap<string, RouteTally>,
    private readonly bounds: readonly number[],
  ) {}

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const [route, { buckets, sum, count }] of this.tallies) {
      if (count === 0) continue;
      let below = 0;
      this.bounds.forEach((bound, index) => {
        below += buckets[index]!;
        values.push({ labels: { le: bound, route }, value: below, metricName: `${this.name}_bucket` });
      });
      values.push(
        { labels: { le: '+Inf', route }, value: count, metricName: `${this.name}_bucket` },
        { labels: { route }, value: sum, metricName: `${this.name}_sum` },
        { labels: { route }, value: count, metricName: `${this.name}_count` },
      );
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** The registry's reset: every route's durations start again. */
  reset(): void {
    for (const tally of this.tallies.values()) {
      tally.buckets.fill(0);
      tally.sum = 0;
      tally.count = 0;
    }
  }
}

/** One HTTP request, for the request metrics. */
export interface RequestFacts {
  /** The route's name, or undefined when no route took the request (404, 405, unreadable). */
  route: string | undefined;
  status: number;
  /** How long it took; for a stream, how long it was open. */
  seconds: number;
  /** The answer was a stream: counted, but kept out of the durations (its time is how long a client read). */
  streamed?: boolean;
}

/**
 * A gauge without labels that `collect` left reset is left out of the exposition, as a labelled one with no
 * values is: prom-client would show it as 0 (e.g. `irc_users 0` before the first sync, not known yet).
 */
function omitWhenReset(gauge: Gauge): void {
  let unset = false;
  const reset = gauge.reset.bind(gauge);
  const set = gauge.set.bind(gauge);
  const get = gauge.get.bind(gauge);
  gauge.reset = () => {
    unset = true;
    reset();
  };
  gauge.set = ((...args: [number]) => {
    unset = false;
    set(...args);
  }) as Gauge['set'];
  gauge.get = async () => {
    const metric = await get();
    return unset ? { ...metric, values: [] } : metric;
  };
}

/**
 * Counts by one label's value, kept as plain numbers and added to a counter when the metrics are read ({@link
 * drainInto} in its `collect`): a count costs a map update, where `counter.inc(labels)` (a labelled child's too)
 * hashes a labels object every time.
 */
export class LabelTally<Label extends string> {
  private readonly counts = new Map<string, number>();

  constructor(private readonly label: Label) {}

  add(value: string): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }

  /** Add what was counted since the last call to `counter`. */
  drainInto(counter: Counter<Label>): void {
    for (const [value, count] of this.counts) {
      if (count === 0) continue;
      counter.inc({ [this.label]: value } as Partial<Record<Label, string>>, count);
      this.counts.set(value, 0);
    }
  }
}

/** prom-client's `collect` option for a plugin's `collect`, which is handed the metric itself. */
function collectOption<Metric>(collect: ((metric: Metric) => void) | undefined): { collect?: () => void } {
  if (!collect) return {};
  return {
    collect: function (this: Metric) {
      collect(this);
    },
  };
}

/**
 * A host's metrics ({@link Host.metrics}): its prom-client `registry` holds the core's own and every plugin's,
 * for an embedding program that serves them itself.
 */
export class HostMetrics {
  readonly registry = new Registry();
  private defaultsCollected = false;
  private readonly ircLines: Counter<'command'>;
  private readonly reconnects: Counter;
  private readonly storeWrites: Histogram<'file' | 'result'>;
  private readonly storeBytes: Gauge<'file'>;
  private readonly storeBlocked: Histogram<'file'>;
  private readonly httpRequests: Counter<'route' | 'status'>;

  constructor() {
    const registers = [this.registry];
    this.ircLines = new Counter({
      name: 'irc_bot_lines_received_total',
      help: 'IRC lines received from the server, by command (numerics by number).',
      labelNames: ['command'],
      registers,
      collect: () => this.lineTallies.drainInto(this.ircLines),
    });
    this.reconnects = new Counter({
      name: 'irc_bot_reconnects_total',
      help: 'Connections to IRC made again after one was lost.',
      registers,
    });
    this.storeWrites = new Histogram({
      name: 'irc_bot_store_write_duration_seconds',
      help:
        'Writes of a store file (store: the network data; durable: tokens and sessions, written whole; journal: ' +
        'their changes appended), and their result.',
      labelNames: ['file', 'result'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.storeBlocked = new Histogram({
      name: 'irc_bot_store_write_blocked_seconds',
      help: 'The longest each store write held the event loop: its longest stretch of work between two awaits.',
      labelNames: ['file'],
      buckets: BLOCKED_BUCKETS,
      registers,
    });
    this.storeBytes = new Gauge({
      name: 'irc_bot_store_size_bytes',
      help: 'Size of each store file after its last write.',
      labelNames: ['file'],
      registers,
    });
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered by the bot, by route name ("none": no route) and status.',
      labelNames: ['route', 'status'],
      registers,
      collect: () => this.countRequests(this.httpRequests),
    });
    // Not one of prom-client's kinds, but written by its registry as one (see RequestDurations).
    this.registry.registerMetric(new RequestDurations(this.requestTallies, HTTP_BUCKETS) as unknown as Metric);
  }

  /**
   * IRC lines by command since the counter last read them, handed to it when the metrics are read: counting a
   * line is a number added, not prom-client's hashing of a labels object (a labelled child hashes it too).
   */
  private readonly lineTallies = new LabelTally('command');
  /**
   * Requests by route and status since the counter last read them, handed to it when the metrics are read
   * ({@link HostMetrics.countRequests}): counting a request is a number added, not a labelled series found.
   */
  private readonly requestTallies = new Map<string, RouteTally>();

  /** @internal */
  ircLine(command: string): void {
    this.lineTallies.add(command);
  }

  /** @internal */
  reconnected(): void {
    this.reconnects.inc();
  }

  /** @internal */
  storeWritten(
    file: 'store' | 'durable' | 'journal',
    seconds: number,
    ok: boolean,
    bytes: number | undefined,
    blockedSeconds: number,
  ): void {
    this.storeWrites.observe({ file, result: ok ? 'ok' : 'failed' }, seconds);
    this.storeBlocked.observe({ file }, blockedSeconds);
    if (bytes !== undefined) this.storeBytes.set({ file }, bytes);
  }

  /** @internal */
  request({ route, status, seconds, streamed }: RequestFacts): void {
    const name = route ?? 'none';
    let tally = this.requestTallies.get(name);
    if (!tally) {
      tally = { statuses: new Map(), buckets: new Float64Array(HTTP_BUCKETS.length + 1), sum: 0, count: 0 };
      this.requestTallies.set(name, tally);
    }
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    if (streamed) return;
    let bucket = 0;
    while (bucket < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[bucket]!) bucket++;
    tally.buckets[bucket]!++;
    tally.sum += seconds;
    tally.count++;
  }

  /** The counter's `collect`: the requests tallied since it last read them. */
  private countRequests(counter: Counter<'route' | 'status'>): void {
    for (const [route, { statuses }] of this.requestTallies) {
      for (const [status, count] of statuses) {
        if (count === 0) continue;
        counter.inc({ route, status: String(status) }, count);
        statuses.set(status, 0);
      }
    }
  }

  /**
   * The registry's view for one plugin; what it registered goes with `track`'s cleanup.
   * @internal
   */
  forPlugin(plugin: string, track: (cleanup: () => void) => void): PluginMetrics {
    const { registry } = this;
    const registers = [registry];
    const claim = (name: string): void => {
      if (!NAME.test(name)) throw new Error(`the plugin "${plugin}" named a metric "${name}": not a Prometheus name`);
      if (registry.getSingleMetric(name)) throw new Error(`the plugin "${plugin}" registers "${name}" twice`);
      track(() => registry.removeSingleMetric(name));
    };
    return {
      counter: ({ name, help, labelNames, collect }) => {
        claim(name);
        return new Counter({ name, help, labelNames: labelNames ?? [], registers, ...collectOption(collect) });
      },
      gauge: ({ name, help, labelNames, collect }) => {
        claim(name);
        const gauge = new Gauge({ name, help, labelNames: labelNames ?? [], registers, ...collectOption(collect) });
        if (collect && (labelNames ?? []).length === 0) omitWhenReset(gauge);
        return gauge;
      },
      histogram: ({ name, help, labelNames, buckets }) => {
        claim(name);
        return new Histogram({ name, help, labelNames: labelNames ?? [], registers, ...(buckets ? { buckets } : {}) });
      },
      exposition: async () => ({ text: await registry.metrics(), contentType: registry.contentType }),
      collectDefaults: () => {
        if (this.defaultsCollected) return;
        this.defaultsCollected = true;
        collectDefaultMetrics({ register: registry });
      },
    };
  }
}
