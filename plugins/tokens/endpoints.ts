/**
 * What an administrator may grant: the names of the token-tier routes in the
 * route table at this moment, plus the wildcards `irc.*` and `netstats.*`
 * (and `<prefix>.*` for any other prefix in use). A wildcard is stored as given
 * and matched by prefix at request time, so it also covers endpoints that
 * appear later.
 */
import type { RouteDefinition } from '../../lib/sdk.js';

export interface GrantableEndpoint {
  name: string;
  method: string;
  path: string;
  summary: string;
}

/** The contract names these groups even before any of their endpoints exist. */
const CONTRACT_PREFIXES = ['irc', 'netstats'];

/** Token-tier routes and grantable public ones, one per name, sorted by name. */
export function grantableEndpoints(routes: readonly { route: RouteDefinition }[]): GrantableEndpoint[] {
  const byName = new Map<string, GrantableEndpoint>();
  for (const { route } of routes) {
    if (!(route.tier === 'token' || (route.tier === 'public' && route.grantable)) || byName.has(route.name)) continue;
    byName.set(route.name, { name: route.name, method: route.method, path: route.path, summary: route.summary });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function wildcards(endpoints: readonly GrantableEndpoint[]): string[] {
  const prefixes = new Set(CONTRACT_PREFIXES);
  for (const endpoint of endpoints) {
    const dot = endpoint.name.indexOf('.');
    if (dot > 0) prefixes.add(endpoint.name.slice(0, dot));
  }
  return [...prefixes].map((prefix) => `${prefix}.*`);
}

/** Every name an administrator may grant: the endpoints' (`irc.oper`, …), then the wildcards (`irc.*`, …). */
export function grantableNames(endpoints: readonly GrantableEndpoint[]): string[] {
  return [...endpoints.map((endpoint) => endpoint.name), ...wildcards(endpoints)];
}

/** `12` or `#12` → 12; anything else → null. */
export function parseTokenId(text: string | undefined): number | null {
  const match = /^#?(\d{1,9})$/.exec(text ?? '');
  return match ? Number(match[1]) : null;
}
