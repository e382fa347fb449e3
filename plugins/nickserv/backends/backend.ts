/**
 * What every credential backend implements, and the two ways a check ends:
 * an answer from the nickname service (valid or not), or no answer at all.
 * "No answer" is a {@link ServiceUnavailableError}, never `valid: false`: a
 * client that is told a right password is wrong may lock a user out.
 */

/** Why a check with a possibly right password is still refused. */
export type RefusalReason = 'suspended';

/** The nickname service's answer. */
export type CheckOutcome = { valid: true; account: string } | { valid: false; reason: RefusalReason | null };

export interface CheckRequest {
  /** The nick as the client sent it; a grouped nick resolves to its account. */
  nick: string;
  password: string;
  /** The API client's address; services that log a source get it. */
  sourceIp: string;
  /**
   * Aborted when the check can no longer get an answer (the plugin stops, the services server split):
   * the check gives up at once, with the signal's reason (a string) as its message.
   */
  signal: AbortSignal;
}

export interface CredentialBackend {
  /** The config name (`sasl`, `atheme-jsonrpc`, `anope-rpc`), for logs. */
  readonly name: string;
  /** Where the backend connects (`host:port` or a URL without credentials), for logs. */
  readonly target: string;
  /**
   * Whether the services must be linked to the IRC network for a check to work (SASL goes through the
   * IRC server); an RPC backend talks to the services directly.
   */
  readonly throughIrc: boolean;
  /** Resolves with the service's answer; rejects with ServiceUnavailableError when there is none. */
  check(request: CheckRequest): Promise<CheckOutcome>;
}

/**
 * The nickname service cannot answer: unreachable, down, too slow, or it said
 * something this backend does not understand. The message says which, and
 * never carries the password; it is shown to API clients.
 */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
}

/** Why a check was given up: the abort reason its signal carries, when that is a message. */
export function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'the check was cancelled: the service is stopping';
}
