/**
 * What the network statistics endpoints share (netstats-*.ts): the shape of an endpoint, served in both
 * tiers; the stats plugin's services and today's counts; which users and channels each view counts; the
 * `top`, `since` and `until` parameters; and the shares of a distribution.
 */
import {
  invalidParameter,
  searchFoldOf,
  type ApiRequest,
  type JsonSchema,
  type NetworkModel,
  type PluginServices,
  type RouteDefinition,
  type Services,
  type User,
  isPublicUser,
} from '../../lib/sdk.js';
import type { View } from './netstats-shapes.js';

/** The stats plugin's services, and the types of what they give. */
type ActivityService = Services['stats.activity'];
type HistoryService = Services['stats.history'];
type RecordsService = Services['stats.records'];
type DayActivity = NonNullable<ReturnType<ActivityService['day']>>;
type ChannelDay = Parameters<NonNullable<Parameters<ActivityService['topChannels']>[2]>>[0];

export const HOUR_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * HOUR_MS;
const DEFAULT_TOP = 10;
const MAX_TOP = 100;
export const EMPTY_HOURS: readonly number[] = Array.from({ length: 24 }, () => 0);

/** One endpoint, served in both tiers. Each handler declares its answer's type, read off the endpoint's schema. */
export interface Endpoint {
  /** Short name: `netstats.<name>` on the token tier, `network.<name>` on the public one. */
  name: string;
  /** Path after the tier's prefix, e.g. `/channel/:channel/`. */
  path: string;
  summary: string;
  response: (view: View) => JsonSchema;
  queryParameters?: RouteDefinition['queryParameters'];
  handler: (request: ApiRequest, view: View) => unknown;
}

/** What the endpoints read: the model, the stats plugin's services (asked at each request), today. */
export interface NetstatsContext {
  model: NetworkModel;
  /** Folds a search the way the network folds nicks. */
  searchFold: (text: string) => string;
  history(): HistoryService;
  records(): RecordsService;
  /** Today's counts (none before the first line of the day), the date and the time it is. */
  today(): { activity: ActivityService; day: DayActivity | undefined; date: string; now: Date };
  /** A channel of today's counts may be shown publicly: known and not hidden now, or (unknown now) not hidden then. */
  publicChannel(channel: ChannelDay): boolean;
  /** Users a distribution counts of `users`: neither the bot nor a service, and for the public view, publicly visible. */
  countedUsers(view: View, users?: Iterable<User>): User[];
}

export interface NetstatsContextOptions {
  model: NetworkModel;
  /** Where the stats plugin's activity and history are found. */
  services: Pick<PluginServices, 'get'>;
  /** The bot's own nick now: it is not counted in the distributions. */
  selfNick: () => string;
  clock: () => Date;
}

export function netstatsContext({ model, services, selfNick, clock }: NetstatsContextOptions): NetstatsContext {
  // Asked at each request: the stats plugin's services, which the host starts before this plugin.
  const activity = (): ActivityService => services.get('stats.activity');
  return {
    model,
    searchFold: searchFoldOf(model),
    history: () => services.get('stats.history'),
    records: () => services.get('stats.records'),
    today() {
      const service = activity();
      const now = clock();
      return { activity: service, day: service.day(now), date: service.dateOf(now), now };
    },
    publicChannel(channel) {
      const known = model.channels.get(channel.name);
      return known ? !known.hidden : !channel.hidden;
    },
    countedUsers(view, users = model.users.all()) {
      const self = model.fold(selfNick());
      return [...users].filter(
        (user) =>
          model.fold(user.nick) !== self &&
          !(user.server !== null && model.servers.get(user.server)?.isServices) &&
          (view === 'token' || isPublicUser(user)),
      );
    },
  };
}

export const topParameter = {
  name: 'top',
  description: `Entries in each "top" list (default ${DEFAULT_TOP}, at most ${MAX_TOP}).`,
  schema: { type: 'integer', minimum: 1, maximum: MAX_TOP, default: DEFAULT_TOP },
};

export function topOf(request: ApiRequest): number {
  const text = request.query.get('top');
  if (text === null || text === '') return DEFAULT_TOP;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= MAX_TOP)) {
    throw invalidParameter('top', `must be an integer from 1 to ${MAX_TOP}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Whether `YYYY-MM-DD` names a real day: `Date.parse` takes 2026-02-30 for 2026-03-02. */
function isCalendarDate(date: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

/**
 * The query parameter `name` as an ISO 8601 time (`2026-11-21`, `2026-11-21T14:00Z`,
 * `...T14:00:00.000+01:00`; without a zone it is UTC), in ms since the epoch; undefined when not given.
 */
export function timeParameter(request: ApiRequest, name: string): number | undefined {
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

export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Percent of `total` with two decimals. */
export function percentOf(users: number, total: number): number {
  return total === 0 ? 0 : Math.round((users / total) * 10000) / 100;
}

/**
 * `users` by what `keyOf` says of each (null: unknown): the `top` keys with the most users (ties by key),
 * each described by `describe`, the users of the other keys, the unknown and the total.
 */
export function shares<Entry extends object>(
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
