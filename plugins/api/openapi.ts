/** `GET /api/openapi.json`: the OpenAPI 3.1 document of every route, built from the live route table. */
import { packageVersion, type PluginHttp, type RouteDefinition } from '../../lib/sdk.js';
import { buildOpenApiDocument } from './openapi-document.js';
import type { ApiConfig } from './schema.js';

const DESCRIPTION = [
  'Read access to an IRC network: statistics, latency, channels, servers, service commands (public),',
  'and operators and users with their hostmasks (token tier).',
  '',
  'Every response is JSON and carries `API-Version: 1`. Paths are served with and without the trailing',
  'slash (the slash form is canonical); HEAD works wherever GET does; another method on a known path',
  'is 405 with `Allow`. Lists are paginated with `limit`, `offset`, `search` and `ordering`.',
  `Served by irc-network-data ${packageVersion}.`,
].join('\n');

export function openApiRoutes(http: Pick<PluginHttp, 'routes'>, config: ApiConfig): RouteDefinition[] {
  return [
    {
      method: 'GET',
      path: '/api/openapi.json',
      name: 'openapi',
      summary: 'The OpenAPI 3.1 document of every path',
      tier: 'public',
      maxAge: config.cache_seconds,
      response: {
        type: 'object',
        required: ['openapi', 'info', 'paths', 'components'],
        properties: { openapi: { type: 'string', const: '3.1.0' } },
      },
      handler() {
        // Built per request: routes other plugins register after this one are in it too.
        return {
          body: buildOpenApiDocument(http.routes(), {
            title: 'IRC network data API',
            version: '1',
            description: DESCRIPTION,
          }),
        };
      },
    },
  ];
}
