/**
 * The account pages' routes: GET pages, and POST forms that answer `303 See Other` back to a page (which
 * then shows what happened once), except the token creation, whose answer is the page with the new
 * token's value (its form carries a one-time id, so a reload of that page makes no second token). Each POST
 * passes the cross-site checks of csrf.ts first; each signed-in page reads its session from the cookie. Every
 * answer carries the {@link securityHeaders} (`Cache-Control: no-store`, ...).
 *
 * The cookie (`network_session`, `Path=/network/`, `HttpOnly`, `SameSite=Lax`, `Secure` over HTTPS) holds
 * a session id once signed in, and before that a random value of the sign-in form, whose CSRF token is made
 * from it; neither is stored for a visitor who does not sign in. A sign-in always starts a new id.
 */
import { randomBytes } from 'node:crypto';
import {
  errorMessage,
  escapeHtml,
  HtmlDocument,
  parseCookies,
  serializeCookie,
  type ApiRequest,
  type ApiResponse,
  type Logger,
  type RouteDefinition,
  type Services,
} from '../../lib/sdk.js';
import { csrfToken, forgery } from './csrf.js';
import {
  ACCOUNT_PATH,
  ADMIN_PATH,
  AUDIT_PATH,
  PAGE_SIZE,
  securityHeaders,
  adminPage,
  auditPage,
  createdPage,
  refusalPage,
  settingsPage,
  signInPage,
  type Rendered,
  type Visit,
} from './pages.js';
import type { AccountConfig } from './schema.js';
import { FORM_ID, rememberSentForm, SESSION_ID, type Session, type SessionsSlice } from './sessions.js';

export const COOKIE = 'network_session';
/** The account pages and the admin panel are both below it. */
export const COOKIE_PATH = '/network/';

type Tokens = Services['tokens.manage'];
type TokenChange = Awaited<ReturnType<Tokens['grant']>>;

export interface AccountRoutesContext {
  config: AccountConfig;
  layout: Services['web.layout'];
  tokens: Tokens;
  credentials: Services['nickserv.credentials'];
  sessions: SessionsSlice;
  /** Resolves once the durable slices (the sessions) are on disk. */
  persisted: () => Promise<void>;
  logger: Logger;
  /** The bot's nick, to name its IRC commands. */
  botNick: string;
}

/** Who sent a request: the cookie's value (the CSRF tokens are made from it), and the session it opens. */
interface Visitor {
  cookie: string | undefined;
  session: Session | undefined;
  /** A new sign-in-form cookie for a visitor who had none, to send with the page. */
  setCookie: string | undefined;
}

/** Where a sign-in may lead: an account page, never anywhere else (no open redirect). */
function safeNext(value: string | null): string | undefined {
  return value === ADMIN_PATH || value === AUDIT_PATH ? value : undefined;
}

function offsetOf(request: ApiRequest): number {
  const offset = Number.parseInt(request.query.get('offset') ?? '0', 10);
  return Number.isFinite(offset) ? Math.max(0, Math.min(1_000_000, offset)) : 0;
}

/** `Try again in 840 s (about 14 minutes).` */
function waitText(seconds: number): string {
  return `Try again in ${seconds} s${seconds >= 120 ? ` (about ${Math.ceil(seconds / 60)} minutes)` : ''}.`;
}

export function accountRoutes(context: AccountRoutesContext): RouteDefinition[] {
  const { config, layout, tokens, credentials, sessions, logger } = context;
  const SECURITY_HEADERS = securityHeaders(layout.scriptSources);

  const cookieOf = (request: ApiRequest): string | undefined => {
    const value = parseCookies(request.headers.cookie).get(COOKIE);
    return value !== undefined && SESSION_ID.test(value) ? value : undefined;
  };

  /** The visitor of a page; one without a usable cookie is given a new sign-in-form value. */
  const visitorOf = (request: ApiRequest): Visitor => {
    const cookie = cookieOf(request);
    const session = sessions.find(cookie);
    if (session) sessions.touch(session);
    if (cookie !== undefined) return { cookie, session, setCookie: undefined };
    const fresh = randomBytes(32).toString('base64url');
    return {
      cookie: fresh,
      session: undefined,
      setCookie: serializeCookie(COOKIE, fresh, { path: COOKIE_PATH, secure: request.secure }),
    };
  };

  const visitOf = (cookie: string | undefined, session: Session | undefined, admin: boolean): Visit => ({
    layout,
    csrf: cookie === undefined ? '' : csrfToken(cookie),
    account: session?.account ?? null,
    admin,
    botNick: context.botNick,
  });

  const answer = (rendered: Rendered, headers: Record<string, string> = {}): ApiResponse => ({
    status: rendered.status,
    body: new HtmlDocument(rendered.html),
    headers: { ...SECURITY_HEADERS, ...headers },
  });

  const seeOther = (location: string, headers: Record<string, string> = {}): ApiResponse => ({
    status: 303,
    body: new HtmlDocument(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>See other</title></head>` +
        `<body><p><a href="${escapeHtml(location)}">Continue</a></p></body></html>`,
    ),
    headers: { ...SECURITY_HEADERS, Location: location, ...headers },
  });

  /** The one page shown once after a redirect, taken off the session. */
  const takeNotice = (session: Session): Session['notice'] => {
    const { notice } = session;
    session.notice = null;
    return notice;
  };

  /** A POST whose cookie, origin or token says it may not be its cookie holder's: 403, and logged. */
  const refuseForgery = (request: ApiRequest, why: NonNullable<ReturnType<typeof forgery>>): ApiResponse => {
    logger.warn('form refused', { path: request.path, why, ip: request.ip });
    const message =
      why === 'foreign-origin'
        ? 'This form was sent from another site, so it was refused: nothing was changed.'
        : why === 'no-cookie'
          ? 'Your browser sent this form without the cookie of this site, so it was refused: nothing was changed. ' +
            'Signing in needs cookies for this site.'
          : 'This form is out of date (or did not come from this site), so it was refused: nothing was changed. ' +
            'Open the page again and send it from there.';
    return answer(
      refusalPage(visitOf(undefined, undefined, false), 403, 'Form refused', message, {
        href: ACCOUNT_PATH,
        label: 'Open your account page',
      }),
    );
  };

  const checked = (request: ApiRequest): { fields: URLSearchParams; cookie: string } | ApiResponse => {
    const fields = request.body as URLSearchParams;
    const cookie = cookieOf(request);
    const why = forgery(request, cookie, fields.get('csrf'), config.public_origin ?? null);
    if (why !== null) return refuseForgery(request, why);
    return { fields, cookie: cookie! };
  };

  /** A form of a signed-in account: checked, its session found (else 403), then `act`. */
  const signedIn =
    (act: (session: Session, fields: URLSearchParams, request: ApiRequest, cookie: string) => Promise<ApiResponse>) =>
    async (request: ApiRequest): Promise<ApiResponse> => {
      const sent = checked(request);
      if (!('fields' in sent)) return sent;
      const session = sessions.find(sent.cookie);
      if (!session) {
        return answer(
          refusalPage(
            visitOf(sent.cookie, undefined, false),
            403,
            'Signed out',
            'You are not signed in: your session ended (you signed out, or it was idle or old), so nothing was changed.',
            { href: ACCOUNT_PATH, label: 'Sign in' },
          ),
        );
      }
      sessions.touch(session);
      return act(session, sent.fields, request, sent.cookie);
    };

  /** A form of the admin panel: a signed-in administrator's, else 403. */
  const asAdmin = (
    act: (who: { account: string; address: string }, fields: URLSearchParams, tokenId: number) => Promise<TokenChange>,
  ) =>
    signedIn(async (session, fields, request, cookie) => {
      if (!(await tokens.isAdmin(session.account))) {
        logger.warn('admin form refused', { path: request.path, account: session.account, ip: request.ip });
        return answer(notAdmin(visitOf(cookie, session, false), session.account));
      }
      const change = await act({ account: session.account, address: request.ip }, fields, tokenIdOf(request));
      session.notice = { text: change.message, problem: !change.done };
      return seeOther(ADMIN_PATH);
    });

  const notAdmin = (visit: Visit, account: string): Rendered =>
    refusalPage(
      visit,
      403,
      'Administrators only',
      `The account ${account} is not an administrator: the admin panel is for the accounts the bot's configuration names as administrators.`,
    );

  const tokenIdOf = (request: ApiRequest): number => {
    const raw = request.params.id ?? '';
    return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
  };

  const pageRoute = (path: string, name: string, summary: string, handler: RouteDefinition['handler']) =>
    ({ method: 'GET', path, name, summary, tier: 'public', document: 'page', handler }) as RouteDefinition;

  /**
   * A page for administrators only: a visitor not signed in is asked to sign in (403), a signed-in account
   * that is no administrator gets the refusal (403); an administrator gets `render`'s page.
   */
  const adminPageRoute = (
    path: string,
    name: string,
    summary: string,
    render: (request: ApiRequest, visit: Visit, session: Session) => Rendered,
  ) =>
    pageRoute(path, name, summary, async (request) => {
      const { cookie, session, setCookie } = visitorOf(request);
      if (!session) {
        return answer(
          refusalPage(
            visitOf(cookie, undefined, false),
            403,
            'Administrators only',
            `${summary} is for administrators: sign in with an administrator’s NickServ account first.`,
            { href: `${ACCOUNT_PATH}?next=${encodeURIComponent(path)}`, label: 'Sign in' },
          ),
          setCookie ? { 'Set-Cookie': setCookie } : {},
        );
      }
      if (!(await tokens.isAdmin(session.account))) {
        return answer(notAdmin(visitOf(cookie, session, false), session.account));
      }
      return answer(render(request, visitOf(cookie, session, true), session));
    });
  const formRoute = (path: string, name: string, summary: string, handler: RouteDefinition['handler']) =>
    ({ method: 'POST', path, name, summary, tier: 'public', document: 'page', form: true, handler }) as RouteDefinition;

  const signInAnswer = async (request: ApiRequest): Promise<ApiResponse> => {
    const sent = checked(request);
    if (!('fields' in sent)) return sent;
    const { fields, cookie } = sent;
    const name = (fields.get('account') ?? '').trim();
    const password = fields.get('password') ?? '';
    const next = safeNext(fields.get('next'));
    const visit = visitOf(cookie, undefined, false);
    const again = (status: number, text: string, headers: Record<string, string> = {}) =>
      answer(signInPage(visit, status, { name, ...(next ? { next } : {}), message: { text, problem: true } }), headers);
    if (name === '' || password === '') return again(400, 'Enter your NickServ account (or nick) and your password.');
    const check = await credentials.check({ name, password, address: request.ip });
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
        return answer(
          refusalPage(
            visit,
            503,
            'Cannot check passwords right now',
            "The bot cannot check passwords right now: the network's NickServ does not answer it. Nobody can sign " +
              'in until it does. Try again in a few minutes.',
            { href: ACCOUNT_PATH, label: 'Back to the sign-in form' },
          ),
          check.retryAfterSeconds === null ? {} : { 'Retry-After': String(check.retryAfterSeconds) },
        );
      case 'valid':
        break;
    }
    const earlier = sessions.find(cookie);
    if (earlier) sessions.end(earlier);
    const { id, session } = sessions.start(check.account);
    try {
      await context.persisted();
    } catch (error) {
      sessions.end(session);
      logger.error('a sign-in could not be saved', { account: check.account, error: errorMessage(error) });
      return answer(
        refusalPage(
          visit,
          503,
          'Cannot sign in right now',
          'Your password is right, but the bot could not save your sign-in (it cannot write its store). Try again later.',
          { href: ACCOUNT_PATH, label: 'Back to the sign-in form' },
        ),
      );
    }
    logger.info('signed in', { account: check.account, ip: request.ip });
    session.notice = { text: `Signed in as ${check.account}.`, problem: false };
    return seeOther(next ?? ACCOUNT_PATH, {
      'Set-Cookie': serializeCookie(COOKIE, id, {
        path: COOKIE_PATH,
        maxAge: sessions.secondsLeft(session),
        secure: request.secure,
      }),
    });
  };

  return [
    pageRoute(ACCOUNT_PATH, 'account.page', 'Sign in, or your API tokens', async (request) => {
      const { cookie, session, setCookie } = visitorOf(request);
      const cookieHeader: Record<string, string> = setCookie ? { 'Set-Cookie': setCookie } : {};
      if (!session) {
        const next = safeNext(request.query.get('next'));
        const message = request.query.has('signed_out') ? { text: 'You are signed out.', problem: false } : null;
        return answer(
          signInPage(visitOf(cookie, undefined, false), 200, { ...(next ? { next } : {}), message }),
          cookieHeader,
        );
      }
      const admin = await tokens.isAdmin(session.account);
      return answer(
        settingsPage(visitOf(cookie, session, admin), {
          tokens: tokens.ownedBy(session.account),
          endpoints: tokens.endpoints(),
          maxTokens: tokens.maxTokensPerAccount,
          maxLabelLength: tokens.maxLabelLength,
          message: takeNotice(session),
          formId: randomBytes(16).toString('base64url'),
        }),
      );
    }),
    pageRoute(`${ACCOUNT_PATH}sign-in/`, 'account.sign_in_page', 'The sign-in form', async () =>
      seeOther(ACCOUNT_PATH),
    ),
    formRoute(`${ACCOUNT_PATH}sign-in/`, 'account.sign_in', 'Sign in with a NickServ account', signInAnswer),
    formRoute(`${ACCOUNT_PATH}sign-out/`, 'account.sign_out', 'Sign out', async (request) => {
      const sent = checked(request);
      if (!('fields' in sent)) return sent;
      const session = sessions.find(sent.cookie);
      if (session) {
        sessions.end(session);
        logger.info('signed out', { account: session.account, ip: request.ip });
        // Ended in memory at once; a store that cannot write is logged (a restart could bring it back until it expires).
        await context
          .persisted()
          .catch((error: unknown) =>
            logger.error('a sign-out could not be saved', { account: session.account, error: errorMessage(error) }),
          );
      }
      return seeOther(`${ACCOUNT_PATH}?signed_out`, {
        'Set-Cookie': serializeCookie(COOKIE, '', { path: COOKIE_PATH, maxAge: 0, secure: request.secure }),
      });
    }),
    pageRoute(`${ACCOUNT_PATH}tokens/`, 'account.tokens_page', 'Your API tokens', async () => seeOther(ACCOUNT_PATH)),
    formRoute(
      `${ACCOUNT_PATH}tokens/`,
      'account.create_token',
      'Create an API token',
      signedIn(async (session, fields, request, cookie) => {
        // A form without its id (a page from before it had one) still works, without the guard against a reload.
        const formId = fields.get('form') ?? '';
        const guarded = FORM_ID.test(formId);
        // Sent before (or still being made, after a double click): no second token. One that made none may try again.
        // Looked up and claimed below with no await in between, so that two at once cannot both pass.
        let madeBefore: number | null = null;
        for (let pending = guarded ? session.sentForms.get(formId) : undefined; pending !== undefined;) {
          madeBefore = await pending;
          if (madeBefore !== null) break;
          // It made none: this one tries, unless another sent meanwhile tries already.
          const latest = session.sentForms.get(formId);
          pending = latest === pending ? undefined : latest;
        }
        if (madeBefore !== null) {
          session.notice = {
            text:
              `This form was sent already, and made token #${madeBefore}: no second token was made. Its value was ` +
              `shown once, on the page that answered the form; if you did not copy it, revoke #${madeBefore} and ` +
              'make another.',
            problem: true,
          };
          return seeOther(ACCOUNT_PATH);
        }
        let settle: (id: number | null) => void = () => undefined;
        if (guarded) rememberSentForm(session, formId, new Promise((resolve) => (settle = resolve)));
        let made: Awaited<ReturnType<Tokens['create']>>;
        try {
          made = await tokens.create({ account: session.account, address: request.ip }, fields.get('label') ?? '');
        } catch (error) {
          settle(null);
          throw error;
        }
        settle(made.done ? made.token.id : null);
        if (!made.done) {
          session.notice = { text: made.message, problem: true };
          return seeOther(ACCOUNT_PATH);
        }
        const admin = await tokens.isAdmin(session.account);
        return answer(createdPage(visitOf(cookie, session, admin), made.token, made.secret));
      }),
    ),
    formRoute(
      `${ACCOUNT_PATH}tokens/:id/request/`,
      'account.request_endpoint',
      'Ask an administrator to approve an endpoint for a token',
      signedIn(async (session, fields, request) => {
        const change = await tokens.request(
          { account: session.account, address: request.ip },
          tokenIdOf(request),
          fields.get('endpoint') ?? '',
        );
        session.notice = { text: change.message, problem: !change.done };
        return seeOther(ACCOUNT_PATH);
      }),
    ),
    formRoute(
      `${ACCOUNT_PATH}tokens/:id/revoke/`,
      'account.revoke_token',
      'Revoke one of your API tokens',
      signedIn(async (session, _fields, request) => {
        const change = await tokens.revoke({ account: session.account, address: request.ip }, tokenIdOf(request));
        session.notice = { text: change.message, problem: !change.done };
        return seeOther(ACCOUNT_PATH);
      }),
    ),
    adminPageRoute(ADMIN_PATH, 'account.admin', 'The admin panel', (request, visit, session) =>
      adminPage(visit, {
        tokens: tokens.all(),
        endpoints: tokens.endpoints(),
        offset: offsetOf(request),
        message: takeNotice(session),
      }),
    ),
    adminPageRoute(AUDIT_PATH, 'account.audit', 'The audit log', (request, visit) => {
      const offset = offsetOf(request);
      return auditPage(visit, tokens.audit(offset, PAGE_SIZE), offset);
    }),
    // The admin panel's actions on one endpoint of one token, each a form of its own.
    ...(
      [
        ['grant', 'account.grant', 'Approve an endpoint for a token', tokens.grant],
        ['withdraw', 'account.withdraw', 'Withdraw an endpoint from a token', tokens.withdraw],
        ['decline', 'account.decline', "Decline a token owner's request for an endpoint", tokens.decline],
      ] as const
    ).map(([action, name, summary, act]) =>
      formRoute(
        `${ADMIN_PATH}tokens/:id/${action}/`,
        name,
        summary,
        asAdmin((who, fields, id) => act(who, id, fields.get('endpoint') ?? '')),
      ),
    ),
    formRoute(
      `${ADMIN_PATH}tokens/:id/revoke/`,
      'account.admin_revoke',
      'Revoke any token',
      asAdmin((who, _fields, id) => tokens.revoke(who, id)),
    ),
  ];
}
