/**
 * `POST /api/irc/check-credentials/` (token tier, `irc.check_credentials`), and the gates every check
 * passes, the website's sign-in too ({@link gatedCheck}).
 *
 * The order of the gates matters: the brute-force windows first (a refused
 * guess costs services nothing; a burst of checks of one nick waits its turn
 * there), then the pool (a burst cannot flood the network), then the backend. Only an answer from services counts: a
 * failure to reach them is 503 and counts as neither success nor failure.
 * The password is never logged, stored or put in any answer.
 */
import { isIP } from 'node:net';
import {
  ApiError,
  invalidParameter,
  type ApiRequest,
  type FromJsonSchema,
  type LogFields,
  type Logger,
  type RouteDefinition,
} from '../../lib/sdk.js';
import { ServiceUnavailableError, type CheckOutcome, type CredentialBackend } from './backends/backend.js';
import type { KnownCallers } from './callers.js';
import { RefusedError, type Admission, type CheckResult, type FailureWindow } from './limiter.js';
import { PoolBusyError, type TaskPool } from './pool.js';

export interface CheckRouteContext {
  backend: CredentialBackend;
  pool: TaskPool;
  /** Failures of one nick from one caller (a client address group, a token): a guesser limits itself only. */
  byNick: FailureWindow;
  /** Failures of one nick from the callers it does not know, all together: the bound on guesses per account. */
  byAccount: FailureWindow;
  /** The callers each nick knows (a right password before): they pass `byAccount`, so its owner is never locked out. */
  known: KnownCallers;
  byToken: FailureWindow;
  /** A client address as one holder has it (an IPv6 address by its prefix). */
  group: (address: string) => string;
  /** The network's casefolding, so `Alice` and `alice` share one failure count. */
  fold: (nick: string) => string;
  /**
   * The signal of a check starting now (taken when it reaches the backend, so a check that waited
   * through a split gets an aborted one): aborted when the plugin stops, or, for a backend that goes
   * through IRC, when the services server splits from the network.
   */
  signal: () => AbortSignal;
  /** The services servers split from the network now, as the model knows them (none without a collector). */
  servicesSplit: () => readonly string[];
  /**
   * Why no password can be checked on this network at all (its IRC server knows no accounts, so it has no account
   * services); undefined while one can.
   */
  refusal?: () => string | undefined;
  logger: Logger;
  /** Told of each check's result (the API's and the sign-ins'): valid, invalid, refused (a brute-force limit), unavailable, or error. */
  counted?: (result: 'valid' | 'invalid' | 'refused' | 'unavailable' | 'error') => void;
}

/** A check's result as the metrics count it. */
function countedResult(error: unknown): 'refused' | 'unavailable' | 'error' {
  if (error instanceof ApiError && error.status === 429) return 'refused';
  if (error instanceof ApiError && error.status === 503) return 'unavailable';
  return 'error';
}

/** The request body. Unknown fields are ignored, as Django REST Framework's serializers do. */
export const checkRequestSchema = {
  type: 'object',
  required: ['nick', 'password'],
  properties: {
    nick: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      // Spaces and control characters are never part of a nick or account, and NUL would forge SASL PLAIN fields.
      pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$',
      description: 'The nickname (or account name) whose password is checked.',
    },
    password: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[^\\u0000]*$',
      description: 'The password; never logged, stored or returned.',
    },
  },
} as const;

export const checkResponseSchema = {
  type: 'object',
  required: ['nick', 'valid', 'account', 'reason'],
  additionalProperties: false,
  properties: {
    nick: { type: 'string', description: 'The nick as sent.' },
    valid: { type: 'boolean', description: 'Whether the password is right for the nick.' },
    account: {
      type: ['string', 'null'],
      description: 'The services account the nick belongs to (a grouped nick names its account); null unless valid.',
    },
    reason: {
      type: ['string', 'null'],
      enum: ['suspended', null],
      description: 'Why a check is not valid beyond a wrong password or unknown nick: "suspended"; else null.',
    },
  },
} as const;

/** The request body as it passed its schema, and the answer, each typed off its schema. */
type CheckBody = FromJsonSchema<typeof checkRequestSchema>;
type CheckAnswer = FromJsonSchema<typeof checkResponseSchema>;

function refusal(error: RefusedError, whose: string): ApiError {
  const seconds = Math.max(1, Math.ceil(error.retryMs / 1000));
  // Waiting too long is the service being busy, as a full pool is: 503, and no count against anyone.
  if (error.reason === 'wait') {
    return new ApiError(
      503,
      'unavailable',
      `The nickname service cannot answer: no turn came ${whose} while earlier checks ran; retry shortly`,
      undefined,
      { 'Retry-After': String(seconds) },
    );
  }
  const why =
    error.reason === 'failures'
      ? `Too many credential checks failed ${whose}`
      : `Too many credential checks are waiting ${whose}`;
  return new ApiError(429, 'rate_limited', `${why}; retry after ${seconds} seconds`, undefined, {
    'Retry-After': String(seconds),
  });
}

/** How a check's outcome counts in the brute-force windows. */
function resultOf(outcome: CheckOutcome | null): CheckResult {
  if (outcome === null) return 'unknown';
  return outcome.valid ? 'succeeded' : 'failed';
}

/** One check through the gates: whose password, and the second window it counts in besides the nick's. */
export interface GatedCheck {
  nick: string;
  password: string;
  /** The client's address, which services that log a source get. */
  ip: string;
  /**
   * The window of the caller besides the nick's: an API token's (the credential check), or a client
   * address group's (the website's sign-in); its `key` is the caller too, in the nick's windows. `whose` ends
   * the refusal's message ("with this token"), `logged` its log line ("with the token").
   */
  second: { window: FailureWindow; key: string; whose: string; logged: string };
  /** What the log lines of this check carry (never the password). */
  fields: LogFields;
}

/**
 * Check a password through the gates: the services split, the nick's window, the second window, the pool,
 * the backend. Resolves with the service's answer; throws the ApiError the credential check answers:
 * 429 when a window refuses, 503 when services cannot answer.
 */
export async function gatedCheck(context: CheckRouteContext, check: GatedCheck): Promise<CheckOutcome> {
  const counted = context.counted ?? (() => undefined);
  try {
    const outcome = await throughTheGates(context, check);
    counted(outcome.valid ? 'valid' : 'invalid');
    return outcome;
  } catch (error) {
    counted(countedResult(error));
    throw error;
  }
}

async function throughTheGates(context: CheckRouteContext, check: GatedCheck): Promise<CheckOutcome> {
  const { backend, pool, fold, signal, servicesSplit, logger, known } = context;
  const { nick, password, second, fields } = check;
  const nickKey = fold(nick);
  // A grouped nick counts with its account once a right password for it said which (only the services can: who
  // holds a nick on IRC, logged in to what, is anyone's choice). Until then it counts on its own.
  const accountKey = known.accountOf(nickKey) ?? nickKey;
  const caller = second.key;

  const refusal = context.refusal?.();
  if (refusal !== undefined) throw new ApiError(503, 'unavailable', refusal);

  // SASL needs the services linked: while they are split off, say so at once (it counts as nothing).
  const split = backend.throughIrc ? servicesSplit() : [];
  if (split.length > 0) {
    logger.warn('credential check unavailable: services split', { ...fields, servers: split.join(',') });
    throw new ApiError(
      503,
      'unavailable',
      `The nickname service cannot answer: the services server ${split.join(', ')} is split from the network`,
    );
  }

  const admissions = await admitThroughWindows(context, check, nickKey, accountKey, caller);

  let outcome: CheckOutcome | null = null;
  try {
    outcome = await pool.run(() => backend.check({ nick, password, sourceIp: check.ip, signal: signal() }));
  } catch (error) {
    if (error instanceof ServiceUnavailableError || error instanceof PoolBusyError) {
      logger.warn('credential check unavailable', { ...fields, target: backend.target, error: error.message });
      const headers: Record<string, string> = error instanceof PoolBusyError ? { 'Retry-After': '1' } : {};
      throw new ApiError(
        503,
        'unavailable',
        `The nickname service cannot answer: ${error.message}`,
        undefined,
        headers,
      );
    }
    throw error;
  } finally {
    const result = resultOf(outcome);
    admissions.forEach((admission) => admission.finish(result));
  }
  if (outcome.valid) {
    const account = fold(outcome.account);
    known.rememberAccount(nickKey, account);
    known.remember(account, caller);
  }

  logger.info('credential check answered', {
    ...fields,
    valid: outcome.valid,
    account: outcome.valid ? outcome.account : undefined,
    reason: outcome.valid ? undefined : (outcome.reason ?? undefined),
  });
  return outcome;
}

/**
 * The brute-force windows a check passes, always in this order (a check holds its place in each while it waits
 * in the next): the nick's from this caller; the account's from the callers it does not know, all together
 * (every nick of the account the bot knows of), unless it knows this one; the caller's own (its address group
 * or token, across nicks). Throws the refusal.
 */
async function admitThroughWindows(
  context: CheckRouteContext,
  check: GatedCheck,
  nickKey: string,
  accountKey: string,
  caller: string,
): Promise<Admission[]> {
  const { byNick, byAccount, known, logger } = context;
  const { nick, second, fields } = check;
  const windows: { window: FailureWindow; key: string; whose: string; logged: string }[] = [
    { window: byNick, key: `${nickKey} ${caller}`, whose: `for nick ${nick} ${second.whose}`, logged: 'for the nick' },
  ];
  if (!known.knows(accountKey, caller)) {
    windows.push({
      window: byAccount,
      key: accountKey,
      whose: `for nick ${nick} from callers it does not know (one that checked its password right before is let through)`,
      logged: 'for the nick from unknown callers',
    });
  }
  windows.push(second);
  const admitted: Admission[] = [];
  for (const { window, key, whose, logged } of windows) {
    try {
      admitted.push(await window.admit(key));
    } catch (error) {
      for (const admission of admitted) admission.finish('unknown');
      if (!(error instanceof RefusedError)) throw error;
      logger.info(`credential check refused: ${error.message} ${logged}`, fields);
      throw refusal(error, whose);
    }
  }
  return admitted;
}

export function checkCredentialsRoute(context: CheckRouteContext): RouteDefinition {
  const { backend, byToken } = context;

  return {
    method: 'POST',
    path: '/api/irc/check-credentials/',
    name: 'irc.check_credentials',
    tier: 'token',
    summary: "Verify a nickname's password against the network's nickname service",
    body: checkRequestSchema,
    response: checkResponseSchema,
    async handler(request: ApiRequest) {
      const { nick, password } = request.body as CheckBody;
      // Checked a string by the body's schema.
      const clientAddress = (request.body as { client_address?: string }).client_address;
      if (clientAddress !== undefined && isIP(clientAddress) === 0) {
        throw invalidParameter('client_address', 'must be an IPv4 or IPv6 address');
      }
      const token = request.tokenId !== undefined ? `token:${request.tokenId}` : `ip:${context.group(request.ip)}`;
      // The person behind the token holder's service, when it says who: a caller of their own.
      const tokenKey = clientAddress === undefined ? token : `${token} ip:${context.group(clientAddress)}`;
      const outcome = await gatedCheck(context, {
        nick,
        password,
        ip: request.ip,
        second: { window: byToken, key: tokenKey, whose: 'with this token', logged: 'with the token' },
        fields: { nick, token: request.tokenId, backend: backend.name },
      });
      const answer: CheckAnswer = {
        nick,
        valid: outcome.valid,
        account: outcome.valid ? outcome.account : null,
        reason: outcome.valid ? null : outcome.reason,
      };
      return { body: answer };
    },
  };
}
