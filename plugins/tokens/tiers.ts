/**
 * The guards of the token, staff and public tiers (the service `http.guard`), and the rate limits of the
 * whole HTTP API around them, as the plugin installs them.
 */
import { clientGroup, type PluginContext } from '../../lib/sdk.js';
import { createGuard, createPublicGuard } from './guard.js';
import type { TokensSlice } from './model.js';
import { RateLimiter, rateLimitHeaders, rateLimitHook, rateLimited } from './rate-limit.js';
import type { TokensConfig } from './schema.js';

/** Full buckets are forgotten this often, so idle clients cost no memory. */
const SWEEP_MS = 60_000;

export function installTiers(
  {
    config,
    http,
    timers,
    services,
    metrics,
  }: Pick<PluginContext<TokensConfig>, 'config' | 'http' | 'timers' | 'services' | 'metrics'>,
  tokens: TokensSlice,
): void {
  const limited = metrics.counter<'bucket'>({
    name: 'irc_bot_rate_limited_total',
    help: 'HTTP requests answered 429 by a rate limit, by bucket (public: per client address; token: per token).',
    labelNames: ['bucket'],
  });
  const limits = config.rate_limit;
  const limiters = { public: new RateLimiter(limits.public), token: new RateLimiter(limits.token) };
  const group = (ip: string) => clientGroup(ip, limits.ipv6_prefix_length);
  // Failed authentications draw from the client IP's public bucket, so guessing tokens is throttled too.
  // A revoked token is still told so (401) when the bucket is empty: every use of one is a 401, and a
  // 429 would invite its client to try again later.
  const onUnauthorized = limits.enabled
    ? (request: { ip: string }, { revoked }: { revoked: boolean }) => {
        const decision = limiters.public.take(group(request.ip));
        if (!decision.allowed && !revoked) {
          limited.inc({ bucket: 'public' });
          throw rateLimited(decision, 'from this address');
        }
      }
    : undefined;
  // A live token's refusals draw from its own bucket: the request hook, which would count them, runs after the guard.
  const onForbidden = limits.enabled
    ? (request: { tokenId?: string }) => {
        const decision = limiters.token.take(String(request.tokenId));
        if (!decision.allowed) {
          limited.inc({ bucket: 'token' });
          throw rateLimited(decision, `for token #${request.tokenId}`);
        }
        return rateLimitHeaders(decision);
      }
    : undefined;
  services.provide('http.guard', {
    token: createGuard(tokens, 'token', { onUnauthorized, onForbidden }),
    staff: createGuard(tokens, 'staff', { onUnauthorized, onForbidden }),
    public: createPublicGuard(tokens, { onUnauthorized }),
  });
  if (!limits.enabled) return;
  http.addHook(rateLimitHook(limiters, (bucket) => limited.inc({ bucket }), group));
  timers.every(SWEEP_MS, () => {
    limiters.public.sweep();
    limiters.token.sweep();
  });
}
