/**
 * The HTTP API (`plugins.api`): serves the model under /api/irc/ with the
 * contract's shapes. Every route is declared in one of the route modules
 * listed below; the OpenAPI document is generated from the same table.
 */
import { definePlugin } from '../../lib/plugin.js';
import { networkRoutes } from './network.js';
import { apiConfigSchema, type ApiConfig } from './schema.js';

export default definePlugin<ApiConfig>({
  name: 'api',
  description: 'The HTTP JSON API over the network model.',
  dependencies: ['stats'],
  configSchema: apiConfigSchema,
  start({ http, model, config }) {
    const routes = [...networkRoutes(model, config)];
    for (const route of routes) http.route(route);
  },
});
