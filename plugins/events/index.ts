/**
 * Live events (`plugins.events`): what happens on the network as it happens, from the stats plugin's
 * `stats.events`, kept for replay (journal.ts) and streamed as Server-Sent Events at `/api/irc/events/`
 * (route.ts, streams.ts), public or by token like the rest of the API.
 */
import { definePlugin, LabelTally } from '../../lib/sdk.js';
import { Journal } from './journal.js';
import { eventsRoute, viewOf } from './route.js';
import { eventsConfigSchema, type EventsConfig } from './schema.js';
import { Fanout } from './streams.js';
import { startWebhooks } from './webhooks.js';

/** The views from the narrowest. */
const VIEW_RANK = { public: 0, token: 1, full: 2 } as const;

export default definePlugin<EventsConfig>({
  name: 'events',
  description: "The network's events as they happen: a Server-Sent Events stream with replay.",
  uses: ['stats.events'],
  configSchema: eventsConfigSchema,
  start({ config, services, http, model, metrics, timers, onModelChange, logger, store }) {
    // First: a bad endpoint stops the start before anything else is set up.
    const webhooks = startWebhooks({ model, logger, metrics, timers, store }, config.webhooks);
    const journal = new Journal({ events: config.buffer_events, seconds: config.buffer_seconds });
    const ended = metrics.counter<'reason'>({
      name: 'irc_bot_event_streams_ended_total',
      help: 'Event streams the bot ended, by reason (slow_consumer, token_revoked, approval_withdrawn, shutting_down).',
      labelNames: ['reason'],
    });
    const fanout = new Fanout({
      journal,
      fold: (name) => model.fold(name),
      maxBufferedBytes: config.max_buffered_kb * 1024,
      maxBacklog: config.buffer_events,
      writeIntervalMs: config.write_interval_ms,
      onEnded: (reason) => ended.inc({ reason }),
    });
    const seenByType = new LabelTally('type');
    metrics.counter<'type'>({
      name: 'irc_bot_events_total',
      help: 'Network events the bot saw, by type.',
      labelNames: ['type'],
      collect: (counter) => seenByType.drainInto(counter),
    });
    metrics.gauge({
      name: 'irc_bot_event_streams',
      help: 'Event streams open now.',
      collect: (gauge) => gauge.set(fanout.size),
    });
    const unsubscribe = services.get('stats.events').subscribe((event) => {
      seenByType.add(event.type);
      const entry = journal.append(event);
      fanout.publish(entry);
      webhooks.publish(entry);
    });
    http.route(eventsRoute({ config, journal, fanout, fold: (name) => model.fold(name) }));
    timers.every(config.heartbeat_seconds * 1000, () => {
      journal.expire();
      fanout.heartbeat();
    });
    // A token's revocation, or a withdrawn approval, ends the streams it opened at once.
    onModelChange((change) => {
      if (change.slice !== 'tokens' || change.kind === 'use') return;
      fanout.endWhere((reader) => {
        const { approvals } = reader;
        if (!approvals) return null;
        if (!approvals.live) return 'token_revoked';
        // A view narrowed ends the stream; one widened waits for the client's next connection.
        if (VIEW_RANK[viewOf(reader)] < VIEW_RANK[reader.view]) return 'approval_withdrawn';
        return null;
      });
    });
    return async () => {
      unsubscribe();
      fanout.flush();
      fanout.endWhere(() => 'shutting_down');
      await webhooks.stop();
    };
  },
});
