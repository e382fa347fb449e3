/**
 * The HTTP API (`plugins.api`): serves the model under /api/irc/, and the
 * network statistics under /network/ and /api/netstats/, with the contract's
 * shapes. Every route is declared in one of the route modules listed below;
 * the OpenAPI document is generated from the same table. It provides `api.public`, the public routes'
 * answers without HTTP, which the website renders.
 */
import { definePlugin } from '../../lib/sdk.js';
import { channelRoutes } from './channels.js';
import { commandRoutes } from './commands.js';
import { netstatsRoutes } from './netstats.js';
import { networkRoutes } from './network.js';
import { openApiRoutes } from './openapi.js';
import { publicApi } from './public-service.js';
import { operatorRoutes } from './opers.js';
import { apiConfigSchema, type ApiConfig } from './schema.js';
import { serverRoutes } from './servers.js';
import { userRoutes } from './users.js';

export default definePlugin<ApiConfig>({
  name: 'api',
  description: 'The HTTP JSON API over the network model.',
  uses: ['stats.activity', 'stats.history', 'stats.records'],
  provides: ['api.public'],
  configSchema: apiConfigSchema,
  start({ http, model, config, irc, services, onModelChange }) {
    const routes = [
      ...networkRoutes(model, config, onModelChange),
      ...serverRoutes(model, config),
      ...channelRoutes(model, config, onModelChange),
      ...commandRoutes(model, config),
      ...operatorRoutes(model),
      ...userRoutes(model, onModelChange, { reuseMs: config.reuse_ms }),
      ...netstatsRoutes({ model, config, http, services, selfNick: () => irc.state.nick, clock: () => model.now() }),
      ...openApiRoutes(http, config),
    ];
    for (const route of routes) http.route(route);
    services.provide('api.public', publicApi(routes));
  },
});
