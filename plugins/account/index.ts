/**
 * Accounts on the website (`plugins.account`): sign in at /network/account/ with a NickServ account (its
 * password checked by the nickserv plugin, behind its brute-force limits), manage your API tokens there —
 * the very tokens of the TOKEN commands, through the tokens plugin — and, as an administrator, approve
 * endpoints, revoke tokens and read the audit log at /network/admin/. Pages take the website's look. The
 * plugin owns the sessions (the `sessions` slice, durable, each id kept as its SHA-256).
 */
import { definePlugin } from '../../lib/sdk.js';
import { accountRoutes } from './routes.js';
import { accountConfigSchema, type AccountConfig } from './schema.js';
import { endDroppedAccounts } from './session-endings.js';
import { SessionsSlice } from './sessions.js';

/** Expired sessions are dropped, and sessions' last uses saved, this often (and uses at stop). */
export const SWEEP_MS = 60_000;

/** NickServ is asked whether the accounts holding sessions still exist this often (a dropped one's end). */
export const ACCOUNT_CHECK_MS = 10 * 60_000;

export default definePlugin<AccountConfig>({
  name: 'account',
  description:
    'Sign-in with a NickServ account on the website: your API tokens, and an admin panel for administrators.',
  configSchema: accountConfigSchema,
  uses: ['web.layout', 'tokens.manage', 'nickserv.credentials'],
  start({ config, model, http, services, store, timers, logger, host, irc }) {
    // Being seen changes a session at every request; it reaches the store with the sweep, not per request.
    let seenSinceSaved = false;
    const sessions = new SessionsSlice({
      idleMs: config.session.idle_seconds * 1000,
      lifetimeMs: config.session.lifetime_seconds * 1000,
      maxPerAccount: config.session.max_per_account,
      now: () => model.now().getTime(),
      fold: (name) => model.fold(name),
      onChange: (kind) => {
        if (kind === 'touch') seenSinceSaved = true;
        else model.changed({ slice: 'sessions', kind });
      },
    });
    // The host hands the slice to the store once this start returns, which restores the stored sessions.
    model.addSlice(sessions);
    const announceSeen = (): void => {
      if (!seenSinceSaved) return;
      seenSinceSaved = false;
      model.changed({ slice: 'sessions', kind: 'touch' });
    };
    timers.every(SWEEP_MS, () => {
      sessions.sweep();
      announceSeen();
    });
    // One check at a time: a slow NickServ never piles them up; none goes on after the plugin stopped.
    let checking = false;
    let stopped = false;
    timers.every(ACCOUNT_CHECK_MS, () => {
      if (checking || !irc.state.connected || sessions.size === 0) return;
      checking = true;
      void endDroppedAccounts(irc, sessions, logger, () => !stopped).finally(() => (checking = false));
    });
    const layout = services.get('web.layout');
    // Every page of the site links to the sign-in and the account's tokens.
    layout.addMenuEntry({ path: '/network/account/', label: 'Account' });
    const routes = accountRoutes({
      config,
      layout,
      tokens: services.get('tokens.manage'),
      credentials: services.get('nickserv.credentials'),
      sessions,
      persisted: () => store.persisted(),
      logger,
      botNick: host.nick,
    });
    for (const route of routes) http.route(route);
    return () => {
      stopped = true;
      announceSeen();
    };
  },
});
