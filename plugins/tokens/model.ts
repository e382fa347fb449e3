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
const DAY_MS = 24 * 60 * 60 * 1000;

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
      /** The NickServ account; from the command line (`cli`), the name of the operator who ran it. */
      account: string;
      via: 'irc' | 'web' | 'http' | 'cli';
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
  via: 'irc' | 'web' | 'http' | 'cli' | 'system';
  token_id?: number;
  reason?: string;
  address?: string;
}

/** A token in the file (snake_case, like the rest of the store file). */
export interface StoredToken {
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
}

/** An audit entry in the file. */
export interface StoredAuditEntry {
  at: string;
  token_id: number;
  action: AuditAction;
  actor: StoredActor;
  details: string[];
  grants_after?: string[];
}

/**
 * A change in the store's journal: a token as it is now, an audit entry added, the id counter, tokens
 * forgotten (archived), or the oldest audit entries forgotten (archived).
 */
type TokensRecord =
  | { token: StoredToken }
  | { audit: StoredAuditEntry }
  | { next_id: number }
  | { forget_tokens: number[] }
  | { forget_audit: number };

/** The slice's file format (snake_case, like the rest of the store file). */
interface StoredTokens {
  next_id: number;
  tokens: StoredToken[];
  audit: StoredAuditEntry[];
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

/** What {@link TokensSlice.expired} finds past the retention policy, oldest first. */
export interface Expired {
  /** Revoked tokens revoked before the policy's cut-off. */
  tokens: ApiToken[];
  /** The oldest audit entries: before the cut-off, or beyond the count kept. */
  audit: AuditEntry[];
}

/** How long revoked tokens and audit entries are kept in the slice (the rest goes to the archive). */
export interface RetentionPolicy {
  revokedDays: number;
  auditDays: number;
  auditMaxEntries: number;
}

/** A token as the store file (and the archive, which an operator may read) keeps it. */
export function storedToken(token: ApiToken): StoredToken {
  return {
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
  };
}

function restoredToken(stored: StoredToken): ApiToken {
  if (!Number.isInteger(stored.id) || !/^[0-9a-f]{64}$/.test(stored.secret_sha256)) {
    throw new Error(`token ${JSON.stringify(stored.id)} has no integer id or no SHA-256 of its secret`);
  }
  return {
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
  };
}

/** An audit entry as the store file (and the archive) keeps it. */
export function storedAudit(entry: AuditEntry): StoredAuditEntry {
  return {
    at: entry.at,
    token_id: entry.tokenId,
    action: entry.action,
    actor: storedActor(entry.actor),
    details: [...entry.details],
    ...(entry.grantsAfter ? { grants_after: [...entry.grantsAfter] } : {}),
  };
}

function restoredAudit(entry: StoredAuditEntry): AuditEntry {
  return {
    at: entry.at,
    tokenId: entry.token_id,
    action: entry.action,
    actor: restoredActor(entry.actor),
    details: [...entry.details],
    ...(entry.grants_after ? { grantsAfter: [...entry.grants_after] } : {}),
  };
}

/** What changed since the store last drained the slice's journal, in order. */
type Pending = { token: number } | { audit: AuditEntry } | { forgetTokens: number[] } | { forgetAudit: number };

export class TokensSlice implements ModelSlice {
  readonly name = 'tokens';
  readonly persistence: Persistence<StoredTokens>;
  private readonly byId = new Map<number, ApiToken>();
  private readonly byHash = new Map<string, ApiToken>();
  /** Oldest first; entries before `auditStart` are forgotten (kept until enough are, then cut off at once). */
  private auditLog: AuditEntry[] = [];
  private auditStart = 0;
  private nextId = 1;
  private pending: Pending[] = [];
  private drainedNextId = 1;
  private readonly clock: () => Date;
  private readonly random: (size: number) => Buffer;

  constructor(private readonly options: TokensSliceOptions) {
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? randomBytes;
    // Durable: a secret is shown, and a grant or revocation confirmed, only once the store has it on disk.
    // Journaled: that costs the change, however many tokens and audit entries there are.
    this.persistence = {
      durable: true,
      snapshot: () => this.snapshot(),
      restore: (data) => this.restore(data),
      journal: { drain: () => this.drain(), replay: (record) => this.replay(record as TokensRecord) },
    };
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
    const kept = this.auditLog.slice(this.auditStart);
    return tokenId === undefined ? kept : kept.filter((entry) => entry.tokenId === tokenId);
  }

  /** How many audit entries are kept. */
  get auditCount(): number {
    return this.auditLog.length - this.auditStart;
  }

  /** What is past `policy` at `now`: revoked tokens revoked too long ago, the oldest audit entries. */
  expired(policy: RetentionPolicy, now: number): Expired {
    const revokedBefore = now - policy.revokedDays * DAY_MS;
    const auditBefore = now - policy.auditDays * DAY_MS;
    const tokens = this.all().filter(
      (token) => token.revokedAt !== null && Date.parse(token.revokedAt) < revokedBefore,
    );
    const overCount = Math.max(0, this.auditCount - policy.auditMaxEntries);
    let count = 0;
    for (let index = this.auditStart; index < this.auditLog.length; index++) {
      if (count >= overCount && Date.parse(this.auditLog[index]!.at) >= auditBefore) break;
      count++;
    }
    return { tokens, audit: this.auditLog.slice(this.auditStart, this.auditStart + count) };
  }

  /**
   * Forget what {@link expired} found (once it is archived): the tokens, and that many of the oldest audit
   * entries. Their ids are never handed out again.
   */
  forget(expired: Expired): void {
    const ids = expired.tokens.map((token) => token.id).filter((id) => this.byId.has(id));
    this.forgetTokens(ids);
    if (ids.length > 0) this.pending.push({ forgetTokens: ids });
    const count = Math.min(expired.audit.length, this.auditCount);
    this.forgetAudit(count);
    if (count > 0) this.pending.push({ forgetAudit: count });
    if (ids.length > 0 || count > 0) this.options.onChange('forget', ids[0] ?? 0);
  }

  private forgetTokens(ids: readonly number[]): void {
    for (const id of ids) {
      const token = this.byId.get(id);
      if (!token) continue;
      this.byId.delete(id);
      this.byHash.delete(token.secretSha256);
    }
  }

  private forgetAudit(count: number): void {
    this.auditStart += Math.min(count, this.auditCount);
    // Cut the array once the forgotten part is as long as the rest: each entry is moved O(1) times.
    if (this.auditStart > 1024 && this.auditStart * 2 >= this.auditLog.length) {
      this.auditLog = this.auditLog.slice(this.auditStart);
      this.auditStart = 0;
    }
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
    this.pending.push({ token: token.id });
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
    this.pending.push({ token: token.id });
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
    this.pending.push({ token: token.id });
    this.record(token.id, 'request', actor, [name]);
    this.options.onChange('request', token.id);
    return true;
  }

  /** An administrator turns a pending request down; false when `name` is not pending. */
  decline(token: ApiToken, name: string, actor: AuditActor): boolean {
    if (!token.requests.includes(name)) return false;
    token.requests = token.requests.filter((pending) => pending !== name);
    this.pending.push({ token: token.id });
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
    this.pending.push({ token: token.id });
    this.record(token.id, 'deny', actor, denied, [...grants]);
    this.options.onChange('deny', token.id);
    return { denied, expanded };
  }

  setStaff(token: ApiToken, staff: boolean, actor: AuditActor): boolean {
    if (token.staff === staff) return false;
    token.staff = staff;
    this.pending.push({ token: token.id });
    this.record(token.id, 'staff', actor, [staff ? 'on' : 'off']);
    this.options.onChange('staff', token.id);
    return true;
  }

  /** Revoke for good; false when it already was. Its pending requests go with it. */
  revoke(token: ApiToken, actor: AuditActor): boolean {
    if (token.revokedAt !== null) return false;
    token.revokedAt = this.clock().toISOString();
    token.requests = [];
    this.pending.push({ token: token.id });
    this.record(token.id, 'revoke', actor, []);
    this.options.onChange('revoke', token.id);
    return true;
  }

  /** A request presented the token; `endpoint` is set when it was approved. */
  recordUse(token: ApiToken, endpoint: string | null): void {
    token.lastUsedAt = this.clock().toISOString();
    if (endpoint !== null) token.uses[endpoint] = (token.uses[endpoint] ?? 0) + 1;
    // Many uses of a token between two drains are one record: it is written as it is at the drain.
    const last = this.pending.at(-1);
    if (!(last && 'token' in last && last.token === token.id)) this.pending.push({ token: token.id });
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
    this.pending.push({ audit: entry });
  }

  /** The journal's records of the changes since the last drain: each token changed once, as it is now. */
  private drain(): TokensRecord[] {
    const records: TokensRecord[] = [];
    if (this.nextId !== this.drainedNextId) {
      records.push({ next_id: this.nextId });
      this.drainedNextId = this.nextId;
    }
    const written = new Set<number>();
    for (const change of this.pending) {
      if ('token' in change) {
        const token = this.byId.get(change.token);
        // Forgotten since: the forget record that follows says so.
        if (!token || written.has(token.id)) continue;
        written.add(token.id);
        records.push({ token: storedToken(token) });
      } else if ('audit' in change) {
        records.push({ audit: storedAudit(change.audit) });
      } else if ('forgetTokens' in change) {
        records.push({ forget_tokens: change.forgetTokens });
      } else {
        records.push({ forget_audit: change.forgetAudit });
      }
    }
    this.pending = [];
    return records;
  }

  private replay(record: TokensRecord): void {
    if ('token' in record) {
      const token = restoredToken(record.token);
      const old = this.byId.get(token.id);
      if (old) this.byHash.delete(old.secretSha256);
      this.index(token);
      this.nextId = Math.max(this.nextId, token.id + 1);
    } else if ('audit' in record) {
      this.auditLog.push(restoredAudit(record.audit));
    } else if ('next_id' in record) {
      this.nextId = Math.max(this.nextId, record.next_id);
    } else if ('forget_tokens' in record) {
      this.forgetTokens(record.forget_tokens);
    } else if ('forget_audit' in record) {
      this.forgetAudit(record.forget_audit);
    } else {
      throw new Error(`not a record of the tokens slice: ${JSON.stringify(record)}`);
    }
    this.drainedNextId = this.nextId;
  }

  private snapshot(): StoredTokens {
    return {
      next_id: this.nextId,
      tokens: this.all().map(storedToken),
      audit: this.audit().map(storedAudit),
    };
  }

  private restore(data: StoredTokens): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.tokens) || !Array.isArray(data.audit)) {
      throw new Error('the "tokens" slice must be an object with "tokens" and "audit" arrays');
    }
    this.byId.clear();
    this.byHash.clear();
    this.auditLog = [];
    this.auditStart = 0;
    let highest = 0;
    for (const stored of data.tokens) {
      const token = restoredToken(stored);
      highest = Math.max(highest, token.id);
      this.index(token);
    }
    for (const entry of data.audit) this.auditLog.push(restoredAudit(entry));
    // Never below a stored id, even if the counter was lost: ids are not reused.
    this.nextId = Math.max(Number.isInteger(data.next_id) ? data.next_id : 1, highest + 1);
    this.drainedNextId = this.nextId;
    this.pending = [];
  }
}
