/**
 * The pages, each rendered from the public API's own answers (the `api.public` service): a page shows
 * what the public JSON shows, and nothing it leaves out. Everything from the network is escaped.
 */
import { escapeHtml, type ApiError, type Services } from '../../lib/sdk.js';
import { barChart, lineChart, rankChart, type Ranked } from './charts.js';
import { channelPath, count, page, table, userPath, when, type MenuEntry, type PageOptions } from './layout.js';
import { CHANNEL_SCRIPT, STATUS_SCRIPT } from './live.js';

/** What a page says of itself; the frame adds the rest. */
type FrameOptions = Omit<PageOptions, 'network' | 'menu' | 'timeZone' | 'live'>;

type Json = Record<string, unknown>;
type PublicApi = Services['api.public'];

/** What every page needs besides its data. */
export interface SiteContext {
  api: PublicApi;
  /** The network's name now (config, else the server's NETWORK). */
  network(): string;
  timeZone: string;
  /** Seconds between a page's reads of its data when it has no event stream to follow. */
  liveSeconds: number;
  /** Menu entries other plugins added (the account pages), after the site's own. */
  menu: MenuEntry[];
  /**
   * Whether the bot streams its events (the events plugin serves `GET /api/irc/events/`): the pages follow the
   * stream, and the Live page is in the menu.
   */
  streaming?(): boolean;
}

/** A whole page in the site's frame: its name, menu (with other plugins' entries) and time zone. */
export function framed(
  site: Pick<SiteContext, 'network' | 'timeZone' | 'menu' | 'streaming'>,
  options: FrameOptions,
): string {
  return page({
    ...options,
    network: site.network(),
    menu: site.menu,
    timeZone: site.timeZone,
    live: site.streaming?.() ?? false,
  });
}

/**
 * The data attributes a page's live script reads: the seconds between its reads without a stream, the site's
 * time zone, and whether to follow the event stream.
 */
function liveAttributes(site: SiteContext, stream: boolean): string {
  return (
    ` data-live-seconds="${site.liveSeconds}" data-time-zone="${escapeHtml(site.timeZone)}"` +
    (stream ? ' data-stream' : '')
  );
}

/** A rendered page and its status. */
export interface Rendered {
  status: number;
  html: string;
  /** The inline scripts it carries besides the frame's, as Content-Security-Policy sources (`'sha256-…'`). */
  scripts?: readonly string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** A top list's order: its second column (lines, users), most first. */
const MOST_LINES_FIRST = { sorted: { column: 1, direction: 'descending' } } as const;
const HOURS = Array.from({ length: 24 }, (_, hour) => String(hour).padStart(2, '0'));

const text = (value: unknown): string => (typeof value === 'string' ? escapeHtml(value) : '–');
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const object = (value: unknown): Json => (value !== null && typeof value === 'object' ? (value as Json) : {});
const numbers = (value: unknown): number[] =>
  Array.isArray(value) ? value.map((n) => (typeof n === 'number' ? n : 0)) : [];

function channelLink(name: unknown): string {
  return typeof name === 'string' ? `<a href="${channelPath(name)}">${escapeHtml(name)}</a>` : '–';
}

function userLink(nick: unknown): string {
  return typeof nick === 'string' ? `<a href="${userPath(nick)}">${escapeHtml(nick)}</a>` : '–';
}

/** The page for an answer the API refused (404 for a hidden or unknown channel, 503 before the first sync). */
export function refusal(site: SiteContext, error: ApiError): Rendered {
  const title = error.status === 404 ? 'Not found' : error.status === 503 ? 'Not ready yet' : 'Cannot show this';
  return {
    status: error.status,
    html: framed(site, {
      title,
      body: `<p>${escapeHtml(error.message)}.</p><p><a href="/network/">Back to the network</a></p>`,
    }),
  };
}

/** The highest value of `field` in the history, with its time; `daily` when it comes from a day's bucket. */
function record(
  points: readonly { point: Json; daily: boolean }[],
  field: string,
): { value: number; time: string; daily: boolean } | null {
  let best: { value: number; time: string; daily: boolean } | null = null;
  for (const { point, daily } of points) {
    const value = point[field];
    if (typeof value === 'number' && (best === null || value > best.value)) {
      best = { value, time: String(point.time), daily };
    }
  }
  return best;
}

export async function statusPage(site: SiteContext, range: string, now: number): Promise<Rendered> {
  const { api, timeZone } = site;
  const [status, servers, days, chart] = await Promise.all([
    api.read('network.status', { query: { top: 10 } }).then(object),
    api.read('irc.servers', { query: { limit: 100 } }).then(object),
    api.read('network.history', { query: { bucket: '1d', limit: 1000 } }).then(object),
    historyChart(site, range, now, '/network/'),
  ]);
  const snapshot = object(status.snapshot);
  const history = list(status.history);
  // Days' buckets are timed at their midnight (UTC): a record found there has a date; the last 24 hours' the hour.
  const points = [
    ...list(days.results).map((point) => ({ point, daily: true })),
    ...history.map((point) => ({ point, daily: false })),
  ];
  const card = (field: string, label: string): string => {
    const best = record(points, field);
    const now = snapshot[field];
    const top =
      best && (typeof now !== 'number' || best.value > now)
        ? best
        : { value: now as number, time: String(snapshot.synced_at), daily: false };
    const at = top.daily ? `on ${when(top.time, 'UTC').slice(0, 10)}` : `on ${when(top.time, timeZone)}`;
    return (
      `<div><dt>${label}</dt><dd aria-live="polite" data-live="${field}">${count(now)}</dd>` +
      `<dd class="record">Record ${count(top.value)} ${at}</dd></div>`
    );
  };
  const stream = site.streaming?.() ?? false;
  const body =
    `<dl class="cards"${liveAttributes(site, stream)}>${card('users', 'Users')}${card('channels', 'Channels')}` +
    `${card('operators', 'Operators')}${card('servers', 'Servers')}</dl>` +
    `<p class="muted">Counted by the network at <span data-live-time>${when(snapshot.synced_at, timeZone)}</span>; ` +
    `<span data-live-how>${stream ? 'updated live as they change' : `updated live every ${site.liveSeconds} s`}</span>.</p>` +
    `<h2>Users and channels</h2><p>Over: ${chart.picker}</p><div data-live-chart${chart.latest}>${chart.html}</div>` +
    `<h2>Top channels today</h2>` +
    table(
      `Most lines today (${text(status.date)})`,
      ['Channel', 'n:Lines', 'n:Users'],
      list(status.top_channels_today).map((entry) => [channelLink(entry.name), count(entry.lines), count(entry.users)]),
      MOST_LINES_FIRST,
    ) +
    `<h2>Top users today</h2>` +
    table(
      `Most lines today (${text(status.date)})`,
      ['Nick', 'n:Lines'],
      list(status.top_users_today).map((entry) => [userLink(entry.nick), count(entry.lines)]),
      MOST_LINES_FIRST,
    ) +
    `<h2>Servers</h2>` +
    serverTable(list(servers.results));
  return {
    status: 200,
    html: framed(site, {
      title: site.network(),
      current: '/network/',
      body: body + `<script>${STATUS_SCRIPT.code}</script>`,
    }),
    scripts: [STATUS_SCRIPT.source],
  };
}

function serverTable(servers: readonly Json[]): string {
  return table(
    'Linked servers',
    ['Server', 'Description', 'n:Users', 'n:Latency (ms)'],
    servers.map((server) => [
      text(server.name) + (server.is_services === true ? ' <span class="muted">(services)</span>' : ''),
      text(server.description),
      count(server.users),
      count(server.latency_ms),
    ]),
  );
}

/** Query values a list page passes on: search, ordering, offset. */
export interface ListQuery {
  search: string;
  ordering: string;
  offset: number;
}

const PAGE_SIZE = 50;

export async function channelsPage(site: SiteContext, query: ListQuery): Promise<Rendered> {
  const answer = object(
    await site.api.read('irc.channels', {
      query: {
        limit: PAGE_SIZE,
        offset: query.offset,
        ...(query.search ? { search: query.search } : {}),
        ...(query.ordering ? { ordering: query.ordering } : {}),
      },
    }),
  );
  const total = typeof answer.count === 'number' ? answer.count : 0;
  const link = (changes: Partial<ListQuery>): string => {
    const next = { ...query, ...changes };
    const params = new URLSearchParams();
    if (next.search) params.set('search', next.search);
    if (next.ordering) params.set('ordering', next.ordering);
    if (next.offset > 0) params.set('offset', String(next.offset));
    const search = params.toString();
    return `/network/channels/${search ? `?${escapeHtml(search)}` : ''}`;
  };
  // The list is paged, so the server sorts it: each heading links to the order it gives. Names first A to Z
  // and users most first; the column the list is sorted by turns the other way.
  const ordering = query.ordering || '-users';
  const sortLink = (field: string, first: string): string => {
    const target = ordering === first ? (first.startsWith('-') ? field : `-${field}`) : first;
    return link({ ordering: target, offset: 0 });
  };
  const sortedColumn = ordering.endsWith('name') ? 0 : 1;
  const rows = list(answer.results).map((channel) => [
    channelLink(channel.name),
    count(channel.users),
    `<span class="topic">${text(channel.topic)}</span>`,
  ]);
  const body =
    `<form class="search" method="get" action="/network/channels/" role="search">` +
    `<label for="search">Search channels</label>` +
    `<input id="search" name="search" type="search" value="${escapeHtml(query.search)}">` +
    (query.ordering ? `<input type="hidden" name="ordering" value="${escapeHtml(query.ordering)}">` : '') +
    `<button type="submit">Search</button></form>` +
    `<p class="muted">${count(total)} public channels${query.search ? ` matching “${escapeHtml(query.search)}”` : ''}. ` +
    `A column’s heading sorts by it.</p>` +
    table('Public channels', ['Channel', 'n:Users', 'Topic'], rows, {
      sortable: false,
      headLinks: [sortLink('name', 'name'), sortLink('users', '-users'), null],
      sorted: { column: sortedColumn, direction: ordering.startsWith('-') ? 'descending' : 'ascending' },
    }) +
    `<nav class="pager" aria-label="Pages">` +
    (query.offset > 0
      ? `<a href="${link({ offset: Math.max(0, query.offset - PAGE_SIZE) })}" rel="prev">Previous</a>`
      : '') +
    (query.offset + PAGE_SIZE < total
      ? `<a href="${link({ offset: query.offset + PAGE_SIZE })}" rel="next">Next</a>`
      : '') +
    `</nav>`;
  return {
    status: 200,
    html: framed(site, {
      title: 'Channels',
      current: '/network/channels/',
      body,
    }),
  };
}

/** Entries in the channel page's top users, and in its charts of members by client and country (the rest: "Other"). */
const CHANNEL_TOP = 10;

/**
 * A channel's members by client or by country (the channel answer's `member_clients`, `member_countries`):
 * the top entries, then the other and the unknown ones, as a small chart with its table.
 */
function memberChart(title: string, shares: unknown, labelOf: (entry: Json) => string, column: string): string {
  if (shares === null || typeof shares !== 'object') {
    return `<p class="muted">${escapeHtml(title)}: the bot does not sit in this channel, so it does not know its members.</p>`;
  }
  const answer = object(shares);
  const total = typeof answer.total === 'number' ? answer.total : 0;
  const share = (users: number): number => (total === 0 ? 0 : Math.round((users / total) * 10000) / 100);
  const entries: Ranked[] = list(answer.results).map((entry) => ({
    label: labelOf(entry),
    value: typeof entry.users === 'number' ? entry.users : 0,
    ...(typeof entry.percent === 'number' ? { percent: entry.percent } : {}),
  }));
  for (const [field, label] of [
    ['other', 'Other'],
    ['unknown', 'Unknown'],
  ] as const) {
    const users = answer[field];
    if (typeof users === 'number' && users > 0)
      entries.push({ label, value: users, percent: share(users), rest: true });
  }
  return rankChart(`${title} (${count(total)} counted)`, entries, [column, 'Members']);
}

export async function channelPage(site: SiteContext, name: string): Promise<Rendered> {
  const answer = object(
    await site.api.read('network.channel', { params: { channel: name }, query: { top: CHANNEL_TOP } }),
  );
  const channel = object(answer.channel);
  const hourly = numbers(answer.hourly_lines);
  const channelName = String(channel.name ?? name);
  // The bot hears the joins, parts and topics of the channels it sits in only: another channel's page asks.
  const stream = (site.streaming?.() ?? false) && answer.lines_counted === true;
  const body =
    `<dl class="cards" data-channel="${escapeHtml(channelName)}"${liveAttributes(site, stream)}>` +
    `<div><dt>Users now</dt><dd aria-live="polite" data-live="users">${count(channel.users)}</dd>` +
    `<dd class="record" data-live="peak_users">Most today ${count(channel.peak_users)}</dd></div>` +
    `<div><dt>Record users</dt><dd data-record>${count(channel.record_users)}</dd>` +
    `<dd class="record">on <time datetime="${text(channel.record_users_at)}">${when(channel.record_users_at, site.timeZone)}</time></dd></div>` +
    `<div><dt>Lines today</dt><dd>${count(answer.lines_today)}</dd></div>` +
    `<div><dt>Modes</dt><dd data-live="modes">${text(channel.modes)}</dd></div></dl>` +
    `<h2>Topic</h2><p class="topic" aria-live="polite" data-live-topic>${typeof channel.topic === 'string' && channel.topic !== '' ? escapeHtml(channel.topic) : '<span class="muted">No topic.</span>'}</p>` +
    (answer.lines_counted === true || hourly.length === 24
      ? `<h2>Lines today by hour</h2>${barChart(`Lines in ${String(channel.name)} today (${String(answer.date)})`, HOURS, hourly.length === 24 ? hourly : HOURS.map(() => 0))}`
      : `<p class="muted">The bot does not sit in this channel, so its lines are not counted.</p>`) +
    `<h2>Top users today</h2>` +
    table(
      'Most lines today',
      ['Nick', 'n:Lines'],
      list(answer.top_users_today).map((entry) => [userLink(entry.nick), count(entry.lines)]),
      MOST_LINES_FIRST,
    ) +
    `<div class="pair"><section><h2>Members by client</h2>` +
    memberChart('Members by IRC client', answer.member_clients, (entry) => String(entry.client), 'Client') +
    `</section><section><h2>Members by country</h2>` +
    memberChart('Members by country', answer.member_countries, (entry) => String(entry.country), 'Country') +
    `</section></div>` +
    `<script>${CHANNEL_SCRIPT.code}</script>`;
  return {
    status: 200,
    html: framed(site, {
      title: channelName,
      body,
    }),
    scripts: [CHANNEL_SCRIPT.source],
  };
}

export async function userPage(site: SiteContext, nick: string): Promise<Rendered> {
  const answer = object(await site.api.read('network.user', { params: { nick } }));
  const user = object(answer.user);
  const channels = Array.isArray(user.channels) ? (user.channels as unknown[]) : [];
  const hourly = numbers(answer.hourly_activity);
  const client =
    typeof user.client === 'string'
      ? `${escapeHtml(user.client)}${typeof user.client_version === 'string' ? ` ${escapeHtml(user.client_version)}` : ''}`
      : '–';
  const body =
    `<dl class="cards"><div><dt>Online</dt><dd>${user.online === true ? 'yes' : 'no'}</dd></div>` +
    `<div><dt>Server</dt><dd>${text(user.server)}</dd></div>` +
    `<div><dt>Client</dt><dd>${client}</dd></div>` +
    `<div><dt>Country</dt><dd>${text(user.country)}</dd></div>` +
    `<div><dt>Lines today</dt><dd>${count(answer.lines_today)}</dd></div></dl>` +
    `<h2>Public channels</h2>` +
    (channels.length > 0
      ? `<ul>${channels.map((name) => `<li>${channelLink(name)}</li>`).join('')}</ul>`
      : '<p>None.</p>') +
    `<h2>Lines today by hour</h2>` +
    barChart(
      `Lines by ${String(user.nick ?? nick)} today (${String(answer.date)})`,
      HOURS,
      hourly.length === 24 ? hourly : HOURS.map(() => 0),
    );
  return {
    status: 200,
    html: framed(site, {
      title: String(user.nick ?? nick),
      body,
    }),
  };
}

/** A distribution page: countries or clients. */
export async function distributionPage(site: SiteContext, kind: 'countries' | 'clients'): Promise<Rendered> {
  const answer = object(await site.api.read(`network.${kind}`, { query: { limit: 100 } }));
  const rows = list(answer.results).map((entry) =>
    kind === 'countries'
      ? [
          `${text(entry.country)} <span class="muted">${text(entry.country_code)}</span>`,
          count(entry.users),
          `${count(entry.percent)} %`,
        ]
      : [
          text(entry.client),
          count(entry.users),
          `${count(entry.percent)} %`,
          list(entry.versions)
            .map(
              (version) =>
                `${typeof version.version === 'string' ? escapeHtml(version.version) : 'unnamed'} (${count(version.users)})`,
            )
            .join(', '),
        ],
  );
  const head = kind === 'countries' ? ['Country', 'n:Users', 'n:Share'] : ['Client', 'n:Users', 'n:Share', 'Versions'];
  const title = kind === 'countries' ? 'Countries' : 'Clients';
  const body =
    `<p class="muted">${count(answer.total)} users counted; ${count(answer.unknown)} unknown.</p>` +
    table(title, head, rows, { sorted: { column: 1, direction: 'descending' } });
  return {
    status: 200,
    html: framed(site, {
      title,
      current: `/network/${kind}/`,
      body,
    }),
  };
}

export async function serversPage(site: SiteContext): Promise<Rendered> {
  const servers = list(object(await site.api.read('irc.servers', { query: { limit: 100 } })).results);
  const measured = servers.filter((server) => typeof server.latency_ms === 'number');
  const chart =
    measured.length > 0
      ? barChart(
          'Latency by server now (ms)',
          measured.map((server) => String(server.name)),
          measured.map((server) => server.latency_ms as number),
          ['Server', 'Latency (ms)'],
          {},
        )
      : '<p class="muted">No latency measured yet.</p>';
  return {
    status: 200,
    html: framed(site, {
      title: 'Servers',
      current: '/network/servers/',
      body: serverTable(servers) + `<h2>Latency</h2>${chart}`,
    }),
  };
}

export async function operatorsPage(site: SiteContext): Promise<Rendered> {
  const answer = object(await site.api.read('network.operators', { query: { limit: 100 } }));
  const rows = list(answer.results).map((entry) => [
    userLink(entry.nick),
    text(entry.server),
    entry.away === true ? 'away' : '',
  ]);
  return {
    status: 200,
    html: framed(site, {
      title: 'Operators',
      current: '/network/operators/',
      body: table('IRC operators the bot sees', ['Nick', 'Server', 'Away'], rows, {
        sorted: { column: 0, direction: 'ascending' },
      }),
    }),
  };
}

/** The ranges of the history page. */
export const HISTORY_RANGES: Readonly<Record<string, { days: number; bucket: string; label: string }>> = {
  '24h': { days: 1, bucket: '1h', label: '24 hours' },
  '7d': { days: 7, bucket: '1h', label: '7 days' },
  '30d': { days: 30, bucket: '1d', label: '30 days' },
};

/** The length of a history bucket, by its name in `HISTORY_RANGES`. */
const BUCKET_MS: Readonly<Record<string, number>> = { '1h': 60 * 60 * 1000, '1d': DAY_MS };

/**
 * Users and channels over a range (`HISTORY_RANGES`) as a chart with its table, and the range picker: links
 * to `basePath` with each other range (`?range=`), the chosen one marked. `latest` is the chart's latest
 * bucket as data attributes (its length, start, users and channels), for the status page's live script to
 * tell whether the counts it hears have gone past it.
 */
async function historyChart(
  site: SiteContext,
  range: string,
  now: number,
  basePath: string,
): Promise<{ html: string; picker: string; latest: string }> {
  const key = HISTORY_RANGES[range] ? range : '24h';
  const chosen = HISTORY_RANGES[key]!;
  const since = new Date(now - chosen.days * DAY_MS).toISOString();
  const answer = object(
    await site.api.read('network.history', { query: { since, bucket: chosen.bucket, limit: 1000 } }),
  );
  const points = list(answer.results);
  // A day's bucket is timed at its midnight in UTC: its date is the UTC one (in a zone west of UTC, that
  // midnight is the evening before).
  // Within a day an hour says enough; over days, the day too.
  const labels = points.map((point) =>
    chosen.bucket === '1d'
      ? when(point.time, 'UTC').slice(0, 10)
      : chosen.days === 1
        ? when(point.time, site.timeZone).slice(11)
        : when(point.time, site.timeZone),
  );
  const picker = Object.entries(HISTORY_RANGES)
    .map(([name, value]) =>
      name === key
        ? `<strong aria-current="true">${value.label}</strong>`
        : `<a href="${basePath}${name === '24h' ? '' : `?range=${name}`}">${value.label}</a>`,
    )
    .join(' · ');
  const html = lineChart(
    `Users and channels over ${chosen.label}, ${chosen.bucket === '1d' ? 'daily' : 'hourly'} peaks`,
    labels,
    [
      { label: 'Users', values: points.map((point) => (typeof point.users === 'number' ? point.users : null)) },
      {
        label: 'Channels',
        values: points.map((point) => (typeof point.channels === 'number' ? point.channels : null)),
      },
    ],
  );
  const last = points.at(-1);
  const latest =
    ` data-bucket-ms="${BUCKET_MS[chosen.bucket]}"` +
    (last
      ? ` data-latest-time="${text(last.time)}"` +
        (typeof last.users === 'number' ? ` data-latest-users="${last.users}"` : '') +
        (typeof last.channels === 'number' ? ` data-latest-channels="${last.channels}"` : '')
      : '');
  return { html, picker, latest };
}

export async function historyPage(site: SiteContext, range: string, now: number): Promise<Rendered> {
  const chart = await historyChart(site, range, now, '/network/history/');
  const body = `<p>Range: ${chart.picker}</p>${chart.html}`;
  return {
    status: 200,
    html: framed(site, {
      title: 'History',
      current: '/network/history/',
      body,
    }),
  };
}

/** The API's documentation, from the OpenAPI document the bot serves: every path with its tier. */
export async function apiPage(site: SiteContext): Promise<Rendered> {
  const document = object(await site.api.read('openapi'));
  const paths = object(document.paths);
  const rows: string[][] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(object(item))) {
      if (method === 'head') continue;
      const op = object(operation);
      const tier = Array.isArray(op.tags) ? String(op.tags[0] ?? '') : '';
      // Four columns, the endpoint's name under its tier: five made every row a column of single words on a phone,
      // where the rows are stacked: method and path on one line, then the tier and endpoint, then the summary.
      rows.push([
        `<code>${escapeHtml(method.toUpperCase())}</code>`,
        `<code>${escapeHtml(path)}</code>`,
        `${escapeHtml(tier)} <br><span class="muted">${text(op.operationId)}</span>`,
        text(op.summary),
      ]);
    }
  }
  const body =
    `<p>The bot serves JSON under <code>/api/</code> and <code>/network/data/</code>. The whole description is the ` +
    `OpenAPI document at <a href="/api/openapi.json">/api/openapi.json</a>. Public paths need nothing; token paths ` +
    `need <code>Authorization: Token &lt;token&gt;</code>, a token an administrator approved for the endpoint.</p>` +
    table('Endpoints', ['Method', 'Path', 'Tier and endpoint', 'Summary'], rows, {
      stacked: ['inline', 'inline', 'labelled', 'line'],
    });
  return {
    status: 200,
    html: framed(site, {
      title: 'API',
      current: '/network/api/',
      body,
    }),
  };
}
