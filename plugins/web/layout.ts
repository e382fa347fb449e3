/**
 * The frame every page shares: the network's name, a header menu, the page's title, the time zone its
 * times are in, light and dark colours, and nothing fetched from anywhere but the bot.
 */
import { escapeHtml } from '../../lib/sdk.js';
import { SITE_SCRIPT } from './script.js';

/** The site's icon (a small SVG the web plugin serves). */
export const ICON_PATH = '/network/icon.svg';

/** An entry of the header menu. */
export interface MenuEntry {
  path: string;
  label: string;
}

/** The header menu: every page of the site (other plugins' pages follow, see `PageOptions.menu`). */
export const MENU: readonly MenuEntry[] = [
  { path: '/network/', label: 'Network' },
  { path: '/network/channels/', label: 'Channels' },
  { path: '/network/servers/', label: 'Servers' },
  { path: '/network/operators/', label: 'Operators' },
  { path: '/network/countries/', label: 'Countries' },
  { path: '/network/clients/', label: 'Clients' },
  { path: '/network/history/', label: 'History' },
  { path: '/network/api/', label: 'API' },
];

/** The Live page's menu entry, after the network's, where the bot streams its events. */
export const LIVE_MENU_ENTRY: MenuEntry = { path: '/network/live/', label: 'Live' };

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--accent:#0a58ca;--bar:#2f6fdb;--bar2:#1a7f37;--head:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9da7b3;--line:#30363d;--accent:#6cb6ff;--bar:#4c8dff;--bar2:#3fb950;--head:#161b22}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
header{background:var(--head);border-bottom:1px solid var(--line);padding:.5rem 1rem}
header .name{font-weight:700;font-size:1.15rem;margin-right:1rem;color:var(--fg);text-decoration:none}
nav ul{list-style:none;margin:.25rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a[aria-current=page]{font-weight:700;text-decoration:none;color:var(--fg)}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem;margin:0;padding:0}
.cards div{border:1px solid var(--line);border-radius:.5rem;padding:.75rem;min-width:0}
.cards dt{color:var(--muted);font-size:.9rem}.cards dd{margin:0;font-size:1.6rem;font-weight:700;overflow-wrap:anywhere}
.cards .record{font-size:.85rem;font-weight:400;color:var(--muted)}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--head)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:var(--muted)}.topic{overflow-wrap:anywhere}
svg.chart{width:100%;height:auto;max-height:16rem;display:block}
figure{margin:.5rem 0}svg.chart text{fill:var(--muted);font-size:11px}@media (max-width:40rem){svg.chart:not(.small) text{font-size:20px}}svg.chart .grid{stroke:var(--line)}
svg.chart .s0{stroke:var(--bar);fill:none;stroke-width:2}svg.chart .s1{stroke:var(--bar2);fill:none;stroke-width:2}
svg.chart rect{fill:var(--bar)}.key.k0{color:var(--bar)}.key.k1{color:var(--bar2)}svg.chart .d0{fill:var(--bar)}svg.chart .d1{fill:var(--bar2)}
svg.chart rect.hit{fill:transparent}svg.chart rect.hit:hover{fill:var(--line);fill-opacity:.5}svg.chart *:not(.hit){pointer-events:none}svg.chart rect.rest{fill:var(--muted)}
svg.chart.small{max-width:26rem}svg.chart.small text{font-size:12px}svg.chart.small text.label{fill:var(--fg)}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:0 2rem}
th button.sort{font:inherit;font-weight:700;color:inherit;background:none;border:0;padding:0;cursor:pointer;text-align:inherit}
th .sort::after,th>a::after{display:inline-block;margin-left:.25rem;content:"↕" / "";color:var(--muted)}
th[aria-sort=ascending] .sort::after,th[aria-sort=ascending]>a::after{content:"▲" / "";color:inherit}
th[aria-sort=descending] .sort::after,th[aria-sort=descending]>a::after{content:"▼" / "";color:inherit}
.tip{position:fixed;z-index:10;pointer-events:none;background:var(--fg);color:var(--bg);padding:.2rem .5rem;border-radius:.3rem;font-size:.85rem;max-width:20rem}
@media (max-width:40rem){table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.stack,table.stack tbody,table.stack tr{display:block}table.stack tr{padding:.5rem 0;border-bottom:1px solid var(--line)}
table.stack td{display:block;border:0;padding:.1rem 0;overflow-wrap:anywhere}table.stack td.inline{display:inline;padding-right:.5rem}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}table.stack br{display:none}table.stack code{font-size:.9em}}
details{margin:.25rem 0 1rem}form.search{display:flex;gap:.5rem;flex-wrap:wrap;margin:.5rem 0}
input,button,select{font:inherit;padding:.3rem .5rem;border:1px solid var(--line);border-radius:.3rem;background:var(--bg);color:var(--fg)}
.pager{display:flex;gap:1rem;margin:.75rem 0}footer{color:var(--muted);font-size:.85rem;padding:1rem;text-align:center}
@keyframes fresh{from{background-color:var(--line)}}@media (prefers-reduced-motion:no-preference){.fresh{animation:fresh 1.5s ease-out}}
`;

export interface PageOptions {
  /** The network's name, heading every page. */
  network: string;
  /** The page's own heading and title. */
  title: string;
  /** The menu entry that is this page (its path), if any. */
  current?: string;
  /** Entries after the site's own: other plugins' pages (the account pages). */
  menu?: readonly MenuEntry[];
  /** The page's content, HTML. */
  body: string;
  /** The zone the page's times are in, named in the footer. */
  timeZone: string;
  /** A script of the site's own (its path), added at the end. */
  script?: string;
  /** Rules added to the style sheet (a page of another plugin: the account pages' forms). */
  style?: string;
  /** Whether the Live page is in the menu (the bot streams its events). */
  live?: boolean;
}

/** A whole page. */
export function page(options: PageOptions): string {
  const { network, title, current, body, timeZone, script, style = '', live = false } = options;
  const own = live ? [MENU[0]!, LIVE_MENU_ENTRY, ...MENU.slice(1)] : MENU;
  const menu = [...own, ...(options.menu ?? [])]
    .map(
      ({ path, label }) =>
        `<li><a href="${path}"${path === current ? ' aria-current="page"' : ''}>${escapeHtml(label)}</a></li>`,
    )
    .join('');
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    // Without an icon of its own, every browser would ask the bot for a /favicon.ico it does not have.
    `<link rel="icon" href="${ICON_PATH}" type="image/svg+xml">` +
    `<title>${escapeHtml(title === network ? network : `${title} · ${network}`)}</title>` +
    `<style>${STYLE}${style}</style></head><body>` +
    `<header><a class="name" href="/network/">${escapeHtml(network)}</a>` +
    `<nav aria-label="Site"><ul>${menu}</ul></nav></header>` +
    `<main id="main"><h1>${escapeHtml(title)}</h1>${body}</main>` +
    `<footer>Times are in ${escapeHtml(timeZone)}. Data: the network, as the public API at ` +
    `<a href="/network/api/">/network/api/</a> serves it.</footer>` +
    (script ? `<script src="${script}" defer></script>` : '') +
    `<script>${SITE_SCRIPT}</script></body></html>`
  );
}

/** A number with thousands separators, or an en dash for unknown. */
export function count(value: unknown): string {
  return typeof value === 'number' ? value.toLocaleString('en-US') : '–';
}

/** One formatter per time zone: making one costs far more than formatting with it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** `time` (ISO) in `timeZone`, as `2026-11-26 14:05`. */
export function when(time: unknown, timeZone: string): string {
  if (typeof time !== 'string') return '–';
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return '–';
  const parts = formatterFor(timeZone).formatToParts(date);
  const part = (type: string): string => parts.find((entry) => entry.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
}

/** The path of a channel's or a user's page. */
export function channelPath(name: string): string {
  return `/network/channel/${encodeURIComponent(name)}/`;
}

export function userPath(nick: string): string {
  return `/network/user/${encodeURIComponent(nick)}/`;
}

/** How a column's cells read on a narrow screen in a stacked table: on one line with the next, on a line of their own, or labelled. */
export type StackedCell = 'inline' | 'line' | 'labelled';

export interface TableOptions {
  /**
   * Whether the page's script may sort the rows when a column heading is pressed; default yes, for a table of
   * two rows or more. A paged list sorts on the server instead (`headLinks`).
   */
  sortable?: boolean;
  /** The column the rows come sorted by, and which way: its heading's `aria-sort`. */
  sorted?: { column: number; direction: 'ascending' | 'descending' };
  /** Per column, a link (escaped already) its heading is: the server sorts by it. */
  headLinks?: readonly (string | null)[];
  /** On a narrow screen, each row as a block of lines instead of a row of columns; per column, how. */
  stacked?: readonly StackedCell[];
}

/**
 * A table: `head` cells (`n:` before a label right-aligns its column and sorts it as numbers), rows of HTML
 * cells.
 */
export function table(
  caption: string,
  head: readonly string[],
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string {
  const { sorted, headLinks, stacked } = options;
  const numeric = head.map((label) => label.startsWith('n:'));
  const labels = head.map((label) => escapeHtml(label.replace(/^n:/, '')));
  const sortable = (options.sortable ?? true) && !stacked && rows.length > 1;
  const th = labels
    .map((label, index) => {
      const sort = sorted?.column === index ? ` aria-sort="${sorted.direction}"` : '';
      const link = headLinks?.[index];
      return `<th scope="col"${numeric[index] ? ' class="n"' : ''}${sort}>${link ? `<a href="${link}">${label}</a>` : label}</th>`;
    })
    .join('');
  const cellAttributes = head.map((_, index) => {
    const classes = [numeric[index] ? 'n' : '', stacked?.[index] === 'inline' ? 'inline' : ''].filter(Boolean);
    return (
      (classes.length > 0 ? ` class="${classes.join(' ')}"` : '') +
      (stacked?.[index] === 'labelled' ? ` data-label="${labels[index]}"` : '')
    );
  });
  const body = rows
    .map((row) => `<tr>${row.map((cell, index) => `<td${cellAttributes[index] ?? ''}>${cell}</td>`).join('')}</tr>`)
    .join('');
  const tableAttributes = (stacked ? ' class="stack"' : '') + (sortable ? ' data-sortable' : '');
  return (
    `<div class="scroll"><table${tableAttributes}><caption class="muted">${escapeHtml(caption)}</caption>` +
    `<thead><tr>${th}</tr></thead><tbody>${body || `<tr><td colspan="${head.length}">None.</td></tr>`}</tbody></table></div>`
  );
}
