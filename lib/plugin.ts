/**
 * The plugin contract. A plugin is data (name, dependencies, config schema)
 * plus a start function that receives everything through its context and may
 * return a stop function. The host checks the data at boot and enforces it.
 */
import type { AdminCheck, CommandDefinition, CommandSender, Converters } from './commands.js';
import type { ApiRequest, JsonSchema, RouteDefinition, TierGuards } from './http/types.js';
import type { IrcMessage, IrcPort } from './irc/port.js';
import type { Logger } from './logger.js';
import type { NetworkModel } from './model/network.js';
import type { PluginMetrics } from './metrics.js';

export type PluginStop = () => void | Promise<void>;

export interface PluginDefinition<Config = Record<string, unknown>> {
  /** The key under `plugins` in the config, e.g. `stats`. */
  name: string;
  description: string;
  /**
   * The versions of the host (this package, irc-network-data) the plugin works with, as an npm version range
   * (`^0.1.0`, `0.x`, `>=0.1.0 <0.3.0`), as a fastify plugin names the fastify it needs. A host of another
   * version refuses to start, naming the plugin and both versions. Left out: any version. Prereleases count as
   * their version.
   */
  host?: string;
  /** Plugins that must be enabled and started before this one. */
  dependencies?: readonly string[];
  /** Services this plugin offers the others ({@link Services}); it must provide each during start(). */
  provides?: readonly ServiceName[];
  /**
   * Services this plugin uses: an enabled plugin must provide each, and it starts before this one. A
   * service no enabled plugin provides is an error at boot that names both plugins.
   */
  uses?: readonly ServiceName[];
  /** JSON Schema of the plugin's config slice, with defaults; `enabled` is added by the host. */
  configSchema: JsonSchema;
  start(context: PluginContext<Config>): void | PluginStop | Promise<void | PluginStop>;
}

/** What the host shares with plugins from its own config. */
export interface HostInfo {
  /** Administrator accounts from the config. */
  admins: readonly string[];
  /** The bot's configured nick. */
  nick: string;
  /** The IRC server the bot connects to, for plugins that open connections of their own. */
  ircServer: { host: string; port: number; tls: boolean; tlsVerify: boolean };
}

export interface PluginHttp {
  route(route: RouteDefinition): void;
  addHook(
    hook: (
      request: ApiRequest,
      route: RouteDefinition,
    ) => void | Record<string, string> | Promise<void | Record<string, string>>,
  ): void;
  routes(): readonly { plugin: string; route: RouteDefinition }[];
}

export interface PluginCommands {
  /** Register a command; its handler's values are typed from its `args` (see {@link CommandDefinition}). */
  register<const Args extends Converters = []>(command: CommandDefinition<Args>): void;
  addAdminCheck(check: AdminCheck): void;
  isAdmin(sender: CommandSender): Promise<boolean>;
  /** Whether an account is one of the configured `admins`: the part of {@link isAdmin} that needs no client. */
  isListedAdmin(account: string): boolean;
  accountOf(message: IrcMessage): Promise<string | null>;
}

export interface PluginTimers {
  /** Run `task` every `ms`; errors are logged with the plugin's name. Cleared when the plugin stops. */
  every(ms: number, task: () => void | Promise<void>): void;
  /** Run `task` once after `ms`. Cleared when the plugin stops. */
  after(ms: number, task: () => void | Promise<void>): void;
}

export interface PluginStore {
  /**
   * Resolves once every change to a durable model slice (one whose `persistence.durable` is true) made
   * before the call is on disk; rejects when the store could not write it. Await it before an answer
   * that confirms such a change: a crash after the answer then cannot undo the change.
   */
  persisted(): Promise<void>;
  /**
   * Append `records` (JSON) to the plugin's archive file, `<store folder>/archive/<plugin>.jsonl` (the
   * `store.archive_dir` setting), one line each, fsynced; resolves with the file's path. For state the plugin
   * stops keeping by its retention policy: archive, then forget it and await {@link persisted}. The bot never
   * reads the archive back; the operator keeps or rotates it.
   */
  archive(records: readonly unknown[]): Promise<string>;
}

/**
 * What plugins offer each other, by name, with each service's type (fastify's decorators with declared
 * dependencies). The plugin that provides a service adds it by declaration merging, in its own folder, so
 * the plugins that use it need no import of that plugin's files:
 *
 * ```ts
 * declare module '../../lib/sdk.js' {   // 'irc-network-data/sdk' outside this repository
 *   interface Services { 'stats.activity': ActivityService }
 * }
 * ```
 *
 * The core declares here only the service it uses itself; each built-in plugin declares its own in its
 * folder (`plugins/stats/contract.ts`, `plugins/web/services.ts`, ...). A plugin from outside this
 * repository sees the contracts the package's public SDK (`irc-network-data/sdk`, app/sdk.ts) brings along.
 */
export interface Services {
  /**
   * The guards of the HTTP tiers: the host runs them before every route of their tier, asking for them
   * at each request. One enabled plugin may provide them (the tokens plugin does); without one, token
   * and staff routes answer 503 and public routes are not checked.
   */
  'http.guard': TierGuards;
}

/** The name of a service some plugin declares in {@link Services}. */
export type ServiceName = keyof Services & string;

export interface PluginServices {
  /**
   * Offer `value` under `name` from now until this plugin stops. Only a name in the plugin's
   * {@link PluginDefinition.provides} may be provided, and each one must be by the time start() returns.
   */
  provide<Name extends ServiceName>(name: Name, value: Services[Name]): void;
  /**
   * The service under `name`, which must be in the plugin's {@link PluginDefinition.uses}: the host
   * started its provider first and stops it last, so it is there whenever this plugin runs.
   */
  get<Name extends ServiceName>(name: Name): Services[Name];
}

/** How a command-line command writes its answer: `out` to standard output, `err` to standard error. */
export interface CommandLineOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * A command of the `irc-network-data` command line that a plugin adds (`irc-network-data token list`), for an
 * operator on the bot's machine. It runs in a host started from the same config without IRC or HTTP, which
 * holds the store (a running bot's store is refused: see docs/plugins.md).
 */
export interface CommandLineCommand {
  /** The word after `irc-network-data`: `token`. */
  name: string;
  /** One line for `irc-network-data --help`. */
  summary: string;
  /** Runs with the words after the name (the `--config` option taken out); resolves with the exit code. */
  run(args: readonly string[], output: CommandLineOutput): Promise<number>;
}

export interface PluginCommandLine {
  /** Adds a command to the command line, under a name no other plugin's command has. */
  register(command: CommandLineCommand): void;
}

export interface PluginContext<Config = Record<string, unknown>> {
  name: string;
  config: Config;
  host: HostInfo;
  logger: Logger;
  model: NetworkModel;
  /** The IRC port; listeners added here are error-isolated and removed when the plugin stops. */
  irc: IrcPort;
  http: PluginHttp;
  commands: PluginCommands;
  timers: PluginTimers;
  store: PluginStore;
  /** What plugins offer each other ({@link Services}). */
  services: PluginServices;
  /** Listen to model changes (error-isolated, removed when the plugin stops). */
  onModelChange(listener: Parameters<NetworkModel['on']>[1]): void;
  /** Register the plugin's metrics (Prometheus; removed when it stops); the metrics plugin serves them. */
  metrics: PluginMetrics;
  /** Add commands to the `irc-network-data` command line. */
  commandLine: PluginCommandLine;
}

/** Identity function that gives a plugin definition its types. */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  return definition;
}
