/**
 * The account pages' answers: a rendered page, the `303 See Other` after a form, and the {@link Visit} a page
 * is rendered for. Every answer of the plugin is made here, so each carries the {@link securityHeaders}
 * (`Cache-Control: no-store`, ...).
 */
import { escapeHtml, HtmlDocument, type ApiResponse, type Services } from '../../lib/sdk.js';
import { csrfToken } from './csrf.js';
import { securityHeaders, type Rendered, type Visit } from './pages.js';
import type { Session } from './sessions.js';

export interface AccountAnswers {
  /** `rendered` as the answer, with the security headers and `headers`. */
  page(rendered: Rendered, headers?: Record<string, string>): ApiResponse;
  /** `303 See Other` to `location` (a page that then shows what happened once), with `headers`. */
  seeOther(location: string, headers?: Record<string, string>): ApiResponse;
  /** What a page is rendered for: the visitor's cookie (its CSRF token), the signed-in session, whether an administrator. */
  visit(cookie: string | undefined, session: Session | undefined, admin: boolean): Visit;
}

export function accountAnswers(layout: Services['web.layout'], botNick: string): AccountAnswers {
  const security = securityHeaders(layout);
  return {
    page: (rendered, headers = {}) => ({
      status: rendered.status,
      body: new HtmlDocument(rendered.html),
      headers: { ...security, ...headers },
    }),
    seeOther: (location, headers = {}) => ({
      status: 303,
      body: new HtmlDocument(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>See other</title></head>` +
          `<body><p><a href="${escapeHtml(location)}">Continue</a></p></body></html>`,
      ),
      headers: { ...security, Location: location, ...headers },
    }),
    visit: (cookie, session, admin) => ({
      layout,
      csrf: cookie === undefined ? '' : csrfToken(cookie),
      account: session?.account ?? null,
      admin,
      botNick,
    }),
  };
}
