/**
 * `GET /api/irc/users/` and `/api/irc/users/{nick}/` (token tier: `irc.users`, `irc.user`):
 * every user the collector sees, with the sensitive fields it saw (hostmask, IP,
 * account). A field the bot could not see is null.
 */
import {
  type FromJsonSchema,
  notFound,
  paginate,
  searchFoldOf,
  type NetworkModel,
  type RouteDefinition,
  type User,
} from '../../lib/sdk.js';
import { ListCache, type ReuseOptions, listQueryParameters, pageSchema, type ModelChangeSubscriber } from './lists.js';
import { requireReady } from './network.js';

const nullableString = (description: string) => ({ type: ['string', 'null'], description }) as const;

/** `real_host`, wherever the token tier shows a user. */
export const realHostSchema = nullableString(
  'The host behind any cloak or vhost. Only an IRC operator sees it: the collector asks on InspIRCd, and takes ' +
    'it from a WHOIS elsewhere (the bot seldom asks one); null until seen.',
);

export const userSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'nick',
    'ident',
    'host',
    'hostmask',
    'real_host',
    'ip',
    'realname',
    'account',
    'server',
    'channels',
    'away',
    'is_operator',
    'client',
    'country_code',
    'connected_at',
  ],
  properties: {
    nick: { type: 'string' },
    ident: nullableString('The user name (ident) part of the hostmask.'),
    host: nullableString('The host as the network shows it (possibly cloaked).'),
    hostmask: nullableString('nick!ident@host'),
    real_host: realHostSchema,
    ip: nullableString('The IP address; only seen when the bot is an IRC operator.'),
    realname: nullableString('The real name (gecos).'),
    account: nullableString('The NickServ account the user is logged in to.'),
    server: nullableString('The server the user is connected to.'),
    channels: { type: 'array', items: { type: 'string' }, description: 'Channels the bot saw the user in.' },
    away: { type: 'boolean' },
    is_operator: { type: 'boolean' },
    client: nullableString('The IRC client (CTCP VERSION); null until it is known.'),
    country_code: nullableString('ISO 3166-1 alpha-2 country; null until it is known.'),
    connected_at: {
      type: 'string',
      format: 'date-time',
      description: 'When the bot first saw the user (the network does not tell when they connected).',
    },
  },
} as const;

export function hostmaskOf(user: User): string | null {
  return user.ident !== null && user.host !== null ? `${user.nick}!${user.ident}@${user.host}` : null;
}

/** A user as the token tier shows it; its type is the schema's. */
export function userJson(user: User): FromJsonSchema<typeof userSchema> {
  return {
    nick: user.nick,
    ident: user.ident,
    host: user.host,
    hostmask: hostmaskOf(user),
    real_host: user.realHost,
    ip: user.ip,
    realname: user.realname,
    account: user.account,
    server: user.server,
    channels: [...user.channels].map((channel) => channel.name).sort(),
    away: user.away,
    is_operator: user.isOperator,
    client: user.client,
    country_code: user.countryCode,
    connected_at: user.firstSeenAt,
  };
}

const ORDERING = ['nick', 'account', 'server', 'host', 'ip', 'connected_at'];

/** What `?search=` looks in. */
function searchField(user: User): string[] {
  return [user.nick, user.host ?? '', user.realHost ?? '', user.ip ?? '', user.account ?? ''];
}

/** The value `?ordering=` sorts a user by, as its JSON field shows it. */
function orderingValue(user: User, field: string): unknown {
  switch (field) {
    case 'nick':
      return user.nick;
    case 'account':
      return user.account;
    case 'server':
      return user.server;
    case 'host':
      return user.host;
    case 'ip':
      return user.ip;
    case 'connected_at':
      return user.firstSeenAt;
    default:
      return undefined;
  }
}

export function userRoutes(
  model: NetworkModel,
  onChange: ModelChangeSubscriber = (listener) => model.on('change', listener),
  reuse: ReuseOptions = { reuseMs: 0 },
): RouteDefinition[] {
  const pages = new ListCache<ReturnType<typeof paginate<ReturnType<typeof userJson>>>>(onChange, reuse);
  const searchFold = searchFoldOf(model);
  return [
    {
      method: 'GET',
      path: '/api/irc/users/',
      name: 'irc.users',
      summary: 'List of connected users, including hostmasks',
      tier: 'token',
      response: pageSchema(userSchema),
      queryParameters: listQueryParameters('the nick, host, real host, IP or account', ORDERING, 'nick'),
      handler(request) {
        requireReady(model);
        const body = pages.get(request.search, () =>
          // Filtered and ordered on the model's users: only the page is turned into JSON.
          // The users as they are, not copied (see ListItems).
          paginate(
            request,
            { size: model.users.size, [Symbol.iterator]: () => model.users.all() },
            {
              orderingFields: ORDERING,
              defaultOrdering: 'nick',
              orderingValue,
              present: userJson,
              searchFold,
              searchField,
            },
          ),
        );
        return { body };
      },
    },
    {
      method: 'GET',
      path: '/api/irc/users/:nick/',
      name: 'irc.user',
      summary: 'Details of one user',
      tier: 'token',
      response: userSchema,
      handler(request) {
        requireReady(model);
        const nick = request.params.nick ?? '';
        const user = model.users.get(nick);
        if (!user) throw notFound('user_not_found', `No connected user named ${nick}`);
        return { body: userJson(user) };
      },
    },
  ];
}
