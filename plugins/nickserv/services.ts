/**
 * What the nickserv plugin offers the other plugins: `nickserv.credentials`, the password check behind a
 * sign-in (the website's account pages). It goes through the very gates of the credential check — the
 * services split, the failure window of the nick it names (shared with the HTTP check, so failures on one
 * count on the other), a window of the client address, the pool, the configured backend — and says how it
 * ended without an exception to catch. A user imports nothing from this folder: the type comes through the
 * SDK's `Services`.
 */
import { ApiError } from '../../lib/sdk.js';
import type { FailureWindow } from './limiter.js';
import { gatedCheck, type CheckRouteContext } from './route.js';

/** How a sign-in's password check ended. */
export type SignInCheck =
  /** The password is right; `account` is the services account (a grouped nick names its account). */
  | { result: 'valid'; account: string }
  /**
   * Not a sign-in: a wrong password, an unknown account or nick, a suspended account (services judged
   * the password before saying so), or a name no account can have. Deliberately one answer.
   */
  | { result: 'invalid' }
  /** Too many failures for the account (nick) or from the address, or too many checks waiting. */
  | { result: 'limited'; retryAfterSeconds: number }
  /** The nickname service cannot answer now (down, unreachable, split, busy); nothing was judged. */
  | { result: 'unavailable'; retryAfterSeconds: number | null };

export interface CredentialsService {
  /** Check `password` for `name` (an account or a nick of one), for a client at `address`. */
  check(request: { name: string; password: string; address: string }): Promise<SignInCheck>;
}

declare module '../../lib/sdk.js' {
  interface Services {
    /**
     * The password check behind a sign-in (the nickserv plugin, for the website's account pages).
     * For the built-in plugins only: not part of the SDK's promise; may change in any release.
     * @internal
     */
    'nickserv.credentials': CredentialsService;
  }
}

/** The credential check's body rules: no space or control character in a name (NUL would forge SASL PLAIN fields). */
const NAME = /^[^\s\x00-\x1f\x7f]{1,64}$/;
const PASSWORD_LIMIT = 1024;

function retryAfter(error: ApiError): number | null {
  const seconds = Number(error.headers['Retry-After']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
}

export function credentialsService(context: CheckRouteContext, byAddress: FailureWindow): CredentialsService {
  return {
    async check({ name, password, address }) {
      if (!NAME.test(name) || password === '' || password.length > PASSWORD_LIMIT || password.includes('\0')) {
        return { result: 'invalid' };
      }
      try {
        const outcome = await gatedCheck(context, {
          nick: name,
          password,
          ip: address,
          second: {
            window: byAddress,
            key: `ip:${context.group(address)}`,
            whose: 'from this address',
            logged: 'from the address',
          },
          fields: { nick: name, via: 'sign-in', ip: address, backend: context.backend.name },
        });
        return outcome.valid ? { result: 'valid', account: outcome.account } : { result: 'invalid' };
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.status === 429) return { result: 'limited', retryAfterSeconds: retryAfter(error) ?? 1 };
        if (error.status === 503) return { result: 'unavailable', retryAfterSeconds: retryAfter(error) };
        throw error;
      }
    },
  };
}
