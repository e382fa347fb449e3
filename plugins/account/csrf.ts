/**
 * Cross-site request forgery: a form another site makes a signed-in browser send. Every form of the
 * account pages carries a CSRF token, and a POST is taken only when all of this holds:
 *
 * 1. The browser does not call the request cross-site (`Sec-Fetch-Site: cross-site`).
 * 2. An `Origin` header, when there is one, is the site's own origin (`public_origin` in the config, else
 *    the request's scheme and `Host`); `Origin: null` (a sandboxed or privacy-stripped context) is foreign.
 *    A request without `Origin` (an old browser) is judged by the token alone.
 * 3. The form's `csrf` field is the token of the cookie the browser sent: a one-way function of the cookie's
 *    value (the session id, or before sign-in the sign-in form's random value), so the page shows nothing
 *    that would let anyone rebuild the cookie, and nothing needs to be stored for it. Another site can read
 *    neither the cookie nor the page, so it cannot write the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiRequest } from '../../lib/sdk.js';

/** The CSRF token of the forms of a browser whose cookie holds `secret`. */
export function csrfToken(secret: string): string {
  return createHash('sha256').update(`csrf\0${secret}`, 'utf8').digest('base64url');
}

/** The origin the site is at: `publicOrigin` when configured, else as the request reached the bot. */
export function ownOrigin(request: ApiRequest, publicOrigin: string | null): string {
  if (publicOrigin !== null) return publicOrigin.toLowerCase();
  return `${request.secure ? 'https' : 'http'}://${String(request.headers.host ?? '').toLowerCase()}`;
}

/**
 * Why the POST `request` must not be taken as its cookie's holder's, or null when it may: a foreign origin
 * (rules 1 and 2 above), or a missing or wrong CSRF token (rule 3).
 */
export function forgery(
  request: ApiRequest,
  cookie: string | undefined,
  sentToken: string | null,
  publicOrigin: string | null,
): 'foreign-origin' | 'no-cookie' | 'bad-token' | null {
  if (request.headers['sec-fetch-site'] === 'cross-site') return 'foreign-origin';
  const origin = request.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== ownOrigin(request, publicOrigin)) return 'foreign-origin';
  if (cookie === undefined) return 'no-cookie';
  if (sentToken === null) return 'bad-token';
  const expected = Buffer.from(csrfToken(cookie), 'utf8');
  const sent = Buffer.from(sentToken, 'utf8');
  return sent.length === expected.length && timingSafeEqual(sent, expected) ? null : 'bad-token';
}
