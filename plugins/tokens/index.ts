/**
 * API tokens (`plugins.tokens`): the TOKEN commands over IRC, the guards of
 * the token and staff tiers, the staff routes, and the rate limits of the
 * whole HTTP API. Tokens live in the model's `tokens` slice, which the store
 * persists (only each secret's SHA-256, never the secret), and change by the
 * token rules (`rules.ts`), over which the commands, the staff routes and the
 * website are front ends. It provides `http.guard`, the guards the host runs
 * before the routes of each tier, and `tokens.manage`, the same tokens for a
 * signed-in account on the website.
 */
import { definePlugin, searchFoldOf } from '../../lib/sdk.js';
import { accountAdminCheck } from './account-admin.js';
import { tokenCommandLine } from './command-line.js';
import { tokenCommands } from './commands/index.js';
import { grantableEndpoints } from './endpoints.js';
import { operAdminCheck } from './oper-admin.js';
import { TokenRules } from './rules.js';
import { tokensConfigSchema, type TokensConfig } from './schema.js';
import { tokensManage } from './services.js';
import { staffRoutes } from './staff-routes.js';
import { installTiers } from './tiers.js';
import { addTokensSlice } from './add-tokens-slice.js';
import { RETENTION_CHECK_MS, retention } from './retention.js';

export default definePlugin<TokensConfig>({
  name: 'tokens',
  description: 'API tokens: created over IRC, approved per endpoint by administrators; tier guards and rate limits.',
  configSchema: tokensConfigSchema,
  provides: ['http.guard', 'tokens.manage'],
  start(context) {
    const { config, model, http, commands, irc, logger, store, services, timers } = context;
    const { tokens, stop } = addTokensSlice(context);
    const applyRetention = retention(context, tokens, {
      revokedDays: config.retention.revoked_days,
      auditDays: config.retention.audit_days,
      auditMaxEntries: config.retention.audit_max_entries,
    });
    // Once the stored tokens are restored (when start returns), then every hour.
    const applyNow = async (): Promise<void> => void (await applyRetention());
    timers.after(0, applyNow);
    timers.every(RETENTION_CHECK_MS, applyNow);
    installTiers(context, tokens);
    const endpoints = () => grantableEndpoints(http.routes());
    const rules = new TokenRules({
      tokens,
      endpoints,
      maxTokensPerAccount: config.max_tokens_per_account,
      maxCreatedPerDay: config.max_created_per_day,
      now: () => Date.now(),
      fold: (name) => model.fold(name),
      persisted: () => store.persisted(),
      logger,
    });
    for (const route of staffRoutes({ rules, tokens, searchFold: searchFoldOf(model) })) http.route(route);
    for (const command of tokenCommands({ rules, endpoints, logger })) commands.register(command);
    context.commandLine.register(tokenCommandLine({ rules, tokens, endpoints }));
    if (config.opers_are_admins) commands.addAdminCheck(operAdminCheck(irc, logger));
    const isAdmin = accountAdminCheck(context);
    services.provide('tokens.manage', tokensManage({ rules, tokens, endpoints, isAdmin, logger }));
    return stop;
  },
});
