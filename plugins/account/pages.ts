/**
 * The account pages, in the website's frame (`web.layout`): the sign-in form, the account's API tokens,
 * the page that shows a new token's secret once, the admin panel, its audit log, and the refusals. Every
 * form posts back to the bot with its CSRF token and works without JavaScript; everything that comes from
 * people (labels, account names) is escaped.
 */
import { escapeHtml, inlineScriptSource, type Services } from '../../lib/sdk.js';

type Layout = Services['web.layout'];
type Tokens = Services['tokens.manage'];
type TokenSummary = ReturnType<Tokens['ownedBy']>[number];
type AuditRecord = NonNullable<Awaited<ReturnType<Tokens['audit']>>>['entries'][number];
type Endpoint = ReturnType<Tokens['endpoints']>[number];

export const ACCOUNT_PATH = '/network/account/';
export const ADMIN_PATH = '/network/admin/';
export const AUDIT_PATH = '/network/admin/audit/';
/** Rows of a paged list (the admin panel's tokens, the audit log). */
export const PAGE_SIZE = 50;

/** A page and its status. */
export interface Rendered {
  status: number;
  html: string;
}

/** What every page of a visitor needs: the look, the visitor's CSRF token, who is signed in. */
export interface Visit {
  layout: Layout;
  /** The CSRF token of the visitor's cookie. */
  csrf: string;
  /** The signed-in account, or null. */
  account: string | null;
  /** Whether that account is an administrator (for the link to the admin panel). */
  admin: boolean;
  /** The bot's nick, to name the IRC commands. */
  botNick: string;
}

/** Rules the account pages add to the site's style sheet. */
export const ACCOUNT_STYLE =
  '.notice{border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:.3rem;padding:.5rem .75rem;margin:.75rem 0}' +
  '.notice.problem{border-left-color:#cf222e}' +
  '.stack{display:grid;gap:.35rem;max-width:26rem;margin:.5rem 0 1rem}.stack button{justify-self:start;margin-top:.35rem}div.stack{max-width:44rem}' +
  'form.inline{display:inline-flex;flex-wrap:wrap;gap:.35rem;align-items:center;margin:.1rem .5rem .1rem 0}' +
  '.bar{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.25rem 0 1rem}.bar form{margin:0}' +
  '.secret{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;width:100%;max-width:42rem}' +
  'ul.plain{list-style:none;margin:0;padding:0}code{overflow-wrap:anywhere}' +
  '.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}' +
  // The hidden texts of the buttons in a wide table stay inside its scrolling box, not past the screen's edge.
  '.scroll{position:relative}';

/**
 * The copy button's script: it shows the button (hidden without JavaScript, where the secret is selected
 * by hand) and copies the secret's field. Served inline and allowed by its hash (see {@link securityHeaders}).
 */
const COPY_SCRIPT =
  "(()=>{const b=document.querySelector('[data-copy]');if(!b||!navigator.clipboard)return;" +
  "const f=document.getElementById(b.dataset.copy);const s=document.getElementById('copy-status');b.hidden=false;" +
  "b.addEventListener('click',async()=>{try{await navigator.clipboard.writeText(f.value);s.textContent='Copied.';}" +
  "catch{f.select();s.textContent='Select the token and copy it.';}});})();";

/**
 * A form marked `data-once` is sent once per page shown: a double click sends it once (the server also makes one
 * token per form, but the browser would show the second answer, and the new token's value would be lost). Shown
 * again from the browser's history, the page may send it again.
 */
const ONCE_SCRIPT =
  "(()=>{const f=document.querySelector('form[data-once]');if(!f)return;" +
  "f.addEventListener('submit',e=>{if(f.dataset.sent){e.preventDefault();return;}f.dataset.sent='1';});" +
  "addEventListener('pageshow',()=>{delete f.dataset.sent;});})();";

/**
 * The headers of every account page: never stored by a browser or a proxy, and the site's security headers
 * (`web.layout`'s: no framing, so a click on an admin button cannot be borrowed by another site; forms only to
 * the bot; scripts only the site's own and, here, the copy button's and the send-once one's, by their hashes;
 * nothing fetched from elsewhere; no address in a Referer to another site).
 */
export function securityHeaders(
  layout: Pick<Services['web.layout'], 'securityHeaders'>,
): Readonly<Record<string, string>> {
  return {
    'Cache-Control': 'no-store',
    ...layout.securityHeaders([inlineScriptSource(COPY_SCRIPT), inlineScriptSource(ONCE_SCRIPT)]),
  };
}

const text = (value: string): string => escapeHtml(value);

/** A token as `#7 "laptop"`. */
function tokenName(token: { id: number; label: string }): string {
  return `#${token.id}${token.label ? ` “${text(token.label)}”` : ''}`;
}

function csrfField(visit: Visit): string {
  return `<input type="hidden" name="csrf" value="${text(visit.csrf)}">`;
}

/** A one-button form posting `fields` to `action`; `label` is the button's text, `hint` read to screen readers only. */
function button(
  visit: Visit,
  action: string,
  label: string,
  hint: string,
  fields: Record<string, string> = {},
): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${text(name)}" value="${text(value)}">`)
    .join('');
  return (
    `<form class="inline" method="post" action="${text(action)}">${csrfField(visit)}${hidden}` +
    `<button type="submit">${text(label)}<span class="visually-hidden"> ${text(hint)}</span></button></form>`
  );
}

function notice(message: { text: string; problem: boolean } | null): string {
  if (!message) return '';
  return message.problem
    ? `<p class="notice problem" role="alert">${text(message.text)}</p>`
    : `<p class="notice" role="status">${text(message.text)}</p>`;
}

/** Who is signed in, the account pages, and the sign-out button. */
function accountBar(visit: Visit): string {
  if (visit.account === null) return '';
  return (
    `<nav class="bar" aria-label="Account"><span>Signed in as <strong>${text(visit.account)}</strong></span>` +
    `<a href="${ACCOUNT_PATH}">Your API tokens</a>` +
    (visit.admin ? `<a href="${ADMIN_PATH}">Admin panel</a><a href="${AUDIT_PATH}">Audit log</a>` : '') +
    `<form method="post" action="${ACCOUNT_PATH}sign-out/">${csrfField(visit)}<button type="submit">Sign out</button></form></nav>`
  );
}

function page(visit: Visit, status: number, title: string, body: string): Rendered {
  return { status, html: visit.layout.page({ title, body, style: ACCOUNT_STYLE, current: ACCOUNT_PATH }) };
}

/** Whether `grants` approve `name`: the name itself, or a `prefix.*` wildcard. */
export function covered(grants: readonly string[], name: string): boolean {
  return grants.some((grant) => grant === name || (grant.endsWith('.*') && name.startsWith(grant.slice(0, -1))));
}

function endpointList(names: readonly string[]): string {
  return names.length === 0
    ? '<span class="muted">none</span>'
    : names.map((name) => `<code>${text(name)}</code>`).join(', ');
}

function state(token: TokenSummary, layout: Layout): string {
  return token.revokedAt === null ? 'active' : `revoked ${text(layout.when(token.revokedAt))}`;
}

/** A list page's links to the previous and next page. */
function pager(path: string, offset: number, count: number): string {
  const link = (to: number, label: string, rel: string) =>
    `<a href="${path}${to > 0 ? `?offset=${to}` : ''}" rel="${rel}">${label}</a>`;
  const previous = offset > 0 ? link(Math.max(0, offset - PAGE_SIZE), 'Newer', 'prev') : '';
  const next = offset + PAGE_SIZE < count ? link(offset + PAGE_SIZE, 'Older', 'next') : '';
  return previous || next ? `<nav class="pager" aria-label="Pages">${previous}${next}</nav>` : '';
}

export interface SignInOptions {
  /** The account (or nick) typed last, to fill in again. */
  name?: string;
  /** Where to go once signed in (an account page), carried by the form. */
  next?: string;
  message?: { text: string; problem: boolean } | null;
}

export function signInPage(visit: Visit, status: number, options: SignInOptions = {}): Rendered {
  const body =
    notice(options.message ?? null) +
    `<p>Sign in with your NickServ account, or a nick grouped to it, and its password, to manage your API tokens. ` +
    `The bot asks the network's services whether the password is right; it never stores it.</p>` +
    `<form class="stack" method="post" action="${ACCOUNT_PATH}sign-in/">${csrfField(visit)}` +
    (options.next ? `<input type="hidden" name="next" value="${text(options.next)}">` : '') +
    `<label for="account">NickServ account or nick</label>` +
    `<input id="account" name="account" autocomplete="username" required maxlength="64" spellcheck="false" ` +
    `autocapitalize="none" value="${text(options.name ?? '')}">` +
    `<label for="password">Password</label>` +
    `<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">` +
    `<button type="submit">Sign in</button></form>` +
    `<p class="muted">The same tokens are managed over IRC too: <code>/msg ${text(visit.botNick)} HELP TOKEN</code>.</p>`;
  return page(visit, status, 'Sign in', body);
}

export interface SettingsData {
  tokens: TokenSummary[];
  endpoints: Endpoint[];
  maxTokens: number;
  maxLabelLength: number;
  message: { text: string; problem: boolean } | null;
  /** The create form's one-time id: the same form sent twice (a reload) makes one token. */
  formId: string;
  /** Where the account is signed in: its sessions, newest first; `current` is the one this page is shown to. */
  sessions: { createdAt: number; lastSeenAt: number; address: string; current: boolean }[];
}

/** The account's sessions, and the form that ends them all. */
function sessionsSection(visit: Visit, sessions: SettingsData['sessions']): string {
  const { layout } = visit;
  const iso = (ms: number): string => new Date(ms).toISOString();
  return (
    `<h2>Where you are signed in</h2>` +
    layout.table(
      `${sessions.length} session${sessions.length === 1 ? '' : 's'}, newest first`,
      ['Signed in', 'Last used', 'From', 'Note'],
      sessions.map((session) => [
        text(layout.when(iso(session.createdAt))),
        text(layout.when(iso(session.lastSeenAt))),
        session.address ? `<code>${text(session.address)}</code>` : '<span class="muted">not known</span>',
        session.current ? 'this browser' : '',
      ]),
    ) +
    `<p>Not you, a browser you no longer use, or a password you just changed at NickServ (the bot is not told of that)? Sign out everywhere, this browser too; your tokens stay.</p>` +
    button(visit, `${ACCOUNT_PATH}sessions/sign-out-everywhere/`, 'Sign out everywhere', '(every session)')
  );
}

/** The signed-in account's page: its API tokens, a form to create one, the endpoints there are. */
export function settingsPage(visit: Visit, data: SettingsData): Rendered {
  const { layout } = visit;
  const live = data.tokens.filter((token) => token.revokedAt === null);
  const ordered = [...live, ...data.tokens.filter((token) => token.revokedAt !== null)];
  const rows = ordered.map((token) => {
    const open = data.endpoints.filter(
      (endpoint) => !covered(token.grants, endpoint.name) && !token.requests.includes(endpoint.name),
    );
    const actions =
      token.revokedAt !== null
        ? ''
        : (open.length > 0
            ? `<form class="inline" method="post" action="${ACCOUNT_PATH}tokens/${token.id}/request/">${csrfField(visit)}` +
              `<label class="visually-hidden" for="request-${token.id}">Endpoint to request for token #${token.id}</label>` +
              `<select id="request-${token.id}" name="endpoint">` +
              open
                .map((endpoint) => `<option value="${text(endpoint.name)}">${text(endpoint.name)}</option>`)
                .join('') +
              `</select><button type="submit">Request<span class="visually-hidden"> for token #${token.id}</span></button></form>`
            : '') + button(visit, `${ACCOUNT_PATH}tokens/${token.id}/revoke/`, 'Revoke', `token #${token.id}`);
    return [
      tokenName(token),
      text(layout.when(token.createdAt)),
      token.lastUsedAt === null ? 'never' : text(layout.when(token.lastUsedAt)),
      endpointList(token.grants),
      endpointList(token.requests),
      state(token, layout),
      actions,
    ];
  });
  const body =
    accountBar(visit) +
    notice(data.message) +
    `<p>A token lets a program call the API's token endpoints, with the header ` +
    `<code>Authorization: Token &lt;token&gt;</code>. A new token reaches no endpoint: request each endpoint it ` +
    `needs, and an administrator must approve each one. You hold ${live.length} of at most ${data.maxTokens} ` +
    `active tokens. Tokens made over IRC (<code>/msg ${text(visit.botNick)} TOKEN CREATE</code>) are listed here too.</p>` +
    layout.table(
      'Your API tokens',
      ['Token', 'Created', 'Last used', 'Approved endpoints', 'Requested', 'State', 'Actions'],
      rows,
    ) +
    `<h2>Create a token</h2>` +
    `<form class="stack" method="post" action="${ACCOUNT_PATH}tokens/" data-once>${csrfField(visit)}` +
    `<input type="hidden" name="form" value="${text(data.formId)}">` +
    `<label for="label">Label: what it is for (up to ${data.maxLabelLength} characters)</label>` +
    `<input id="label" name="label" maxlength="${data.maxLabelLength}" autocomplete="off">` +
    `<button type="submit">Create a token</button></form>` +
    `<p class="muted">Its value is shown once, on the next page; copy it there.</p>` +
    `<script>${ONCE_SCRIPT}</script>` +
    sessionsSection(visit, data.sessions) +
    `<h2>Token endpoints</h2>` +
    layout.table(
      'What each endpoint exposes',
      ['Endpoint', 'Path', 'What it exposes'],
      data.endpoints.map((endpoint) => [
        `<code>${text(endpoint.name)}</code>`,
        `<code>${text(endpoint.method)} ${text(endpoint.path)}</code>`,
        text(endpoint.summary),
      ]),
    );
  return page(visit, 200, 'Your API tokens', body);
}

/** The page right after a token was made: its value, once. */
export function createdPage(visit: Visit, token: TokenSummary, secret: string): Rendered {
  const body =
    accountBar(visit) +
    `<p class="notice" role="status">Token ${tokenName(token)} is created.</p>` +
    `<div class="stack"><label for="token-secret">Your new token</label>` +
    `<input id="token-secret" class="secret" readonly value="${text(secret)}" autocomplete="off" spellcheck="false">` +
    `<span><button type="button" data-copy="token-secret" hidden>Copy</button> <span id="copy-status" role="status"></span></span></div>` +
    `<p><strong>Copy it now: it is shown only this once.</strong> The bot keeps only its SHA-256, so nobody can ` +
    `show it to you again; if you lose it, revoke it and make another.</p>` +
    `<p>It reaches no endpoint yet: request the endpoints it needs on <a href="${ACCOUNT_PATH}">your tokens</a>, ` +
    `and an administrator must approve each one. Send it as the header <code>Authorization: Token &lt;token&gt;</code>.</p>` +
    `<p><a href="${ACCOUNT_PATH}">Back to your tokens</a></p>` +
    `<script>${COPY_SCRIPT}</script>`;
  return page(visit, 200, 'Token created', body);
}

export interface AdminData {
  tokens: TokenSummary[];
  endpoints: Endpoint[];
  offset: number;
  message: { text: string; problem: boolean } | null;
}

/** The admin panel: pending requests, every token with its owner, and the actions on them. */
export function adminPage(visit: Visit, data: AdminData): Rendered {
  const { layout } = visit;
  const summaries = new Map(data.endpoints.map((endpoint) => [endpoint.name, endpoint.summary]));
  const pending = data.tokens.flatMap((token) => token.requests.map((name) => ({ token, name })));
  const pendingRows = pending.map(({ token, name }) => [
    tokenName(token),
    text(token.owner),
    `<code>${text(name)}</code>`,
    text(summaries.get(name) ?? ''),
    button(visit, `${ADMIN_PATH}tokens/${token.id}/grant/`, 'Approve', `${name} for token #${token.id}`, {
      endpoint: name,
    }) +
      button(visit, `${ADMIN_PATH}tokens/${token.id}/decline/`, 'Decline', `${name} for token #${token.id}`, {
        endpoint: name,
      }),
  ]);
  // Newest first: the tokens that most likely wait for a decision.
  const newestFirst = [...data.tokens].reverse();
  const shown = newestFirst.slice(data.offset, data.offset + PAGE_SIZE);
  const rows = shown.map((token) => {
    const grants =
      token.grants.length === 0
        ? '<span class="muted">none</span>'
        : `<ul class="plain">${token.grants
            .map(
              (name) =>
                `<li><code>${text(name)}</code>` +
                (token.revokedAt === null
                  ? ` ${button(visit, `${ADMIN_PATH}tokens/${token.id}/withdraw/`, 'Withdraw', `${name} from token #${token.id}`, { endpoint: name })}`
                  : '') +
                `</li>`,
            )
            .join('')}</ul>`;
    const approvable = data.endpoints.filter((endpoint) => !covered(token.grants, endpoint.name));
    const actions =
      token.revokedAt !== null
        ? ''
        : (approvable.length > 0
            ? `<form class="inline" method="post" action="${ADMIN_PATH}tokens/${token.id}/grant/">${csrfField(visit)}` +
              `<label class="visually-hidden" for="grant-${token.id}">Endpoint to approve for token #${token.id}</label>` +
              `<select id="grant-${token.id}" name="endpoint">` +
              approvable
                .map((endpoint) => `<option value="${text(endpoint.name)}">${text(endpoint.name)}</option>`)
                .join('') +
              `</select><button type="submit">Approve<span class="visually-hidden"> for token #${token.id}</span></button></form>`
            : '') + button(visit, `${ADMIN_PATH}tokens/${token.id}/revoke/`, 'Revoke', `token #${token.id}`);
    return [
      tokenName(token),
      text(token.owner),
      text(layout.when(token.createdAt)),
      token.lastUsedAt === null ? 'never' : text(layout.when(token.lastUsedAt)),
      grants,
      endpointList(token.requests),
      `${state(token, layout)}${token.staff ? ', staff' : ''}`,
      actions,
    ];
  });
  const body =
    accountBar(visit) +
    notice(data.message) +
    `<p>Each change takes effect on the API at once and is written to the <a href="${AUDIT_PATH}">audit log</a>, ` +
    `as the TOKEN commands over IRC are.</p>` +
    `<h2>Pending requests</h2>` +
    layout.table(
      `Endpoints owners asked for (${pending.length})`,
      ['Token', 'Owner', 'Endpoint', 'What it exposes', 'Decision'],
      pendingRows,
    ) +
    `<h2>All tokens</h2>` +
    layout.table(
      `${data.tokens.length} token${data.tokens.length === 1 ? '' : 's'}, newest first`,
      ['Token', 'Owner', 'Created', 'Last used', 'Approved endpoints', 'Requested', 'State', 'Actions'],
      rows,
    ) +
    pager(ADMIN_PATH, data.offset, data.tokens.length) +
    `<h2>Sessions</h2>` +
    `<form class="stack" method="post" action="${ADMIN_PATH}sessions/end/">${csrfField(visit)}` +
    `<label for="end-account">End every session of the account (its people sign in again)</label>` +
    `<input id="end-account" name="account" autocomplete="off" maxlength="64">` +
    `<button type="submit">End its sessions</button></form>`;
  return page(visit, 200, 'Admin panel', body);
}

/** Where a change came from, in words. */
function source(actor: AuditRecord['actor']): { by: string; from: string } {
  switch (actor.via) {
    case 'irc':
      return { by: actor.account ?? '–', from: 'IRC' };
    case 'web':
      return { by: actor.account ?? '–', from: `website${actor.address ? `, ${actor.address}` : ''}` };
    case 'http':
      return {
        by: actor.account ?? '–',
        from: `staff API (token #${actor.token_id ?? '?'})${actor.address ? `, ${actor.address}` : ''}`,
      };
    case 'cli':
      return { by: actor.account ?? '–', from: "the bot's command line" };
    case 'system':
      return { by: 'the bot', from: actor.reason ?? '' };
  }
}

export function auditPage(visit: Visit, log: { count: number; entries: AuditRecord[] }, offset: number): Rendered {
  const { layout } = visit;
  const rows = log.entries.map((entry) => {
    const { by, from } = source(entry.actor);
    return [
      text(layout.when(entry.at)),
      `#${entry.token_id}`,
      text(entry.action),
      endpointList(entry.details),
      text(by),
      text(from),
    ];
  });
  const body =
    accountBar(visit) +
    `<p>Every creation, request, approval, withdrawal, decline, revocation and staff change of an API token, ` +
    `over IRC, on the website, or with a staff token; newest first.</p>` +
    layout.table(`The audit log: ${log.count} entries`, ['Time', 'Token', 'Action', 'Endpoints', 'By', 'From'], rows) +
    pager(AUDIT_PATH, offset, log.count);
  return page(visit, 200, 'Audit log', body);
}

/** A page that refuses: why, and where to go from here (by default the account's tokens). */
export function refusalPage(
  visit: Visit,
  status: number,
  title: string,
  message: string,
  link: { href: string; label: string } = { href: ACCOUNT_PATH, label: 'Your API tokens' },
): Rendered {
  const body =
    accountBar(visit) +
    `<p class="notice problem" role="alert">${text(message)}</p>` +
    `<p><a href="${text(link.href)}">${text(link.label)}</a></p>`;
  return page(visit, status, title, body);
}
