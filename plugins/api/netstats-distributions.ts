/** The network statistics' distributions of users: by country (`countries/`) and by IRC client (`clients/`). */
import { paginate, type FromJsonSchema } from '../../lib/sdk.js';
import { listQueryParameters } from './lists.js';
import { byCodeUnits, percentOf, type Endpoint, type NetstatsContext } from './netstats-context.js';
import { clientPageSchema, countryName, countryPageSchema } from './netstats-shapes.js';
import { requireReady } from './network.js';

/** `countries/`: users by country. */
export function countriesEndpoint(context: NetstatsContext): Endpoint {
  const { model, countedUsers } = context;
  return {
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
  };
}

/** `clients/`: users by IRC client, each with its versions. */
export function clientsEndpoint(context: NetstatsContext): Endpoint {
  const { model, countedUsers } = context;
  return {
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
  };
}
