/**
 * The NickServ credential checker (`plugins.nickserv`): serves
 * `POST /api/irc/check-credentials/`, which asks the network's nickname
 * service whether a password is right for a nick, through one of four
 * backends (SASL, Atheme JSON-RPC, Anope 2.1 JSON-RPC, Anope 2.0 XML-RPC), behind brute-force windows and a bounded pool of connections.
 * It provides the same check to the website's sign-in (`nickserv.credentials`).
 */
import { clientGroup, definePlugin, isOnline, type HostInfo, type IrcPort } from '../../lib/sdk.js';
import { anopeBackend } from './backends/anope-rpc.js';
import { anopeXmlRpcBackend } from './backends/anope-xmlrpc.js';
import { athemeBackend } from './backends/atheme-jsonrpc.js';
import type { CredentialBackend } from './backends/backend.js';
import { saslBackend, type SaslBackendOptions } from './backends/sasl.js';
import { KnownCallers } from './callers.js';
import { FailureWindow } from './limiter.js';
import { TaskPool } from './pool.js';
import { checkCredentialsRoute, type CheckRouteContext } from './route.js';
import { nickservConfigSchema, type NickservConfig } from './schema.js';
import { credentialsService } from './services.js';

/** The RPC URL of an RPC backend; throws naming the key and the fix. */
function rpcUrl(config: NickservConfig): URL {
  if (config.url === undefined) {
    throw new Error(
      `config.plugins.nickserv.url is required with backend "${config.backend}", e.g. "http://127.0.0.1:8080/jsonrpc"`,
    );
  }
  try {
    return new URL(config.url);
  } catch {
    throw new Error(
      `config.plugins.nickserv.url must be an http:// or https:// URL, got ${JSON.stringify(config.url)}`,
    );
  }
}

/** What the sasl backend asks of the bot's own connection when a server offers no SASL. */
type ServerChecks = Pick<SaslBackendOptions, 'servicesOnline' | 'serverSasl'>;

/** Whether NickServ is on the network (WHOIS), and whether the server's software has SASL (its profile). */
function serverChecksOf(irc: IrcPort): ServerChecks {
  return { servicesOnline: () => isOnline(irc, 'NickServ'), serverSasl: () => irc.state.profile.sasl };
}

/** The backend the config names. */
export function createBackend(config: NickservConfig, host: HostInfo, checks: ServerChecks = {}): CredentialBackend {
  const timeoutMs = config.timeout_seconds * 1000;
  switch (config.backend) {
    case 'sasl': {
      const server = config.host ?? host.ircServer.host;
      const { servicesOnline, serverSasl } = checks;
      return saslBackend({
        host: server,
        port: config.port ?? host.ircServer.port,
        tls: config.tls ?? host.ircServer.tls,
        tlsVerify: config.tls_verify ?? host.ircServer.tlsVerify,
        timeoutMs,
        ...(servicesOnline ? { servicesOnline } : {}),
        // The bot's own server profile speaks for the server the bot is connected to only.
        ...(serverSasl && server === host.ircServer.host ? { serverSasl } : {}),
      });
    }
    case 'atheme-jsonrpc':
      return athemeBackend({ url: rpcUrl(config), timeoutMs });
    case 'anope-rpc':
      return anopeBackend({ url: rpcUrl(config), timeoutMs, token: config.rpc_token });
    case 'anope-xmlrpc':
      return anopeXmlRpcBackend({ url: rpcUrl(config), timeoutMs });
  }
}

export default definePlugin<NickservConfig>({
  name: 'nickserv',
  description: "Checks a nick's password against the network's nickname service (SASL, Atheme or Anope RPC).",
  configSchema: nickservConfigSchema,
  provides: ['nickserv.credentials'],
  start({ config, host, http, irc, logger, model, onModelChange, timers, services, metrics }) {
    logger.addSecret(config.rpc_token);
    const backend = createBackend(config, host, serverChecksOf(irc));
    const timeoutMs = config.timeout_seconds * 1000;
    const windowMs = config.rate_limit.window_seconds * 1000;
    const byNick = new FailureWindow({
      maxFailures: config.rate_limit.max_failures_per_nick,
      windowMs,
      maxQueued: config.rate_limit.max_queued_per_nick,
      queueFullRetryMs: timeoutMs,
      maxWaitMs: timeoutMs,
      clearOnSuccess: true,
    });
    // Failures of a nick from callers it does not know, together: a bound on guesses, which the owner passes.
    const byAccount = new FailureWindow({
      maxFailures: config.rate_limit.max_failures_per_account,
      windowMs: config.rate_limit.account_window_seconds * 1000,
      maxQueued: config.rate_limit.max_queued_per_nick,
      queueFullRetryMs: timeoutMs,
      maxWaitMs: timeoutMs,
      // The owner's right password must not reopen the account to the guessers.
      clearOnSuccess: false,
    });
    const known = new KnownCallers(Date.now, () => model.changed({ slice: 'known_callers', kind: 'remember' }));
    // The host hands the slice to the store once this start returns, which restores the callers known before.
    model.addSlice(known);
    const byToken = new FailureWindow({
      maxFailures: config.rate_limit.max_failures_per_token,
      windowMs,
      maxQueued: config.rate_limit.max_queued_per_token,
      queueFullRetryMs: timeoutMs,
      maxWaitMs: timeoutMs,
      clearOnSuccess: false,
    });
    const byAddress = new FailureWindow({
      maxFailures: config.rate_limit.max_failures_per_address,
      windowMs,
      maxQueued: config.rate_limit.max_queued_per_address,
      queueFullRetryMs: timeoutMs,
      maxWaitMs: timeoutMs,
      // One right password must not wipe an address's failures at other accounts.
      clearOnSuccess: false,
    });
    const pool = new TaskPool({ size: config.max_connections, queueLimit: config.max_queued, maxWaitMs: timeoutMs });
    const stopping = new AbortController();
    // For a backend through IRC (SASL): aborted when a services server splits off, so that the checks
    // running or waiting then give up at once; made anew once no services server is split any more.
    let servicesLinked = new AbortController();
    let split = '';
    onModelChange((change) => {
      if (change.slice !== 'servers') return;
      const now = model.servers.servicesSplit.join(', ');
      if (now === split) return;
      split = now;
      if (now !== '') servicesLinked.abort(`the services server ${now} split from the network`);
      else if (servicesLinked.signal.aborted && !stopping.signal.aborted) servicesLinked = new AbortController();
    });

    // A network whose IRC server knows no accounts (ircd 2.11) has no account services: the config asks for
    // what cannot be, which is said once, and every check is refused with it.
    let refusal: string | undefined;
    irc.on('ready', () => {
      const { profile } = irc.state;
      if (profile.accounts || refusal !== undefined) return;
      refusal =
        `This network has no account services (its IRC server, ${profile.family ?? profile.version}, knows no ` +
        'accounts): there are no passwords to check';
      logger.error(
        `${refusal}. plugins.nickserv cannot work on this network: remove it from the config (or set its "enabled" ` +
          'to false).',
      );
    });

    const checked = metrics.counter<'result'>({
      name: 'irc_bot_credential_checks_total',
      help: "Credential checks (the API's and the sign-ins') by result: valid, invalid, refused, unavailable, error.",
      labelNames: ['result'],
    });
    const checks: CheckRouteContext = {
      backend,
      pool,
      byNick,
      byAccount,
      known,
      byToken,
      group: (address) => clientGroup(address, config.rate_limit.ipv6_prefix_length),
      fold: (nick) => irc.casefold(nick),
      signal: () => (backend.throughIrc ? servicesLinked.signal : stopping.signal),
      servicesSplit: () => model.servers.servicesSplit,
      refusal: () => refusal,
      logger,
      counted: (result) => checked.inc({ result }),
    };
    http.route(checkCredentialsRoute(checks));
    services.provide('nickserv.credentials', credentialsService(checks, byAddress));
    timers.every(Math.min(windowMs, 60_000), () => {
      byNick.sweep();
      byAccount.sweep();
      known.sweep();
      byToken.sweep();
      byAddress.sweep();
    });
    logger.info('credential checks ready', { backend: backend.name, target: backend.target });

    return () => {
      pool.close();
      stopping.abort();
      servicesLinked.abort('the check was cancelled: the service is stopping');
    };
  },
});
