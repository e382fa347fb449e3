/**
 * The shapes of the network statistics endpoints, as JSON schemas and as the
 * functions that build them from the model. Each shape comes in two views: the
 * public one (`/network/data/...`) never carries an ident, host, IP, real name
 * or account, nor a hidden channel or a user only seen in hidden channels; the
 * token one (`/api/netstats/...`) is the same plus the sensitive fields.
 */
import type { JsonSchema, Services, User } from '../../lib/sdk.js';
import { networkStatsSchema } from './network.js';
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

const nullableString = (description: string): JsonSchema => ({ type: ['string', 'null'], description });
const nullableCount = (description: string): JsonSchema => ({ type: ['integer', 'null'], minimum: 0, description });
const lineCount = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });

const hours = (description: string): JsonSchema => ({
  type: 'array',
  minItems: 24,
  maxItems: 24,
  items: { type: 'integer', minimum: 0 },
  description,
});

/** Fields every answer about "today" carries, so a client knows which day and clock it means. */
const dayProperties = {
  date: {
    type: 'string',
    pattern: '^\\d{4}-\\d\\d-\\d\\d$',
    description: 'Today in the collector\'s time zone (`plugins.stats.time_zone`): the day "today" means.',
  },
  time_zone: { type: 'string', description: 'The IANA time zone of `date` and of the hours, e.g. "UTC".' },
} as const;

export const nickLinesSchema: JsonSchema = {
  type: 'object',
  required: ['nick', 'lines'],
  additionalProperties: false,
  properties: { nick: { type: 'string' }, lines: lineCount('Lines today.') },
};

const topUsers = (view: View): JsonSchema => ({
  type: 'array',
  items: nickLinesSchema,
  description:
    view === 'public'
      ? 'Most lines today first, ties by nick; only lines in public channels count.'
      : 'Most lines today first, ties by nick; lines in every channel the collector is in count.',
});

export const historyPointSchema: JsonSchema = {
  type: 'object',
  required: ['time', 'users', 'channels', 'operators', 'servers', 'max_users'],
  additionalProperties: false,
  properties: {
    time: { type: 'string', format: 'date-time', description: 'When the point was taken, or its bucket starts.' },
    users: nullableCount('Users online (LUSERS); in a bucket, the most.'),
    channels: nullableCount('Channels formed; in a bucket, the most.'),
    operators: nullableCount('IRC operators online; in a bucket, the most.'),
    servers: nullableCount('Linked servers; in a bucket, the most.'),
    max_users: nullableCount("The network's own record of users at once."),
  },
};

/** One point of the stats plugin's history. */
type HistoryPoint = ReturnType<Services['stats.history']['query']>[number];

export function historyPointJson(point: HistoryPoint) {
  return {
    time: new Date(point.time).toISOString(),
    users: point.users,
    channels: point.channels,
    operators: point.operators,
    servers: point.servers,
    max_users: point.maxUsers,
  };
}

export const indexSchema: JsonSchema = {
  type: 'object',
  required: ['endpoints'],
  additionalProperties: false,
  properties: {
    endpoints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'public_path', 'token_path', 'description'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', description: 'Short name, e.g. "status"; the token endpoint is `netstats.<name>`.' },
          public_path: nullableString('Path under /network/ (no authentication); `{channel}`-style parameters.'),
          token_path: nullableString('Path under /api/netstats/ (an API token approved for `netstats.<name>`).'),
          description: { type: 'string' },
        },
      },
    },
  },
};

export function statusSchema(view: View): JsonSchema {
  return {
    type: 'object',
    required: ['snapshot', 'date', 'time_zone', 'top_users_today', 'top_channels_today', 'history', 'generated_at'],
    additionalProperties: false,
    properties: {
      snapshot: { ...networkStatsSchema, description: 'The network stats, as `GET /api/irc/stats/` gives them.' },
      ...dayProperties,
      top_users_today: topUsers(view),
      top_channels_today: {
        type: 'array',
        description:
          view === 'public'
            ? 'Most lines today first, ties by name; public channels only.'
            : 'Most lines today first, ties by name; secret and private channels included.',
        items: {
          type: 'object',
          required: ['name', 'lines', 'users'],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            lines: lineCount('Lines today.'),
            users: nullableCount('Users in it now; null when the collector no longer knows the channel.'),
          },
        },
      },
      history: {
        type: 'array',
        items: historyPointSchema,
        description: 'The last 24 hours in hourly buckets (the most of each number per hour), oldest first.',
      },
      generated_at: { type: 'string', format: 'date-time' },
    },
  };
}

export function channelProfileSchema(view: View): JsonSchema {
  const channelProperties: Record<string, JsonSchema> = {
    name: { type: 'string' },
    topic: { type: 'string', description: 'Empty when none is set.' },
    users: { type: 'integer', minimum: 0, description: 'Users in it now.' },
    peak_users: {
      type: 'integer',
      minimum: 0,
      description: 'The most users the collector saw in it at once today (at least `users`).',
    },
    modes: { type: 'string', description: 'Modes without parameters (never a key), e.g. "+nt".' },
    created_at: { type: ['string', 'null'], format: 'date-time', description: 'When the channel was created.' },
  };
  if (view === 'token') channelProperties.hidden = { type: 'boolean', description: 'Secret (+s) or private (+p).' };
  return {
    type: 'object',
    required: ['channel', 'date', 'time_zone', 'lines_counted', 'lines_today', 'hourly_lines', 'top_users_today'],
    additionalProperties: false,
    properties: {
      channel: {
        type: 'object',
        required: Object.keys(channelProperties),
        additionalProperties: false,
        properties: channelProperties,
      },
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
    },
  };
}

export function userProfileSchema(view: View): JsonSchema {
  const userProperties: Record<string, JsonSchema> = {
    nick: { type: 'string' },
    online: { type: 'boolean', description: 'Whether the user is connected now (else they were active today).' },
    server: nullableString('The server the user is on.'),
    channels: {
      type: 'array',
      items: { type: 'string' },
      description:
        view === 'public'
          ? 'Public channels the collector sees the user in.'
          : 'Channels the collector sees the user in, secret and private ones included.',
    },
    away: { type: 'boolean' },
    is_operator: { type: 'boolean' },
    client: nullableString('The IRC client, from its CTCP VERSION reply; null until known.'),
    client_version: nullableString('The client version from that reply, when it names one.'),
    country_code: nullableString('ISO 3166-1 alpha-2 country; null when unknown.'),
    country: nullableString('The English name of that country.'),
  };
  if (view === 'token') {
    Object.assign(userProperties, {
      ident: nullableString('The user name (ident) part of the hostmask.'),
      host: nullableString('The host as the network shows it (possibly cloaked).'),
      hostmask: nullableString('nick!ident@host'),
      real_host: realHostSchema,
      ip: nullableString('The IP address; only seen when the collector is an IRC operator.'),
      realname: nullableString('The real name (gecos).'),
      account: nullableString('The NickServ account the user is logged in to.'),
    });
  }
  return {
    type: 'object',
    required: ['user', 'date', 'time_zone', 'lines_today', 'hourly_activity'],
    additionalProperties: false,
    properties: {
      user: {
        type: 'object',
        required: Object.keys(userProperties),
        additionalProperties: false,
        properties: userProperties,
      },
      ...dayProperties,
      lines_today: lineCount(
        view === 'public' ? 'Lines today in public channels.' : 'Lines today in every channel the collector is in.',
      ),
      hourly_activity: hours(
        'Lines per hour of today (index 0 is 00:00–00:59 in `time_zone`)' +
          (view === 'public' ? ', in public channels.' : ', in every channel.'),
      ),
    },
  };
}

const percent: JsonSchema = {
  type: 'number',
  minimum: 0,
  maximum: 100,
  description: 'Share of all users counted (`total`), unknown ones included; two decimals.',
};

export const countrySchema: JsonSchema = {
  type: 'object',
  required: ['country_code', 'country', 'users', 'percent'],
  additionalProperties: false,
  properties: {
    country_code: { type: 'string', description: 'ISO 3166-1 alpha-2.' },
    country: { type: 'string', description: 'English name.' },
    users: { type: 'integer', minimum: 1 },
    percent,
  },
};

export const clientSchema: JsonSchema = {
  type: 'object',
  required: ['client', 'users', 'percent', 'versions'],
  additionalProperties: false,
  properties: {
    client: { type: 'string' },
    users: { type: 'integer', minimum: 1 },
    percent,
    versions: {
      type: 'array',
      description: 'Most users first; `version` is null for replies that named none.',
      items: {
        type: 'object',
        required: ['version', 'users'],
        additionalProperties: false,
        properties: { version: { type: ['string', 'null'] }, users: { type: 'integer', minimum: 1 } },
      },
    },
  },
};

/** Fields a distribution page carries besides the list envelope. */
export function distributionExtra(what: string): Record<string, JsonSchema> {
  return {
    unknown: { type: 'integer', minimum: 0, description: `Users counted whose ${what} is not known.` },
    total: { type: 'integer', minimum: 0, description: 'Users counted: every item plus `unknown`.' },
  };
}

export function operatorSchema(view: View): JsonSchema {
  const properties: Record<string, JsonSchema> = {
    nick: { type: 'string' },
    server: nullableString('The server the operator is on.'),
    away: { type: 'boolean' },
  };
  if (view === 'token') {
    Object.assign(properties, {
      account: nullableString('The NickServ account the operator is logged in to.'),
      hostmask: nullableString('nick!ident@host'),
      real_host: realHostSchema,
      ip: nullableString('The IP address; only seen when the collector is an IRC operator.'),
    });
  }
  return { type: 'object', required: Object.keys(properties), additionalProperties: false, properties };
}

export function operatorJson(user: User, view: View) {
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

/**
 * Users a public answer may name: those the bot sees in at least one public channel, or in no channel at all,
 * unless the bot left a secret or private channel they were in (they may still be there; see
 * {@link User.inUnwatchedHiddenChannel}).
 */
export function isPublicUser(user: User): boolean {
  for (const channel of user.channels) if (!channel.hidden) return true;
  return user.channels.size === 0 && !user.inUnwatchedHiddenChannel;
}
