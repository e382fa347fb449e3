/**
 * The network statistics' lists: the history of the network's counts (`history/`, by time range and bucket),
 * its IRC operators (`operators/`) and its servers (`servers/`).
 */
import { invalidParameter, paginate, type FromJsonSchema, isPublicUser } from '../../lib/sdk.js';
import { listQueryParameters } from './lists.js';
import {
  byCodeUnits,
  DAY_MS,
  HOUR_MS,
  timeParameter,
  type Endpoint,
  type NetstatsContext,
} from './netstats-context.js';
import {
  historyPageSchema,
  historyPointJson,
  operatorJson,
  operatorPageSchemas,
  serverPageSchema,
  type OperatorPage,
} from './netstats-shapes.js';
import { requireReady } from './network.js';
import { serverBody } from './servers.js';

const BUCKETS: Record<string, number> = { '5m': 5 * 60 * 1000, '1h': HOUR_MS, '1d': DAY_MS };

/** `history/`: the network's counts over time. */
export function historyEndpoint(context: NetstatsContext): Endpoint {
  const { history } = context;
  return {
    name: 'history',
    path: '/history/',
    summary: 'Recent network history points',
    response: () => historyPageSchema,
    queryParameters: [
      ...listQueryParameters('', ['time'], 'time').filter((parameter) => parameter.name !== 'search'),
      {
        name: 'since',
        description: 'Only points at or after this ISO 8601 time (a date alone is its midnight UTC).',
        schema: { type: 'string' },
      },
      {
        name: 'until',
        description: 'Only points at or before this ISO 8601 time.',
        schema: { type: 'string' },
      },
      {
        name: 'bucket',
        description:
          'Aggregate into buckets of 5 minutes, 1 hour or 1 day (UTC): each number is the most in the bucket, ' +
          'and `time` is where the bucket starts.',
        schema: { type: 'string', enum: Object.keys(BUCKETS) },
      },
    ],
    handler(request): FromJsonSchema<typeof historyPageSchema> {
      const since = timeParameter(request, 'since');
      const until = timeParameter(request, 'until');
      if (since !== undefined && until !== undefined && since > until) {
        throw invalidParameter('until', 'must not be before since');
      }
      const bucket = request.query.get('bucket') ?? '';
      if (bucket !== '' && !(bucket in BUCKETS)) {
        throw invalidParameter(
          'bucket',
          `must be one of ${Object.keys(BUCKETS).join(', ')}; got ${JSON.stringify(bucket)}`,
        );
      }
      let points = history().query(since, until);
      if (bucket !== '') points = history().buckets(points, BUCKETS[bucket]!);
      return paginate(request, points.map(historyPointJson), { orderingFields: ['time'], defaultOrdering: 'time' });
    },
  };
}

/** `operators/`: the IRC operators the view may show. */
export function operatorsEndpoint(context: NetstatsContext): Endpoint {
  const { model, searchFold } = context;
  return {
    name: 'operators',
    path: '/operators/',
    summary: 'IRC operators',
    response: (view) => operatorPageSchemas[view],
    queryParameters: listQueryParameters('the nick', ['nick', 'server'], 'nick'),
    handler(request, view): OperatorPage {
      requireReady(model);
      // A walk, not a copy of every user (a large object) to keep a handful.
      const operators: ReturnType<typeof operatorJson>[] = [];
      for (const user of model.users.all()) {
        if (user.isOperator && (view === 'token' || isPublicUser(user))) operators.push(operatorJson(user, view));
      }
      return paginate(request, operators, {
        orderingFields: ['nick', 'server'],
        defaultOrdering: 'nick',
        searchFold,
        searchField: (item) => item.nick,
      });
    },
  };
}

/** `servers/`: the linked servers. */
export function serversEndpoint(context: NetstatsContext): Endpoint {
  const { model } = context;
  return {
    name: 'servers',
    path: '/servers/',
    summary: 'Linked servers',
    response: () => serverPageSchema,
    queryParameters: listQueryParameters('the server name', ['name', 'hops', 'users', 'latency_ms'], 'hops'),
    handler(request): FromJsonSchema<typeof serverPageSchema> {
      requireReady(model);
      const servers = [...model.servers.all()]
        .sort((a, b) => byCodeUnits(a.name, b.name))
        .map((server) => serverBody(server));
      return paginate(request, servers, {
        orderingFields: ['name', 'hops', 'users', 'latency_ms'],
        defaultOrdering: 'hops',
        searchField: (item) => item.name,
      });
    },
  };
}
