/**
 * Who the client is behind reverse proxies (`http.trust_proxy`). A request's address is its socket's
 * peer, unless that peer is a proxy the operator trusts: then the proxies' own notes are read, from the
 * nearest hop outwards, until an address that is not a trusted proxy: that is the client. The notes are read
 * from the one header the operator names (`http.proxy_header`): `X-Forwarded-For` (with `X-Forwarded-Proto`
 * for the scheme) by default, or RFC 7239 `Forwarded` (its `for=` and `proto=`). The other is ignored: a proxy
 * that appends to one passes the other on as the client wrote it. A peer that is not trusted is believed in
 * nothing, so a client cannot pick its own address by sending the headers itself.
 *
 * Which addresses are trusted is compiled by proxy-addr (addresses, CIDR ranges, and the names
 * `loopback`, `linklocal` and `uniquelocal`), as Express does.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIPv6 } from 'node:net';
import parseForwarded from 'forwarded-parse';
import proxyaddr from 'proxy-addr';

/**
 * The header the trusted proxies write the client into (`http.proxy_header`): nginx, HAProxy's `option
 * forwardfor` and Caddy set `X-Forwarded-For`; HAProxy's `option forwarded` sets `Forwarded`.
 */
export type ProxyHeader = 'x-forwarded-for' | 'forwarded';

/** Every {@link ProxyHeader}, the default first. */
export const PROXY_HEADERS: readonly ProxyHeader[] = ['x-forwarded-for', 'forwarded'];

/** Whether the address `hop` hops away from the bot is a trusted proxy (0: the socket's peer). */
export type TrustProxy = (address: string, hop: number) => boolean;

/** What the bot knows of the client: its address and whether it came over HTTPS. */
export interface ClientFacts {
  ip: string;
  secure: boolean;
}

/**
 * The trust test for the configured proxies, or undefined when none is trusted (the default).
 * Throws a TypeError naming a setting that is not an address, a range or a known name.
 */
export function compileTrustProxy(setting: string | readonly string[] | undefined): TrustProxy | undefined {
  const entries = (typeof setting === 'string' ? [setting] : (setting ?? [])).flatMap((entry) =>
    entry.split(',').map((part) => part.trim()),
  );
  if (entries.length === 0 || entries.every((entry) => entry === '')) return undefined;
  return proxyaddr.compile(entries.filter((entry) => entry !== ''));
}

/**
 * A test for addresses against a list of addresses, CIDR ranges and the names `loopback`, `linklocal`
 * and `uniquelocal` (e.g. who may read the metrics); an empty list accepts nobody. Throws a TypeError
 * naming an entry that is none of these.
 */
export function compileAddressList(list: readonly string[]): (address: string) => boolean {
  if (list.length === 0) return () => false;
  const test = proxyaddr.compile([...list]);
  return (address) => address !== '' && test(address, 0);
}

/** One hop's note: the address it took the request from, and the scheme it was received over. */
interface Hop {
  address: string;
  proto: string | undefined;
}

/** `for=` values name a node as `192.0.2.1`, `192.0.2.1:4711`, `"[2001:db8::1]:4711"` or an obfuscated `_id`. */
function nodeAddress(node: string): string {
  if (node.startsWith('[')) {
    const close = node.indexOf(']');
    return close === -1 ? node : node.slice(1, close);
  }
  const colon = node.indexOf(':');
  // One colon is an IPv4 address with a port; more are a bare IPv6 address.
  return colon !== -1 && node.indexOf(':', colon + 1) === -1 ? node.slice(0, colon) : node;
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * The proxies' notes in `header`, the client's side first, or undefined when there are none (or they cannot be
 * read).
 */
function hopsOf(headers: IncomingHttpHeaders, header: ProxyHeader): Hop[] | undefined {
  return header === 'forwarded' ? forwardedHops(headers) : forwardedForHops(headers);
}

/** RFC 7239 `Forwarded`: `for=` and `proto=` of each element. */
function forwardedHops(headers: IncomingHttpHeaders): Hop[] | undefined {
  const forwarded = headerText(headers.forwarded);
  if (forwarded === undefined || forwarded.trim() === '') return undefined;
  try {
    return parseForwarded(forwarded).map((element) => ({
      address: nodeAddress(element.for ?? 'unknown'),
      proto: element.proto?.toLowerCase(),
    }));
  } catch {
    // A proxy that writes an unreadable Forwarded is not followed at all: the peer is the client.
    return undefined;
  }
}

/** `X-Forwarded-For`, with `X-Forwarded-Proto` for the scheme. */
function forwardedForHops(headers: IncomingHttpHeaders): Hop[] | undefined {
  const forwardedFor = headerText(headers['x-forwarded-for']);
  if (forwardedFor === undefined || forwardedFor.trim() === '') return undefined;
  const addresses = forwardedFor.split(',').map((part) => part.trim());
  const protos = (headerText(headers['x-forwarded-proto']) ?? '').split(',').map((part) => part.trim().toLowerCase());
  return addresses.map((address, index) => ({
    address,
    // One scheme for several hops is the scheme the client used (the first proxy's), as Express reads it.
    proto: protos.length === addresses.length ? protos[index] : protos[0] || undefined,
  }));
}

/**
 * The client of a request that arrived from `peer` (over TLS when `peerSecure`) with these headers. Behind
 * a trusted proxy, the address and scheme are the ones the proxies wrote into `header`; otherwise the
 * connection's own.
 */
export function clientFacts(
  peer: string,
  headers: IncomingHttpHeaders,
  trust: TrustProxy | undefined,
  peerSecure = false,
  header: ProxyHeader = 'x-forwarded-for',
): ClientFacts {
  if (!trust || !trust(peer, 0)) return { ip: peer, secure: peerSecure };
  const hops = hopsOf(headers, header);
  if (!hops || hops.length === 0) return { ip: peer, secure: peerSecure };
  // From the nearest hop outwards: the first address that is not a trusted proxy is the client.
  for (let index = hops.length - 1, distance = 1; index >= 0; index--, distance++) {
    const hop = hops[index]!;
    if (index === 0 || !trust(hop.address, distance)) return { ip: hop.address, secure: hop.proto === 'https' };
  }
  return { ip: peer, secure: peerSecure };
}

/**
 * The client address `address` as one holder has it, for the limits kept per address: an IPv4 address itself
 * (written as IPv4-mapped IPv6 too), an IPv6 address its `/prefix` network (a customer's line usually hands out a
 * whole /64, so a client would otherwise get a fresh allowance per address).
 */
export function clientGroup(address: string, ipv6PrefixLength: number): string {
  // IPv4 (every request of most networks) goes straight through.
  if (!address.includes(':')) return address;
  if (!isIPv6(address)) return address;
  const words = ipv6Words(address);
  // IPv4-mapped in any spelling (`::ffff:c000:207`, `0:0:0:0:0:ffff:192.0.2.7`): its IPv4 address.
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) {
    return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
  }
  if (ipv6PrefixLength >= 128) return address;
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

/** The config schema of a plugin's `ipv6_prefix_length` (the prefix {@link clientGroup} groups by): 32–128, 64 by default. */
export function ipv6PrefixLengthSchema<Description extends string>(description: Description) {
  return { type: 'integer', minimum: 32, maximum: 128, default: 64, description } as const;
}
