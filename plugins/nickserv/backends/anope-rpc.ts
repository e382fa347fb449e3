/**
 * The `anope-rpc` backend: Anope 2.1's JSON-RPC interface (modules jsonrpc
 * and rpc_user). `anope.checkCredentials [nick, password]` accepts any nick
 * of an account and answers `{account, confirmed, uniqueid}` with the
 * account's display nick, or an error code.
 */
import { ServiceUnavailableError, type CheckOutcome, type CheckRequest, type CredentialBackend } from './backend.js';
import { callJsonRpc, describeUrl } from './json-rpc.js';

export interface AnopeBackendOptions {
  url: URL;
  timeoutMs: number;
  /** Sent as `Authorization: Bearer <token>` when the RPC interface requires one. */
  token?: string | undefined;
}

/** rpc_user's error codes for anope.checkCredentials. */
const ERR_ACCOUNT_SUSPENDED = -32097;
const ERR_INVALID_PASSWORD = -32098;
const ERR_INVALID_ACCOUNT = -32099;

export function anopeBackend(options: AnopeBackendOptions): CredentialBackend {
  const headers: Record<string, string> = options.token ? { Authorization: `Bearer ${options.token}` } : {};
  return {
    name: 'anope-rpc',
    throughIrc: false,
    target: describeUrl(options.url),
    async check(request: CheckRequest): Promise<CheckOutcome> {
      const answer = await callJsonRpc('anope.checkCredentials', [request.nick, request.password], {
        url: options.url,
        timeoutMs: options.timeoutMs,
        signal: request.signal,
        headers,
      });
      if ('error' in answer) {
        switch (answer.error.code) {
          case ERR_INVALID_ACCOUNT:
          case ERR_INVALID_PASSWORD:
            return { valid: false, reason: null };
          case ERR_ACCOUNT_SUSPENDED:
            return { valid: false, reason: 'suspended' };
          default:
            // -32601 (rpc_user not loaded), an auth error, ...: Anope could not judge the credentials.
            throw new ServiceUnavailableError(
              `Anope answered anope.checkCredentials with error ${answer.error.code} (${answer.error.message || 'no message'})`,
            );
        }
      }
      const account = (answer.result as { account?: unknown } | null)?.account;
      if (typeof account !== 'string' || account === '') {
        throw new ServiceUnavailableError('Anope answered anope.checkCredentials without an account name');
      }
      return { valid: true, account };
    },
  };
}
