/**
 * Who is checking a password, as the brute-force windows count them: a client address grouped as one holder
 * has them (an IPv6 address by its network prefix, /64 by default: one customer's line hands out a whole
 * /64, so a guesser would otherwise get a fresh window per address), or an API token; and which callers a
 * nick knows, because they checked its password right before.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The client address `address` as one holder has it: an IPv4 address itself, an IPv6 address's `/prefix` network. */
export function clientGroup(address: string, ipv6PrefixLength: number): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  if (!isIPv6(address) || ipv6PrefixLength >= 128) return address;
  const words = ipv6Words(address);
  const kept = words.map((word, index) => {
    const bitsBefore = index * 16;
    if (bitsBefore >= ipv6PrefixLength) return 0;
    const keep = Math.min(16, ipv6PrefixLength - bitsBefore);
    return word & (0xffff << (16 - keep)) & 0xffff;
  });
  return `${kept.map((word) => word.toString(16)).join(':')}/${ipv6PrefixLength}`;
}

/** The eight 16-bit words of an IPv6 address (`::` expanded, a dotted IPv4 tail read as two words). */
function ipv6Words(address: string): number[] {
  const zone = address.indexOf('%');
  let text = (zone === -1 ? address : address.slice(0, zone)).toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((word) => Number.parseInt(word, 16) || 0);
}

/** How long a caller stays known to a nick after a right password. */
export const KNOWN_FOR_MS = 30 * 24 * 60 * 60 * 1000;
/** How many callers a nick knows at most (the latest). */
export const KNOWN_PER_NICK = 20;

/**
 * The callers each nick knows: those that checked its password right within {@link KNOWN_FOR_MS}, the latest
 * {@link KNOWN_PER_NICK}. Kept in memory: after a restart, a nick knows nobody until its next right password.
 */
export class KnownCallers {
  private readonly byNick = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** `caller` checked `nickKey`'s password right, now. */
  remember(nickKey: string, caller: string): void {
    const callers = this.byNick.get(nickKey) ?? new Map<string, number>();
    callers.delete(caller);
    callers.set(caller, this.now());
    for (const oldest of callers.keys()) {
      if (callers.size <= KNOWN_PER_NICK) break;
      callers.delete(oldest);
    }
    this.byNick.set(nickKey, callers);
  }

  /** Whether `caller` checked `nickKey`'s password right within {@link KNOWN_FOR_MS}. */
  knows(nickKey: string, caller: string): boolean {
    const at = this.byNick.get(nickKey)?.get(caller);
    return at !== undefined && this.now() - at < KNOWN_FOR_MS;
  }

  /** Forget what is older than {@link KNOWN_FOR_MS}. */
  sweep(): void {
    const horizon = this.now() - KNOWN_FOR_MS;
    for (const [nickKey, callers] of this.byNick) {
      for (const [caller, at] of callers) if (at <= horizon) callers.delete(caller);
      if (callers.size === 0) this.byNick.delete(nickKey);
    }
  }
}
