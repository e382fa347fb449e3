/**
 * What the tokens plugin offers the other plugins: `tokens.manage`, the tokens of the TOKEN commands for a
 * signed-in account (the website's account settings and admin panel). It is a front end over the token
 * rules (`rules.ts`), as the commands are: the same slice, the same audit log (with the actor
 * `via: 'web'`), the same rules (the label, the most live tokens per account, who may see and change what,
 * which names may be granted, an answer only once the change is on disk); it words their results as
 * {@link TokenChange}s. The administrator rule is the commands' own: an account in `admins`, or an account
 * whose online client a plugin's admin check accepts (an IRC operator logged in to it, with
 * `opers_are_admins`). A user imports nothing from this folder: the type comes through the SDK's `Services`.
 */
import { openApiPath, type Logger } from '../../lib/sdk.js';
import type { GrantableEndpoint } from './endpoints.js';
import { auditJson, type AuditAnswer } from './staff-routes.js';
import type { ApiToken, TokensSlice } from './model.js';
import type { Caller, Declined, Denied, Granted, Refusal, Requested, Revoked, TokenRules } from './rules.js';

/** A token as the website shows it: never its secret, nor its hash. */
export interface TokenSummary {
  id: number;
  label: string;
  /** The NickServ account that created it. */
  owner: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Approved endpoint names and wildcards. */
  grants: string[];
  /** Endpoint names its owner asked for, waiting for an administrator. */
  requests: string[];
  staff: boolean;
}

/** An audit entry as the website shows it: as the staff tier's JSON has it (`auditJson`). */
export type AuditRecord = AuditAnswer;

/** A token endpoint an administrator may approve, and what it exposes. */
export interface EndpointSummary {
  name: string;
  method: string;
  /** As the OpenAPI document writes it: `/api/irc/users/{nick}/`. */
  path: string;
  summary: string;
}

/** How a change ended: done (with what to tell the person), or refused or not saved (with the reason). */
export type TokenChange =
  | { done: true; message: string }
  | {
      done: false;
      /** 400 a bad name, 403 not allowed, 404 no such token (of theirs), 409 revoked or at the limit, 503 not saved. */
      status: 400 | 403 | 404 | 409 | 429 | 503;
      message: string;
    };

/** Who acts on the website: the signed-in account, and the client's address (after the proxy rules). */
export interface WebActor {
  account: string;
  address: string;
}

export interface TokensManage {
  /** The most characters a label has. */
  readonly maxLabelLength: number;
  /** The most live tokens one account holds. */
  readonly maxTokensPerAccount: number;
  /** Whether `account` administers tokens, by the commands' rule. */
  isAdmin(account: string): Promise<boolean>;
  /** The token endpoints served now, by name. */
  endpoints(): EndpointSummary[];
  /** The tokens of `account`, oldest first. */
  ownedBy(account: string): TokenSummary[];
  /** Every token, oldest first, for an administrator; null for anyone else. */
  all(who: WebActor): Promise<TokenSummary[] | null>;
  /**
   * The audit log, newest first, for an administrator: up to `limit` entries from `offset`, and how many there
   * are; null for anyone else.
   */
  audit(who: WebActor, offset: number, limit: number): Promise<{ count: number; entries: AuditRecord[] } | null>;
  /** A new token of `who`'s account; its secret is in this answer only. */
  create(
    who: WebActor,
    label: string,
  ): Promise<{ done: true; token: TokenSummary; secret: string } | Extract<TokenChange, { done: false }>>;
  /** The owner asks an administrator for one endpoint. */
  request(who: WebActor, tokenId: number, endpoint: string): Promise<TokenChange>;
  /** The owner, or an administrator, revokes a token. */
  revoke(who: WebActor, tokenId: number): Promise<TokenChange>;
  /** An administrator approves one endpoint (or a wildcard) for a token. */
  grant(who: WebActor, tokenId: number, endpoint: string): Promise<TokenChange>;
  /** An administrator withdraws one approved endpoint (as TOKEN DENY does). */
  withdraw(who: WebActor, tokenId: number, endpoint: string): Promise<TokenChange>;
  /** An administrator turns down a pending request. */
  decline(who: WebActor, tokenId: number, endpoint: string): Promise<TokenChange>;
}

declare module '../../lib/sdk.js' {
  interface Services {
    /**
     * Managing API tokens from the website (the tokens plugin).
     * For the built-in plugins only: not part of the SDK's promise; may change in any release.
     * @internal
     */
    'tokens.manage': TokensManage;
  }
}

export interface TokensManageOptions {
  rules: TokenRules;
  /** The tokens, for the listings and the audit log. */
  tokens: TokensSlice;
  endpoints: () => GrantableEndpoint[];
  /** Whether an account administers tokens (see the module's comment). */
  isAdmin: (account: string) => Promise<boolean>;
  logger: Logger;
}

function summary(token: ApiToken): TokenSummary {
  return {
    id: token.id,
    label: token.label,
    owner: token.owner,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
    revokedAt: token.revokedAt,
    grants: [...token.grants],
    requests: [...token.requests],
    staff: token.staff,
  };
}

type Refused = Extract<TokenChange, { done: false }>;

/** The reasons a rule gives the website. */
type WebRefusal = Refusal<
  | 'not-admin'
  | 'no-such-token'
  | 'revoked'
  | 'label-too-long'
  | 'too-many-tokens'
  | 'too-many-today'
  | 'unknown-endpoints'
  | 'not-saved'
>;

/** A refusal as the website shows it; `endpoint` is the name as the person gave it. */
function refusedChange(refusal: WebRefusal, endpoint = ''): Refused {
  const refused = (status: Refused['status'], message: string): Refused => ({ done: false, status, message });
  switch (refusal.reason) {
    case 'not-admin':
      return refused(403, `The account ${refusal.account} is not an administrator.`);
    case 'no-such-token':
      return refused(
        404,
        refusal.admin
          ? `There is no token #${refusal.id}.`
          : `The account ${refusal.account} has no token #${refusal.id}.`,
      );
    case 'revoked': {
      const { id, revokedAt } = refusal.token;
      return refused(409, `Token #${id} was revoked at ${revokedAt}; a revoked token cannot be changed.`);
    }
    case 'label-too-long':
      return refused(400, `A label has at most ${refusal.limit} characters; this one has ${refusal.length}.`);
    case 'too-many-tokens':
      return refused(
        409,
        `The account ${refusal.account} already holds ${refusal.live} active tokens, the most allowed. Revoke one first.`,
      );
    case 'too-many-today':
      return refused(
        429,
        `The account ${refusal.account} made ${refusal.limit} tokens in the last 24 hours, the most a day allows; ` +
          `the next can be made at ${refusal.nextAt}.`,
      );
    case 'unknown-endpoints':
      return refused(400, `There is no token endpoint named "${endpoint}".`);
    case 'not-saved':
      return refused(
        503,
        `Your new token #${refusal.token.id} could not be saved (the bot could not write its store), so it was revoked at ` +
          "once and its secret is not shown. Try again later; the bot's log says why.",
      );
  }
}

/** `message` for a change on disk; else that a restart may undo it, as the commands say. */
function savedChange(saved: boolean, message: string): TokenChange {
  if (saved) return { done: true, message };
  return {
    done: false,
    status: 503,
    message:
      `NOT SAVED: the bot could not write this to its store, so a restart may undo it. ${message} ` +
      "Send it again to save it; the bot's log says why it failed.",
  };
}

/** A rule's result that is not a refusal. */
type Done<Result> = Extract<Result, { ok: true }>;

/** What the website says of each change done. */
const said = {
  request: ({ token, name, outcome }: Done<Requested>): string =>
    ({
      requested: `Requested ${name} for token #${token.id}: an administrator must approve it.`,
      pending: `Token #${token.id} already waits for an administrator to approve ${name}.`,
      granted: `Token #${token.id} may already call ${name}.`,
    })[outcome],
  revoke: ({ token, revoked }: Done<Revoked>): string =>
    revoked
      ? `Token #${token.id} is revoked: every request with it now gets 401.`
      : `Token #${token.id} was already revoked at ${token.revokedAt}.`,
  grant: ({ token, names, added }: Done<Granted>): string =>
    added.length === 0
      ? `Token #${token.id} already had ${names.join(', ')}.`
      : `Token #${token.id} may now call ${added.join(', ')}.`,
  withdraw: ({ token, names: [name], denied, expanded }: Done<Denied>): string => {
    if (denied.length === 0) return `Token #${token.id} did not have ${name}.`;
    const note =
      expanded.length > 0
        ? ` (${expanded.join(', ')} was replaced by the endpoints it covers now, so it no longer reaches new ones)`
        : '';
    return `Token #${token.id} may no longer call ${name}${note}.`;
  },
  decline: ({ token, name, declined }: Done<Declined>): string =>
    declined ? `Declined ${name} for token #${token.id}.` : `Token #${token.id} has no pending request for ${name}.`,
};

export function tokensManage(options: TokensManageOptions): TokensManage {
  const { rules, tokens, logger } = options;
  /** `who` for one action; whether they administer tokens is asked at most once. */
  const callerOf = ({ account, address }: WebActor, action: string): Caller => {
    let admin: Promise<boolean> | undefined;
    return {
      actor: { account, via: 'web', address },
      isAdmin: () => (admin ??= options.isAdmin(account)),
      asked: { action },
    };
  };
  /** A rule's result as the website's answer (`endpoint`: the name as the person gave it). */
  const answer = <Result extends { ok: true; saved: boolean }>(
    result: Result | WebRefusal,
    word: (done: Result) => string,
    endpoint?: string,
  ): TokenChange => {
    if (result.ok) return savedChange(result.saved, word(result));
    if (result.reason === 'not-admin') logger.warn('admin action refused', { account: result.account, via: 'web' });
    return refusedChange(result, endpoint);
  };
  return {
    maxLabelLength: rules.maxLabelLength,
    maxTokensPerAccount: rules.maxTokensPerAccount,
    isAdmin: (account) => options.isAdmin(account),
    endpoints: () =>
      options
        .endpoints()
        .map(({ name, method, path, summary }) => ({ name, method, path: openApiPath(path), summary })),
    ownedBy: (account) => tokens.ownedBy(account).map(summary),
    async all(who) {
      const listed = await rules.list(callerOf(who, 'list'), { all: true });
      return listed.ok ? listed.tokens.map(summary) : null;
    },
    async audit(who, offset, limit) {
      const read = await rules.audit(callerOf(who, 'audit'));
      if (!read.ok) return null;
      const newestFirst = read.entries.slice().reverse();
      return { count: read.entries.length, entries: newestFirst.slice(offset, offset + limit).map(auditJson) };
    },
    async create(who, label) {
      const created = await rules.create(callerOf(who, 'create'), label);
      return created.ok
        ? { done: true, token: summary(created.token), secret: created.secret }
        : refusedChange(created);
    },
    request: async (who, id, endpoint) =>
      answer(await rules.request(callerOf(who, 'request'), id, endpoint), said.request, endpoint),
    revoke: async (who, id) => answer(await rules.revoke(callerOf(who, 'revoke'), id), said.revoke),
    grant: async (who, id, endpoint) =>
      answer(await rules.grant(callerOf(who, 'grant'), id, [endpoint]), said.grant, endpoint),
    withdraw: async (who, id, endpoint) =>
      answer(await rules.deny(callerOf(who, 'withdraw'), id, [endpoint]), said.withdraw, endpoint),
    decline: async (who, id, endpoint) =>
      answer(await rules.decline(callerOf(who, 'decline'), id, endpoint), said.decline, endpoint),
  };
}
