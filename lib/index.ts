/**
 * The public API for embedding the host or writing plugins outside this repository.
 * @packageDocumentation
 */
export { Host, HostError, resolvePlugins, type HostOptions } from './host.js';
export {
  definePlugin,
  type PluginContext,
  type PluginDefinition,
  type PluginStop,
  type HostInfo,
  type PluginHttp,
  type PluginCommands,
  type PluginTimers,
  type PluginStore,
  ServiceKey,
  type PluginServices,
} from './plugin.js';
export { ConfigError, configPathFrom, loadConfig, parseConfig, checkSchema, type HostConfig } from './config.js';
export { createLogger, type Logger, type LogLevel } from './logger.js';
export { createTransport, transportOptions } from './irc/create-transport.js';
export { IrcFrameworkTransport } from './irc/irc-framework.js';
export { MatrixIrcTransport } from './irc/matrix-org-irc.js';
export { versionString } from './version.js';
export { BaseTransport, type TransportOptions } from './irc/transport.js';
export type { IrcMessage, IrcPort, IrcTransport, IrcSessionState, IrcRequest, IrcEvents } from './irc/port.js';
export { NetworkModel, type NetworkStats } from './model/network.js';
export type { ModelSlice, ModelChange, Persistence } from './model/slice.js';
export { HttpServer, paginate } from './http/server.js';
export { ApiError } from './http/errors.js';
export type { RouteDefinition, ApiRequest, ApiResponse, Tier } from './http/types.js';
export { CommandRegistry, type CommandDefinition, type CommandInvocation } from './commands.js';
export { Store, durablePathOf, type PersistedSlice } from './store/store.js';
