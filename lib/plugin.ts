/**
 * The plugin contract. A plugin is data (name, dependencies, config schema)
 * plus a start function that receives everything through its context and may
 * return a stop function. The host checks the data at boot and enforces it.
 */
import type { AdminCheck, CommandDefinition, CommandSender } from './commands.js';
import type { ApiRequest, JsonSchema, RouteDefinition, Tier, TierGuard } from './http/types.js';
import type { IrcMessage, IrcPort } from './irc/port.js';
import type { Logger } from './logger.js';
import type { NetworkModel } from './model/network.js';

export type PluginStop = () => void | Promise<void>;

export interface PluginDefinition<Config = Record<string, unknown>> {
  /** The key under `plugins` in the config, e.g. `stats`. */
  name: string;
  description: string;
  /** Plugins that must be enabled and started before this one. */
  dependencies?: readonly string[];
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
  /** The check before every route of `tier`; on the public tier it is optional (see HttpServer.setGuard). */
  setGuard(tier: Tier, guard: TierGuard): void;
  addHook(
    hook: (
      request: ApiRequest,
      route: RouteDefinition,
    ) => void | Record<string, string> | Promise<void | Record<string, string>>,
  ): void;
  routes(): readonly { plugin: string; route: RouteDefinition }[];
}

export interface PluginCommands {
  register(command: CommandDefinition): void;
  addAdminCheck(check: AdminCheck): void;
  isAdmin(sender: CommandSender): Promise<boolean>;
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
  /** Listen to model changes (error-isolated, removed when the plugin stops). */
  onModelChange(listener: Parameters<NetworkModel['on']>[1]): void;
}

/** Identity function that gives a plugin definition its types. */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  return definition;
}
