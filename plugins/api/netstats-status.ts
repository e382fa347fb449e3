/**
 * The network statistics' `status` endpoint (`/network/data/status/`, `/api/netstats/status/`): the
 * network now, today's most active users and channels, and the last day's history.
 */
import { DAY_MS, HOUR_MS, topOf, topParameter, type Endpoint, type NetstatsContext } from './netstats-context.js';
import { historyPointJson, statusSchema, type StatusAnswer } from './netstats-shapes.js';
import { networkStatsBody, requireReady } from './network.js';

/** `status`: a snapshot of the network, top users and channels today, recent history. */
export function statusEndpoint(context: NetstatsContext): Endpoint {
  const { model, today, history, publicChannel } = context;
  return {
    name: 'status',
    path: '/status/',
    summary: 'Network snapshot, top users and channels today, recent history',
    response: statusSchema,
    queryParameters: [topParameter],
    handler(request, view): StatusAnswer {
      requireReady(model);
      const top = topOf(request);
      const { activity, day, date, now } = today();
      const include = view === 'public' ? publicChannel : undefined;
      const recent = history().query(now.getTime() - DAY_MS, now.getTime());
      return {
        snapshot: networkStatsBody(model),
        date,
        time_zone: activity.timeZone.name,
        top_users_today: day ? activity.topNicks(day, top, include) : [],
        top_channels_today: (day ? activity.topChannels(day, top, include) : []).map((entry) => ({
          ...entry,
          users: model.channels.get(entry.name)?.users ?? null,
        })),
        history: history().buckets(recent, HOUR_MS).map(historyPointJson),
        generated_at: now.toISOString(),
      };
    },
  };
}
