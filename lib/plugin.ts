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

/**
 * The name and type of something one plugin offers the others (fastify's decorators, with the type in
 * the key): the plugin that provides it exports the key, and the plugins that use it import the key only.
 *
 * ```ts
 * export const ACTIVITY = new ServiceKey<ActivitySlice>('stats.activity');
 * context.services.provide(ACTIVITY, activity);   // in the stats plugin's start()
 * context.services.get(ACTIVITY);                 // in another plugin: the slice, or undefined
 * ```
 */
export class ServiceKey<T> {
  /** Never set: it only carries the type. */
  declare readonly type?: T;

  constructor(readonly name: string) {}
}

export interface PluginServices {
  /**
   * Offer `value` under `key` from now until this plugin stops. One plugin provides a key at a time: a
   * second provider is an error at its start.
   */
  provide<T>(key: ServiceKey<T>, value: T): void;
  /**
   * What a running plugin provides under `key`, or undefined (none is configured, or it has stopped). Ask
   * when needed rather than once at start: a plugin that starts later, or stops, is seen. To be sure the
   * provider started first, name its plugin in {@link PluginDefinition.dependencies}.
   */
  get<T>(key: ServiceKey<T>): T | undefined;
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
  /** What plugins offer each other ({@link ServiceKey}). */
  services: PluginServices;
  /** Listen to model changes (error-isolated, removed when the plugin stops). */
  onModelChange(listener: Parameters<NetworkModel['on']>[1]): void;
}

/** Identity function that gives a plugin definition its types. */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  return definition;
}
