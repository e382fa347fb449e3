/**
 * The website (`plugins.web`): pages under /network/ for the network's people — its numbers now and
 * over time, its public channels, users, servers, operators, countries and clients, and the API's
 * documentation. Every page is HTML rendered on the server from the public API's answers (the api
 * plugin's `api.public` service), charts included (inline SVG), so it reads without JavaScript and shows
 * exactly what the public JSON shows. Small scripts in the pages only add to them: the status page's counts
 * live, tables sorted without a reload, charts' tooltips. Other plugins' pages (the account pages) take its
 * look through `web.layout`.
 */
import {
  ApiError,
  definePlugin,
  HtmlDocument,
  TextDocument,
  type ApiRequest,
  type ApiResponse,
  type RouteDefinition,
} from '../../lib/sdk.js';
import {
  apiPage,
  channelPage,
  channelsPage,
  distributionPage,
  historyPage,
  operatorsPage,
  refusal,
  serversPage,
  statusPage,
  userPage,
  type Rendered,
  type SiteContext,
} from './pages.js';
import { webConfigSchema, type WebConfig } from './schema.js';
import { ICON_PATH } from './layout.js';

/** The site's icon, so that no browser asks for a /favicon.ico the bot does not have: a "#" in the accent colour. */
const ICON = new TextDocument(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0a58ca"/>' +
    '<path d="M12 6 9 26M23 6l-3 20M7 12h19M6 20h19" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  'image/svg+xml',
);
/** A day: the icon never changes between releases. */
const ICON_MAX_AGE = 86_400;
import { webLayout } from './services.js';

export default definePlugin<WebConfig>({
  name: 'web',
  description: "The network's website at /network/: pages with charts, from the public API's answers.",
  configSchema: webConfigSchema,
  uses: ['api.public', 'stats.activity'],
  provides: ['web.layout'],
  start({ config, http, irc, services, model }) {
    const site: SiteContext = {
      api: services.get('api.public'),
      // Before registration the server has said nothing: no NETWORK, and no name of its own ('').
      network: () => config.network_name ?? (irc.state.isupport.get('NETWORK') || irc.state.server || 'IRC network'),
      timeZone: services.get('stats.activity').timeZone.name,
      liveSeconds: config.live_seconds,
      menu: [],
    };
    const pageRoute = (
      path: string,
      name: string,
      summary: string,
      render: (request: ApiRequest) => Promise<Rendered>,
    ): RouteDefinition => ({
      method: 'GET',
      path,
      name: `web.${name}`,
      summary,
      tier: 'public',
      document: 'page',
      maxAge: config.cache_seconds,
      async handler(request): Promise<ApiResponse> {
        let rendered: Rendered;
        try {
          rendered = await render(request);
        } catch (error) {
          // What the API refuses (a hidden channel's 404, 503 before the first sync), the page says in its look.
          if (!(error instanceof ApiError)) throw error;
          rendered = refusal(site, error);
        }
        const body = new HtmlDocument(rendered.html);
        return rendered.status === 200
          ? { body }
          : { status: rendered.status, body, headers: { 'Cache-Control': 'no-store' } };
      },
    });
    const listQuery = (request: ApiRequest) => ({
      search: (request.query.get('search') ?? '').slice(0, 100),
      ordering: /^-?(name|users)$/.test(request.query.get('ordering') ?? '') ? request.query.get('ordering')! : '',
      offset: Math.max(0, Math.min(1_000_000, Number.parseInt(request.query.get('offset') ?? '0', 10) || 0)),
    });
    const routes = [
      pageRoute('/network/', 'status', 'The network now', (request) =>
        statusPage(site, request.query.get('range') ?? '24h', model.now().getTime()),
      ),
      pageRoute('/network/channels/', 'channels', 'Public channels', (request) =>
        channelsPage(site, listQuery(request)),
      ),
      pageRoute('/network/channel/:channel/', 'channel', 'A public channel', (request) =>
        channelPage(site, request.params.channel ?? ''),
      ),
      pageRoute('/network/user/:nick/', 'user', "A user's public profile", (request) =>
        userPage(site, request.params.nick ?? ''),
      ),
      pageRoute('/network/servers/', 'servers', 'Servers', () => serversPage(site)),
      pageRoute('/network/operators/', 'operators', 'IRC operators', () => operatorsPage(site)),
      pageRoute('/network/countries/', 'countries', 'Countries', () => distributionPage(site, 'countries')),
      pageRoute('/network/clients/', 'clients', 'IRC clients', () => distributionPage(site, 'clients')),
      pageRoute('/network/history/', 'history', 'History', (request) =>
        historyPage(site, request.query.get('range') ?? '24h', model.now().getTime()),
      ),
      pageRoute('/network/api/', 'api', 'The API', () => apiPage(site)),
    ];
    for (const route of routes) http.route(route);
    http.route({
      method: 'GET',
      path: ICON_PATH,
      name: 'web.icon',
      summary: "The site's icon",
      tier: 'public',
      document: 'page',
      maxAge: ICON_MAX_AGE,
      handler: () => ({ body: ICON }),
    });
    services.provide('web.layout', webLayout(site));
  },
});
