/**
 * The forms that change API tokens, through the tokens plugin's `tokens.manage`: a signed-in account's own
 * (create, ask for an endpoint, revoke) and the admin panel's (approve, withdraw, decline, revoke any). Each
 * answers `303 See Other` back to its page, which then shows what happened once, except the token creation,
 * whose answer is the page with the new token's value. Their routes list the guards (routes.ts): every form
 * passes `csrf` and `signedIn`, the admin panel's `administrator` too.
 */
import type { ApiRequest, ApiResponse, GuardFindings, RouteGuard, Services } from '../../lib/sdk.js';
import type { AccountAnswers } from './answers.js';
import type { SentForm } from './guards.js';
import { ACCOUNT_PATH, ADMIN_PATH, createdPage } from './pages.js';
import { FORM_ID, rememberSentForm, type Session } from './sessions.js';

type Tokens = Services['tokens.manage'];
type TokenChange = Awaited<ReturnType<Tokens['grant']>>;
type Handler = (request: ApiRequest, found: GuardFindings) => Promise<ApiResponse>;
/** Who changes a token, as `tokens.manage` takes it: the signed-in account, from the client's address. */
type Actor = Parameters<Tokens['revoke']>[0];

export interface TokenFormsContext {
  tokens: Tokens;
  answers: AccountAnswers;
  /** The guards the forms' routes list, whose findings the handlers read. */
  csrf: RouteGuard<SentForm>;
  signedIn: RouteGuard<Session>;
}

/** The token id of the path (`/tokens/:id/...`); 0, which no token has, when it is not a number. */
function tokenIdOf(request: ApiRequest): number {
  const raw = request.params.id ?? '';
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/** Who sends a form: the signed-in account, from the client's address. */
function actorOf(request: ApiRequest, found: GuardFindings, signedIn: RouteGuard<Session>): Actor {
  return { account: found.get(signedIn).account, address: request.ip };
}

/**
 * The token creation: its answer is the page with the new token's value, shown once. The form carries a
 * one-time id the account page issued to this session, so that a reload of that page, or a double click,
 * makes no second token; a form without one, or with one this session was not shown (a hand-made POST, or a
 * page shown before the bot restarted), makes none and says why.
 */
function createToken({ tokens, answers, csrf, signedIn }: TokenFormsContext): Handler {
  return async (request, found) => {
    const session = found.get(signedIn);
    const { fields, cookie } = found.get(csrf);
    const formId = fields.get('form') ?? '';
    const known = FORM_ID.test(formId) && (session.issuedForms.has(formId) || session.sentForms.has(formId));
    if (!known) {
      session.notice = {
        text: FORM_ID.test(formId)
          ? 'That form has expired (the bot restarted since the page was shown, or the page was too old): no ' +
            'token was made. Use the form below.'
          : 'A token is made with the form on this page only: none was made. Use the form below.',
        problem: true,
      };
      return answers.seeOther(ACCOUNT_PATH);
    }
    // Sent before (or still being made, after a double click): no second token. One that made none may try again.
    // Looked up and claimed below with no await in between, so that two at once cannot both pass.
    let made: number | null = null;
    for (let pending = session.sentForms.get(formId); pending !== undefined;) {
      made = await pending;
      if (made !== null) break;
      // It made none: this one tries, unless another sent meanwhile tries already.
      const latest = session.sentForms.get(formId);
      pending = latest === pending ? undefined : latest;
    }
    if (made !== null) {
      session.notice = {
        text:
          `This form was sent already, and made token #${made}: no second token was made. Its value was ` +
          `shown once, on the page that answered the form; if you did not copy it, revoke #${made} and ` +
          'make another.',
        problem: true,
      };
      return answers.seeOther(ACCOUNT_PATH);
    }
    let settle: (id: number | null) => void = () => undefined;
    rememberSentForm(session, formId, new Promise((resolve) => (settle = resolve)));
    let created: Awaited<ReturnType<Tokens['create']>>;
    try {
      created = await tokens.create(actorOf(request, found, signedIn), fields.get('label') ?? '');
    } catch (error) {
      settle(null);
      throw error;
    }
    settle(created.done ? created.token.id : null);
    if (!created.done) {
      session.notice = { text: created.message, problem: true };
      return answers.seeOther(ACCOUNT_PATH);
    }
    const admin = await tokens.isAdmin(session.account);
    return answers.page(createdPage(answers.visit(cookie, session, admin), created.token, created.secret));
  };
}

export function tokenForms(context: TokenFormsContext) {
  const { tokens, answers, csrf, signedIn } = context;
  const actor = (request: ApiRequest, found: GuardFindings): Actor => actorOf(request, found, signedIn);

  /** Show `change` once on `page` after the redirect. */
  const noticeAndSeeOther = (session: Session, change: TokenChange, page: string): ApiResponse => {
    session.notice = { text: change.message, problem: !change.done };
    return answers.seeOther(page);
  };

  const requestEndpoint: Handler = async (request, found) => {
    const endpoint = found.get(csrf).fields.get('endpoint') ?? '';
    const change = await tokens.request(actor(request, found), tokenIdOf(request), endpoint);
    return noticeAndSeeOther(found.get(signedIn), change, ACCOUNT_PATH);
  };

  const revoke: Handler = async (request, found) => {
    const change = await tokens.revoke(actor(request, found), tokenIdOf(request));
    return noticeAndSeeOther(found.get(signedIn), change, ACCOUNT_PATH);
  };

  /** An admin panel's action on one endpoint of one token (approve, withdraw, decline). */
  const onEndpoint =
    (act: Tokens['grant']): Handler =>
    async (request, found) => {
      const endpoint = found.get(csrf).fields.get('endpoint') ?? '';
      const change = await act(actor(request, found), tokenIdOf(request), endpoint);
      return noticeAndSeeOther(found.get(signedIn), change, ADMIN_PATH);
    };

  const revokeAny: Handler = async (request, found) => {
    const change = await tokens.revoke(actor(request, found), tokenIdOf(request));
    return noticeAndSeeOther(found.get(signedIn), change, ADMIN_PATH);
  };

  return {
    create: createToken(context),
    requestEndpoint,
    revoke,
    grant: onEndpoint(tokens.grant),
    withdraw: onEndpoint(tokens.withdraw),
    decline: onEndpoint(tokens.decline),
    revokeAny,
  };
}
