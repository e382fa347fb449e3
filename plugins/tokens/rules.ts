/**
 * The rules of a token's life, each written once: who may see and change which token (its owner, or any
 * token for an administrator), what a label is, how many live tokens an account holds, which endpoint
 * names may be granted, denied or requested, that a revoked token changes no more, and that a change is
 * confirmed only once it is on disk (a new token that could not be saved is revoked by the bot, its secret
 * never shown). The TOKEN commands (IRC), the staff routes (HTTP) and `tokens.manage` (the website) are
 * front ends over them: a rule answers with a typed result, never with text or a status, and the front
 * end words it. The rules log what they change and the writes that fail; a refusal changes nothing, and
 * the front end that words it logs it if it must.
 */
import { errorMessage, type LogFields, type Logger } from '../../lib/sdk.js';
import { grantableNames, type GrantableEndpoint } from './endpoints.js';
import {
  SECRET_NOT_DELIVERED,
  TOKEN_NOT_SAVED,
  type ApiToken,
  type AuditActor,
  type AuditEntry,
  type TokensSlice,
} from './model.js';

/** The most characters a label has. */
export const MAX_LABEL_LENGTH = 64;

/** A label as a token keeps it: control characters removed, trimmed. */
export function cleanLabel(text: string): string {
  return text.replace(/[\x00-\x1f\x7f]/g, '').trim();
}

/** A person who acts on tokens: over IRC, on the website, or with a staff token over HTTP. */
export type PersonActor = Exclude<AuditActor, { via: 'system' }>;

/** Who asks a rule for something, as each front end knows them. */
export interface Caller {
  /** The account, as the audit log records it. */
  actor: PersonActor;
  /**
   * Whether the account administers tokens. A rule asks only when the answer matters (it may cost a
   * WHOIS), and may ask more than once: a front end whose answer costs something keeps the first.
   */
  isAdmin(): Promise<boolean>;
  /** What the caller asked, as the log line of a write that failed names it: `{ command: 'TOKEN GRANT' }`. */
  asked: LogFields;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Why a rule refused, by reason, with what a front end needs to word it. */
export interface Refusals {
  /** The change is an administrator's, and `account` is not one. */
  'not-admin': { account: string };
  /** No token `id` that the caller may see; `admin` says whether they may see every token. */
  'no-such-token': { id: number; account: string; admin: boolean };
  /** The token was revoked: it changes no more. */
  revoked: { token: ApiToken };
  'label-too-long': { length: number; limit: number };
  /** `account` holds `live` tokens, the most allowed. */
  'too-many-tokens': { account: string; live: number; limit: number };
  /** `account` made `limit` tokens in the last 24 hours, the most a day allows; the next may be made at `nextAt`. */
  'too-many-today': { account: string; limit: number; nextAt: string };
  /** Names no endpoint has and no wildcard is; `valid` are the names that would do. */
  'unknown-endpoints': { unknown: string[]; valid: string[] };
  /** The new token could not be saved: the bot revoked it, and its secret must not be shown. */
  'not-saved': { token: ApiToken };
  /** A name of a change's `grant` or `deny` list, at `index`, that is unknown. */
  'unknown-endpoint': { list: 'grant' | 'deny'; index: number; name: string; valid: string[] };
  /** A name at `index` of a change's `deny` list that its `grant` list has too. */
  'in-grant-and-deny': { index: number; name: string };
}

/** A refusal for one of `Reason`s. */
export type Refusal<Reason extends keyof Refusals = keyof Refusals> = {
  [Key in Reason]: { ok: false; reason: Key } & Refusals[Key];
}[Reason];

/** The refusals of a change only an administrator makes to a live token. */
type AdministeredReason = 'not-admin' | 'no-such-token' | 'revoked';

/**
 * A change made. `saved` is false when the store could not write it: it holds in memory and is written
 * with a later save, but a restart before then undoes it; the same request made again asks for a write.
 */
interface Made {
  ok: true;
  token: ApiToken;
  saved: boolean;
}

export type Found = { ok: true; token: ApiToken } | Refusal<'no-such-token'>;
export type Changeable = { ok: true; token: ApiToken } | Refusal<'no-such-token' | 'revoked'>;
/** Tokens listed: an account's (`owner`, as its tokens spell it), or every token (`owner` null). */
export interface Listed {
  ok: true;
  tokens: ApiToken[];
  owner: string | null;
}
export type Created =
  | { ok: true; token: ApiToken; secret: string }
  | Refusal<'label-too-long' | 'too-many-tokens' | 'too-many-today' | 'not-saved'>;
/** `outcome`: asked for now, or asked for already (`pending`), or approved already (`granted`). */
export type Requested =
  | (Made & { name: string; outcome: 'requested' | 'pending' | 'granted' })
  | Refusal<'no-such-token' | 'revoked' | 'unknown-endpoints'>;
export type Revoked = (Made & { revoked: boolean }) | Refusal<'no-such-token'>;
/** `names`: those asked for, in lower case; `added`: those not granted before; `grants`: all, after. */
export type Granted =
  (Made & { names: string[]; added: string[]; grants: string[] }) | Refusal<AdministeredReason | 'unknown-endpoints'>;
/** `denied`: the names withdrawn; `expanded`: the wildcards replaced by the names they covered. */
export type Denied =
  | (Made & { names: string[]; denied: string[]; expanded: string[]; grants: string[] })
  | Refusal<AdministeredReason | 'unknown-endpoints'>;
export type Declined = (Made & { name: string; declined: boolean }) | Refusal<AdministeredReason>;
export type StaffSet = (Made & { staff: boolean; changed: boolean }) | Refusal<AdministeredReason>;
export type Changed =
  | (Made & { granted: string[]; denied: string[]; staffChanged: boolean })
  | Refusal<AdministeredReason | 'unknown-endpoint' | 'in-grant-and-deny'>;

/** What a change of several parts asks for (the staff tier's PATCH). */
export interface TokenPatch {
  grant?: readonly string[];
  deny?: readonly string[];
  staff?: boolean;
}

export interface TokenRulesOptions {
  tokens: TokensSlice;
  /** The grantable endpoints now (the route table changes as plugins start). */
  endpoints: () => GrantableEndpoint[];
  maxTokensPerAccount: number;
  /**
   * Tokens one account may make in 24 hours, revoked ones included: create-then-revoke cannot grow the
   * tokens and the audit log without bound.
   */
  maxCreatedPerDay: number;
  /** Milliseconds since the epoch (the model's clock). */
  now: () => number;
  /** Folds account names (the network's CASEMAPPING). */
  fold: (name: string) => string;
  /** Resolves once the token changes made so far are on disk; rejects when the store cannot write them. */
  persisted: () => Promise<void>;
  logger: Logger;
}

/** What `found` names, unless its token was revoked: a revoked token cannot be changed. */
function unlessRevoked(found: Found): Changeable {
  if (!found.ok || found.token.revokedAt === null) return found;
  return { ok: false, reason: 'revoked', token: found.token };
}

export class TokenRules {
  readonly maxLabelLength = MAX_LABEL_LENGTH;
  readonly maxTokensPerAccount: number;

  constructor(private readonly options: TokenRulesOptions) {
    this.maxTokensPerAccount = options.maxTokensPerAccount;
  }

  /** The token `id` if `caller` may see it: their own, or any token for an administrator. */
  async find(caller: Caller, id: number): Promise<Found> {
    const owned = this.owned(caller, id);
    if (owned.ok) return owned;
    const token = this.options.tokens.get(id);
    const admin = await caller.isAdmin();
    return token && admin ? { ok: true, token } : { ...owned, admin };
  }

  /** The token `id` if it is `caller`'s own (an administrator's too: no other). */
  private owned(caller: Caller, id: number): Found {
    const { account } = caller.actor;
    const token = this.options.tokens.get(id);
    if (token && this.options.tokens.isOwner(token, account)) return { ok: true, token };
    return { ok: false, reason: 'no-such-token', id, account, admin: false };
  }

  /** The token `id` if `caller` may change it: as {@link find}, and not revoked. */
  async changeable(caller: Caller, id: number): Promise<Changeable> {
    return unlessRevoked(await this.find(caller, id));
  }

  /** The caller's own tokens, oldest first. */
  own(caller: Caller): Listed {
    return { ok: true, tokens: this.options.tokens.ownedBy(caller.actor.account), owner: caller.actor.account };
  }

  /**
   * Every token (`all`), or an account's: an administrator's to see, unless the account is the caller's
   * own (in any case). The account is named as its services spell it — as its newest token records it, or
   * as the caller's own — not as typed.
   */
  async list(caller: Caller, whose: { all: true } | { account: string }): Promise<Listed | Refusal<'not-admin'>> {
    const { fold, tokens } = this.options;
    const { account } = caller.actor;
    const own = 'account' in whose && fold(whose.account) === fold(account);
    if (!own && !(await caller.isAdmin())) return { ok: false, reason: 'not-admin', account };
    if (!('account' in whose)) return { ok: true, tokens: tokens.all(), owner: null };
    const owned = tokens.ownedBy(whose.account);
    return { ok: true, tokens: owned, owner: owned.at(-1)?.owner ?? (own ? account : whose.account) };
  }

  /** The audit log, oldest first, or one token's entries (`id`): an administrator's to read. */
  async audit(caller: Caller, id?: number): Promise<{ ok: true; entries: AuditEntry[] } | Refusal<'not-admin'>> {
    if (!(await caller.isAdmin())) return { ok: false, reason: 'not-admin', account: caller.actor.account };
    return { ok: true, entries: this.options.tokens.audit(id) };
  }

  /**
   * A new token of the caller's account (from the command line, of `owner`), labelled `text` (cleaned), reaching
   * no endpoint: within the label's length and the account's live tokens. Its secret is answered only once the
   * token is on disk.
   */
  async create(caller: Caller, text: string, owner?: string): Promise<Created> {
    const { tokens, logger, maxTokensPerAccount: limit } = this.options;
    // Only the command line makes a token for someone else: its operator names the holder.
    const account = caller.actor.via === 'cli' && owner !== undefined ? owner : caller.actor.account;
    const label = cleanLabel(text);
    const length = [...label].length;
    if (length > MAX_LABEL_LENGTH) return { ok: false, reason: 'label-too-long', length, limit: MAX_LABEL_LENGTH };
    const live = tokens.liveCount(account);
    if (live >= limit) return { ok: false, reason: 'too-many-tokens', account, live, limit };
    const today = this.madeInTheLastDay(account);
    const perDay = this.options.maxCreatedPerDay;
    if (today.length >= perDay) {
      // The next one when the oldest of the day's leaves the 24 hours.
      const nextAt = new Date(today[today.length - perDay]! + DAY_MS).toISOString();
      return { ok: false, reason: 'too-many-today', account, limit: perDay, nextAt };
    }
    const { token, secret } = tokens.create(account, label, caller.actor);
    logger.info('token created', { token: `#${token.id}`, account, ...viaOf(caller) });
    // A secret is shown only for a token that a crash cannot take away again; one that could not be saved
    // is revoked instead, by the bot, and its secret never leaves.
    if (!(await this.save(caller, token))) {
      tokens.revoke(token, TOKEN_NOT_SAVED);
      logger.warn('token revoked: it could not be saved', { token: `#${token.id}`, account });
      return { ok: false, reason: 'not-saved', token };
    }
    return { ok: true, token, secret };
  }

  /** When `account`'s tokens of the last 24 hours were made (revoked ones too), oldest first, in milliseconds. */
  private madeInTheLastDay(account: string): number[] {
    const since = this.options.now() - DAY_MS;
    return this.options.tokens
      .ownedBy(account)
      .map((token) => Date.parse(token.createdAt))
      .filter((at) => at > since)
      .sort((a, b) => a - b);
  }

  /**
   * The answer with a new token's secret never reached its owner (their nick changed hands, or it could
   * not leave in time): the secret is of no use to anyone but whoever might have got it, so the token is
   * revoked, by the bot (the audit log must not say that its owner did).
   */
  secretNotDelivered(token: ApiToken): void {
    if (!this.options.tokens.revoke(token, SECRET_NOT_DELIVERED)) return;
    this.options.logger.warn('token revoked: its secret could not be delivered', {
      token: `#${token.id}`,
      account: token.owner,
    });
  }

  /**
   * The owner asks an administrator to approve one endpoint for their live token (by name: a wildcard is
   * an administrator's choice). Only the owner asks, an administrator included: they grant instead.
   */
  async request(caller: Caller, id: number, endpoint: string): Promise<Requested> {
    const { tokens, endpoints } = this.options;
    const own = unlessRevoked(this.owned(caller, id));
    if (!own.ok) return own;
    const { token } = own;
    const name = endpoint.toLowerCase();
    const names = endpoints().map((candidate) => candidate.name);
    if (!names.includes(name)) return { ok: false, reason: 'unknown-endpoints', unknown: [name], valid: names };
    const requested = tokens.request(token, name, caller.actor);
    if (requested) this.logChange('token endpoint requested', caller, token, { endpoint: name });
    const outcome = requested ? 'requested' : token.requests.includes(name) ? 'pending' : 'granted';
    return { ok: true, token, name, outcome, saved: await this.save(caller, token) };
  }

  /** The owner, or an administrator, revokes a token for good; revoking it again changes nothing. */
  async revoke(caller: Caller, id: number): Promise<Revoked> {
    const found = await this.find(caller, id);
    if (!found.ok) return found;
    const { token } = found;
    const revoked = this.options.tokens.revoke(token, caller.actor);
    if (revoked) this.logChange('token revoked', caller, token);
    return { ok: true, token, revoked, saved: await this.save(caller, token) };
  }

  /** An administrator approves endpoint names or wildcards (`names`, any case): all of them, or none. */
  async grant(caller: Caller, id: number, names: readonly string[]): Promise<Granted> {
    const target = await this.administered(caller, id);
    if (!target.ok) return target;
    const { token } = target;
    const endpoints = this.options.endpoints();
    const unknown = unknownNames(names, endpoints);
    if (unknown.length > 0)
      return { ok: false, reason: 'unknown-endpoints', unknown, valid: grantableNames(endpoints) };
    const wanted = names.map((name) => name.toLowerCase());
    const added = this.options.tokens.grant(token, wanted, caller.actor);
    if (added.length > 0) this.logChange('token granted', caller, token, { endpoints: added.join(',') });
    const grants = [...token.grants];
    return { ok: true, token, names: wanted, added, grants, saved: await this.save(caller, token) };
  }

  /**
   * An administrator withdraws endpoint names or wildcards (`names`, any case): all of them, or none. A
   * name the token holds may be denied after its route is gone (its plugin turned off). Denying a name
   * that a wildcard covers replaces the wildcard by the other names it covers now.
   */
  async deny(caller: Caller, id: number, names: readonly string[]): Promise<Denied> {
    const target = await this.administered(caller, id);
    if (!target.ok) return target;
    const { token } = target;
    const endpoints = this.options.endpoints();
    const unknown = unknownNames(names, endpoints, token.grants);
    if (unknown.length > 0)
      return { ok: false, reason: 'unknown-endpoints', unknown, valid: grantableNames(endpoints) };
    const wanted = names.map((name) => name.toLowerCase());
    const known = endpoints.map((endpoint) => endpoint.name);
    const { denied, expanded } = this.options.tokens.deny(token, wanted, known, caller.actor);
    if (denied.length > 0) this.logChange('token denied', caller, token, { endpoints: denied.join(',') });
    const grants = [...token.grants];
    return { ok: true, token, names: wanted, denied, expanded, grants, saved: await this.save(caller, token) };
  }

  /** An administrator turns down the owner's pending request for `endpoint`. */
  async decline(caller: Caller, id: number, endpoint: string): Promise<Declined> {
    const target = await this.administered(caller, id);
    if (!target.ok) return target;
    const { token } = target;
    const name = endpoint.toLowerCase();
    const declined = this.options.tokens.decline(token, name, caller.actor);
    if (declined) this.logChange('token request declined', caller, token, { endpoint: name });
    return { ok: true, token, name, declined, saved: await this.save(caller, token) };
  }

  /** An administrator marks a token as staff (it may manage tokens over HTTP), or removes the mark. */
  async setStaff(caller: Caller, id: number, staff: boolean): Promise<StaffSet> {
    const target = await this.administered(caller, id);
    if (!target.ok) return target;
    const { token } = target;
    const changed = this.options.tokens.setStaff(token, staff, caller.actor);
    if (changed) this.logChange('token staff changed', caller, token, { staff });
    return { ok: true, token, staff, changed, saved: await this.save(caller, token) };
  }

  /**
   * An administrator's change of several parts (the staff tier's PATCH): every name of `grant` and `deny`
   * is checked first, a name in both lists is refused, and only then is anything applied, so a refused
   * change leaves the token as it was.
   */
  async change(caller: Caller, id: number, patch: TokenPatch): Promise<Changed> {
    const target = await this.administered(caller, id);
    if (!target.ok) return target;
    const { token } = target;
    const { tokens, endpoints } = this.options;
    const known = endpoints();
    const grant = (patch.grant ?? []).map((name) => name.toLowerCase());
    const deny = (patch.deny ?? []).map((name) => name.toLowerCase());
    const problem = patchProblem(token, grant, deny, known);
    if (problem) return problem;
    const { actor } = caller;
    const granted = tokens.grant(token, grant, actor);
    const names = known.map((endpoint) => endpoint.name);
    const { denied } = tokens.deny(token, deny, names, actor);
    const staffChanged = patch.staff === undefined ? false : tokens.setStaff(token, patch.staff, actor);
    if (granted.length > 0 || denied.length > 0 || staffChanged) {
      this.logChange('token changed', caller, token, {
        granted: granted.join(',') || undefined,
        denied: denied.join(',') || undefined,
        staff: staffChanged ? token.staff : undefined,
      });
    }
    return { ok: true, token, granted, denied, staffChanged, saved: await this.save(caller, token) };
  }

  /** The live token `id` for a change only an administrator makes: the caller is one, and it exists. */
  private async administered(caller: Caller, id: number): Promise<Changeable | Refusal<'not-admin'>> {
    if (!(await caller.isAdmin())) return { ok: false, reason: 'not-admin', account: caller.actor.account };
    return this.changeable(caller, id);
  }

  /**
   * Waits until the tokens are on disk: true once they are, false (and logged, with what the caller
   * asked) when the store could not write them.
   */
  private async save(caller: Caller, token: ApiToken): Promise<boolean> {
    try {
      await this.options.persisted();
      return true;
    } catch (error) {
      this.options.logger.error('a token change could not be saved', {
        ...caller.asked,
        token: `#${token.id}`,
        error: errorMessage(error),
      });
      return false;
    }
  }

  /** A change's log line: over HTTP it names the staff token used, and from the website it says `via=web`. */
  private logChange(message: string, caller: Caller, token: ApiToken, fields: LogFields = {}): void {
    const { actor } = caller;
    if (actor.via === 'http') {
      const by = `${actor.account} (staff token #${actor.tokenId})`;
      this.options.logger.info(`${message} over HTTP`, { token: `#${token.id}`, by, ...fields });
      return;
    }
    this.options.logger.info(message, { token: `#${token.id}`, by: actor.account, ...fields, ...viaOf(caller) });
  }
}

/**
 * `via=web` on the website's log lines and `via=cli` on the command line's (a command's line needs none; the staff
 * tier's says "over HTTP").
 */
function viaOf(caller: Caller): LogFields {
  const { via } = caller.actor;
  return via === 'web' || via === 'cli' ? { via } : {};
}

/**
 * Of `names` (any case), in lower case, those that no endpoint has and no wildcard is, nor — to deny it —
 * one of the token's grants in `held`.
 */
function unknownNames(
  names: readonly string[],
  endpoints: readonly GrantableEndpoint[],
  held: readonly string[] = [],
): string[] {
  const grantable = new Set(grantableNames(endpoints));
  return names.map((name) => name.toLowerCase()).filter((name) => !grantable.has(name) && !held.includes(name));
}

/** The first name of a change that is refused: an unknown one of `grant`, then of `deny`, or one in both. */
function patchProblem(
  token: ApiToken,
  grant: readonly string[],
  deny: readonly string[],
  endpoints: readonly GrantableEndpoint[],
): Refusal<'unknown-endpoint' | 'in-grant-and-deny'> | undefined {
  const valid = grantableNames(endpoints);
  const unknownGrant = new Set(unknownNames(grant, endpoints));
  for (const [index, name] of grant.entries()) {
    if (unknownGrant.has(name)) return { ok: false, reason: 'unknown-endpoint', list: 'grant', index, name, valid };
  }
  const unknownDeny = new Set(unknownNames(deny, endpoints, token.grants));
  for (const [index, name] of deny.entries()) {
    if (unknownDeny.has(name)) return { ok: false, reason: 'unknown-endpoint', list: 'deny', index, name, valid };
    if (grant.includes(name)) return { ok: false, reason: 'in-grant-and-deny', index, name };
  }
  return undefined;
}
