/**
 * The website's routes: one per page (`document: 'page'`, so they stay out of the OpenAPI document), each
 * rendered from the public API's answers; what the API refuses (a hidden channel's 404, 503 before the first
 * sync) each route answers with the site's refusal page, its declared `renderError`. And the site's icon.
 */
import { HtmlDocument, TextDocument, type ApiRequest, type ApiResponse, type RouteDefinition } from '../../lib/sdk.js';
import { ICON_PATH, LIVE_MENU_ENTRY } from './layout.js';
import { liveQuery, livePage } from './live-page.js';
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
import type { WebConfig } from './schema.js';
import { FRAME_SCRIPT_SOURCES, siteSecurityHeaders } from './services.js';

/** The site's icon, so that no browser asks for a /favicon.ico the bot does not have: a "#" in the accent colour. */
const ICON = new TextDocument(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0a58ca"/>' +
    '<path d="M12 6 9 26M23 6l-3 20M7 12h19M6 20h19" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>',
  'image/svg+xml',
);
/** A day: the icon never changes between releases. */
const ICON_MAX_AGE = 86_400;

/** One page of the site: its route's path, name (after `web.`) and summary, and how it is rendered. */
interface Page {
  path: string;
  name: string;
  summary: string;
  render: (request: ApiRequest) => Promise<Rendered>;
}

/**
 * A rendered page as the answer, with the site's security headers (its inline scripts allowed by their
 * hashes); a refusal is never stored (`no-store`).
 */
function pageAnswer(rendered: Rendered): ApiResponse {
  const body = new HtmlDocument(rendered.html);
  const headers = siteSecurityHeaders([...FRAME_SCRIPT_SOURCES, ...(rendered.scripts ?? [])]);
  return rendered.status === 200
    ? { body, headers }
    : { status: rendered.status, body, headers: { ...headers, 'Cache-Control': 'no-store' } };
}

/** The search, order and offset of a list page, within bounds. */
function listQuery(request: ApiRequest) {
  return {
    search: (request.query.get('search') ?? '').slice(0, 100),
    ordering: /^-?(name|users)$/.test(request.query.get('ordering') ?? '') ? request.query.get('ordering')! : '',
    offset: Math.max(0, Math.min(1_000_000, Number.parseInt(request.query.get('offset') ?? '0', 10) || 0)),
  };
}

/** The site's pages, in the order they are registered. */
function sitePages(site: SiteContext, now: () => number): Page[] {
  return [
    {
      path: '/network/',
      name: 'status',
      summary: 'The network now',
      render: (request) => statusPage(site, request.query.get('range') ?? '24h', now()),
    },
    {
      path: LIVE_MENU_ENTRY.path,
      name: 'live',
      summary: "The network's events as they happen",
      render: (request) => Promise.resolve(livePage(site, liveQuery(request))),
    },
    {
      path: '/network/channels/',
      name: 'channels',
      summary: 'Public channels',
      render: (request) => channelsPage(site, listQuery(request)),
    },
    {
      path: '/network/channel/:channel/',
      name: 'channel',
      summary: 'A public channel',
      render: (request) => channelPage(site, request.params.channel ?? ''),
    },
    {
      path: '/network/user/:nick/',
      name: 'user',
      summary: "A user's public profile",
      render: (request) => userPage(site, request.params.nick ?? ''),
    },
    { path: '/network/servers/', name: 'servers', summary: 'Servers', render: () => serversPage(site) },
    { path: '/network/operators/', name: 'operators', summary: 'IRC operators', render: () => operatorsPage(site) },
    {
      path: '/network/countries/',
      name: 'countries',
      summary: 'Countries',
      render: () => distributionPage(site, 'countries'),
    },
    {
      path: '/network/clients/',
      name: 'clients',
      summary: 'IRC clients',
      render: () => distributionPage(site, 'clients'),
    },
    {
      path: '/network/history/',
      name: 'history',
      summary: 'History',
      render: (request) => historyPage(site, request.query.get('range') ?? '24h', now()),
    },
    { path: '/network/api/', name: 'api', summary: 'The API', render: () => apiPage(site) },
  ];
}

/**
 * The site's routes: its pages, whose answers public caches may keep `cache_seconds` (not a refusal's), and
 * its icon. `now` is the model's clock, in milliseconds.
 */
export function webRoutes(site: SiteContext, config: WebConfig, now: () => number): RouteDefinition[] {
  const pages = sitePages(site, now).map(({ path, name, summary, render }): RouteDefinition => ({
    method: 'GET',
    path,
    name: `web.${name}`,
    summary,
    tier: 'public',
    document: 'page',
    maxAge: config.cache_seconds,
    handler: async (request) => pageAnswer(await render(request)),
    renderError: (error) => pageAnswer(refusal(site, error)),
  }));
  const icon: RouteDefinition = {
    method: 'GET',
    path: ICON_PATH,
    name: 'web.icon',
    summary: "The site's icon",
    tier: 'public',
    document: 'page',
    maxAge: ICON_MAX_AGE,
    handler: () => ({ body: ICON }),
  };
  return [...pages, icon];
}
