/**
 * `GET /api/irc/opers/` and `/api/irc/opers/{name}/` (token tier: `irc.opers`, `irc.oper`):
 * the IRC operators the collector sees, by nick. Without operator status the bot may
 * miss invisible (+i) operators who share no channel with it.
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
import { requireReady } from './network.js';
import { listQueryParameters, pageSchema } from './lists.js';
import { hostmaskOf, realHostSchema } from './users.js';

export const operatorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['nick', 'account', 'hostmask', 'real_host', 'ip', 'server', 'away'],
  properties: {
    nick: { type: 'string' },
    account: { type: ['string', 'null'], description: 'The NickServ account the operator is logged in to.' },
    hostmask: { type: ['string', 'null'], description: 'nick!ident@host' },
    real_host: realHostSchema,
    ip: { type: ['string', 'null'], description: 'The IP address; only seen when the bot is an IRC operator.' },
    server: { type: ['string', 'null'], description: 'The server the operator is connected to.' },
    away: { type: 'boolean' },
  },
} as const;

/** An operator as the token tier lists it; its type is the schema's. */
const operatorPageSchema = pageSchema(operatorSchema);

export function operatorJson(user: User): FromJsonSchema<typeof operatorSchema> {
  return {
    nick: user.nick,
    account: user.account,
    hostmask: hostmaskOf(user),
    real_host: user.realHost,
    ip: user.ip,
    server: user.server,
    away: user.away,
  };
}

const ORDERING = ['nick', 'account', 'server', 'ip'];

export function operatorRoutes(model: NetworkModel): RouteDefinition[] {
  const searchFold = searchFoldOf(model);
  return [
    {
      method: 'GET',
      path: '/api/irc/opers/',
      name: 'irc.opers',
      summary: 'List of IRC operators',
      tier: 'token',
      response: operatorPageSchema,
      queryParameters: listQueryParameters('the nick, hostmask, real host, IP or account', ORDERING, 'nick'),
      handler(request) {
        requireReady(model);
        // A walk, not a copy of every user (a large object) to keep a handful.
        const operators: ReturnType<typeof operatorJson>[] = [];
        for (const user of model.users.all()) if (user.isOperator) operators.push(operatorJson(user));
        const answer: { body: FromJsonSchema<typeof operatorPageSchema> } = {
          body: paginate(request, operators, {
            orderingFields: ORDERING,
            defaultOrdering: 'nick',
            searchFold,
            // The hostmask holds the host.
            searchField: (item) => [
              item.nick,
              item.hostmask ?? '',
              item.real_host ?? '',
              item.ip ?? '',
              item.account ?? '',
            ],
          }),
        };
        return answer;
      },
    },
    {
      method: 'GET',
      path: '/api/irc/opers/:name/',
      name: 'irc.oper',
      summary: 'Details of one operator',
      tier: 'token',
      response: operatorSchema,
      handler(request) {
        requireReady(model);
        const name = request.params.name ?? '';
        const user = model.users.get(name);
        if (!user?.isOperator) throw notFound('operator_not_found', `No IRC operator with the nick ${name}`);
        return { body: operatorJson(user) };
      },
    },
  ];
}
