/**
 * What the tokens plugin offers the other plugins: `tokens.manage`, the tokens of the TOKEN commands for a
 * signed-in account (the website's account settings and admin panel). It works on the same slice and
 * writes the same audit log as the commands, with the actor `via: 'web'`; it applies the same rules (the
 * label, the most live tokens per account, who may see and change what, which names may be granted), and
 * it answers a change only once the tokens are on disk. The administrator rule is the commands' own: an
 * account in `admins`, or an account whose online client a plugin's admin check accepts (an IRC operator
 * logged in to it, with `opers_are_admins`). A user imports nothing from this folder: the type comes
 * through the SDK's `Services`.
 */
import { errorMessage, openApiPath, type Logger } from '../../lib/sdk.js';
import { checkNames, type GrantableEndpoint } from './endpoints.js';
import { auditJson, type AuditAnswer } from './staff-routes.js';
import { TOKEN_NOT_SAVED, type ApiToken, type AuditActor, type TokensSlice } from './model.js';

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
      status: 400 | 403 | 404 | 409 | 503;
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
  /** Every token, oldest first (for administrators). */
  all(): TokenSummary[];
  /** The audit log, newest first: up to `limit` entries from `offset`, and how many there are. */
  audit(offset: number, limit: number): { count: number; entries: AuditRecord[] };
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
    'tokens.manage': TokensManage;
  }
}

export interface TokensManageOptions {
  tokens: TokensSlice;
  endpoints: () => GrantableEndpoint[];
  maxTokensPerAccount: number;
  maxLabelLength: number;
  isAdmin: (account: string) => Promise<boolean>;
  /** Resolves once the token changes made so far are on disk; rejects when the store cannot write them. */
  persisted: () => Promise<void>;
  logger: Logger;
}

/** A label as TOKEN CREATE takes it: control characters removed, trimmed. */
export function cleanLabel(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, '').trim();
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

export function tokensManage(options: TokensManageOptions): TokensManage {
  const { tokens, logger } = options;
  const actorOf = ({ account, address }: WebActor): AuditActor => ({ account, via: 'web', address });
  const refused = (status: 400 | 403 | 404 | 409 | 503, message: string) => ({ done: false as const, status, message });

  /** The token `tokenId` when `account` may see it (its own, or any for an administrator). */
  const visible = (account: string, tokenId: number, admin: boolean): ApiToken | undefined => {
    const token = tokens.get(tokenId);
    return token && (admin || tokens.isOwner(token, account)) ? token : undefined;
  };

  /** `message` once the change is on disk; else (logged) that a restart may undo it, as the commands say. */
  const saved = async (what: string, token: ApiToken, message: string): Promise<TokenChange> => {
    try {
      await options.persisted();
      return { done: true, message };
    } catch (error) {
      logger.error('a token change could not be saved', {
        action: what,
        token: `#${token.id}`,
        error: errorMessage(error),
      });
      return refused(
        503,
        `NOT SAVED: the bot could not write this to its store, so a restart may undo it. ${message} ` +
          "Send it again to save it; the bot's log says why it failed.",
      );
    }
  };

  /** The live token an administrator changes, or why not. */
  const adminTarget = async (
    account: string,
    tokenId: number,
  ): Promise<{ token: ApiToken } | Extract<TokenChange, { done: false }>> => {
    if (!(await options.isAdmin(account))) {
      logger.warn('admin action refused', { account, via: 'web' });
      return refused(403, `The account ${account} is not an administrator.`);
    }
    const token = tokens.get(tokenId);
    if (!token) return refused(404, `There is no token #${tokenId}.`);
    if (token.revokedAt !== null) {
      return refused(409, `Token #${token.id} was revoked at ${token.revokedAt}; a revoked token cannot be changed.`);
    }
    return { token };
  };

  return {
    maxLabelLength: options.maxLabelLength,
    maxTokensPerAccount: options.maxTokensPerAccount,
    isAdmin: (account) => options.isAdmin(account),
    endpoints: () =>
      options.endpoints().map((endpoint) => ({
        name: endpoint.name,
        method: endpoint.method,
        path: openApiPath(endpoint.path),
        summary: endpoint.summary,
      })),
    ownedBy: (account) => tokens.ownedBy(account).map(summary),
    all: () => tokens.all().map(summary),
    audit(offset, limit) {
      const entries = tokens.audit();
      const newestFirst = entries.slice().reverse();
      return { count: entries.length, entries: newestFirst.slice(offset, offset + limit).map(auditJson) };
    },

    async create(who, text) {
      const { account } = who;
      const label = cleanLabel(text);
      const characters = [...label].length;
      if (characters > options.maxLabelLength) {
        return refused(400, `A label has at most ${options.maxLabelLength} characters; this one has ${characters}.`);
      }
      const live = tokens.liveCount(account);
      if (live >= options.maxTokensPerAccount) {
        return refused(
          409,
          `The account ${account} already holds ${live} active tokens, the most allowed. Revoke one first.`,
        );
      }
      const { token, secret } = tokens.create(account, label, actorOf(who));
      logger.info('token created', { token: `#${token.id}`, account, via: 'web' });
      try {
        await options.persisted();
      } catch (error) {
        // As over IRC: a secret is shown only for a token that a crash cannot take away again.
        logger.error('a token change could not be saved', {
          action: 'create',
          token: `#${token.id}`,
          error: errorMessage(error),
        });
        tokens.revoke(token, TOKEN_NOT_SAVED);
        logger.warn('token revoked: it could not be saved', { token: `#${token.id}`, account });
        return refused(
          503,
          `Your new token #${token.id} could not be saved (the bot could not write its store), so it was revoked at ` +
            "once and its secret is not shown. Try again later; the bot's log says why.",
        );
      }
      return { done: true, token: summary(token), secret };
    },

    async request(who, tokenId, endpoint) {
      const { account } = who;
      const token = visible(account, tokenId, false);
      if (!token) return refused(404, `The account ${account} has no token #${tokenId}.`);
      if (token.revokedAt !== null) {
        return refused(409, `Token #${token.id} was revoked at ${token.revokedAt}; a revoked token cannot be changed.`);
      }
      const name = endpoint.toLowerCase();
      if (!options.endpoints().some((candidate) => candidate.name === name)) {
        return refused(400, `There is no token endpoint named "${endpoint}".`);
      }
      if (!tokens.request(token, name, actorOf(who))) {
        return saved(
          'request',
          token,
          token.requests.includes(name)
            ? `Token #${token.id} already waits for an administrator to approve ${name}.`
            : `Token #${token.id} may already call ${name}.`,
        );
      }
      logger.info('token endpoint requested', { token: `#${token.id}`, by: account, endpoint: name, via: 'web' });
      return saved('request', token, `Requested ${name} for token #${token.id}: an administrator must approve it.`);
    },

    async revoke(who, tokenId) {
      const { account } = who;
      const admin = await options.isAdmin(account);
      const token = visible(account, tokenId, admin);
      if (!token) {
        return refused(
          404,
          admin ? `There is no token #${tokenId}.` : `The account ${account} has no token #${tokenId}.`,
        );
      }
      if (!tokens.revoke(token, actorOf(who))) {
        return saved('revoke', token, `Token #${token.id} was already revoked at ${token.revokedAt}.`);
      }
      logger.info('token revoked', { token: `#${token.id}`, by: account, via: 'web' });
      return saved('revoke', token, `Token #${token.id} is revoked: every request with it now gets 401.`);
    },

    async grant(who, tokenId, endpoint) {
      const { account } = who;
      const target = await adminTarget(account, tokenId);
      if (!('token' in target)) return target;
      const { token } = target;
      const { valid, unknown } = checkNames([endpoint], options.endpoints());
      if (unknown.length > 0) return refused(400, `There is no token endpoint named "${endpoint}".`);
      const added = tokens.grant(token, valid, actorOf(who));
      if (added.length === 0) return saved('grant', token, `Token #${token.id} already had ${valid.join(', ')}.`);
      logger.info('token granted', { token: `#${token.id}`, by: account, endpoints: added.join(','), via: 'web' });
      return saved('grant', token, `Token #${token.id} may now call ${added.join(', ')}.`);
    },

    async withdraw(who, tokenId, endpoint) {
      const { account } = who;
      const target = await adminTarget(account, tokenId);
      if (!('token' in target)) return target;
      const { token } = target;
      const endpoints = options.endpoints();
      const name = endpoint.toLowerCase();
      // A granted name stays withdrawable even after its route is gone (its plugin turned off).
      if (checkNames([name], endpoints).unknown.length > 0 && !token.grants.includes(name)) {
        return refused(400, `There is no token endpoint named "${endpoint}".`);
      }
      const known = endpoints.map((candidate) => candidate.name);
      const { denied, expanded } = tokens.deny(token, [name], known, actorOf(who));
      if (denied.length === 0) return saved('withdraw', token, `Token #${token.id} did not have ${name}.`);
      logger.info('token denied', { token: `#${token.id}`, by: account, endpoints: denied.join(','), via: 'web' });
      const note =
        expanded.length > 0
          ? ` (${expanded.join(', ')} was replaced by the endpoints it covers now, so it no longer reaches new ones)`
          : '';
      return saved('withdraw', token, `Token #${token.id} may no longer call ${name}${note}.`);
    },

    async decline(who, tokenId, endpoint) {
      const { account } = who;
      const target = await adminTarget(account, tokenId);
      if (!('token' in target)) return target;
      const { token } = target;
      const name = endpoint.toLowerCase();
      if (!tokens.decline(token, name, actorOf(who))) {
        return saved('decline', token, `Token #${token.id} has no pending request for ${name}.`);
      }
      logger.info('token request declined', { token: `#${token.id}`, by: account, endpoint: name, via: 'web' });
      return saved('decline', token, `Declined ${name} for token #${token.id}.`);
    },
  };
}
