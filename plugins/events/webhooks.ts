/**
 * Webhooks (`plugins.events.webhooks`): each configured endpoint gets the events its `types` and `view` let
 * through, POSTed in batches signed as Standard Webhooks sign them (webhooks-signature.ts). A batch is made once
 * `batch_events` wait or the oldest has waited `batch_wait_ms`, and it is delivered at least once: an answer other
 * than 2xx (a redirect included: only the configured URL is called), a connection that fails or no answer within
 * `timeout_seconds` is retried, the same message with a new timestamp and signature, after a wait that doubles
 * from `retry_first_ms` to `retry_max_seconds` with jitter (longer when the receiver asks with `Retry-After`);
 * `410 Gone` stops deliveries to the endpoint until the bot restarts. One batch is on its way per endpoint at a
 * time, so each receives its events in order. What waits is kept across restarts, bounded (webhooks-queue.ts).
 */
import { errorMessage, packageName, packageVersion, type PluginContext } from '../../lib/sdk.js';
import type { JournalEntry } from './journal.js';
import { resolveEndpoints, type WebhookEndpoint, type WebhookEndpointConfig } from './webhooks-config.js';
import { postBatch, type PostAnswer } from './webhooks-post.js';
import { WebhookQueues, type Batch, type EndpointQueue } from './webhooks-queue.js';
import { messageId, sign } from './webhooks-signature.js';

export const WEBHOOK_USER_AGENT = `${packageName}/${packageVersion}`;
/** The payload's `type`: every batch carries events of the network. */
export const WEBHOOK_TYPE = 'irc.events';
/** How long a stop waits for a POST on its way to be answered before it cuts it off (it is sent again at the next start). */
const STOP_GRACE_MS = 3000;

type WebhookContext = Pick<PluginContext, 'model' | 'logger' | 'metrics' | 'timers' | 'store'>;

export interface Webhooks {
  /** A new event, for the endpoints that want it. */
  publish(entry: JournalEntry): void;
  /** Stop delivering; what waits stays in the store for the next start. */
  stop(): Promise<void>;
}

/** The wait before the next attempt after `failures` failed ones: doubling from `firstMs` up to `maxMs`, half of it jitter. */
export function retryDelay(
  failures: number,
  firstMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(maxMs, firstMs * 2 ** Math.min(failures - 1, 40));
  return Math.round(base / 2 + random() * (base / 2));
}

/** The body of a batch: the bytes that are signed and sent, the same on every attempt. */
export function payloadOf(batch: Batch): string {
  return JSON.stringify({
    type: WEBHOOK_TYPE,
    timestamp: new Date(batch.made).toISOString(),
    data: {
      dropped: batch.dropped,
      events: batch.events.map((event) => ({
        id: event.id,
        type: event.type,
        time: new Date(event.time).toISOString(),
        ...event.data,
      })),
    },
  });
}

type WebhookMetrics = ReturnType<typeof webhookMetrics>;

function webhookMetrics(metrics: PluginContext['metrics'], queues: WebhookQueues) {
  const deliveries = metrics.counter<'endpoint' | 'result'>({
    name: 'irc_bot_webhook_deliveries_total',
    help: 'Webhook POSTs of a batch, by endpoint and result: delivered (a 2xx answer) or failed (anything else; retried).',
    labelNames: ['endpoint', 'result'],
  });
  const delivered = metrics.counter<'endpoint'>({
    name: 'irc_bot_webhook_delivered_events_total',
    help: 'Events delivered to webhook endpoints, by endpoint.',
    labelNames: ['endpoint'],
  });
  const dropped = metrics.counter<'endpoint'>({
    name: 'irc_bot_webhook_dropped_events_total',
    help: "Events dropped before delivery because the endpoint's queue was full (max_queued_events), by endpoint.",
    labelNames: ['endpoint'],
  });
  metrics.gauge<'endpoint'>({
    name: 'irc_bot_webhook_queued_events',
    help: 'Events waiting for each webhook endpoint, in the batch on its way and behind it.',
    labelNames: ['endpoint'],
    collect: (gauge) => {
      for (const [endpoint, queue] of queues.queues) gauge.set({ endpoint }, queue.size);
    },
  });
  metrics.gauge<'endpoint'>({
    name: 'irc_bot_webhook_oldest_event_age_seconds',
    help: 'How long ago the oldest event waiting for each webhook endpoint happened; 0 when none waits.',
    labelNames: ['endpoint'],
    collect: (gauge) => {
      for (const [endpoint, queue] of queues.queues) {
        const oldest = queue.oldestTime;
        gauge.set({ endpoint }, oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
      }
    },
  });
  for (const endpoint of queues.queues.keys()) {
    deliveries.inc({ endpoint, result: 'delivered' }, 0);
    deliveries.inc({ endpoint, result: 'failed' }, 0);
    delivered.inc({ endpoint }, 0);
    dropped.inc({ endpoint }, 0);
  }
  return { deliveries, delivered, dropped };
}

/** Start the endpoints of `settings` (a bad one throws, naming its key); their secrets may come from `env`. */
export function startWebhooks(
  context: WebhookContext,
  settings: readonly WebhookEndpointConfig[],
  env: NodeJS.ProcessEnv = process.env,
): Webhooks {
  const { endpoints, secrets } = resolveEndpoints(settings, env);
  const { model, logger } = context;
  for (const secret of secrets) logger.addSecret(secret);
  // Added even without endpoints: a queue left from endpoints since removed is then dropped, with a warning.
  const queues = new WebhookQueues(endpoints);
  model.addSlice(queues);
  let announcing = false;
  const changed = (): void => {
    // Once per turn, after the work at hand: the events come from inside the collector's own model changes.
    if (announcing) return;
    announcing = true;
    queueMicrotask(() => {
      announcing = false;
      model.changed({ slice: queues.name, kind: 'queue' });
    });
  };
  const metrics = endpoints.length > 0 ? webhookMetrics(context.metrics, queues) : undefined;
  const deliveries = endpoints.map(
    (endpoint) => new Delivery(endpoint, queues.queues.get(endpoint.name)!, context, metrics!, changed),
  );
  for (const { name, where, view, types } of endpoints) {
    logger.info('webhook endpoint', { endpoint: name, url: where, view, types: types ? [...types].join(',') : 'all' });
  }
  let stopped = false;
  // The store restores the slice once the plugin's start has returned: deliver what it kept from then on.
  setImmediate(() => {
    if (stopped) return;
    for (const { endpoint, events, why } of queues.setAside) {
      logger.warn('stored webhook events dropped', { endpoint, events, why });
    }
    if (queues.anySetAside) changed();
    for (const delivery of deliveries) delivery.resume();
  });
  return {
    publish(entry) {
      for (const delivery of deliveries) delivery.offer(entry);
    },
    async stop() {
      stopped = true;
      await Promise.all(deliveries.map((delivery) => delivery.stop()));
      model.changed({ slice: queues.name, kind: 'queue' });
    },
  };
}

/** One endpoint's deliveries: one batch on its way at a time. */
class Delivery {
  /** The POST on its way (with the store's write before a new batch's first attempt). */
  private sending: Promise<void> | undefined;
  /** A retry is waiting for its time. */
  private retrying = false;
  /** A timer is waiting for more events to join a batch. */
  private gathering = false;
  /** Failed attempts of the batch on its way. */
  private failures = 0;
  /** The receiver answered 410 Gone. */
  private gone = false;
  private stopped = false;
  private readonly abort = new AbortController();
  /** Events dropped since the queue was last below its bound. */
  private burstDropped = 0;
  private body: { id: string; text: string } | undefined;

  constructor(
    private readonly endpoint: WebhookEndpoint,
    private readonly queue: EndpointQueue,
    private readonly context: WebhookContext,
    private readonly metrics: WebhookMetrics,
    private readonly changed: () => void,
  ) {}

  private get label(): { endpoint: string } {
    return { endpoint: this.endpoint.name };
  }

  offer(entry: JournalEntry): void {
    const { types, view } = this.endpoint;
    if (types && !types.has(entry.event.type)) return;
    const data = entry.data(view);
    if (data === null) return;
    const dropped = this.queue.push(
      { id: entry.idOf(view)!, type: entry.event.type, time: entry.event.time, data },
      Date.now(),
    );
    this.changed();
    if (dropped > 0) this.dropped(dropped);
    this.pump();
  }

  /** After the restore: hold the (possibly lowered) bound, then deliver. */
  resume(): void {
    const dropped = this.queue.keepBound();
    if (dropped > 0) {
      this.changed();
      this.dropped(dropped);
    }
    this.pump();
  }

  private dropped(count: number): void {
    this.metrics.dropped.inc(this.label, count);
    if (this.burstDropped === 0) {
      this.context.logger.warn('webhook queue full: its oldest events are dropped', {
        ...this.label,
        max_queued_events: this.endpoint.maxQueuedEvents,
      });
    }
    this.burstDropped += count;
  }

  /** Send what is due: the batch on its way, else a new one once enough waited or long enough. */
  private pump(): void {
    if (this.stopped || this.gone || this.sending || this.retrying) return;
    const { queue, endpoint } = this;
    let fresh = false;
    if (!queue.batch) {
      const waiting = queue.waitingCount;
      if (waiting === 0) return;
      const waited = Date.now() - (queue.oldestQueuedAt ?? 0);
      if (waiting < endpoint.batchEvents && waited < endpoint.batchWaitMs) {
        this.gather(endpoint.batchWaitMs - waited);
        return;
      }
      queue.seal(messageId(), Date.now(), endpoint.batchEvents);
      this.changed();
      fresh = true;
    }
    const batch = queue.batch!;
    this.sending = this.send(batch, fresh)
      .catch((error: unknown) => this.failed(batch, undefined, errorMessage(error)))
      .finally(() => {
        this.sending = undefined;
        this.pump();
      });
  }

  private gather(ms: number): void {
    if (this.gathering) return;
    this.gathering = true;
    this.context.timers.after(ms, () => {
      this.gathering = false;
      this.pump();
    });
  }

  private async send(batch: Batch, fresh: boolean): Promise<void> {
    const { endpoint, context } = this;
    if (fresh) {
      // The batch's id on disk before a receiver sees it: after a crash, the same message comes again.
      await context.store.persisted().catch((error: unknown) => {
        context.logger.warn('webhook batch not saved before its first attempt; sending it all the same', {
          ...this.label,
          batch: batch.id,
          error: errorMessage(error),
        });
      });
      if (this.stopped) return;
    }
    if (this.body?.id !== batch.id) this.body = { id: batch.id, text: payloadOf(batch) };
    const body = this.body.text;
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_USER_AGENT,
      'webhook-id': batch.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(endpoint.key, batch.id, timestamp, body),
    };
    context.logger.debug('webhook attempt', { ...this.label, batch: batch.id, attempt: this.failures + 1 });
    const started = performance.now();
    let answer: PostAnswer | undefined;
    let error: string | undefined;
    try {
      answer = await postBatch(endpoint.url, headers, body, endpoint.timeoutMs, this.abort.signal);
    } catch (caught) {
      error = errorMessage(caught);
    }
    // Cut off by the stop: neither delivered nor failed; it goes again at the next start.
    if (!answer && this.abort.signal.aborted) return;
    if (answer && answer.status >= 200 && answer.status < 300) this.delivered(batch, performance.now() - started);
    else this.failed(batch, answer, error);
  }

  private delivered(batch: Batch, ms: number): void {
    const { queue, context } = this;
    queue.delivered(batch.id);
    this.changed();
    this.metrics.deliveries.inc({ ...this.label, result: 'delivered' });
    this.metrics.delivered.inc(this.label, batch.events.length);
    const fields = { ...this.label, batch: batch.id, events: batch.events.length, ms: Math.round(ms) };
    if (this.failures > 0) context.logger.info('webhook delivered', { ...fields, attempts: this.failures + 1 });
    else context.logger.debug('webhook delivered', fields);
    this.failures = 0;
    if (this.burstDropped > 0 && queue.size < this.endpoint.maxQueuedEvents) {
      context.logger.warn('webhook events were dropped while the queue was full', {
        ...this.label,
        dropped: this.burstDropped,
      });
      this.burstDropped = 0;
    }
  }

  private failed(batch: Batch, answer: PostAnswer | undefined, error: string | undefined): void {
    const { endpoint, context } = this;
    this.failures++;
    this.metrics.deliveries.inc({ ...this.label, result: 'failed' });
    const fields = {
      ...this.label,
      batch: batch.id,
      events: batch.events.length,
      attempt: this.failures,
      ...(answer ? { status: answer.status } : { error: error ?? 'no answer' }),
      ...(answer?.location === undefined ? {} : { location: answer.location, redirect: 'not followed' }),
    };
    if (answer?.status === 410) {
      this.gone = true;
      context.logger.error('webhook endpoint gone (410): no more deliveries to it until the bot restarts', {
        ...fields,
        queued: this.queue.size,
      });
      return;
    }
    const wait = Math.min(
      endpoint.retryMaxMs,
      Math.max(retryDelay(this.failures, endpoint.retryFirstMs, endpoint.retryMaxMs), answer?.retryAfterMs ?? 0),
    );
    context.logger.warn('webhook delivery failed', { ...fields, retry_in_s: Math.round(wait / 100) / 10 });
    this.retrying = true;
    context.timers.after(wait, () => {
      this.retrying = false;
      this.pump();
    });
  }

  /** Stop: the POST on its way has a moment to be answered, then is cut off. */
  async stop(): Promise<void> {
    this.stopped = true;
    const sending = this.sending;
    if (sending) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([sending, new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
      clearTimeout(timer);
      this.abort.abort();
      await sending;
    }
    if (this.burstDropped > 0) {
      this.context.logger.warn('webhook events were dropped while the queue was full', {
        ...this.label,
        dropped: this.burstDropped,
      });
    }
  }
}
