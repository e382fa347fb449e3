/**
 * API tokens (`plugins.tokens`): the TOKEN commands over IRC, the guards of
 * the token and staff tiers, the staff routes, and the rate limits of the
 * whole HTTP API. Tokens live in the model's `tokens` slice, which the store
 * persists (only each secret's SHA-256, never the secret).
 */
import { TokensSlice } from '../../lib/model/tokens.js';
import { definePlugin } from '../../lib/plugin.js';
import { tokenCommands } from './commands.js';
import { grantableEndpoints } from './endpoints.js';
import { createGuard } from './guard.js';
import { operAdminCheck } from './oper-admin.js';
import { RateLimiter, rateLimitHook, rateLimited } from './rate-limit.js';
import { tokensConfigSchema, type TokensConfig } from './schema.js';
import { staffRoutes } from './staff-routes.js';

/** Full buckets are forgotten this often, so idle clients cost no memory. */
const SWEEP_MS = 60_000;

export default definePlugin<TokensConfig>({
  name: 'tokens',
  description: 'API tokens: created over IRC, approved per endpoint by administrators; tier guards and rate limits.',
  configSchema: tokensConfigSchema,
  start({ config, model, http, commands, irc, logger, timers }) {
    const tokens = new TokensSlice({
      onChange: (kind, tokenId) => model.changed({ slice: 'tokens', kind, name: `#${tokenId}` }),
      fold: (name) => model.fold(name),
    });
    // The host hands the slice to the store once this start returns, which restores stored tokens
    // before the HTTP server listens.
    model.addSlice(tokens);
    const endpoints = () => grantableEndpoints(http.routes());

    const limits = config.rate_limit;
    const limiters = { public: new RateLimiter(limits.public), token: new RateLimiter(limits.token) };
    // Failed authentications draw from the client IP's public bucket, so guessing tokens is throttled too.
    const onUnauthorized = limits.enabled
      ? (request: { ip: string }) => {
          const decision = limiters.public.take(`ip:${request.ip}`);
          if (!decision.allowed) throw rateLimited(decision, 'from this address');
        }
      : undefined;
    http.setGuard('token', createGuard(tokens, 'token', { onUnauthorized }));
    http.setGuard('staff', createGuard(tokens, 'staff', { onUnauthorized }));
    if (limits.enabled) {
      http.addHook(rateLimitHook(limiters));
      timers.every(SWEEP_MS, () => {
        limiters.public.sweep();
        limiters.token.sweep();
      });
    }
    for (const route of staffRoutes({ tokens, endpoints, logger })) http.route(route);

    for (const command of tokenCommands({
      tokens,
      maxTokensPerAccount: config.max_tokens_per_account,
      endpoints,
      fold: (name) => model.fold(name),
      logger,
    })) {
      commands.register(command);
    }
    if (config.opers_are_admins) commands.addAdminCheck(operAdminCheck(irc, logger));
  },
});
