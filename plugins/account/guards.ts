/**
 * The account pages' guards, which each route lists (routes.ts) and the HTTP server runs before its handler:
 *
 * - `visitor` (pages): who is visiting, from the cookie; a visitor without one is given a sign-in-form value.
 *   It never refuses.
 * - `csrf` (forms, once the body is read): the cross-site rule of csrf.ts; a form that fails it is refused
 *   with a 403 page, and logged.
 * - `signedIn` (forms): the session of the form's cookie, else a 403 page (signed out).
 * - `administrator` (forms): the signed-in account is an administrator, else a 403 page, and logged.
 * - `administratorPage` (pages): the visitor is signed in (else a 403 page that asks to sign in) with an
 *   administrator's account (else a 403 page).
 *
 * What a guard finds (the visitor, the form, the session) its route's handler reads with `found.get(guard)`.
 */
import { randomBytes } from 'node:crypto';
import type { Logger, RouteGuard } from '../../lib/sdk.js';
import type { AccountAnswers } from './answers.js';
import type { AccountCookie } from './cookies.js';
import { forgery } from './csrf.js';
import { ACCOUNT_PATH, refusalPage, type Rendered, type Visit } from './pages.js';
import type { Session, SessionsSlice } from './sessions.js';

/** Who sent a request: the cookie's value (the CSRF tokens are made from it), and the session it opens. */
export interface Visitor {
  cookie: string;
  session: Session | undefined;
  /** A new sign-in-form cookie for a visitor who had none, to send with the page. */
  setCookie: string | undefined;
}

/** A form that passed the cross-site checks: its fields, and the cookie it came with. */
export interface SentForm {
  fields: URLSearchParams;
  cookie: string;
}

export interface AccountGuards {
  visitor: RouteGuard<Visitor>;
  csrf: RouteGuard<SentForm>;
  signedIn: RouteGuard<Session>;
  administrator: RouteGuard<void>;
  administratorPage: RouteGuard<Session>;
}

export interface AccountGuardsContext {
  /** The site's origin as the config gives it (`public_origin`), else null. */
  publicOrigin: string | null;
  /** The account pages' cookie on this site. */
  cookie: AccountCookie;
  sessions: SessionsSlice;
  /** The rule of the tokens plugin: whether a signed-in account is an administrator. */
  isAdmin: (account: string) => Promise<boolean>;
  answers: AccountAnswers;
  logger: Logger;
}

/** What a refused form says, by why it was refused. */
const FORGERY_MESSAGES: Record<NonNullable<ReturnType<typeof forgery>>, string> = {
  'foreign-origin': 'This form was sent from another site, so it was refused: nothing was changed.',
  'no-cookie':
    'Your browser sent this form without the cookie of this site, so it was refused: nothing was changed. ' +
    'Signing in needs cookies for this site.',
  'bad-token':
    'This form is out of date (or did not come from this site), so it was refused: nothing was changed. ' +
    'Open the page again and send it from there.',
};

/** The page that refuses a signed-in account that is not an administrator. */
export function notAdmin(visit: Visit, account: string): Rendered {
  return refusalPage(
    visit,
    403,
    'Administrators only',
    `The account ${account} is not an administrator: the admin panel is for the accounts the bot's configuration names as administrators.`,
  );
}

/** `visitor`: who is visiting, from the cookie; a visitor without one is given a sign-in-form value. */
function visitorGuard(sessions: SessionsSlice, accountCookie: AccountCookie): RouteGuard<Visitor> {
  return {
    name: 'visitor',
    point: 'request',
    check(request) {
      const cookie = accountCookie.read(request);
      const session = sessions.find(cookie);
      if (session) sessions.touch(session, request.ip);
      if (cookie !== undefined) return { found: { cookie, session, setCookie: undefined } };
      const fresh = randomBytes(32).toString('base64url');
      return {
        found: { cookie: fresh, session: undefined, setCookie: accountCookie.set(request, fresh) },
      };
    },
  };
}

/** `csrf`: a form whose cookie, origin or token says it may not be its cookie holder's is refused (403), and logged. */
function csrfGuard(
  { publicOrigin, answers, logger }: AccountGuardsContext,
  accountCookie: AccountCookie,
): RouteGuard<SentForm> {
  return {
    name: 'csrf',
    point: 'body',
    check(request, _found, route) {
      if (!(request.body instanceof URLSearchParams)) {
        throw new Error(`The guard csrf checks HTML forms: route ${route.method} ${route.path} must be marked form`);
      }
      const fields = request.body;
      const cookie = accountCookie.read(request);
      const why = forgery(request, cookie, fields.get('csrf'), publicOrigin);
      if (why === null) return { found: { fields, cookie: cookie! } };
      logger.warn('form refused', { path: request.path, why, ip: request.ip });
      const link = { href: ACCOUNT_PATH, label: 'Open your account page' };
      const visit = answers.visit(undefined, undefined, false);
      return { answer: answers.page(refusalPage(visit, 403, 'Form refused', FORGERY_MESSAGES[why], link)) };
    },
  };
}

/** `signedIn`: the session of a form's cookie, else a 403 page. */
function signedInGuard({ sessions, answers }: AccountGuardsContext, csrf: RouteGuard<SentForm>): RouteGuard<Session> {
  return {
    name: 'signedIn',
    point: 'body',
    needs: [csrf],
    check(request, found) {
      const { cookie } = found.get(csrf);
      const session = sessions.find(cookie);
      if (session) {
        sessions.touch(session, request.ip);
        return { found: session };
      }
      const message =
        'You are not signed in: your session ended (you signed out, or it was idle or old), so nothing was changed.';
      const link = { href: ACCOUNT_PATH, label: 'Sign in' };
      const visit = answers.visit(cookie, undefined, false);
      return { answer: answers.page(refusalPage(visit, 403, 'Signed out', message, link)) };
    },
  };
}

/** `administrator`: a form of a signed-in administrator, else a 403 page, and logged. */
function administratorGuard(
  { isAdmin, answers, logger }: AccountGuardsContext,
  csrf: RouteGuard<SentForm>,
  signedIn: RouteGuard<Session>,
): RouteGuard<void> {
  return {
    name: 'administrator',
    point: 'body',
    needs: [csrf, signedIn],
    async check(request, found) {
      const session = found.get(signedIn);
      if (await isAdmin(session.account)) return { found: undefined };
      logger.warn('admin form refused', { path: request.path, account: session.account, ip: request.ip });
      const visit = answers.visit(found.get(csrf).cookie, session, false);
      return { answer: answers.page(notAdmin(visit, session.account)) };
    },
  };
}

/**
 * `administratorPage`: a page for administrators only. A visitor not signed in is asked to sign in (403), a
 * signed-in account that is no administrator gets the refusal (403).
 */
function administratorPageGuard(
  { isAdmin, answers }: AccountGuardsContext,
  visitor: RouteGuard<Visitor>,
): RouteGuard<Session> {
  return {
    name: 'administratorPage',
    point: 'request',
    needs: [visitor],
    async check(_request, found, route) {
      const { cookie, session, setCookie } = found.get(visitor);
      if (!session) {
        const visit = answers.visit(cookie, undefined, false);
        const message = `${route.summary} is for administrators: sign in with an administrator’s NickServ account first.`;
        const link = { href: `${ACCOUNT_PATH}?next=${encodeURIComponent(route.path)}`, label: 'Sign in' };
        const rendered = refusalPage(visit, 403, 'Administrators only', message, link);
        return { answer: answers.page(rendered, setCookie ? { 'Set-Cookie': setCookie } : {}) };
      }
      if (await isAdmin(session.account)) return { found: session };
      return { answer: answers.page(notAdmin(answers.visit(cookie, session, false), session.account)) };
    },
  };
}

export function accountGuards(context: AccountGuardsContext): AccountGuards {
  const visitor = visitorGuard(context.sessions, context.cookie);
  const csrf = csrfGuard(context, context.cookie);
  const signedIn = signedInGuard(context, csrf);
  return {
    visitor,
    csrf,
    signedIn,
    administrator: administratorGuard(context, csrf, signedIn),
    administratorPage: administratorPageGuard(context, visitor),
  };
}
