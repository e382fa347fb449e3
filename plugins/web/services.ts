/**
 * What the website offers the other plugins: `web.layout`, its frame and look for pages of their own (the
 * account pages), so that every page under /network/ looks alike. A user imports nothing from this folder:
 * the type comes through the SDK's `Services`.
 */
import { inlineScriptSource } from '../../lib/sdk.js';
import { count, table, when, type MenuEntry } from './layout.js';
import { framed } from './pages.js';
import { SITE_SCRIPT } from './script.js';

export interface WebLayout {
  /**
   * A whole page in the site's frame: the network's name, the menu of the public pages, `title` as its
   * heading, `body` (HTML), the footer; `style` is added to the site's style sheet.
   */
  page(options: { title: string; body: string; style?: string; current?: string }): string;
  /** Add an entry to every page's header menu, after the site's own (e.g. the account pages). */
  addMenuEntry(entry: MenuEntry): void;
  /** An ISO time as the site writes times, in its time zone (`2026-11-26 14:05`); an en dash for none. */
  when(time: string | null): string;
  /** A number as the site writes numbers (thousands separators). */
  count(value: number): string;
  /** A table as the site's: a caption, head cells (`n:` right-aligns a column), rows of HTML cells. */
  table(caption: string, head: readonly string[], rows: readonly (readonly string[])[]): string;
  /** The zone the site's times are in. */
  readonly timeZone: string;
  /**
   * The inline scripts every page of the frame carries, as Content-Security-Policy sources (`'sha256-…'`):
   * a page with a policy of its own allows them, or its tables do not sort.
   */
  readonly scriptSources: readonly string[];
  /**
   * The security headers of a page of the site that also runs the inline scripts `scripts` (their
   * Content-Security-Policy sources): {@link siteSecurityHeaders}.
   */
  securityHeaders(scripts?: readonly string[]): Readonly<Record<string, string>>;
}

/**
 * The headers every HTML page under /network/ carries: a Content-Security-Policy that runs no script but
 * the page's own inline ones, by their hashes (`scripts`), fetches from the bot alone, sends forms to it
 * alone and lets no other site frame the page (with `X-Frame-Options` for browsers without
 * `frame-ancestors`); no sniffing a type other than the one sent; no address in a Referer to another site.
 */
export function siteSecurityHeaders(scripts: readonly string[]): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy':
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; " +
      `script-src ${scripts.join(' ')}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
  };
}

declare module '../../lib/sdk.js' {
  interface Services {
    /**
     * The website's frame and look, for pages of other plugins (the web plugin).
     * For the built-in plugins only: not part of the SDK's promise; may change in any release.
     * @internal
     */
    'web.layout': WebLayout;
  }
}

/** The inline scripts of the frame every page carries (tables sorted, tooltips), as CSP sources. */
export const FRAME_SCRIPT_SOURCES: readonly string[] = [inlineScriptSource(SITE_SCRIPT)];

export function webLayout(site: {
  network(): string;
  timeZone: string;
  menu: MenuEntry[];
  streaming?(): boolean;
}): WebLayout {
  const scriptSources = FRAME_SCRIPT_SOURCES;
  return {
    page: ({ title, body, style, current }) =>
      framed(site, { title, body, ...(style ? { style } : {}), ...(current ? { current } : {}) }),
    addMenuEntry(entry) {
      if (!site.menu.some((known) => known.path === entry.path)) site.menu.push({ ...entry });
    },
    when: (time) => when(time, site.timeZone),
    count,
    table,
    timeZone: site.timeZone,
    scriptSources,
    securityHeaders: (scripts = []) => siteSecurityHeaders([...scriptSources, ...scripts]),
  };
}
