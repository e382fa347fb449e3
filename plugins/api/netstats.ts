/**
 * The network statistics: `/network/data/...` and `/network/netstats/api/index.json`
 * (public) and `/api/netstats/...` (token: `netstats.<name>`). Each endpoint is
 * declared once and registered in both tiers, with the public view or the
 * token view of its shape (netstats-shapes.ts). The index is read from the
 * route table, so it lists exactly what is served.
 */
import {
  invalidParameter,
  notFound,
  openApiPath,
  paginate,
  searchFoldOf,
  type ApiRequest,
  type FromJsonSchema,
  type JsonSchema,
  type NetworkModel,
  type PluginHttp,
  type PluginServices,
  type RouteDefinition,
  type Services,
  type User,
} from '../../lib/sdk.js';
import { listQueryParameters, TimedCache } from './lists.js';
import {
  channelNamesOf,
  channelProfileSchemas,
  clientPageSchema,
  countryName,
  countryPageSchema,
  historyPageSchema,
  historyPointJson,
  indexSchema,
  isPublicUser,
  operatorJson,
  operatorPageSchemas,
  serverPageSchema,
  statusSchema,
  userProfileSchemas,
  type ChannelProfile,
  type OperatorPage,
  type StatusAnswer,
  type UserProfile,
  type View,
} from './netstats-shapes.js';
import { networkStatsBody, requireReady } from './network.js';
import type { ApiConfig } from './schema.js';
import { serverBody } from './servers.js';
import { hostmaskOf } from './users.js';

export interface NetstatsOptions {
  model: NetworkModel;
  config: ApiConfig;
  /** The route table, for the index. */
  http: Pick<PluginHttp, 'routes'>;
  /** Where the stats plugin's activity and history are found. */
  services: Pick<PluginServices, 'get'>;
  /** The bot's own nick now: it is not counted in the distributions. */
  selfNick: () => string;
  clock?: () => Date;
}

/** The stats plugin's services, and the types of what they give. */
type ActivityService = Services['stats.activity'];
type HistoryService = Services['stats.history'];
type RecordsService = Services['stats.records'];
type DayActivity = NonNullable<ReturnType<ActivityService['day']>>;
type ChannelDay = Parameters<NonNullable<Parameters<ActivityService['topChannels']>[2]>>[0];

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const PUBLIC_PREFIX = '/network/data';
const TOKEN_PREFIX = '/api/netstats';
const PUBLIC_INDEX = '/network/netstats/api/index.json';
const DEFAULT_TOP = 10;
const MAX_TOP = 100;
const BUCKETS: Record<string, number> = { '5m': 5 * 60 * 1000, '1h': HOUR_MS, '1d': DAY_MS };
const EMPTY_HOURS: readonly number[] = Array.from({ length: 24 }, () => 0);

/** One endpoint, served in both tiers. Each handler declares its answer's type, read off the endpoint's schema. */
interface Endpoint {
  /** Short name: `netstats.<name>` on the token tier, `network.<name>` on the public one. */
  name: string;
  /** Path after the tier's prefix, e.g. `/channel/:channel/`. */
  path: string;
  summary: string;
  response: (view: View) => JsonSchema;
  queryParameters?: RouteDefinition['queryParameters'];
  handler: (request: ApiRequest, view: View) => unknown;
}

const topParameter = {
  name: 'top',
  description: `Entries in each "top" list (default ${DEFAULT_TOP}, at most ${MAX_TOP}).`,
  schema: { type: 'integer', minimum: 1, maximum: MAX_TOP, default: DEFAULT_TOP },
};

function topOf(request: ApiRequest): number {
  const text = request.query.get('top');
  if (text === null || text === '') return DEFAULT_TOP;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= MAX_TOP)) {
    throw invalidParameter('top', `must be an integer from 1 to ${MAX_TOP}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/** An ISO 8601 time (`2026-11-21`, `2026-11-21T14:00Z`, `...T14:00:00.000+01:00`); without a zone it is UTC. */
/** Whether `YYYY-MM-DD` names a real day: `Date.parse` takes 2026-02-30 for 2026-03-02. */
function isCalendarDate(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

function timeParameter(request: ApiRequest, name: string): number | undefined {
  const text = request.query.get(name);
  if (text === null || text === '') return undefined;
  const match = /^(\d{4}-\d\d-\d\d)(?:T(\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?)(Z|[+-]\d\d:?\d\d)?)?$/i.exec(text);
  const time = match ? Date.parse(`${match[1]}T${match[2] ?? '00:00'}${match[3] ?? 'Z'}`) : NaN;
  if (!match || Number.isNaN(time) || !isCalendarDate(match[1]!)) {
    throw invalidParameter(
      name,
      `must be an ISO 8601 time such as 2026-11-21T14:00:00Z or 2026-11-21; got ${JSON.stringify(text)}`,
    );
  }
  return time;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Percent of `total` with two decimals. */
function percentOf(users: number, total: number): number {
  return total === 0 ? 0 : Math.round((users / total) * 10000) / 100;
}

/**
 * `users` by what `keyOf` says of each (null: unknown): the `top` keys with the most users (ties by key),
 * each described by `describe`, the users of the other keys, the unknown and the total.
 */
function shares<Entry extends object>(
  users: readonly User[],
  top: number,
  keyOf: (user: User) => string | null,
  describe: (key: string) => Entry,
): { results: (Entry & { users: number; percent: number })[]; other: number; unknown: number; total: number } {
  const byKey = new Map<string, number>();
  let unknown = 0;
  for (const user of users) {
    const key = keyOf(user);
    if (key === null) unknown++;
    else byKey.set(key, (byKey.get(key) ?? 0) + 1);
  }
  const ranked = [...byKey].sort((a, b) => b[1] - a[1] || byCodeUnits(a[0], b[0]));
  const results = ranked
    .slice(0, top)
    .map(([key, count]) => ({ ...describe(key), users: count, percent: percentOf(count, users.length) }));
  const other = ranked.slice(top).reduce((sum, [, count]) => sum + count, 0);
  return { results, other, unknown, total: users.length };
}

export function netstatsRoutes(options: NetstatsOptions): RouteDefinition[] {
  const { model, config, http, services, selfNick } = options;
  const searchFold = searchFoldOf(model);
  const clock = options.clock ?? (() => new Date());

  // Asked at each request: the stats plugin's services, which the host starts before this plugin.
  const activityOf = (): ActivityService => services.get('stats.activity');
  const historyOf = (): HistoryService => services.get('stats.history');
  const recordsOf = (): RecordsService => services.get('stats.records');

  /** A channel of today's counts may be shown publicly: known and not hidden now, or (unknown now) not hidden then. */
  const publicChannel = (channel: ChannelDay): boolean => {
    const known = model.channels.get(channel.name);
    return known ? !known.hidden : !channel.hidden;
  };
  /** Users a distribution counts of `users`: neither the bot nor a service, and for the public view, publicly visible. */
  const countedUsers = (view: View, users: Iterable<User> = model.users.all()): User[] => {
    const self = model.fold(selfNick());
    return [...users].filter(
      (user) =>
        model.fold(user.nick) !== self &&
        !(user.server !== null && model.servers.get(user.server)?.isServices) &&
        (view === 'token' || isPublicUser(user)),
    );
  };
  const today = (): { activity: ActivityService; day: DayActivity | undefined; date: string; now: Date } => {
    const activity = activityOf();
    const now = clock();
    return { activity, day: activity.day(now), date: activity.dateOf(now), now };
  };

  const endpoints: Endpoint[] = [
    {
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
        const recent = historyOf().query(now.getTime() - DAY_MS, now.getTime());
        return {
          snapshot: networkStatsBody(model),
          date,
          time_zone: activity.timeZone.name,
          top_users_today: day ? activity.topNicks(day, top, include) : [],
          top_channels_today: (day ? activity.topChannels(day, top, include) : []).map((entry) => ({
            ...entry,
            users: model.channels.get(entry.name)?.users ?? null,
          })),
          history: historyOf().buckets(recent, HOUR_MS).map(historyPointJson),
          generated_at: now.toISOString(),
        };
      },
    },
    {
      name: 'channel',
      path: '/channel/:channel/',
      summary: 'Channel profile: overview, hourly lines, top users today',
      response: (view) => channelProfileSchemas[view],
      queryParameters: [topParameter],
      handler(request, view): ChannelProfile {
        requireReady(model);
        const name = request.params.channel ?? '';
        const channel = model.channels.get(name);
        if (!channel || (view === 'public' && channel.hidden)) {
          const hint = /^[#&+!]/.test(name) ? '' : ' (channel names start with #, written %23 in a path)';
          throw notFound('channel_not_found', `No ${view === 'public' ? 'visible ' : ''}channel named ${name}${hint}`);
        }
        const top = topOf(request);
        const { activity, day, date, now } = today();
        const counted = day ? activity.channelOn(day, channel.name) : undefined;
        // A count the collector has not heard of yet (it notes each as the model announces it) is the record now.
        const stored = recordsOf().channel(channel.name);
        const record = stored && stored.users >= channel.users ? stored : { users: channel.users, at: now.getTime() };
        const members = channel.joined ? countedUsers(view, channel.members.keys()) : null;
        return {
          channel: {
            name: channel.name,
            topic: channel.topic,
            users: channel.users,
            peak_users: Math.max(channel.users, counted?.peakUsers ?? 0),
            record_users: record.users,
            record_users_at: new Date(record.at).toISOString(),
            modes: channel.modes,
            created_at: channel.createdAt,
            ...(view === 'token' ? { hidden: channel.hidden } : {}),
          },
          date,
          time_zone: activity.timeZone.name,
          lines_counted: channel.joined,
          lines_today: counted ? counted.lines : channel.joined ? 0 : null,
          hourly_lines: counted?.hourly ? [...counted.hourly] : channel.joined || counted ? [...EMPTY_HOURS] : null,
          top_users_today: day ? activity.topSpeakers(day, channel.name, top) : [],
          member_clients:
            members &&
            shares(
              members,
              top,
              (user) => user.client,
              (client) => ({ client }),
            ),
          member_countries:
            members &&
            shares(
              members,
              top,
              (user) => user.countryCode,
              (code) => ({ country_code: code, country: countryName(code) }),
            ),
        };
      },
    },
    {
      name: 'user',
      path: '/user/:nick/',
      summary: 'User profile: overview and hourly activity',
      response: (view) => userProfileSchemas[view],
      handler(request, view): UserProfile {
        requireReady(model);
        const nick = request.params.nick ?? '';
        const { activity, day, date } = today();
        const user = model.users.get(nick);
        const counted = day ? activity.nickOn(day, nick) : undefined;
        const hourly = counted?.hourly ? [...counted.hourly] : [...EMPTY_HOURS];
        let lines = counted?.lines ?? 0;
        if (view === 'public' && counted) {
          lines -= counted.hiddenLines;
          counted.hiddenHourly?.forEach((hidden, hour) => (hourly[hour]! -= hidden));
        }
        const shown = user ? view === 'token' || isPublicUser(user) : lines > 0;
        if (!shown) throw notFound('user_not_found', `No user named ${nick} is online or was active today`);
        const countryCode = user?.countryCode ?? null;
        const profile = {
          nick: user?.nick ?? counted?.nick ?? nick,
          online: user !== undefined,
          server: user?.server ?? null,
          channels: user ? channelNamesOf(user, view === 'token') : [],
          away: user?.away ?? false,
          is_operator: user?.isOperator ?? false,
          client: user?.client ?? null,
          client_version: user?.clientVersion ?? null,
          country_code: countryCode,
          country: countryCode === null ? null : countryName(countryCode),
        };
        const sensitive =
          view === 'token'
            ? {
                ident: user?.ident ?? null,
                host: user?.host ?? null,
                hostmask: user ? hostmaskOf(user) : null,
                real_host: user?.realHost ?? null,
                ip: user?.ip ?? null,
                realname: user?.realname ?? null,
                account: user?.account ?? null,
              }
            : {};
        return {
          user: { ...profile, ...sensitive },
          date,
          time_zone: activity.timeZone.name,
          lines_today: lines,
          hourly_activity: hourly,
        };
      },
    },
    {
      name: 'countries',
      path: '/countries/',
      summary: 'Country distribution',
      response: () => countryPageSchema,
      queryParameters: listQueryParameters('the country code or name', ['users', 'country_code', 'country'], '-users'),
      handler(request, view): FromJsonSchema<typeof countryPageSchema> {
        requireReady(model);
        const users = countedUsers(view);
        const byCountry = new Map<string, number>();
        let unknown = 0;
        for (const user of users) {
          if (user.countryCode === null) unknown++;
          else byCountry.set(user.countryCode, (byCountry.get(user.countryCode) ?? 0) + 1);
        }
        const items = [...byCountry]
          .sort((a, b) => b[1] - a[1] || byCodeUnits(a[0], b[0]))
          .map(([code, count]) => ({
            country_code: code,
            country: countryName(code),
            users: count,
            percent: percentOf(count, users.length),
          }));
        const page = paginate(request, items, {
          orderingFields: ['users', 'country_code', 'country'],
          defaultOrdering: '-users',
          searchField: (item) => [item.country_code, item.country],
        });
        return { ...page, unknown, total: users.length };
      },
    },
    {
      name: 'clients',
      path: '/clients/',
      summary: 'IRC client distribution',
      response: () => clientPageSchema,
      queryParameters: listQueryParameters('the client name', ['users', 'client'], '-users'),
      handler(request, view): FromJsonSchema<typeof clientPageSchema> {
        requireReady(model);
        const users = countedUsers(view);
        const byClient = new Map<string, Map<string | null, number>>();
        let unknown = 0;
        for (const user of users) {
          if (user.client === null) {
            unknown++;
            continue;
          }
          let versions = byClient.get(user.client);
          if (!versions) byClient.set(user.client, (versions = new Map()));
          versions.set(user.clientVersion, (versions.get(user.clientVersion) ?? 0) + 1);
        }
        const items = [...byClient]
          .map(([client, versions]) => {
            const count = [...versions.values()].reduce((sum, users) => sum + users, 0);
            return {
              client,
              users: count,
              percent: percentOf(count, users.length),
              versions: [...versions]
                .sort((a, b) => b[1] - a[1] || byCodeUnits(a[0] ?? '', b[0] ?? ''))
                .map(([version, users]) => ({ version, users })),
            };
          })
          .sort((a, b) => b.users - a.users || byCodeUnits(a.client, b.client));
        const page = paginate(request, items, {
          orderingFields: ['users', 'client'],
          defaultOrdering: '-users',
          searchField: (item) => item.client,
        });
        return { ...page, unknown, total: users.length };
      },
    },
    {
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
        let points = historyOf().query(since, until);
        if (bucket !== '') points = historyOf().buckets(points, BUCKETS[bucket]!);
        return paginate(request, points.map(historyPointJson), { orderingFields: ['time'], defaultOrdering: 'time' });
      },
    },
    {
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
    },
    {
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
    },
  ];

  const routes: RouteDefinition[] = [];
  const indexRoute = (tier: 'public' | 'token'): RouteDefinition => ({
    method: 'GET',
    path: tier === 'public' ? PUBLIC_INDEX : `${TOKEN_PREFIX}/`,
    name: tier === 'public' ? 'network.index' : 'netstats.index',
    summary: 'Machine-readable index of the network statistics endpoints',
    tier,
    ...(tier === 'public' ? { maxAge: config.cache_seconds } : {}),
    response: indexSchema,
    handler: () => ({ body: { endpoints: indexOf(http.routes()) } }),
  });
  routes.push(indexRoute('public'), indexRoute('token'));
  // Today's counts change with every chat line, which no change event announces: answers are kept for reuse_ms.
  const answers = new TimedCache({ reuseMs: config.reuse_ms });
  for (const endpoint of endpoints) {
    for (const view of ['public', 'token'] as const) {
      routes.push({
        method: 'GET',
        path: `${view === 'public' ? PUBLIC_PREFIX : TOKEN_PREFIX}${endpoint.path}`,
        name: `${view === 'public' ? 'network' : 'netstats'}.${endpoint.name}`,
        summary: endpoint.summary,
        tier: view,
        ...(view === 'public' ? { maxAge: config.cache_seconds } : {}),
        response: endpoint.response(view),
        ...(endpoint.queryParameters ? { queryParameters: endpoint.queryParameters } : {}),
        handler: (request) => ({
          body: answers.get(`${view} ${request.path}?${request.search}`, () => endpoint.handler(request, view)),
        }),
      });
    }
  }
  return routes;
}

/**
 * The index, read from the route table: every `network.<name>` and `netstats.<name>` route,
 * paired by name, in the order they were registered.
 */
export function indexOf(
  routes: readonly { route: RouteDefinition }[],
): FromJsonSchema<typeof indexSchema>['endpoints'] {
  const entries = new Map<
    string,
    { name: string; public_path: string | null; token_path: string | null; description: string }
  >();
  for (const { route } of routes) {
    const match = /^(network|netstats)\.(.+)$/.exec(route.name);
    if (!match || route.method !== 'GET') continue;
    const name = match[2]!;
    const entry = entries.get(name) ?? { name, public_path: null, token_path: null, description: route.summary };
    if (match[1] === 'network') entry.public_path = openApiPath(route.path);
    else entry.token_path = openApiPath(route.path);
    entries.set(name, entry);
  }
  return [...entries.values()];
}
