/**
 * The account pages' routes, one table: GET pages, and POST forms (sign-in.ts, token-forms.ts) that answer
 * `303 See Other` back to a page. Each route lists its guards (guards.ts), which the HTTP server runs before
 * its handler: a page reads its `visitor`; every form passes `csrf` (then a signed-in one `signedIn`, an
 * admin panel's `administrator`); an admin page passes `administratorPage`. Every answer carries the
 * security headers (answers.ts).
 */
import { randomBytes } from 'node:crypto';
import type {
  ApiRequest,
  ApiResponse,
  GuardFindings,
  Logger,
  RouteDefinition,
  RouteGuard,
  Services,
} from '../../lib/sdk.js';
import { AccountCookie } from './cookies.js';
import { accountAnswers, type AccountAnswers } from './answers.js';
import { accountGuards, notAdmin, type AccountGuards } from './guards.js';
import {
  ACCOUNT_PATH,
  ADMIN_PATH,
  AUDIT_PATH,
  PAGE_SIZE,
  adminPage,
  auditPage,
  settingsPage,
  signInPage,
} from './pages.js';
import type { AccountConfig } from './schema.js';
import { issueForm, type Session, type SessionsSlice } from './sessions.js';
import { safeNext, signInHandlers } from './sign-in.js';
import { sessionEndings } from './session-endings.js';
import { tokenForms } from './token-forms.js';

export interface AccountRoutesContext {
  config: AccountConfig;
  layout: Services['web.layout'];
  tokens: Services['tokens.manage'];
  credentials: Services['nickserv.credentials'];
  sessions: SessionsSlice;
  /** Resolves once the durable slices (the sessions) are on disk. */
  persisted: () => Promise<void>;
  logger: Logger;
  /** The bot's nick, to name its IRC commands. */
  botNick: string;
}

type Handler = (request: ApiRequest, found: GuardFindings) => ApiResponse | Promise<ApiResponse>;

function offsetOf(request: ApiRequest): number {
  const offset = Number.parseInt(request.query.get('offset') ?? '0', 10);
  return Number.isFinite(offset) ? Math.max(0, Math.min(1_000_000, offset)) : 0;
}

/** The one notice shown once after a redirect, taken off the session. */
function takeNotice(session: Session): Session['notice'] {
  const { notice } = session;
  session.notice = null;
  return notice;
}

/** A page for people: a GET left out of the OpenAPI document. */
function page(path: string, name: string, summary: string, guards: RouteGuard[], handler: Handler): RouteDefinition {
  return { method: 'GET', path, name, summary, tier: 'public', document: 'page', guards, handler };
}

/** A form a page posts (`application/x-www-form-urlencoded`). */
function form(path: string, name: string, summary: string, guards: RouteGuard[], handler: Handler): RouteDefinition {
  return { method: 'POST', path, name, summary, tier: 'public', document: 'page', form: true, guards, handler };
}

/** The GET pages' handlers: the account page, the admin panel and its audit log. */
function pageHandlers(
  tokens: Services['tokens.manage'],
  sessions: SessionsSlice,
  answers: AccountAnswers,
  guards: AccountGuards,
) {
  const { visitor, administratorPage } = guards;

  /** The sign-in form, or a signed-in account's tokens. */
  const accountPage: Handler = async (request, found) => {
    const { cookie, session, setCookie } = found.get(visitor);
    if (!session) {
      const next = safeNext(request.query.get('next'));
      const message = request.query.has('signed_out') ? { text: 'You are signed out.', problem: false } : null;
      const rendered = signInPage(answers.visit(cookie, undefined, false), 200, { ...(next ? { next } : {}), message });
      return answers.page(rendered, setCookie ? { 'Set-Cookie': setCookie } : {});
    }
    const admin = await tokens.isAdmin(session.account);
    return answers.page(
      settingsPage(answers.visit(cookie, session, admin), {
        tokens: tokens.ownedBy(session.account),
        endpoints: tokens.endpoints(),
        maxTokens: tokens.maxTokensPerAccount,
        maxLabelLength: tokens.maxLabelLength,
        message: takeNotice(session),
        formId: issueForm(session, randomBytes),
        sessions: sessions
          .ownedBy(session.account)
          .sort((a, b) => b.createdAt - a.createdAt)
          .map((held) => ({
            createdAt: held.createdAt,
            lastSeenAt: held.lastSeenAt,
            address: held.address,
            current: held === session,
          })),
      }),
    );
  };

  // The guard let an administrator in; what the page shows is the token rules' to give, and they ask again.
  const adminPanel: Handler = async (request, found) => {
    const session = found.get(administratorPage);
    const { cookie } = found.get(visitor);
    const all = await tokens.all({ account: session.account, address: request.ip });
    if (all === null) return answers.page(notAdmin(answers.visit(cookie, session, false), session.account));
    const data = { tokens: all, endpoints: tokens.endpoints(), offset: offsetOf(request) };
    return answers.page(adminPage(answers.visit(cookie, session, true), { ...data, message: takeNotice(session) }));
  };

  const auditLog: Handler = async (request, found) => {
    const session = found.get(administratorPage);
    const { cookie } = found.get(visitor);
    const offset = offsetOf(request);
    const entries = await tokens.audit({ account: session.account, address: request.ip }, offset, PAGE_SIZE);
    if (entries === null) return answers.page(notAdmin(answers.visit(cookie, session, false), session.account));
    return answers.page(auditPage(answers.visit(cookie, session, true), entries, offset));
  };

  return { accountPage, adminPanel, auditLog };
}

export function accountRoutes(context: AccountRoutesContext): RouteDefinition[] {
  const { tokens, sessions, logger } = context;
  const answers = accountAnswers(context.layout, context.botNick);
  const publicOrigin = context.config.public_origin ?? null;
  const cookie = new AccountCookie(publicOrigin);
  const guards = accountGuards({
    publicOrigin,
    cookie,
    sessions,
    isAdmin: (account) => tokens.isAdmin(account),
    answers,
    logger,
  });
  const { visitor, csrf, signedIn, administrator, administratorPage } = guards;
  const { signIn, signOut } = signInHandlers({ ...context, answers, csrf, cookie });
  const forms = tokenForms({ tokens, answers, csrf, signedIn });
  const seeAccountPage = () => answers.seeOther(ACCOUNT_PATH);

  const { accountPage, adminPanel, auditLog } = pageHandlers(tokens, sessions, answers, guards);
  const ending = sessionEndings({ sessions, answers, csrf, signedIn, cookie, logger, persisted: context.persisted });
  const signedInForm = [csrf, signedIn];
  const adminForm = [csrf, signedIn, administrator];
  const adminPages = [visitor, administratorPage];
  return [
    page(ACCOUNT_PATH, 'account.page', 'Sign in, or your API tokens', [visitor], accountPage),
    page(`${ACCOUNT_PATH}sign-in/`, 'account.sign_in_page', 'The sign-in form', [], seeAccountPage),
    form(`${ACCOUNT_PATH}sign-in/`, 'account.sign_in', 'Sign in with a NickServ account', [csrf], signIn),
    form(`${ACCOUNT_PATH}sign-out/`, 'account.sign_out', 'Sign out', [csrf], signOut),
    form(
      `${ACCOUNT_PATH}sessions/sign-out-everywhere/`,
      'account.sign_out_everywhere',
      'End every session of the signed-in account',
      signedInForm,
      ending.everywhere,
    ),
    form(
      `${ADMIN_PATH}sessions/end/`,
      'account.end_sessions',
      'End every session of an account (administrators)',
      adminForm,
      ending.ofAccount,
    ),
    page(`${ACCOUNT_PATH}tokens/`, 'account.tokens_page', 'Your API tokens', [], seeAccountPage),
    form(`${ACCOUNT_PATH}tokens/`, 'account.create_token', 'Create an API token', signedInForm, forms.create),
    form(
      `${ACCOUNT_PATH}tokens/:id/request/`,
      'account.request_endpoint',
      'Ask an administrator to approve an endpoint for a token',
      signedInForm,
      forms.requestEndpoint,
    ),
    form(
      `${ACCOUNT_PATH}tokens/:id/revoke/`,
      'account.revoke_token',
      'Revoke one of your API tokens',
      signedInForm,
      forms.revoke,
    ),
    page(ADMIN_PATH, 'account.admin', 'The admin panel', adminPages, adminPanel),
    page(AUDIT_PATH, 'account.audit', 'The audit log', adminPages, auditLog),
    // The admin panel's actions on one endpoint of one token, each a form of its own.
    form(`${ADMIN_PATH}tokens/:id/grant/`, 'account.grant', 'Approve an endpoint for a token', adminForm, forms.grant),
    form(
      `${ADMIN_PATH}tokens/:id/withdraw/`,
      'account.withdraw',
      'Withdraw an endpoint from a token',
      adminForm,
      forms.withdraw,
    ),
    form(
      `${ADMIN_PATH}tokens/:id/decline/`,
      'account.decline',
      "Decline a token owner's request for an endpoint",
      adminForm,
      forms.decline,
    ),
    form(`${ADMIN_PATH}tokens/:id/revoke/`, 'account.admin_revoke', 'Revoke any token', adminForm, forms.revokeAny),
  ];
}
