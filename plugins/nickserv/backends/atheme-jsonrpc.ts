/**
 * The `atheme-jsonrpc` backend: Atheme's JSON-RPC interface (transport/jsonrpc).
 *
 * `atheme.login` checks a password, but only against an account name, never
 * a grouped nick (it answers fault 3 for those). So the nick is first looked
 * up with an anonymous `NickServ INFO`, whose first line names the account
 * ("Information on alt (account main):"), then the account is logged in to,
 * and the cookie the login created is logged out again at once.
 */
import { ServiceUnavailableError, type CheckOutcome, type CheckRequest, type CredentialBackend } from './backend.js';
import { callJsonRpc, describeUrl, type JsonRpcAnswer } from './json-rpc.js';

export interface AthemeBackendOptions {
  url: URL;
  /** Per RPC request. */
  timeoutMs: number;
}

/** Atheme's fault codes (doc/JSONRPC). */
const FAULT_NOSUCH_SOURCE = 3;
const FAULT_NOSUCH_TARGET = 4;
const FAULT_AUTHFAIL = 5;
/** atheme.login: "account is frozen". */
const FAULT_NOPRIVS = 6;

const INFO_HEADER = /^Information on \S+ \(account (\S+)\):/;

/** A fault that is not an answer about the credentials. */
function unexpected(method: string, answer: { error: { code: number; message: string } }): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `Atheme answered ${method} with fault ${answer.error.code} (${answer.error.message || 'no message'})`,
  );
}

export function athemeBackend(options: AthemeBackendOptions): CredentialBackend {
  const call = (method: string, params: unknown[], request: CheckRequest): Promise<JsonRpcAnswer> =>
    callJsonRpc(method, params, { url: options.url, timeoutMs: options.timeoutMs, signal: request.signal });

  /** The account a nick belongs to: null when the nick is not registered, the nick itself when INFO says nothing usable. */
  async function accountOf(request: CheckRequest): Promise<string | null> {
    const answer = await call(
      'atheme.command',
      ['.', '*', request.sourceIp, 'NickServ', 'INFO', request.nick],
      request,
    );
    if ('error' in answer) {
      if (answer.error.code === FAULT_NOSUCH_TARGET) return null;
      // INFO may be restricted on some networks; atheme.login still decides for account names.
      return request.nick;
    }
    const header = typeof answer.result === 'string' ? INFO_HEADER.exec(answer.result) : null;
    return header?.[1] ?? request.nick;
  }

  return {
    name: 'atheme-jsonrpc',
    throughIrc: false,
    target: describeUrl(options.url),
    async check(request): Promise<CheckOutcome> {
      const account = await accountOf(request);
      if (account === null) return { valid: false, reason: null };
      const login = await call('atheme.login', [account, request.password, request.sourceIp], request);
      if ('error' in login) {
        switch (login.error.code) {
          case FAULT_AUTHFAIL:
          case FAULT_NOSUCH_SOURCE:
            return { valid: false, reason: null };
          case FAULT_NOPRIVS:
            return { valid: false, reason: 'suspended' };
          default:
            throw unexpected('atheme.login', login);
        }
      }
      if (typeof login.result !== 'string' || login.result === '') {
        throw new ServiceUnavailableError('Atheme answered atheme.login without an authcookie');
      }
      // The cookie would stay valid for an hour; nobody needs it. A failed logout does not change the answer.
      await call('atheme.logout', [login.result, account], request).catch(() => undefined);
      return { valid: true, account };
    },
  };
}
