/**
 * Cookies (RFC 6265): the pairs a request's `Cookie` header sends, and the `Set-Cookie` value of one
 * cookie; and the account pages' own cookie. Values are taken and given as they are, unencoded: the
 * session ids and sign-in-form values are base64url, which is cookie-octets already.
 *
 * The cookie ({@link AccountCookie}: `__Host-network_session` with `Secure` and `Path=/` over HTTPS,
 * `network_session` on `Path=/network/` over plain HTTP; `HttpOnly`, `SameSite=Lax`) holds a session id once
 * signed in, and before that a random value of the sign-in form, whose CSRF token is made from it; neither is
 * stored for a visitor who does not sign in. A sign-in always starts a new id.
 */
import type { ApiRequest } from '../../lib/sdk.js';
import { SESSION_ID } from './sessions.js';

export const COOKIE = 'network_session';
/** Its name over HTTPS: a browser takes it only with `Secure`, `Path=/` and no `Domain`, so no other host can set it. */
export const HOST_COOKIE = `__Host-${COOKIE}`;
/** The account pages and the admin panel are both below it. */
export const COOKIE_PATH = '/network/';

export interface CookieOptions {
  /** The path the browser sends it back to (and below); default `/`. */
  path?: string;
  /** Seconds until the browser drops it; 0 drops it at once. Unset: it lasts as long as the browser session. */
  maxAge?: number;
  /** Out of reach of the page's scripts; default true. */
  httpOnly?: boolean;
  /** Whether the browser sends it along requests from other sites; default `Lax`. */
  sameSite?: 'Strict' | 'Lax' | 'None';
  /** Sent over HTTPS only. */
  secure?: boolean;
}

/** RFC 6265 §4.1.1: a cookie name is a token; a value is cookie-octets, optionally in double quotes. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COOKIE_OCTETS = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
const PATH = /^\/[\x20-\x3a\x3c-\x7e]*$/;

/**
 * The cookies of a `Cookie` header, by name. A name sent twice keeps its first value (the browser sends
 * the one with the longest path first); a pair that is not `name=value` is skipped.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    const name = pair.slice(0, equals).trim();
    let value = pair.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!TOKEN.test(name) || !COOKIE_OCTETS.test(value) || cookies.has(name)) continue;
    cookies.set(name, value);
  }
  return cookies;
}

/** The `Set-Cookie` value of one cookie; throws on a name, value or path a browser would not take back. */
export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!TOKEN.test(name)) throw new Error(`A cookie name must be an RFC 6265 token, got ${JSON.stringify(name)}`);
  if (!COOKIE_OCTETS.test(value)) {
    throw new Error(`The value of cookie "${name}" has a character a cookie cannot carry (space, comma, ";", quote)`);
  }
  const path = options.path ?? '/';
  if (!PATH.test(path)) throw new Error(`The path of cookie "${name}" must start with "/", without ";": got ${path}`);
  const parts = [`${name}=${value}`, `Path=${path}`];
  if (options.maxAge !== undefined) {
    if (!Number.isInteger(options.maxAge) || options.maxAge < 0) {
      throw new Error(`The Max-Age of cookie "${name}" must be a whole number of seconds, 0 or more`);
    }
    parts.push(`Max-Age=${options.maxAge}`);
  }
  if (options.httpOnly ?? true) parts.push('HttpOnly');
  const sameSite = options.sameSite ?? 'Lax';
  // Browsers refuse SameSite=None without Secure.
  if (sameSite === 'None' && !options.secure) throw new Error(`Cookie "${name}": SameSite=None needs Secure`);
  parts.push(`SameSite=${sameSite}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/**
 * The account pages' cookie on this site. Over HTTPS — the request came over it, or `public_origin` says the
 * site is served over it (behind a proxy whose scheme the bot was not told) — it is `__Host-network_session`,
 * `Secure`, on `Path=/`: a browser keeps a cookie of that name only from this very host, so a sibling
 * subdomain cannot plant a session; and only that name is read there. Over plain HTTP (the demo, a test) it
 * is `network_session` on `Path=/network/`.
 */
export class AccountCookie {
  constructor(private readonly publicOrigin: string | null) {}

  /** Whether the site is served over HTTPS, for `request`. */
  https(request: ApiRequest): boolean {
    return request.secure || this.publicOrigin?.startsWith('https://') === true;
  }

  /** The value `request` sends, when it is well-formed (a session id's shape). */
  read(request: ApiRequest): string | undefined {
    const value = parseCookies(request.headers.cookie).get(this.https(request) ? HOST_COOKIE : COOKIE);
    return value !== undefined && SESSION_ID.test(value) ? value : undefined;
  }

  /** Its `Set-Cookie` value for `request`; `maxAge` 0 drops it, none keeps it for the browser session. */
  set(request: ApiRequest, value: string, maxAge?: number): string {
    const options = maxAge === undefined ? {} : { maxAge };
    return this.https(request)
      ? serializeCookie(HOST_COOKIE, value, { path: '/', secure: true, ...options })
      : serializeCookie(COOKIE, value, { path: COOKIE_PATH, secure: false, ...options });
  }
}
