/**
 * API tokens (`plugins.tokens`): the TOKEN commands over IRC, the guards of
 * the token and staff tiers, the staff routes, and the rate limits of the
 * whole HTTP API. Tokens live in the model's `tokens` slice, which the store
 * persists (only each secret's SHA-256, never the secret). It provides
 * `http.guard`, the guards the host runs before the routes of each tier, and
 * `tokens.manage`, the same tokens for a signed-in account on the website.
 */
import { definePlugin, searchFoldOf } from '../../lib/sdk.js';
import { TokensSlice } from './model.js';
import { MAX_LABEL_LENGTH, tokenCommands } from './commands.js';
import { grantableEndpoints } from './endpoints.js';
import { createGuard, createPublicGuard } from './guard.js';
import { operAdminCheck } from './oper-admin.js';
import { RateLimiter, rateLimitHeaders, rateLimitHook, rateLimited } from './rate-limit.js';
import { tokensConfigSchema, type TokensConfig } from './schema.js';
import { tokensManage } from './services.js';
import { staffRoutes } from './staff-routes.js';

/** Full buckets are forgotten this often, so idle clients cost no memory. */
const SWEEP_MS = 60_000;
/**
 * Uses of a token (its last-used time and counts per endpoint) reach the store at most this
 * often, and at stop: announcing each request would rewrite the whole store file every
 * second for as long as API traffic lasts.
 */
export const USE_SAVE_MS = 60_000;

export default definePlugin<TokensConfig>({
  name: 'tokens',
  description: 'API tokens: created over IRC, approved per endpoint by administrators; tier guards and rate limits.',
  configSchema: tokensConfigSchema,
  provides: ['http.guard', 'tokens.manage'],
  start({ config, model, http, commands, irc, logger, timers, store, host, services, metrics }) {
    let usedSinceSaved = false;
    // The HTTP server still answers for a moment after the plugins stop (the host closes it last):
    // from then on each use is announced at once, so the store's final flush has it.
    let stopped = false;
    const announceUses = (): void => {
      if (!usedSinceSaved) return;
      usedSinceSaved = false;
      model.changed({ slice: 'tokens', kind: 'use' });
    };
    const tokens = new TokensSlice({
      onChange: (kind, tokenId) => {
        if (kind === 'use' && !stopped) usedSinceSaved = true;
        else model.changed({ slice: 'tokens', kind, name: `#${tokenId}` });
      },
      fold: (name) => model.fold(name),
    });
    timers.every(USE_SAVE_MS, announceUses);
    // The host hands the slice to the store once this start returns, which restores stored tokens
    // before the HTTP server listens.
    model.addSlice(tokens);
    const endpoints = () => grantableEndpoints(http.routes());

    const limited = metrics.counter<'bucket'>({
      name: 'irc_bot_rate_limited_total',
      help: 'HTTP requests answered 429 by a rate limit, by bucket (public: per client address; token: per token).',
      labelNames: ['bucket'],
    });
    const limits = config.rate_limit;
    const limiters = { public: new RateLimiter(limits.public), token: new RateLimiter(limits.token) };
    // Failed authentications draw from the client IP's public bucket, so guessing tokens is throttled too.
    // A revoked token is still told so (401) when the bucket is empty: every use of one is a 401, and a
    // 429 would invite its client to try again later.
    const onUnauthorized = limits.enabled
      ? (request: { ip: string }, { revoked }: { revoked: boolean }) => {
          const decision = limiters.public.take(`ip:${request.ip}`);
          if (!decision.allowed && !revoked) {
            limited.inc({ bucket: 'public' });
            throw rateLimited(decision, 'from this address');
          }
        }
      : undefined;
    // A live token's refusals draw from its own bucket: the request hook, which would count them, runs after the guard.
    const onForbidden = limits.enabled
      ? (request: { tokenId?: string }) => {
          const decision = limiters.token.take(`token:${request.tokenId}`);
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
    if (limits.enabled) {
      http.addHook(rateLimitHook(limiters, (bucket) => limited.inc({ bucket })));
      timers.every(SWEEP_MS, () => {
        limiters.public.sweep();
        limiters.token.sweep();
      });
    }
    const persisted = () => store.persisted();
    for (const route of staffRoutes({ tokens, endpoints, persisted, logger, searchFold: searchFoldOf(model) })) {
      http.route(route);
    }

    for (const command of tokenCommands({
      tokens,
      maxTokensPerAccount: config.max_tokens_per_account,
      endpoints,
      fold: (name) => model.fold(name),
      persisted,
      logger,
    })) {
      commands.register(command);
    }
    if (config.opers_are_admins) commands.addAdminCheck(operAdminCheck(irc, logger));

    // The commands' rule for an account rather than a client: listed in `admins`, or one of its clients
    // online passes an admin check (opers_are_admins: a fresh WHOIS of that nick shows the operator and
    // the account). An account with no client online is judged by the list alone.
    const isAdmin = async (account: string): Promise<boolean> => {
      const folded = model.fold(account);
      if (host.admins.some((admin) => model.fold(admin) === folded)) return true;
      const clients = [...model.users.all()].filter(
        (user) => user.account !== null && model.fold(user.account) === folded,
      );
      for (const { nick } of clients) if (await commands.isAdmin({ nick, account })) return true;
      return false;
    };
    services.provide(
      'tokens.manage',
      tokensManage({
        tokens,
        endpoints,
        maxTokensPerAccount: config.max_tokens_per_account,
        maxLabelLength: MAX_LABEL_LENGTH,
        isAdmin,
        persisted,
        logger,
      }),
    );
    return () => {
      stopped = true;
      announceUses();
    };
  },
});
