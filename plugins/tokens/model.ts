/**
 * API tokens: who owns each one, which endpoints an administrator approved for
 * it, and the audit log of every change. Only the SHA-256 of a token's secret
 * is kept; the secret itself exists once, in the answer to {@link TokensSlice.create}.
 *
 * Ids are small integers from a persisted counter, so a revoked token's id is
 * never handed out again. Revoked tokens stay (their id, owner and audit trail
 * keep their meaning); they simply never authenticate again.
 */
import crypto, { createHash, randomBytes } from 'node:crypto';
import type { ModelSlice, Persistence } from '../../lib/sdk.js';

/** `ntd_` and 43 base64url characters: 32 random bytes. */
export const TOKEN_PATTERN = /^ntd_[A-Za-z0-9_-]{43}$/;
const TOKEN_PREFIX = 'ntd_';

export interface ApiToken {
  id: number;
  label: string;
  /** The NickServ account that created it. */
  owner: string;
  /** Hex SHA-256 of the secret. */
  secretSha256: string;
  createdAt: string;
  /** The last request that presented this token, approved or not. */
  lastUsedAt: string | null;
  /** Approved requests per endpoint name. */
  uses: Record<string, number>;
  /** Approved endpoint names, and wildcards like `netstats.*` that match by prefix at request time. */
  grants: string[];
  /** Endpoint names its owner asked an administrator to approve (on the website), not yet approved or declined. */
  requests: string[];
  /** May call the staff tier (`/api/staff/...`). */
  staff: boolean;
  revokedAt: string | null;
}

export type AuditAction = 'create' | 'grant' | 'deny' | 'revoke' | 'staff' | 'request' | 'decline';

/**
 * Who made a change: an account over IRC, on the website (signed in), or with a staff token (and its
 * owner) over HTTP, or the bot itself (`system`), which says why: it revokes a token whose secret it
 * could not deliver, and no person asked.
 */
export type AuditActor =
  | {
      account: string;
      via: 'irc' | 'web' | 'http';
      /** The staff token used, for changes made over HTTP. */
      tokenId?: number;
      /** The client's address (after the proxy rules), for changes made over HTTP or on the website. */
      address?: string;
      reason?: undefined;
    }
  | { account: null; via: 'system'; reason: string; tokenId?: undefined; address?: undefined };

/** The actor of a token revoked because its secret never reached its owner. */
export const SECRET_NOT_DELIVERED: AuditActor = { account: null, via: 'system', reason: 'secret not delivered' };
/** The actor of a token revoked because the store could not save it, so its secret was never shown. */
export const TOKEN_NOT_SAVED: AuditActor = { account: null, via: 'system', reason: 'not saved' };

export interface AuditEntry {
  at: string;
  tokenId: number;
  action: AuditAction;
  actor: AuditActor;
  /** Endpoint names granted or denied; `on`/`off` for staff changes. */
  details: string[];
  /** For grants and denials: the token's whole grant list after the change. */
  grantsAfter?: string[];
}

/** An actor in the file: `reason` only for the bot itself (`system`), whose `account` is null. */
interface StoredActor {
  account: string | null;
  via: 'irc' | 'web' | 'http' | 'system';
  token_id?: number;
  reason?: string;
  address?: string;
}

/** The slice's file format (snake_case, like the rest of the store file). */
interface StoredTokens {
  next_id: number;
  tokens: {
    id: number;
    label: string;
    owner: string;
    secret_sha256: string;
    created_at: string;
    last_used_at: string | null;
    uses: Record<string, number>;
    grants: string[];
    /** Absent when there is none (and in files of earlier versions). */
    requests?: string[];
    staff: boolean;
    revoked_at: string | null;
  }[];
  audit: {
    at: string;
    token_id: number;
    action: AuditAction;
    actor: StoredActor;
    details: string[];
    grants_after?: string[];
  }[];
}

export interface TokensSliceOptions {
  /** Announces a change (the model's `changed`), which schedules the store's debounced write of the slice. */
  onChange: (kind: string, tokenId: number) => void;
  /** Folds account names for comparison (the network's CASEMAPPING). */
  fold: (name: string) => string;
  clock?: () => Date;
  /** Random bytes for secrets; tests pin it. */
  random?: (size: number) => Buffer;
}

/** `crypto.hash` where the runtime has it (Node 20.12+); `engines` allows older 20.x releases. */
const oneShotHash: typeof crypto.hash | undefined = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** The SHA-256 (hex) a token's secret is stored and looked up by. */
export function hashSecret(secret: string): string {
  // The one-shot hash (Node 20.12+) costs about half of a Hash object's; it runs on every token request.
  return oneShotHash ? oneShotHash('sha256', secret, 'hex') : createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether `grants` approve `endpoint`: an exact name, or a `prefix.*` wildcard. */
export function grantsCover(grants: readonly string[], endpoint: string): boolean {
  return grants.some((grant) =>
    grant.endsWith('.*')
      ? endpoint.startsWith(grant.slice(0, -1)) && endpoint.length > grant.length - 1
      : grant === endpoint,
  );
}

function storedActor(actor: AuditActor): StoredActor {
  if (actor.via === 'system') return { account: null, via: 'system', reason: actor.reason };
  return {
    account: actor.account,
    via: actor.via,
    ...(actor.tokenId === undefined ? {} : { token_id: actor.tokenId }),
    ...(actor.address === undefined ? {} : { address: actor.address }),
  };
}

function restoredActor(stored: StoredActor): AuditActor {
  if (stored.via === 'system') return { account: null, via: 'system', reason: stored.reason ?? '' };
  return {
    account: stored.account ?? '',
    via: stored.via,
    ...(stored.token_id === undefined ? {} : { tokenId: stored.token_id }),
    ...(typeof stored.address === 'string' ? { address: stored.address } : {}),
  };
}

export class TokensSlice implements ModelSlice {
  readonly name = 'tokens';
  readonly persistence: Persistence<StoredTokens>;
  private readonly byId = new Map<number, ApiToken>();
  private readonly byHash = new Map<string, ApiToken>();
  private readonly auditLog: AuditEntry[] = [];
  private nextId = 1;
  private readonly clock: () => Date;
  private readonly random: (size: number) => Buffer;

  constructor(private readonly options: TokensSliceOptions) {
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? randomBytes;
    // Durable: a secret is shown, and a grant or revocation confirmed, only once the store has it on disk.
    this.persistence = { durable: true, snapshot: () => this.snapshot(), restore: (data) => this.restore(data) };
  }

  get(id: number): ApiToken | undefined {
    return this.byId.get(id);
  }

  /** The token a secret belongs to, revoked or not; undefined for anything else. */
  findBySecret(secret: string): ApiToken | undefined {
    if (!TOKEN_PATTERN.test(secret)) return undefined;
    return this.byHash.get(hashSecret(secret));
  }

  /** Every token, oldest first. */
  all(): ApiToken[] {
    return [...this.byId.values()];
  }

  ownedBy(account: string): ApiToken[] {
    const wanted = this.options.fold(account);
    return this.all().filter((token) => this.options.fold(token.owner) === wanted);
  }

  /** Tokens of `account` that are not revoked. */
  liveCount(account: string): number {
    return this.ownedBy(account).filter((token) => token.revokedAt === null).length;
  }

  isOwner(token: ApiToken, account: string): boolean {
    return this.options.fold(token.owner) === this.options.fold(account);
  }

  /** Audit entries, oldest first; only those of one token when `tokenId` is given. */
  audit(tokenId?: number): AuditEntry[] {
    return tokenId === undefined ? [...this.auditLog] : this.auditLog.filter((entry) => entry.tokenId === tokenId);
  }

  /** Create a token with no endpoint approved. The returned secret is never stored and cannot be shown again. */
  create(owner: string, label: string, actor: AuditActor): { token: ApiToken; secret: string } {
    const secret = TOKEN_PREFIX + this.random(32).toString('base64url');
    const now = this.clock().toISOString();
    const token: ApiToken = {
      id: this.nextId++,
      label,
      owner,
      secretSha256: hashSecret(secret),
      createdAt: now,
      lastUsedAt: null,
      uses: {},
      grants: [],
      requests: [],
      staff: false,
      revokedAt: null,
    };
    this.index(token);
    this.record(token.id, 'create', actor, []);
    this.options.onChange('create', token.id);
    return { token, secret };
  }

  /**
   * Add endpoint names (or wildcards); returns the ones that were not granted before. The owner's requests
   * that the grants now cover are answered by it: they are no longer pending.
   */
  grant(token: ApiToken, names: readonly string[], actor: AuditActor): string[] {
    const added = [...new Set(names)].filter((name) => !token.grants.includes(name));
    if (added.length === 0) return [];
    token.grants.push(...added);
    token.requests = token.requests.filter((name) => !grantsCover(token.grants, name));
    this.record(token.id, 'grant', actor, added, [...token.grants]);
    this.options.onChange('grant', token.id);
    return added;
  }

  /**
   * The owner asks for an endpoint name (never a wildcard: that is an administrator's choice); false when
   * it is approved or asked for already. The request waits for an administrator's grant or decline.
   */
  request(token: ApiToken, name: string, actor: AuditActor): boolean {
    if (token.requests.includes(name) || grantsCover(token.grants, name)) return false;
    token.requests.push(name);
    this.record(token.id, 'request', actor, [name]);
    this.options.onChange('request', token.id);
    return true;
  }

  /** An administrator turns a pending request down; false when `name` is not pending. */
  decline(token: ApiToken, name: string, actor: AuditActor): boolean {
    if (!token.requests.includes(name)) return false;
    token.requests = token.requests.filter((pending) => pending !== name);
    this.record(token.id, 'decline', actor, [name]);
    this.options.onChange('decline', token.id);
    return true;
  }

  /**
   * Withdraw endpoint names. Denying a wildcard also withdraws the names it covers. Denying
   * a name that a wildcard covers replaces the wildcard by the `known` names it covers, minus
   * the denied one (so the wildcard no longer reaches endpoints added later). Returns the
   * names that were withdrawn and the wildcards that were expanded; nothing is audited when
   * nothing changed.
   */
  deny(
    token: ApiToken,
    names: readonly string[],
    known: readonly string[],
    actor: AuditActor,
  ): { denied: string[]; expanded: string[] } {
    let grants = [...token.grants];
    const denied: string[] = [];
    const expanded: string[] = [];
    for (const name of new Set(names)) {
      const before = grants.join(' ');
      if (name.endsWith('.*')) {
        grants = grants.filter((grant) => grant !== name && (grant.endsWith('.*') || !grantsCover([name], grant)));
      } else {
        grants = grants.filter((grant) => grant !== name);
        for (const wildcard of grants.filter((grant) => grant.endsWith('.*') && grantsCover([grant], name))) {
          const rest = known.filter(
            (other) => other !== name && grantsCover([wildcard], other) && !grants.includes(other),
          );
          grants.splice(grants.indexOf(wildcard), 1, ...rest);
          expanded.push(wildcard);
        }
      }
      if (grants.join(' ') !== before) denied.push(name);
    }
    if (denied.length === 0) return { denied, expanded };
    token.grants = grants;
    this.record(token.id, 'deny', actor, denied, [...grants]);
    this.options.onChange('deny', token.id);
    return { denied, expanded };
  }

  setStaff(token: ApiToken, staff: boolean, actor: AuditActor): boolean {
    if (token.staff === staff) return false;
    token.staff = staff;
    this.record(token.id, 'staff', actor, [staff ? 'on' : 'off']);
    this.options.onChange('staff', token.id);
    return true;
  }

  /** Revoke for good; false when it already was. Its pending requests go with it. */
  revoke(token: ApiToken, actor: AuditActor): boolean {
    if (token.revokedAt !== null) return false;
    token.revokedAt = this.clock().toISOString();
    token.requests = [];
    this.record(token.id, 'revoke', actor, []);
    this.options.onChange('revoke', token.id);
    return true;
  }

  /** A request presented the token; `endpoint` is set when it was approved. */
  recordUse(token: ApiToken, endpoint: string | null): void {
    token.lastUsedAt = this.clock().toISOString();
    if (endpoint !== null) token.uses[endpoint] = (token.uses[endpoint] ?? 0) + 1;
    this.options.onChange('use', token.id);
  }

  private index(token: ApiToken): void {
    this.byId.set(token.id, token);
    this.byHash.set(token.secretSha256, token);
  }

  private record(
    tokenId: number,
    action: AuditAction,
    actor: AuditActor,
    details: string[],
    grantsAfter?: string[],
  ): void {
    const entry: AuditEntry = { at: this.clock().toISOString(), tokenId, action, actor: { ...actor }, details };
    if (grantsAfter) entry.grantsAfter = grantsAfter;
    this.auditLog.push(entry);
  }

  private snapshot(): StoredTokens {
    return {
      next_id: this.nextId,
      tokens: this.all().map((token) => ({
        id: token.id,
        label: token.label,
        owner: token.owner,
        secret_sha256: token.secretSha256,
        created_at: token.createdAt,
        last_used_at: token.lastUsedAt,
        uses: { ...token.uses },
        grants: [...token.grants],
        ...(token.requests.length > 0 ? { requests: [...token.requests] } : {}),
        staff: token.staff,
        revoked_at: token.revokedAt,
      })),
      audit: this.auditLog.map((entry) => ({
        at: entry.at,
        token_id: entry.tokenId,
        action: entry.action,
        actor: storedActor(entry.actor),
        details: [...entry.details],
        ...(entry.grantsAfter ? { grants_after: [...entry.grantsAfter] } : {}),
      })),
    };
  }

  private restore(data: StoredTokens): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.tokens) || !Array.isArray(data.audit)) {
      throw new Error('the "tokens" slice must be an object with "tokens" and "audit" arrays');
    }
    this.byId.clear();
    this.byHash.clear();
    this.auditLog.length = 0;
    let highest = 0;
    for (const stored of data.tokens) {
      if (!Number.isInteger(stored.id) || !/^[0-9a-f]{64}$/.test(stored.secret_sha256)) {
        throw new Error(`token ${JSON.stringify(stored.id)} has no integer id or no SHA-256 of its secret`);
      }
      highest = Math.max(highest, stored.id);
      this.index({
        id: stored.id,
        label: stored.label,
        owner: stored.owner,
        secretSha256: stored.secret_sha256,
        createdAt: stored.created_at,
        lastUsedAt: stored.last_used_at ?? null,
        uses: { ...stored.uses },
        grants: [...stored.grants],
        requests: Array.isArray(stored.requests) ? stored.requests.filter((name) => typeof name === 'string') : [],
        staff: stored.staff === true,
        revokedAt: stored.revoked_at ?? null,
      });
    }
    for (const entry of data.audit) {
      this.auditLog.push({
        at: entry.at,
        tokenId: entry.token_id,
        action: entry.action,
        actor: restoredActor(entry.actor),
        details: [...entry.details],
        ...(entry.grants_after ? { grantsAfter: [...entry.grants_after] } : {}),
      });
    }
    // Never below a stored id, even if the counter was lost: ids are not reused.
    this.nextId = Math.max(Number.isInteger(data.next_id) ? data.next_id : 1, highest + 1);
  }
}
