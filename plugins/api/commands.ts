/**
 * `GET /api/irc/commands/`: the commands each network service offers, grouped
 * by service, as the services' HELP lists them to the collector's account.
 */
import {
  paginate,
  unavailable,
  type FromJsonSchema,
  type NetworkModel,
  type RouteDefinition,
  type ServiceCommands,
} from '../../lib/sdk.js';
import { listQueryParameters, nullableTime, pageSchema } from './lists.js';
import type { ApiConfig } from './schema.js';

export const serviceCommandsSchema = {
  type: 'object',
  required: ['service', 'commands'],
  additionalProperties: false,
  properties: {
    service: { type: 'string', description: 'The service nick, e.g. "NickServ".' },
    commands: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'description'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', description: 'The command, upper case, e.g. "REGISTER".' },
          description: {
            type: ['string', 'null'],
            description: "The service's one-line description; null when it names the command without one.",
          },
        },
      },
    },
  },
} as const;

const ORDERING_FIELDS = ['service'];

/** With `?search=`, a service whose name does not match keeps only the commands that do. */
function searched(lists: readonly ServiceCommands[], search: string): ServiceCommands[] {
  if (search === '') return [...lists];
  const needle = search.toLowerCase();
  return lists
    .map((list) =>
      list.service.toLowerCase().includes(needle)
        ? list
        : { ...list, commands: list.commands.filter((command) => command.name.toLowerCase().includes(needle)) },
    )
    .filter((list) => list.commands.length > 0);
}

export function commandRoutes(model: NetworkModel, config: ApiConfig): RouteDefinition[] {
  return [
    {
      method: 'GET',
      path: '/api/irc/commands/',
      name: 'irc.commands',
      summary: 'Available IRC service commands',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: pageSchema(serviceCommandsSchema, {
        fetched_at: { ...nullableTime, description: 'When the services were last asked for their commands.' },
      }),
      queryParameters: listQueryParameters('the service name or a command name', ORDERING_FIELDS, 'service'),
      handler(request) {
        const fetchedAt = model.services.fetchedAt;
        if (fetchedAt === null) throw unavailable('The services have not been asked for their commands yet');
        const lists = searched([...model.services.all()], request.query.get('search') ?? '');
        const page = paginate(request, lists, {
          orderingFields: ORDERING_FIELDS,
          defaultOrdering: 'service',
          searchField: (list) => [list.service, ...list.commands.map((command) => command.name)],
        });
        return {
          body: {
            ...page,
            results: page.results.map((list): FromJsonSchema<typeof serviceCommandsSchema> => ({
              service: list.service,
              commands: list.commands,
            })),
            fetched_at: fetchedAt,
          },
        };
      },
    },
  ];
}
