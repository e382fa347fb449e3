/**
 * The Live page (`/network/live/`): the network's public events as they happen, from the events plugin's
 * stream (`GET /api/irc/events/`, its public view: public channels only, nobody's address or account). The
 * server sends the frame, what the page is, its filters and an empty list; the page's script (live.ts) fills
 * the list from the stream. Nothing on it is made up: without JavaScript it says that it needs it, and where
 * the bot does not stream its events it says so.
 */
import { escapeHtml, type ApiRequest } from '../../lib/sdk.js';
import { LIVE_MENU_ENTRY } from './layout.js';
import { LIVE_SCRIPT } from './live.js';
import { framed, type Rendered, type SiteContext } from './pages.js';

/** The kinds of event the public stream sends (`account` never is), with their names on the page. */
export const LIVE_TYPES: readonly { type: string; label: string }[] = [
  { type: 'join', label: 'Joins' },
  { type: 'part', label: 'Parts' },
  { type: 'kick', label: 'Kicks' },
  { type: 'quit', label: 'Quits' },
  { type: 'nick', label: 'Nick changes' },
  { type: 'topic', label: 'Topics' },
  { type: 'mode', label: 'Modes' },
  { type: 'away', label: 'Away' },
  { type: 'connect', label: 'Connections' },
  { type: 'channel_created', label: 'New channels' },
  { type: 'channel_emptied', label: 'Channels gone' },
  { type: 'server_linked', label: 'Server links' },
  { type: 'server_split', label: 'Server splits' },
  { type: 'counts', label: 'Counts' },
];

/**
 * The kinds shown when the address names none: all but the counts, which change with every user who comes or
 * goes and would bury the rest (the status page shows them).
 */
const DEFAULT_TYPES = LIVE_TYPES.map(({ type }) => type).filter((type) => type !== 'counts');

/** The lines the page keeps, newest first; older ones go. */
export const LIVE_LINES = 200;

/** The filters of the page's address: `types` (comma-separated, as the stream takes them), `channel`. */
export interface LiveQuery {
  types: readonly string[];
  channel: string;
}

/** The filters a request's address gives, within what the page offers (unknown kinds are left out). */
export function liveQuery(request: Pick<ApiRequest, 'query'>): LiveQuery {
  const known = new Set(LIVE_TYPES.map(({ type }) => type));
  const asked = (request.query.get('types') ?? '')
    .split(',')
    .map((type) => type.trim())
    .filter((type) => known.has(type));
  return {
    types: asked.length > 0 ? [...new Set(asked)] : DEFAULT_TYPES,
    channel: (request.query.get('channel') ?? '').trim().slice(0, 200),
  };
}

const STYLE =
  '.filters fieldset{border:1px solid var(--line);border-radius:.5rem;margin:0;padding:.5rem .75rem}' +
  '.filters legend{padding:0 .25rem}.kinds{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}' +
  '.kinds label{white-space:nowrap}.kinds input{margin:0 .35rem 0 0;padding:0;accent-color:var(--accent)}' +
  '.filters .channel{display:flex;gap:.5rem;align-items:center;margin:.75rem 0 0}' +
  '.filters .channel label{white-space:nowrap}.filters .channel input{flex:0 1 14rem;min-width:0}' +
  '.live-bar{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;margin:1rem 0 .5rem}' +
  '.live-bar button{min-width:6rem}' +
  'ol.events{list-style:none;margin:0;padding:0;border-top:1px solid var(--line)}ol.events:empty{border:0}' +
  'ol.events li{display:flex;flex-wrap:wrap;gap:0 .6rem;padding:.35rem 0;border-bottom:1px solid var(--line);overflow-wrap:anywhere}' +
  'ol.events time{color:var(--muted);font-variant-numeric:tabular-nums}' +
  'ol.events .kind{color:var(--muted);font-size:.85rem;min-width:4.5rem;padding-top:.1rem}' +
  'ol.events .what{flex:1 1 16rem;min-width:0}ol.events .said{font-style:italic}' +
  'ol.events .mode{font-family:ui-monospace,monospace;font-size:.9em}' +
  'ol.events li.note{display:block;color:var(--muted);font-style:italic}';

export function livePage(site: SiteContext, query: LiveQuery): Rendered {
  const stream = site.streaming?.() ?? false;
  const intro =
    `<p>What happens on the network as it happens, newest first: people joining and leaving its public channels, ` +
    `topics and modes set, nicks changed, users connecting, channels and servers coming and going. Nobody's ` +
    `address or account shows, and nothing of a secret or private channel: the same as the API's public stream, ` +
    `<code>GET /api/irc/events/</code>.</p>`;
  if (!stream) {
    return {
      status: 200,
      html: framed(site, {
        title: 'Live',
        current: LIVE_MENU_ENTRY.path,
        body:
          intro +
          `<p data-live-state>Not available: this bot does not stream its events (its events plugin is not ` +
          `enabled). See <a href="/network/api/">the API’s endpoints</a>.</p>`,
      }),
    };
  }
  const kinds = LIVE_TYPES.map(
    ({ type, label }) =>
      `<label><input type="checkbox" name="types" value="${type}"${query.types.includes(type) ? ' checked' : ''}>` +
      `${escapeHtml(label)}</label>`,
  ).join('');
  const body =
    intro +
    `<noscript><p><strong>This page needs JavaScript</strong>: it shows the events as the bot's stream sends ` +
    `them, in the page. The other pages read without it.</p></noscript>` +
    `<section data-live-feed data-stream data-time-zone="${escapeHtml(site.timeZone)}" aria-label="Events">` +
    `<form class="filters" action="${LIVE_MENU_ENTRY.path}" method="get" hidden>` +
    `<fieldset><legend>Show</legend><div class="kinds">${kinds}</div></fieldset>` +
    `<div class="channel"><label for="live-channel">In channel</label>` +
    `<input id="live-channel" name="channel" type="text" value="${escapeHtml(query.channel)}" placeholder="any channel" ` +
    `maxlength="200" autocomplete="off" spellcheck="false"><button type="submit">Apply</button></div></form>` +
    `<div class="live-bar" data-live-bar hidden><button type="button" data-live-pause hidden>Pause</button>` +
    `<span role="status" data-live-state></span><span class="muted" data-live-held></span></div>` +
    `<ol class="events" data-live-lines data-limit="${LIVE_LINES}" aria-label="Events, newest first"></ol>` +
    `</section><script>${LIVE_SCRIPT.code}</script>`;
  return {
    status: 200,
    html: framed(site, { title: 'Live', current: LIVE_MENU_ENTRY.path, body, style: STYLE }),
    scripts: [LIVE_SCRIPT.source],
  };
}
