/**
 * Who is checking a password, as the brute-force windows count them: a client address grouped as one holder
 * has them (an IPv6 address by its network prefix, /64 by default: one customer's line hands out a whole
 * /64, so a guesser would otherwise get a fresh window per address), or an API token (with the address of the
 * person its holder checks for, when it says); and which callers a nick knows, because they checked its
 * password right before.
 */
import { createHash } from 'node:crypto';
import type { ModelSlice, Persistence } from '../../lib/sdk.js';

/** How long a caller stays known to a nick after a right password. */
export const KNOWN_FOR_MS = 30 * 24 * 60 * 60 * 1000;
/** How many callers a nick knows at most (the latest). */
export const KNOWN_PER_NICK = 20;

/**
 * The slice's file format: by folded account (or nick), the SHA-256 of each known caller and when it last checked
 * right; and by folded nick, the folded account the services said it belongs to, and when they last said so.
 */
interface StoredKnownCallers {
  nicks: Record<string, Record<string, string>>;
  /** Absent in files of earlier versions. */
  accounts?: Record<string, [account: string, at: string]>;
}

/** A caller as the store keeps it: its SHA-256 (an address or a token number is not written down). */
function callerHash(caller: string): string {
  return createHash('sha256').update(caller, 'utf8').digest('hex');
}

/**
 * The callers each nick knows: those that checked its password right within {@link KNOWN_FOR_MS}, the latest
 * {@link KNOWN_PER_NICK}. A slice of the model (`known_callers`), written with the store's debounced writes, so
 * that a restart does not make strangers of everyone; callers are kept as the SHA-256 of their key.
 */
export class KnownCallers implements ModelSlice {
  readonly name = 'known_callers';
  readonly persistence: Persistence<StoredKnownCallers>;
  private readonly byNick = new Map<string, Map<string, number>>();
  /** The account each nick belongs to (a grouped nick: its account), as a right password showed, and when. */
  private readonly accountByNick = new Map<string, { account: string; at: number }>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly onChange: () => void = () => undefined,
  ) {
    this.persistence = { snapshot: () => this.snapshot(), restore: (data) => this.restore(data) };
  }

  /** `caller` checked `nickKey`'s password right, now. */
  remember(nickKey: string, caller: string): void {
    const callers = this.byNick.get(nickKey) ?? new Map<string, number>();
    const hash = callerHash(caller);
    callers.delete(hash);
    callers.set(hash, this.now());
    for (const oldest of callers.keys()) {
      if (callers.size <= KNOWN_PER_NICK) break;
      callers.delete(oldest);
    }
    this.byNick.set(nickKey, callers);
    this.onChange();
  }

  /** A right password for `nickKey` said it belongs to `accountKey` (both folded): a grouped nick, or the account. */
  rememberAccount(nickKey: string, accountKey: string): void {
    const known = this.accountByNick.get(nickKey);
    this.accountByNick.set(nickKey, { account: accountKey, at: this.now() });
    if (known?.account !== accountKey) this.onChange();
  }

  /** The account `nickKey` belongs to, as a right password showed within {@link KNOWN_FOR_MS}; undefined when not known. */
  accountOf(nickKey: string): string | undefined {
    const known = this.accountByNick.get(nickKey);
    return known && this.now() - known.at < KNOWN_FOR_MS ? known.account : undefined;
  }

  /** Whether `caller` checked `nickKey`'s password right within {@link KNOWN_FOR_MS}. */
  knows(nickKey: string, caller: string): boolean {
    const at = this.byNick.get(nickKey)?.get(callerHash(caller));
    return at !== undefined && this.now() - at < KNOWN_FOR_MS;
  }

  /** Forget what is older than {@link KNOWN_FOR_MS}. */
  sweep(): void {
    const horizon = this.now() - KNOWN_FOR_MS;
    let changed = false;
    for (const [nickKey, callers] of this.byNick) {
      for (const [caller, at] of callers) {
        if (at > horizon) continue;
        callers.delete(caller);
        changed = true;
      }
      if (callers.size === 0) this.byNick.delete(nickKey);
    }
    for (const [nickKey, { at }] of this.accountByNick) {
      if (at > horizon) continue;
      this.accountByNick.delete(nickKey);
      changed = true;
    }
    if (changed) this.onChange();
  }

  private snapshot(): StoredKnownCallers {
    const nicks: StoredKnownCallers['nicks'] = {};
    for (const [nickKey, callers] of this.byNick) {
      nicks[nickKey] = Object.fromEntries([...callers].map(([hash, at]) => [hash, new Date(at).toISOString()]));
    }
    const accounts: NonNullable<StoredKnownCallers['accounts']> = {};
    for (const [nickKey, { account, at }] of this.accountByNick) {
      accounts[nickKey] = [account, new Date(at).toISOString()];
    }
    return { nicks, accounts };
  }

  private restore(data: StoredKnownCallers): void {
    if (typeof data !== 'object' || data === null || typeof data.nicks !== 'object' || data.nicks === null) {
      throw new Error('the "known_callers" slice must be an object with a "nicks" object');
    }
    this.byNick.clear();
    for (const [nickKey, callers] of Object.entries(data.nicks)) {
      const known = new Map<string, number>();
      for (const [hash, at] of Object.entries(callers)) {
        const time = Date.parse(at);
        if (/^[0-9a-f]{64}$/.test(hash) && !Number.isNaN(time)) known.set(hash, time);
      }
      if (known.size > 0) this.byNick.set(nickKey, known);
    }
    this.accountByNick.clear();
    for (const [nickKey, entry] of Object.entries(data.accounts ?? {})) {
      const time = Array.isArray(entry) ? Date.parse(String(entry[1])) : Number.NaN;
      if (typeof entry[0] === 'string' && !Number.isNaN(time))
        this.accountByNick.set(nickKey, { account: entry[0], at: time });
    }
  }
}
