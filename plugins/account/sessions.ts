/**
 * Sign-in sessions: who is signed in, since when, and when they were last seen. A session's id is 32 random
 * bytes, which only the browser holds (in a cookie); the slice keeps its SHA-256, as the tokens plugin
 * keeps a token's, so the store file cannot sign anyone in. A session ends when its account signs out,
 * when it has been idle for `idleMs`, when it is `lifetimeMs` old, or when its account starts more than
 * `maxPerAccount` (the oldest goes).
 *
 * The slice is durable: a sign-in is answered once its session is on disk, so it survives a restart.
 * Being seen is not worth a write per request: `touch` is announced lazily (see the plugin's timer).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ModelSlice, Persistence } from '../../lib/sdk.js';

/** A session id as the cookie carries it: 43 base64url characters (32 random bytes). */
export const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface Session {
  /** Hex SHA-256 of the id. */
  readonly idSha256: string;
  /** The services account signed in (as services name it), never a nick. */
  readonly account: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  lastSeenAt: number;
  /** The client address it was last used from (as `http.trust_proxy` resolves it); '' when not known. */
  address: string;
  /**
   * What the next page shows once (the outcome of the form sent last, after its redirect); kept in memory
   * only.
   */
  notice: { text: string; problem: boolean } | null;
  /**
   * The token forms this session sent, by the form's one-time id, each with the id of the token it made (null
   * when it made none; pending while it is being made), the latest {@link MAX_SENT_FORMS}; kept in memory
   * only. A form sent again (a reload of the page that showed the new token, a double click) makes no second
   * token.
   */
  readonly sentForms: Map<string, Promise<number | null>>;
  /**
   * The one-time ids of the token forms shown to this session and not sent yet, the latest
   * {@link MAX_SENT_FORMS}; kept in memory only: a form shown before a restart has expired, and says so.
   */
  readonly issuedForms: Set<string>;
}

/** How many sent token forms a session remembers. */
export const MAX_SENT_FORMS = 20;

/** A token form's one-time id: 22 base64url characters (16 random bytes). */
export const FORM_ID = /^[A-Za-z0-9_-]{22}$/;

/** A new one-time id for a token form shown to `session`, forgetting the oldest shown beyond {@link MAX_SENT_FORMS}. */
export function issueForm(session: Session, random: (bytes: number) => Buffer): string {
  const formId = random(16).toString('base64url');
  session.issuedForms.add(formId);
  for (const oldest of session.issuedForms) {
    if (session.issuedForms.size <= MAX_SENT_FORMS) break;
    session.issuedForms.delete(oldest);
  }
  return formId;
}

/**
 * Remember that the form `formId` makes the token `made` resolves to (it is no longer an unsent one),
 * forgetting the oldest beyond {@link MAX_SENT_FORMS}.
 */
export function rememberSentForm(session: Session, formId: string, made: Promise<number | null>): void {
  session.issuedForms.delete(formId);
  session.sentForms.delete(formId);
  session.sentForms.set(formId, made);
  for (const oldest of session.sentForms.keys()) {
    if (session.sentForms.size <= MAX_SENT_FORMS) break;
    session.sentForms.delete(oldest);
  }
}

export interface SessionsOptions {
  idleMs: number;
  lifetimeMs: number;
  maxPerAccount: number;
  /** Milliseconds since the epoch (the model's clock). */
  now: () => number;
  /** Folds account names (the network's CASEMAPPING). */
  fold: (name: string) => string;
  /** A change: `start`, `end`, `expire` (written soon), or `touch` (written lazily). */
  onChange: (kind: 'start' | 'end' | 'expire' | 'touch') => void;
  /** Random bytes for ids; tests may pin them. */
  random?: (size: number) => Buffer;
}

/** A session in the file. */
interface StoredSession {
  id_sha256: string;
  account: string;
  created_at: string;
  last_seen_at: string;
  address?: string;
}

/** The slice's file format. */
interface StoredSessions {
  sessions: StoredSession[];
}

/** A change in the store's journal: a session as it is now, or one that ended. */
type SessionsRecord = { session: StoredSession } | { end: string };

export function hashSessionId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

export class SessionsSlice implements ModelSlice {
  readonly name = 'sessions';
  readonly persistence: Persistence<StoredSessions>;
  private readonly byHash = new Map<string, Session>();
  private readonly random: (size: number) => Buffer;
  /** The sessions started, used or ended since the store last drained the journal: ids' hashes, in order. */
  private pending = new Set<string>();

  constructor(private readonly options: SessionsOptions) {
    this.random = options.random ?? randomBytes;
    this.persistence = {
      durable: true,
      snapshot: () => this.snapshot(),
      restore: (data) => this.restore(data),
      journal: { drain: () => this.drain(), replay: (record) => this.replay(record as SessionsRecord) },
    };
  }

  /** Sessions held now (expired ones until they are looked at or swept). */
  get size(): number {
    return this.byHash.size;
  }

  /** A new session of `account`, signed in from `address`; the id is in this answer only. */
  start(account: string, address: string): { id: string; session: Session } {
    const id = this.random(32).toString('base64url');
    const now = this.options.now();
    const session: Session = {
      idSha256: hashSessionId(id),
      account,
      createdAt: now,
      lastSeenAt: now,
      address,
      notice: null,
      sentForms: new Map(),
      issuedForms: new Set(),
    };
    this.byHash.set(session.idSha256, session);
    this.pending.add(session.idSha256);
    const mine = this.ownedBy(account).sort((a, b) => a.createdAt - b.createdAt);
    for (const old of mine.slice(0, Math.max(0, mine.length - this.options.maxPerAccount))) this.drop(old);
    this.options.onChange('start');
    return { id, session };
  }

  /** The live session whose id the cookie carries; an expired one is dropped and not found. */
  find(id: string | undefined): Session | undefined {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const session = this.byHash.get(hashSessionId(id));
    if (!session) return undefined;
    if (this.expired(session, this.options.now())) {
      this.drop(session);
      this.options.onChange('expire');
      return undefined;
    }
    return session;
  }

  /** The session was used now, from `address`: its idle time starts again. */
  touch(session: Session, address: string): void {
    session.lastSeenAt = this.options.now();
    session.address = address;
    this.pending.add(session.idSha256);
    this.options.onChange('touch');
  }

  /** End every session of `account` (sign out everywhere; an administrator's order; a dropped account); how many. */
  endAll(account: string): number {
    const ended = this.ownedBy(account);
    for (const session of ended) this.drop(session);
    if (ended.length > 0) this.options.onChange('end');
    return ended.length;
  }

  /** The accounts that hold a session now, each once. */
  accounts(): string[] {
    const seen = new Map<string, string>();
    for (const session of this.byHash.values()) seen.set(this.options.fold(session.account), session.account);
    return [...seen.values()];
  }

  /** Sign out: the session ends at once. False when it had ended already. */
  end(session: Session): boolean {
    if (!this.byHash.has(session.idSha256)) return false;
    this.drop(session);
    this.options.onChange('end');
    return true;
  }

  /** Seconds until the session ends for its age, whatever its use (the cookie's Max-Age). */
  secondsLeft(session: Session): number {
    return Math.max(0, Math.ceil((session.createdAt + this.options.lifetimeMs - this.options.now()) / 1000));
  }

  /** Drop every expired session; returns how many. */
  sweep(): number {
    const now = this.options.now();
    let dropped = 0;
    for (const session of [...this.byHash.values()]) {
      if (!this.expired(session, now)) continue;
      this.drop(session);
      dropped++;
    }
    if (dropped > 0) this.options.onChange('expire');
    return dropped;
  }

  ownedBy(account: string): Session[] {
    const wanted = this.options.fold(account);
    return [...this.byHash.values()].filter((session) => this.options.fold(session.account) === wanted);
  }

  private drop(session: Session): void {
    this.byHash.delete(session.idSha256);
    // Re-added, so that it comes after a start or use of the same session in this drain.
    this.pending.delete(session.idSha256);
    this.pending.add(session.idSha256);
  }

  /** The journal's records: each session changed since the last drain, once, as it is now (or ended). */
  private drain(): SessionsRecord[] {
    const records: SessionsRecord[] = [];
    for (const hash of this.pending) {
      const session = this.byHash.get(hash);
      records.push(session ? { session: storedSession(session) } : { end: hash });
    }
    this.pending = new Set();
    return records;
  }

  private replay(record: SessionsRecord): void {
    if ('session' in record) {
      const session = restoredSession(record.session);
      this.byHash.set(session.idSha256, session);
    } else if ('end' in record && typeof record.end === 'string') {
      this.byHash.delete(record.end);
    } else {
      throw new Error(`not a record of the sessions slice: ${JSON.stringify(record)}`);
    }
  }

  private expired(session: Session, now: number): boolean {
    return now - session.lastSeenAt >= this.options.idleMs || now - session.createdAt >= this.options.lifetimeMs;
  }

  private snapshot(): StoredSessions {
    return { sessions: [...this.byHash.values()].map(storedSession) };
  }

  private restore(data: StoredSessions): void {
    if (typeof data !== 'object' || data === null || !Array.isArray(data.sessions)) {
      throw new Error('the "sessions" slice must be an object with a "sessions" array');
    }
    this.byHash.clear();
    this.pending = new Set();
    for (const stored of data.sessions) {
      const session = restoredSession(stored);
      this.byHash.set(session.idSha256, session);
    }
  }
}

function storedSession(session: Session): StoredSession {
  return {
    id_sha256: session.idSha256,
    account: session.account,
    created_at: new Date(session.createdAt).toISOString(),
    last_seen_at: new Date(session.lastSeenAt).toISOString(),
    address: session.address,
  };
}

function restoredSession(stored: StoredSession): Session {
  const createdAt = Date.parse(stored.created_at);
  const lastSeenAt = Date.parse(stored.last_seen_at);
  if (!/^[0-9a-f]{64}$/.test(stored.id_sha256) || typeof stored.account !== 'string' || !stored.account) {
    throw new Error(`a stored session has no SHA-256 of its id or no account (${JSON.stringify(stored.account)})`);
  }
  if (Number.isNaN(createdAt) || Number.isNaN(lastSeenAt)) {
    throw new Error(`the session of ${stored.account} has an unreadable time`);
  }
  return {
    idSha256: stored.id_sha256,
    account: stored.account,
    createdAt,
    lastSeenAt,
    // Written by versions before it was kept: not known.
    address: typeof stored.address === 'string' ? stored.address : '',
    notice: null,
    sentForms: new Map(),
    issuedForms: new Set(),
  };
}
