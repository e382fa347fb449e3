/**
 * Signing in and out: the sign-in form's answer (the password checked by the nickserv plugin, behind its
 * brute-force limits; a new session saved before the answer) and the sign-out. Both are forms that passed
 * the `csrf` guard (guards.ts).
 */
import {
  errorMessage,
  type ApiRequest,
  type ApiResponse,
  type GuardFindings,
  type Logger,
  type RouteGuard,
  type Services,
} from '../../lib/sdk.js';
import type { AccountAnswers } from './answers.js';
import type { AccountCookie } from './cookies.js';
import type { SentForm } from './guards.js';
import { ACCOUNT_PATH, ADMIN_PATH, AUDIT_PATH, refusalPage, signInPage, type Rendered, type Visit } from './pages.js';
import type { SessionsSlice } from './sessions.js';

export interface SignInContext {
  credentials: Services['nickserv.credentials'];
  sessions: SessionsSlice;
  /** Resolves once the durable slices (the sessions) are on disk. */
  persisted: () => Promise<void>;
  answers: AccountAnswers;
  /** The guard the sign-in and sign-out routes list: the form's fields and cookie. */
  csrf: RouteGuard<SentForm>;
  /** The account pages' cookie on this site. */
  cookie: AccountCookie;
  logger: Logger;
}

type Handler = (request: ApiRequest, found: GuardFindings) => Promise<ApiResponse>;
type SignInCheck = Awaited<ReturnType<Services['nickserv.credentials']['check']>>;

/** Where a sign-in may lead: an account page, never anywhere else (no open redirect). */
export function safeNext(value: string | null): string | undefined {
  return value === ADMIN_PATH || value === AUDIT_PATH ? value : undefined;
}

/** `Try again in 840 s (about 14 minutes).` */
function waitText(seconds: number): string {
  return `Try again in ${seconds} s${seconds >= 120 ? ` (about ${Math.ceil(seconds / 60)} minutes)` : ''}.`;
}

/** The refusal of a sign-in that cannot be done now (503), with a link back to the form. */
function cannotSignIn(visit: Visit, title: string, message: string): Rendered {
  return refusalPage(visit, 503, title, message, { href: ACCOUNT_PATH, label: 'Back to the sign-in form' });
}

/** What the sign-in form is answered when it is refused: its page again, with `text` and a status. */
type Again = (status: number, text: string, headers?: Record<string, string>) => ApiResponse;

/** The answer to a password check that did not sign in. */
function refusedCheck(
  check: Exclude<SignInCheck, { result: 'valid' }>,
  again: Again,
  { answers, logger }: SignInContext,
  request: ApiRequest,
  visit: Visit,
): ApiResponse {
  switch (check.result) {
    case 'invalid':
      logger.info('sign-in refused', { why: 'wrong account or password', ip: request.ip });
      return again(403, 'The account or the password is wrong.');
    case 'limited':
      logger.info('sign-in refused', { why: 'too many failures', ip: request.ip });
      return again(
        429,
        `Too many failed sign-ins for this account or from your address. ${waitText(check.retryAfterSeconds)}`,
        { 'Retry-After': String(check.retryAfterSeconds) },
      );
    case 'unavailable':
      return answers.page(
        cannotSignIn(
          visit,
          'Cannot check passwords right now',
          "The bot cannot check passwords right now: the network's NickServ does not answer it. Nobody can sign " +
            'in until it does. Try again in a few minutes.',
        ),
        check.retryAfterSeconds === null ? {} : { 'Retry-After': String(check.retryAfterSeconds) },
      );
  }
}

/**
 * The sign-in form: the password checked (a refusal shows the form again, or why nobody can sign in now), then
 * a new session, saved before the answer, whose id the cookie holds from then on.
 */
function signInHandler(context: SignInContext): Handler {
  const { credentials, sessions, answers, csrf, logger } = context;
  return async (request, found) => {
    const { fields, cookie } = found.get(csrf);
    const name = (fields.get('account') ?? '').trim();
    const password = fields.get('password') ?? '';
    const next = safeNext(fields.get('next'));
    const visit = answers.visit(cookie, undefined, false);
    const again: Again = (status, text, headers = {}) =>
      answers.page(
        signInPage(visit, status, { name, ...(next ? { next } : {}), message: { text, problem: true } }),
        headers,
      );
    if (name === '' || password === '') return again(400, 'Enter your NickServ account (or nick) and your password.');
    const check = await credentials.check({ name, password, address: request.ip });
    if (check.result !== 'valid') return refusedCheck(check, again, context, request, visit);
    const earlier = sessions.find(cookie);
    if (earlier) sessions.end(earlier);
    const { id, session } = sessions.start(check.account, request.ip);
    try {
      await context.persisted();
    } catch (error) {
      sessions.end(session);
      logger.error('a sign-in could not be saved', { account: check.account, error: errorMessage(error) });
      const message =
        'Your password is right, but the bot could not save your sign-in (it cannot write its store). Try again later.';
      return answers.page(cannotSignIn(visit, 'Cannot sign in right now', message));
    }
    logger.info('signed in', { account: check.account, ip: request.ip });
    session.notice = { text: `Signed in as ${check.account}.`, problem: false };
    const maxAge = sessions.secondsLeft(session);
    return answers.seeOther(next ?? ACCOUNT_PATH, {
      'Set-Cookie': context.cookie.set(request, id, maxAge),
    });
  };
}

/** The sign-out form: the session ends, and the cookie goes. */
function signOutHandler({ sessions, answers, csrf, cookie, logger, persisted }: SignInContext): Handler {
  return async (request, found) => {
    const session = sessions.find(found.get(csrf).cookie);
    if (session) {
      sessions.end(session);
      logger.info('signed out', { account: session.account, ip: request.ip });
      // Ended in memory at once; a store that cannot write is logged (a restart could bring it back until it expires).
      await persisted().catch((error: unknown) =>
        logger.error('a sign-out could not be saved', { account: session.account, error: errorMessage(error) }),
      );
    }
    return answers.seeOther(`${ACCOUNT_PATH}?signed_out`, {
      'Set-Cookie': cookie.set(request, '', 0),
    });
  };
}

export function signInHandlers(context: SignInContext): { signIn: Handler; signOut: Handler } {
  return { signIn: signInHandler(context), signOut: signOutHandler(context) };
}
