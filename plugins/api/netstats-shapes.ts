/**
 * The shapes of the network statistics endpoints, as JSON schemas and as the
 * functions that build them from the model. Each shape comes in two views: the
 * public one (`/network/data/...`) never carries an ident, host, IP, real name
 * or account, nor a hidden channel or a user only seen in hidden channels; the
 * token one (`/api/netstats/...`) is the same plus the sensitive fields.
 */
import type { FromJsonSchema, Services, TypedJsonSchema, User } from '../../lib/sdk.js';
import { pageSchema } from './lists.js';
import { networkStatsSchema } from './network.js';
import { serverSchema } from './servers.js';
import { hostmaskOf, realHostSchema } from './users.js';

export type View = 'public' | 'token';

const countryNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** The English name of a country code (`DE` → Germany); the code itself when the runtime has no name for it. */
export function countryName(code: string): string {
  try {
    return countryNames.of(code) ?? code;
  } catch {
    return code;
  }
}

const nullableString = (description: string) => ({ type: ['string', 'null'], description }) as const;
const nullableCount = (description: string) => ({ type: ['integer', 'null'], minimum: 0, description }) as const;
const lineCount = (description: string) => ({ type: 'integer', minimum: 0, description }) as const;

/**
 * 24 counts, one per hour. The lengths are left out of the type (a 24-tuple type is too deep to read off a
 * schema); the schema itself keeps them.
 */
const hours = (description: string) =>
  ({
    type: 'array',
    ...({ minItems: 24, maxItems: 24 } as object),
    items: { type: 'integer', minimum: 0 },
    description,
  }) as const;

/** Text that depends on the view, as a plain string: a union of literals would make the schema's type a union. */
const byView = (view: View, ifPublic: string, ifToken: string): string => (view === 'public' ? ifPublic : ifToken);

/** An object schema whose every property is required: the shape of a fixed answer object. */
function objectOf<const Properties extends Record<string, TypedJsonSchema>>(properties: Properties) {
  return {
    type: 'object',
    required: Object.keys(properties) as (keyof Properties & string)[],
    additionalProperties: false,
    properties,
  } as const;
}

/** Fields every answer about "today" carries, so a client knows which day and clock it means. */
const dayProperties = {
  date: {
    type: 'string',
    pattern: '^\\d{4}-\\d\\d-\\d\\d$',
    description: 'Today in the collector\'s time zone (`plugins.stats.time_zone`): the day "today" means.',
  },
  time_zone: { type: 'string', description: 'The IANA time zone of `date` and of the hours, e.g. "UTC".' },
} as const;

export const nickLinesSchema = objectOf({ nick: { type: 'string' }, lines: lineCount('Lines today.') });

const topUsers = (view: View) =>
  ({
    type: 'array',
    items: nickLinesSchema,
    description: byView(
      view,
      'Most lines today first, ties by nick; only lines in public channels count.',
      'Most lines today first, ties by nick; lines in every channel the collector is in count.',
    ),
  }) as const;

export const historyPointSchema = objectOf({
  time: { type: 'string', format: 'date-time', description: 'When the point was taken, or its bucket starts.' },
  users: nullableCount('Users online (LUSERS); in a bucket, the most.'),
  channels: nullableCount('Channels formed; in a bucket, the most.'),
  operators: nullableCount('IRC operators online; in a bucket, the most.'),
  servers: nullableCount('Linked servers; in a bucket, the most.'),
  max_users: nullableCount("The network's own record of users at once."),
});

/** One point of the stats plugin's history. */
type HistoryPoint = ReturnType<Services['stats.history']['query']>[number];

export function historyPointJson(point: HistoryPoint): FromJsonSchema<typeof historyPointSchema> {
  return {
    time: new Date(point.time).toISOString(),
    users: point.users,
    channels: point.channels,
    operators: point.operators,
    servers: point.servers,
    max_users: point.maxUsers,
  };
}

export const indexSchema = objectOf({
  endpoints: {
    type: 'array',
    items: objectOf({
      name: { type: 'string', description: 'Short name, e.g. "status"; the token endpoint is `netstats.<name>`.' },
      public_path: nullableString('Path under /network/ (no authentication); `{channel}`-style parameters.'),
      token_path: nullableString('Path under /api/netstats/ (an API token approved for `netstats.<name>`).'),
      description: { type: 'string' },
    }),
  },
});

export function statusSchema(view: View) {
  return objectOf({
    snapshot: { ...networkStatsSchema, description: 'The network stats, as `GET /api/irc/stats/` gives them.' },
    ...dayProperties,
    top_users_today: topUsers(view),
    top_channels_today: {
      type: 'array',
      description: byView(
        view,
        'Most lines today first, ties by name; public channels only.',
        'Most lines today first, ties by name; secret and private channels included.',
      ),
      items: objectOf({
        name: { type: 'string' },
        lines: lineCount('Lines today.'),
        users: nullableCount('Users in it now; null when the collector no longer knows the channel.'),
      }),
    },
    history: {
      type: 'array',
      items: historyPointSchema,
      description: 'The last 24 hours in hourly buckets (the most of each number per hour), oldest first.',
    },
    generated_at: { type: 'string', format: 'date-time' },
  });
}
export type StatusAnswer = FromJsonSchema<ReturnType<typeof statusSchema>>;

const channelProperties = {
  name: { type: 'string' },
  topic: { type: 'string', description: 'Empty when none is set.' },
  users: { type: 'integer', minimum: 0, description: 'Users in it now.' },
  peak_users: {
    type: 'integer',
    minimum: 0,
    description: 'The most users the collector saw in it at once today (at least `users`).',
  },
  record_users: {
    type: 'integer',
    minimum: 0,
    description:
      "The channel's record: the most users the collector has seen in it at once, at least `users`. Counted " +
      'whether the bot sits in the channel (its members, at every join) or not (the count LIST gives at every ' +
      'sync, so a short peak between two syncs is missed), since the collector first saw the channel; kept ' +
      'across restarts. The record of a channel that empties stays for when it forms again, unless the channel ' +
      'is still gone at a midnight after `plugins.stats.retention_days` without a new record: then it is ' +
      'forgotten, and starts again from the users seen next.',
  },
  record_users_at: {
    type: 'string',
    format: 'date-time',
    description: 'When the collector first saw the channel with `record_users` users.',
  },
  modes: { type: 'string', description: 'Modes without parameters (never a key), e.g. "+nt".' },
  created_at: { type: ['string', 'null'], format: 'date-time', description: 'When the channel was created.' },
} as const;

/** The token view's channel adds whether it is hidden. */
const tokenChannelProperties = {
  ...channelProperties,
  hidden: { type: 'boolean', description: 'Secret (+s) or private (+p).' },
} as const;

/** A share of a channel's members, in an entry of `member_clients` or `member_countries`. */
const memberCount = { type: 'integer', minimum: 1, description: 'Members counted with it.' } as const;
const memberPercent = {
  type: 'number',
  minimum: 0,
  maximum: 100,
  description: 'Share of the members counted (`total`), unknown ones included; two decimals.',
} as const;

/** The members of a channel by what `what` is: the first `top` entries, the rest, the unknown and the total. */
function memberShares<const Item extends Record<string, TypedJsonSchema>>(
  what: string,
  whats: string,
  item: Item,
  view: View,
) {
  return {
    type: ['object', 'null'],
    required: ['results', 'other', 'unknown', 'total'],
    additionalProperties: false,
    description:
      `The channel's members by ${what}, counted now: every member but the bot itself and users on a services ` +
      'server' +
      byView(view, ', and (as in every public answer) users seen only in secret or private channels', '') +
      '. Null when the collector is not in the channel (`lines_counted` is false), since it then does not know ' +
      'the members.',
    properties: {
      results: {
        type: 'array',
        description: `Up to \`top\` ${whats}, those with the most members, most first (ties by name).`,
        items: objectOf({ ...item, users: memberCount, percent: memberPercent }),
      },
      other: {
        type: 'integer',
        minimum: 0,
        description: `Members whose ${what} is known but not among \`results\`.`,
      },
      unknown: { type: 'integer', minimum: 0, description: `Members counted whose ${what} is not known.` },
      total: {
        type: 'integer',
        minimum: 0,
        description: 'Members counted: the users of `results`, plus `other` and `unknown`.',
      },
    },
  } as const;
}

function channelProfileOf<Channel extends TypedJsonSchema>(channel: Channel, view: View) {
  return objectOf({
    channel,
    ...dayProperties,
    lines_counted: {
      type: 'boolean',
      description:
        'Whether the collector sits in the channel now and counts its lines. A channel it is not in has users ' +
        'and topic but no line counts: `lines_today` and `hourly_lines` are then null, unless it sat in the ' +
        'channel earlier today (they count that time only).',
    },
    lines_today: {
      type: ['integer', 'null'],
      minimum: 0,
      description: 'Lines in the channel today, while the collector sat in it; null when it never did today.',
    },
    hourly_lines: {
      ...hours('Lines per hour of today: index 0 is 00:00–00:59 in `time_zone` (UTC by default).'),
      type: ['array', 'null'],
    },
    top_users_today: { type: 'array', items: nickLinesSchema, description: 'Most lines today first, ties by nick.' },
    member_clients: memberShares('IRC client', 'clients', { client: { type: 'string' } }, view),
    member_countries: memberShares(
      'country',
      'countries',
      {
        country_code: { type: 'string', description: 'ISO 3166-1 alpha-2.' },
        country: { type: 'string', description: 'English name.' },
      },
      view,
    ),
  });
}

/** The channel profile in each view. */
export const channelProfileSchemas = {
  public: channelProfileOf(objectOf(channelProperties), 'public'),
  token: channelProfileOf(objectOf(tokenChannelProperties), 'token'),
};
export type ChannelProfile =
  FromJsonSchema<typeof channelProfileSchemas.public> | FromJsonSchema<typeof channelProfileSchemas.token>;

const userProperties = (view: View) =>
  ({
    nick: { type: 'string' },
    online: { type: 'boolean', description: 'Whether the user is connected now (else they were active today).' },
    server: nullableString('The server the user is on.'),
    channels: {
      type: 'array',
      items: { type: 'string' },
      description: byView(
        view,
        'Public channels the collector sees the user in.',
        'Channels the collector sees the user in, secret and private ones included.',
      ),
    },
    away: { type: 'boolean' },
    is_operator: { type: 'boolean' },
    client: nullableString('The IRC client, from its CTCP VERSION reply; null until known.'),
    client_version: nullableString('The client version from that reply, when it names one.'),
    country_code: nullableString('ISO 3166-1 alpha-2 country; null when unknown.'),
    country: nullableString('The English name of that country.'),
  }) as const;

/** What only the token view shows of a user. */
const sensitiveUserProperties = {
  ident: nullableString('The user name (ident) part of the hostmask.'),
  host: nullableString('The host as the network shows it (possibly cloaked).'),
  hostmask: nullableString('nick!ident@host'),
  real_host: realHostSchema,
  ip: nullableString('The IP address; only seen when the collector is an IRC operator.'),
  realname: nullableString('The real name (gecos).'),
  account: nullableString('The NickServ account the user is logged in to.'),
} as const;

function userProfileOf<UserSchema extends TypedJsonSchema>(user: UserSchema, view: View) {
  return objectOf({
    user,
    ...dayProperties,
    lines_today: lineCount(
      byView(view, 'Lines today in public channels.', 'Lines today in every channel the collector is in.'),
    ),
    hourly_activity: hours(
      'Lines per hour of today (index 0 is 00:00–00:59 in `time_zone`)' +
        byView(view, ', in public channels.', ', in every channel.'),
    ),
  });
}

/** The user profile in each view. */
export const userProfileSchemas = {
  public: userProfileOf(objectOf(userProperties('public')), 'public'),
  token: userProfileOf(objectOf({ ...userProperties('token'), ...sensitiveUserProperties }), 'token'),
};
export type UserProfile =
  FromJsonSchema<typeof userProfileSchemas.public> | FromJsonSchema<typeof userProfileSchemas.token>;

const percent = {
  type: 'number',
  minimum: 0,
  maximum: 100,
  description: 'Share of all users counted (`total`), unknown ones included; two decimals.',
} as const;

export const countrySchema = objectOf({
  country_code: { type: 'string', description: 'ISO 3166-1 alpha-2.' },
  country: { type: 'string', description: 'English name.' },
  users: { type: 'integer', minimum: 1 },
  percent,
});

export const clientSchema = objectOf({
  client: { type: 'string' },
  users: { type: 'integer', minimum: 1 },
  percent,
  versions: {
    type: 'array',
    description: 'Most users first; `version` is null for replies that named none.',
    items: objectOf({ version: { type: ['string', 'null'] }, users: { type: 'integer', minimum: 1 } }),
  },
});

/** Fields a distribution page carries besides the list envelope. */
export function distributionExtra(what: string) {
  return {
    unknown: { type: 'integer', minimum: 0, description: `Users counted whose ${what} is not known.` },
    total: { type: 'integer', minimum: 0, description: 'Users counted: every item plus `unknown`.' },
  } as const;
}

export const countryPageSchema = pageSchema(countrySchema, distributionExtra('country'));
export const clientPageSchema = pageSchema(clientSchema, distributionExtra('client'));
export const historyPageSchema = pageSchema(historyPointSchema);
export const serverPageSchema = pageSchema(serverSchema);

const operatorProperties = {
  nick: { type: 'string' },
  server: nullableString('The server the operator is on.'),
  away: { type: 'boolean' },
} as const;

/** An operator in each view. */
export const operatorSchemas = {
  public: objectOf(operatorProperties),
  token: objectOf({
    ...operatorProperties,
    account: nullableString('The NickServ account the operator is logged in to.'),
    hostmask: nullableString('nick!ident@host'),
    real_host: realHostSchema,
    ip: nullableString('The IP address; only seen when the collector is an IRC operator.'),
  }),
};

export const operatorPageSchemas = {
  public: pageSchema(operatorSchemas.public),
  token: pageSchema(operatorSchemas.token),
};
type Operator = FromJsonSchema<typeof operatorSchemas.public> | FromJsonSchema<typeof operatorSchemas.token>;
export type OperatorPage =
  FromJsonSchema<typeof operatorPageSchemas.public> | FromJsonSchema<typeof operatorPageSchemas.token>;

export function operatorJson(user: User, view: View): Operator {
  const shown = { nick: user.nick, server: user.server, away: user.away };
  return view === 'public'
    ? shown
    : { ...shown, account: user.account, hostmask: hostmaskOf(user), real_host: user.realHost, ip: user.ip };
}

/** The user's channels as names, sorted; `includeHidden` for the token view. */
export function channelNamesOf(user: User, includeHidden: boolean): string[] {
  const names: string[] = [];
  for (const channel of user.channels) if (includeHidden || !channel.hidden) names.push(channel.name);
  return names.sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));
}
