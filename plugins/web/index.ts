/**
 * The website (`plugins.web`): pages under /network/ for the network's people — its numbers now and
 * over time, its public channels, users, servers, operators, countries and clients, and the API's
 * documentation. Every page is HTML rendered on the server from the public API's answers (the api
 * plugin's `api.public` service), charts included (inline SVG), so it reads without JavaScript and shows
 * exactly what the public JSON shows. Small scripts in the pages only add to them: the status page's counts
 * and a channel's users and topic live (from the events plugin's stream where it runs, else asked again every
 * `live_seconds`), the Live page's events, tables sorted without a reload, charts' tooltips. Other plugins'
 * pages (the account pages) take its look through `web.layout`.
 */
import { definePlugin } from '../../lib/sdk.js';
import type { SiteContext } from './pages.js';
import { EVENTS_PATH } from './live.js';
import { webRoutes } from './routes.js';
import { webConfigSchema, type WebConfig } from './schema.js';
import { webLayout } from './services.js';

export default definePlugin<WebConfig>({
  name: 'web',
  description: "The network's website at /network/: pages with charts, from the public API's answers.",
  configSchema: webConfigSchema,
  uses: ['api.public', 'stats.activity'],
  provides: ['web.layout'],
  start({ config, http, irc, services, model }) {
    // Asked when a page is made: the events plugin may start after this one. Its route, once there, stays.
    let streaming = false;
    const site: SiteContext = {
      api: services.get('api.public'),
      // Before registration the server has said nothing: no NETWORK, and no name of its own ('').
      network: () => config.network_name ?? (irc.state.isupport.get('NETWORK') || irc.state.server || 'IRC network'),
      timeZone: services.get('stats.activity').timeZone.name,
      liveSeconds: config.live_seconds,
      menu: [],
      streaming: () =>
        (streaming ||= http.routes().some(({ route }) => route.method === 'GET' && route.path === EVENTS_PATH)),
    };
    for (const route of webRoutes(site, config, () => model.now().getTime())) http.route(route);
    services.provide('web.layout', webLayout(site));
  },
});
