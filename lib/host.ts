/**
 * The bot host: loads the configured plugins from one registry, checks their
 * dependencies and config at boot, starts them in dependency order, wires the
 * IRC transport, the model, the store and the HTTP server, and stops it all in
 * reverse. A plugin's failing handler is logged with its name and never takes
 * the host down.
 */
import semver from 'semver';
import { CommandRegistry } from './commands.js';
import { checkSchema, type HostConfig } from './config.js';
import { unavailable } from './http/errors.js';
import { HttpServer } from './http/server.js';
import { isolated } from './isolated.js';
import type { RouteDefinition, TierGuards } from './http/types.js';
import type { IrcEventName, IrcEvents, IrcPort, IrcTransport, Unsubscribe } from './irc/port.js';
import { errorMessage, type Logger } from './logger.js';
import { NetworkModel } from './model/network.js';
import type { CommandLineCommand, PluginContext, PluginDefinition, PluginStop } from './plugin.js';
import { StoreLockedError } from './store/lock.js';
import { Store } from './store/store.js';
import { installBotPolicy } from './irc/bot-policy.js';
import { packageName, packageVersion, versionString } from './version.js';
import { healthRoutes } from './health.js';
import { HostMetrics } from './metrics.js';

export class HostError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'HostError';
  }
}

/**
 * What plugins' `timers.every` and `timers.after` run on. Each returns a function that cancels the timer; the
 * host cancels every timer of a plugin when it stops.
 */
export interface HostTimers {
  every(ms: number, task: () => void): () => void;
  after(ms: number, task: () => void): () => void;
}

/** The runtime's timers: `setInterval` and `setTimeout`. */
export const RUNTIME_TIMERS: HostTimers = {
  every(ms, task) {
    const timer = setInterval(task, ms);
    return () => clearInterval(timer);
  },
  after(ms, task) {
    const timer = setTimeout(task, ms);
    return () => clearTimeout(timer);
  },
};

export interface HostOptions {
  config: HostConfig;
  logger: Logger;
  /** The plugin registry: every plugin the host can load. */
  plugins: readonly PluginDefinition<never>[];
  /** The IRC connection (an adapter); the host connects it unless it already is. */
  transport: IrcTransport;
  /** Clock for the model; tests pin it. */
  clock?: () => Date;
  /**
   * The timers plugins run on; default the runtime's `setInterval` and `setTimeout` (`RUNTIME_TIMERS`). The
   * plugin test harness gives a manual clock, so that a test says when time passes.
   */
  timers?: HostTimers;
  /** What the bot answers to CTCP VERSION; default the package's name and version. */
  version?: string;
  /** Keep the store in memory, never on disk (the plugin test harness); default false. */
  storeInMemory?: boolean;
  /**
   * Whether the HTTP server listens; default true. False: requests reach the routes only through
   * `http.inject()` (the plugin test harness), and {@link Host.url} stays null.
   */
  listen?: boolean;
  /**
   * Whether the host connects to IRC once its plugins have started; default true. False: the command line's
   * host (`irc-network-data token …`), which only runs a plugin's command over the store.
   */
  connect?: boolean;
}

interface RunningPlugin {
  definition: PluginDefinition<never>;
  stop: PluginStop | undefined;
  cleanups: (() => void)[];
}

const ENABLED_SCHEMA = { type: 'boolean', default: true, description: 'Set to false to keep the plugin off.' };

/** Whether this host's version is one `plugin` names in its `host` range; else what is wrong. */
function hostVersionProblems(plugin: PluginDefinition<never>): string[] {
  if (plugin.host === undefined) return [];
  if (semver.validRange(plugin.host) === null) {
    return [
      `Plugin "${plugin.name}" names the host versions it works with as "${plugin.host}", which is not a version range`,
    ];
  }
  if (semver.satisfies(packageVersion, plugin.host, { includePrerelease: true })) return [];
  return [
    `Plugin "${plugin.name}" works with ${packageName} ${plugin.host}; this is ${packageName} ${packageVersion}: ` +
      'use a version of the plugin made for this one, or a host in its range',
  ];
}

/** Plugins to run, in start order; throws HostError naming every problem. */
export function resolvePlugins(
  registry: readonly PluginDefinition<never>[],
  pluginConfig: Record<string, Record<string, unknown>>,
): { definition: PluginDefinition<never>; config: Record<string, unknown> }[] {
  const problems: string[] = [];
  const byName = new Map<string, PluginDefinition<never>>();
  for (const plugin of registry) {
    if (byName.has(plugin.name)) problems.push(`Two plugins are named "${plugin.name}"`);
    else byName.set(plugin.name, plugin);
  }
  const enabled = new Map<string, Record<string, unknown>>();
  for (const [name, slice] of Object.entries(pluginConfig)) {
    const definition = byName.get(name);
    if (!definition) {
      problems.push(`config.plugins: no plugin named "${name}" (known: ${[...byName.keys()].join(', ')})`);
      continue;
    }
    const schema = withEnabled(definition.configSchema);
    const config = slice ?? {};
    const found = checkSchema(schema, config, `config.plugins.${name}`);
    problems.push(...found);
    if (found.length === 0 && config.enabled !== false) enabled.set(name, config);
  }
  for (const name of enabled.keys()) problems.push(...hostVersionProblems(byName.get(name)!));
  for (const name of enabled.keys()) {
    for (const dependency of byName.get(name)!.dependencies ?? []) {
      if (!byName.has(dependency))
        problems.push(`The dependency "${dependency}" of plugin "${name}" is not registered`);
      else if (!enabled.has(dependency)) {
        problems.push(
          `The dependency "${dependency}" of plugin "${name}" is not enabled: add "${dependency}": {} under config.plugins`,
        );
      }
    }
  }
  const providers = enabledProviders(registry, enabled);
  problems.push(...serviceProblems(registry, enabled, providers, pluginConfig));
  if (problems.length > 0) throw new HostError(problems);

  // A plugin starts after the plugins it depends on and after the providers of the services it uses.
  const before = (name: string): string[] => {
    const definition = byName.get(name)!;
    const used = (definition.uses ?? []).map((service) => providers.get(service)![0]!);
    // A plugin that uses what it provides itself waits for nobody.
    return [...(definition.dependencies ?? []), ...used.filter((provider) => provider !== name)];
  };
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (order.includes(name)) return;
    if (visiting.has(name))
      throw new HostError([`plugins depend on each other in a cycle: ${[...path, name].join(' → ')}`]);
    visiting.add(name);
    for (const dependency of before(name)) visit(dependency, [...path, name]);
    visiting.delete(name);
    order.push(name);
  };
  // Registry order breaks ties, so the start order is stable.
  for (const plugin of registry) if (enabled.has(plugin.name)) visit(plugin.name, []);
  return order.map((name) => ({ definition: byName.get(name)!, config: enabled.get(name)! }));
}

/** Each service's enabled providers, in registry order; a service only disabled plugins provide is absent. */
function enabledProviders(
  registry: readonly PluginDefinition<never>[],
  enabled: ReadonlyMap<string, unknown>,
): Map<string, string[]> {
  const providers = new Map<string, string[]>();
  for (const plugin of registry) {
    if (!enabled.has(plugin.name)) continue;
    for (const service of plugin.provides ?? [])
      providers.set(service, [...(providers.get(service) ?? []), plugin.name]);
  }
  return providers;
}

/**
 * What is wrong with the services the enabled plugins declare: a service used and provided by no enabled
 * plugin (naming the plugin that would provide it, if one is registered), or provided by two.
 */
function serviceProblems(
  registry: readonly PluginDefinition<never>[],
  enabled: ReadonlyMap<string, unknown>,
  providers: ReadonlyMap<string, readonly string[]>,
  pluginConfig: Record<string, Record<string, unknown>>,
): string[] {
  const problems: string[] = [];
  for (const [service, names] of providers) {
    if (names.length > 1)
      problems.push(`The plugins "${names[0]}" and "${names[1]}" both provide the service "${service}"`);
  }
  for (const plugin of registry) {
    if (!enabled.has(plugin.name)) continue;
    for (const service of plugin.uses ?? []) {
      if (providers.has(service)) continue;
      const provider = registry.find((other) => other.provides?.includes(service))?.name;
      if (provider === undefined) {
        problems.push(`The plugin "${plugin.name}" uses the service "${service}", which no registered plugin provides`);
        continue;
      }
      // Its settings may be wrong (reported on their own) or turned off; else it is simply not listed.
      const slice = pluginConfig[provider];
      const why =
        slice === undefined
          ? `is not enabled: add "${provider}": {} under config.plugins`
          : slice?.enabled === false
            ? `is turned off ("enabled": false under config.plugins.${provider})`
            : 'cannot start with its settings (see above)';
      problems.push(
        `The plugin "${plugin.name}" uses the service "${service}", which the plugin "${provider}" provides, but "${provider}" ${why}`,
      );
    }
  }
  return problems;
}

function withEnabled(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = { ...((schema.properties as Record<string, unknown>) ?? {}), enabled: ENABLED_SCHEMA };
  return { type: 'object', additionalProperties: false, ...schema, properties };
}

export class Host {
  readonly model: NetworkModel;
  readonly http: HttpServer;
  readonly commands: CommandRegistry;
  readonly store: Store;
  readonly irc: IrcTransport;
  private readonly logger: Logger;
  private readonly running: RunningPlugin[] = [];
  private readonly cleanups: (() => void)[] = [];
  private stopping: Promise<void> | null = null;
  private readonly persisted = new Set<string>();
  /** What running plugins provide, by key name. */
  private readonly services = new Map<string, { plugin: string; value: unknown }>();
  private readonly commandLine = new Map<string, { plugin: string; command: CommandLineCommand }>();
  private httpAddress: { url: string; port: number } | null = null;
  /** The host's metrics: the core's own, and what plugins register through their context. */
  readonly metrics = new HostMetrics();
  /** The IRC connection was ready once: the next ready is a reconnect. */
  private readyBefore = false;

  constructor(private readonly options: HostOptions) {
    const { config, logger } = options;
    this.logger = logger;
    logger.addSecret(config.irc.sasl?.password);
    logger.addSecret(config.irc.oper?.password);
    this.model = new NetworkModel(options.clock);
    this.irc = options.transport;
    this.http = new HttpServer({
      host: config.http.host,
      port: config.http.port,
      bodyLimit: config.http.body_limit,
      headersTimeout: config.http.headers_timeout_seconds * 1000,
      requestTimeout: config.http.request_timeout_seconds * 1000,
      keepAliveTimeout: config.http.keep_alive_timeout_seconds * 1000,
      maxConnections: config.http.max_connections,
      front: config.http.front.enabled,
      frontReuseMs: config.http.front.reuse_ms,
      trustProxy: config.http.trust_proxy,
      proxyHeader: config.http.proxy_header,
      accessLog: config.http.access_log,
      onRequest: (facts) => this.metrics.request(facts),
      logger: logger.child('http'),
    });
    this.store = new Store({
      path: config.store.path,
      ...(config.store.archive_dir === undefined ? {} : { archiveDir: config.store.archive_dir }),
      logger: logger.child('store'),
      onWrite: (report) =>
        this.metrics.storeWritten(report.file, report.seconds, report.ok, report.bytes, report.blockedSeconds),
      memory: options.storeInMemory === true,
    });
    // The tiers' guards are a service: whichever plugin provides them now (none: token routes answer 503).
    this.http.setGuards(() => this.services.get('http.guard')?.value as TierGuards | undefined);
    this.commands = new CommandRegistry(this.irc, config.admins, logger.child('commands'), {
      burst: config.irc.commands.burst,
      intervalMs: config.irc.commands.interval_ms,
    });
    for (const route of healthRoutes({
      model: this.model,
      storeError: () => this.store.writeError,
    })) {
      this.http.route('host', route);
    }
  }

  /** The HTTP server's address once started (null when it does not listen). */
  get url(): string | null {
    return this.httpAddress?.url ?? null;
  }

  get httpPort(): number | null {
    return this.httpAddress?.port ?? null;
  }

  /** Check the plugins, load the store, start plugins in order, listen, connect. */
  async start(): Promise<void> {
    const plan = resolvePlugins(this.options.plugins, this.options.config.plugins);
    try {
      await this.store.load();
    } catch (error) {
      if (error instanceof StoreLockedError)
        throw new HostError([`${this.options.config.store.path}: ${error.message}`]);
      throw error;
    }
    this.persistNewSlices();
    this.wireCore();
    for (const { definition, config } of plan) {
      const running: RunningPlugin = { definition, stop: undefined, cleanups: [] };
      const context = this.contextFor(definition.name, config, running);
      try {
        const stop = await definition.start(context as PluginContext<never>);
        running.stop = typeof stop === 'function' ? stop : undefined;
        const missing = (definition.provides ?? []).filter(
          (service) => this.services.get(service)?.plugin !== definition.name,
        );
        if (missing.length > 0) {
          throw new Error(
            `it declares that it provides ${missing.map((service) => `"${service}"`).join(', ')} but did not`,
          );
        }
      } catch (error) {
        // A plugin that started and then broke its promise stops again; a failure of that stop is logged,
        // and the boot error below is the one reported.
        try {
          await running.stop?.();
        } catch (stopError) {
          this.logger.error('plugin stop failed', { plugin: definition.name, error: errorMessage(stopError) });
        }
        for (const cleanup of running.cleanups) cleanup();
        await this.stopPlugins();
        throw new HostError([`plugin "${definition.name}" failed to start: ${errorMessage(error)}`]);
      }
      this.running.push(running);
      this.persistNewSlices();
      this.logger.info('plugin started', { plugin: definition.name });
    }
    if (this.options.listen !== false) {
      const address = await this.http.listen();
      this.httpAddress = address;
      this.logger.info(`HTTP API listening on ${address.url}`, { url: address.url });
    }
    if (this.options.connect !== false && !this.irc.state.connected) this.irc.connect();
  }

  /** The command-line commands the plugins added, by name ({@link PluginContext.commandLine}). */
  commandLineCommands(): { plugin: string; command: CommandLineCommand }[] {
    return [...this.commandLine.values()];
  }

  /** Stop plugins (reverse order), flush the store, QUIT, close HTTP. Safe to call twice. */
  stop(reason = 'Shutting down'): Promise<void> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private async shutdown(reason: string): Promise<void> {
    this.logger.info('stopping', { reason });
    await this.stopPlugins();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    try {
      await this.store.close();
    } catch (error) {
      this.logger.error('store flush failed', { error: errorMessage(error) });
    }
    await this.irc.quit(reason);
    await this.http.close();
    this.logger.info('stopped');
  }

  private async stopPlugins(): Promise<void> {
    while (this.running.length > 0) {
      const plugin = this.running.pop()!;
      try {
        await plugin.stop?.();
      } catch (error) {
        this.logger.error('plugin failed to stop cleanly', {
          plugin: plugin.definition.name,
          error: errorMessage(error),
        });
      }
      for (const cleanup of plugin.cleanups) cleanup();
      this.logger.info('plugin stopped', { plugin: plugin.definition.name });
    }
  }

  private wireCore(): void {
    const { irc, model } = this;
    const { config } = this.options;
    this.cleanups.push(
      installBotPolicy(
        irc,
        {
          version: this.options.version ?? versionString,
          sasl: config.irc.sasl,
          nick: config.irc.nick,
          attached: () => irc.attached,
        },
        this.logger.child('irc'),
      ),
      irc.on('ready', () => {
        if (this.readyBefore) this.metrics.reconnected();
        this.readyBefore = true;
        model.connectionOpened(irc.state.casemapping);
      }),
      irc.on('disconnected', () => {
        model.connectionLost();
        // Answers still queued were never sent; TOKEN CREATE revokes a token whose secret was among them.
        this.commands.connectionLost();
      }),
      irc.on('message', (message) => {
        this.metrics.ircLine(message.command);
        this.commands.dispatch(message).catch((error: unknown) => {
          this.logger.error('command dispatch failed', { error: errorMessage(error) });
        });
      }),
      model.on('change', (change) => {
        if (this.persisted.has(change.slice)) this.store.markDirty(change.slice);
      }),
    );
  }

  /** Hand every model slice that declares persistence (and is new) to the store. */
  private persistNewSlices(): void {
    for (const slice of this.model.slices()) {
      if (!slice.persistence || this.persisted.has(slice.name)) continue;
      this.persisted.add(slice.name);
      const { persistence } = slice;
      this.store.register({
        key: slice.name,
        snapshot: () => persistence.snapshot(),
        restore: (data) => persistence.restore(data),
        ...(persistence.snapshotJson ? { snapshotJson: () => persistence.snapshotJson!() } : {}),
        durable: persistence.durable === true,
        ...(persistence.journal ? { journal: persistence.journal } : {}),
      });
    }
  }

  private contextFor(name: string, config: Record<string, unknown>, running: RunningPlugin): PluginContext {
    const { definition } = running;
    const logger = this.logger.child(name);
    const { irc, http, commands, model, store } = this;
    const timers = this.options.timers ?? RUNTIME_TIMERS;
    const track = (cleanup: () => void): void => {
      running.cleanups.push(cleanup);
    };
    const pluginIrc: IrcPort = {
      get state() {
        return irc.state;
      },
      on: <E extends IrcEventName>(event: E, listener: (...args: IrcEvents[E]) => void): Unsubscribe => {
        const unsubscribe = irc.on(event, isolated(this.logger, name, `handler for IRC ${event}`, listener));
        track(unsubscribe);
        return unsubscribe;
      },
      send: (command, ...params) => irc.send(command, ...params),
      privmsg: (target, text, onSent) =>
        irc.privmsg(target, text, onSent && isolated(this.logger, name, 'onSent of a PRIVMSG', onSent)),
      notice: (target, text, options) => irc.notice(target, text, options),
      // onSent runs inside the send queue's drain, where a throw would stop the queue.
      ctcpRequest: (target, type, text, onSent) =>
        irc.ctcpRequest(target, type, text, onSent && isolated(this.logger, name, 'onSent of a CTCP request', onSent)),
      ctcpReply: (target, type, text) => irc.ctcpReply(target, type, text),
      request: (request) => irc.request(request),
      casefold: (value) => irc.casefold(value),
    };
    return {
      name,
      config,
      host: {
        admins: this.options.config.admins,
        nick: this.options.config.irc.nick,
        ircServer: {
          host: this.options.config.irc.host,
          port: this.options.config.irc.port,
          tls: this.options.config.irc.tls,
          tlsVerify: this.options.config.irc.tls_verify,
        },
      },
      logger,
      model,
      irc: pluginIrc,
      http: {
        route: (route: RouteDefinition) => http.route(name, route),
        addHook: (hook) => http.addHook(hook),
        routes: () => http.routes(),
      },
      commands: {
        register: (command) => commands.register(name, command),
        addAdminCheck: (check) => commands.addAdminCheck(check),
        isAdmin: (sender) => commands.isAdmin(sender),
        isListedAdmin: (account) => commands.isListedAdmin(account),
        accountOf: (message) => commands.accountOf(message),
      },
      timers: {
        every: (ms, task) => track(timers.every(ms, isolated(this.logger, name, 'timer', task))),
        after: (ms, task) => track(timers.after(ms, isolated(this.logger, name, 'timer', task))),
      },
      store: {
        persisted: () => store.persisted(),
        archive: (records) => store.archive(name, records),
      },
      services: {
        provide: (service, value) => {
          if (!definition.provides?.includes(service)) {
            throw new Error(`the plugin "${name}" provides "${service}" without declaring it in its "provides"`);
          }
          this.services.set(service, { plugin: name, value });
          track(() => {
            if (this.services.get(service)?.plugin === name) this.services.delete(service);
          });
        },
        get: (service) => {
          if (!definition.uses?.includes(service)) {
            throw new Error(`the plugin "${name}" uses "${service}" without declaring it in its "uses"`);
          }
          const provided = this.services.get(service);
          // Its provider stops after this plugin, but routes answer until the HTTP server closes: a request
          // in that moment is told the service is gone (503), not that something failed.
          if (!provided) throw unavailable(`The service "${service}" is not available: the bot is stopping`);
          return provided.value as never;
        },
      },
      onModelChange: (listener) => {
        track(model.on('change', isolated(this.logger, name, 'model change handler', listener)));
      },
      metrics: this.metrics.forPlugin(name, track),
      commandLine: {
        register: (command) => {
          const taken = this.commandLine.get(command.name);
          if (taken) {
            throw new Error(
              `the plugin "${name}" adds the command-line command "${command.name}", which "${taken.plugin}" added`,
            );
          }
          this.commandLine.set(command.name, { plugin: name, command });
          track(() => this.commandLine.delete(command.name));
        },
      },
    };
  }
}
