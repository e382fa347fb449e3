/**
 * Ending sessions other than by signing out of one: "sign out everywhere" on the account page (every session
 * of the account, this browser's too), an administrator's order for an account, and the check that ends the
 * sessions of an account the nickname service no longer has (dropped, or expired there).
 */
import {
  askService,
  errorMessage,
  stripFormatting,
  type ApiRequest,
  type ApiResponse,
  type GuardFindings,
  type IrcPort,
  type Logger,
  type RouteGuard,
} from '../../lib/sdk.js';
import type { AccountAnswers } from './answers.js';
import type { AccountCookie } from './cookies.js';
import type { SentForm } from './guards.js';
import { ACCOUNT_PATH, ADMIN_PATH } from './pages.js';
import type { Session, SessionsSlice } from './sessions.js';

type Handler = (request: ApiRequest, found: GuardFindings) => Promise<ApiResponse>;

export interface SessionEndingsContext {
  sessions: SessionsSlice;
  answers: AccountAnswers;
  csrf: RouteGuard<SentForm>;
  signedIn: RouteGuard<Session>;
  cookie: AccountCookie;
  logger: Logger;
  /** Resolves once the durable slices (the sessions) are on disk. */
  persisted: () => Promise<void>;
}

export function sessionEndings(context: SessionEndingsContext): { everywhere: Handler; ofAccount: Handler } {
  const { sessions, answers, csrf, signedIn, cookie, logger, persisted } = context;
  // Ended in memory at once; a store that cannot write is logged (a restart could bring them back until they expire).
  const save = (account: string): Promise<void> =>
    persisted().catch((error: unknown) =>
      logger.error('ended sessions could not be saved', { account, error: errorMessage(error) }),
    );

  /** Every session of the signed-in account ends, this one too: back to the sign-in form. */
  const everywhere: Handler = async (request, found) => {
    const { account } = found.get(signedIn);
    const ended = sessions.endAll(account);
    logger.info('signed out everywhere', { account, sessions: ended, ip: request.ip });
    await save(account);
    return answers.seeOther(`${ACCOUNT_PATH}?signed_out`, { 'Set-Cookie': cookie.set(request, '', 0) });
  };

  /** An administrator ends every session of an account (the guard let only an administrator through). */
  const ofAccount: Handler = async (request, found) => {
    const admin = found.get(signedIn);
    const account = (found.get(csrf).fields.get('account') ?? '').trim();
    const ended = account === '' ? 0 : sessions.endAll(account);
    if (ended > 0) {
      logger.info('sessions ended by an administrator', {
        account,
        sessions: ended,
        by: admin.account,
        ip: request.ip,
      });
      await save(account);
    }
    // An administrator who ended their own account's sessions is signed out too: the sign-in form.
    if (!sessions.ownedBy(admin.account).includes(admin)) {
      return answers.seeOther(`${ACCOUNT_PATH}?signed_out`, { 'Set-Cookie': cookie.set(request, '', 0) });
    }
    admin.notice =
      account === ''
        ? { text: 'Name the account whose sessions to end.', problem: true }
        : { text: `Ended ${ended} session${ended === 1 ? '' : 's'} of ${account}.`, problem: ended === 0 };
    return answers.seeOther(ADMIN_PATH);
  };

  return { everywhere, ofAccount };
}

/**
 * How NickServ says an account or nick does not exist, naming it (Atheme: "alice is not registered.", Anope:
 * "Nick alice isn't registered."): the name, so that an answer about another name (a late answer to an
 * earlier question, or to the bot's own nick) ends nobody's sessions.
 */
const NOT_REGISTERED = /^(?:Nick )?(\S+) (?:is not|isn't) registered\b/i;

/** The name an answer says is not registered, if it says so. */
function notRegistered(line: string): string | undefined {
  return NOT_REGISTERED.exec(stripFormatting(line).trim())?.[1];
}

/**
 * Ask NickServ about each account that holds a session (`INFO <account>`, one at a time) and end the sessions
 * of one it says is not registered: the account was dropped, or expired at the services, since its people
 * signed in. An account NickServ does not answer for keeps its sessions. Resolves with the accounts ended.
 */
export async function endDroppedAccounts(
  irc: IrcPort,
  sessions: SessionsSlice,
  logger: Logger,
  going: () => boolean,
  timeoutMs = 5000,
): Promise<string[]> {
  const ended: string[] = [];
  for (const account of sessions.accounts()) {
    if (!irc.state.connected || !going()) break;
    const said = await askService(irc, 'NickServ', `INFO ${account}`, { quietMs: 300, timeoutMs }).catch(
      () => [] as string[],
    );
    const key = irc.casefold(account);
    const dropped = said.some((line) => {
      const name = notRegistered(line);
      return name !== undefined && irc.casefold(name) === key;
    });
    if (!dropped || !going()) continue;
    const count = sessions.endAll(account);
    if (count === 0) continue;
    ended.push(account);
    logger.warn('sessions ended: the nickname service says the account is not registered', {
      account,
      sessions: count,
    });
  }
  return ended;
}
