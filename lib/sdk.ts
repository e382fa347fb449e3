/**
 * The one import surface of the core for plugin authors: the plugin contract, the network model's types,
 * the HTTP and IRC helpers a plugin uses, and the host for embedding. The built-in plugins (plugins/)
 * import this file; a plugin from outside this repository imports the package's public SDK
 * (`import { definePlugin } from 'irc-network-data/sdk'`, app/sdk.ts), which is this file and the
 * contracts of the built-in plugins' services. Lint rules keep both on their entry; nothing else in lib/
 * is promised to stay where it is.
 * @packageDocumentation
 */

// The plugin contract, and the host that runs plugins.
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
  type PluginServices,
  type PluginCommandLine,
  type CommandLineCommand,
  type CommandLineOutput,
  type Services,
  type ServiceName,
} from './plugin.js';
export { Host, HostError, resolvePlugins, type HostOptions, type HostTimers } from './host.js';
export type { FromJsonSchema, TypedJsonSchema } from './schema-types.js';
export { loadPluginModules } from './plugin-modules.js';
export {
  ConfigError,
  configPathFrom,
  loadConfig,
  parseConfig,
  checkSchema,
  type HostConfig,
  type HttpConfig,
  type IrcConfig,
  type OperConfig,
  type SaslConfig,
  type StoreConfig,
} from './config.js';
export {
  createLogger,
  errorMessage,
  redact,
  LOG_LEVELS,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  type LogFields,
  type LogSink,
} from './logger.js';
export { packageName, packageVersion, versionString } from './version.js';

// IRC.
// The adapters themselves are the package's `irc-network-data/irc-framework` and `/matrix-org-irc` entries:
// each loads its library, which importing this SDK must not.
export { createTransport, transportOptions } from './irc/create-transport.js';
export type { LineOptions } from './irc/pacer.js';
export { BaseTransport, type TransportOptions } from './irc/transport.js';
export type { TryAgainOptions } from './irc/requests.js';
export type { SessionState, SessionStep } from './irc/session.js';
export type {
  IrcMessage,
  IrcSource,
  IrcPort,
  IrcTransport,
  IrcSessionState,
  IrcRequest,
  IrcEvents,
  Unsubscribe,
} from './irc/port.js';
export { casefold, searchFold, searchFoldOf, type Casemapping } from './irc/casemapping.js';
export { stripFormatting } from './irc/text.js';
export { isOnline, onlineNicks } from './irc/presence.js';
export { askService, type ServiceAnswerOptions } from './irc/service-answer.js';
export type {
  ServerProfile,
  ServerFamily,
  FamilyAnswers,
  ServerNoticeWording,
  LatencyProbe,
} from './irc/server-profile.js';

// The network model every plugin shares.
export { NetworkModel, type NetworkStats } from './model/network.js';
export type { ModelSlice, ModelChange, Persistence } from './model/slice.js';
export { detached, isPublicUser, type User, type UserFields, type UsersSlice } from './model/users.js';
export type { Channel, ChannelFields, ChannelsSlice } from './model/channels.js';
export type { Server, ServerFields, ServersSlice } from './model/servers.js';
export type { ServiceCommand, ServiceCommands, ServicesSlice, StoredServices } from './model/services.js';

// HTTP.
export {
  HttpServer,
  type HttpServerOptions,
  type RegisteredRoute,
  type RequestHook,
  type InjectRequest,
  type InjectResponse,
} from './http/server.js';
export { ApiError, notFound, invalidParameter, unavailable, type ErrorBody, type ErrorDetail } from './http/errors.js';
export { paginate, DEFAULT_LIMIT, MAX_LIMIT, type ListItems, type Page, type PaginateOptions } from './http/paging.js';
export { openApiPath } from './http/routes.js';
export { SerializedJson } from './http/serialized-json.js';
export { StreamBody, type OpenStream } from './http/stream-body.js';
export { HtmlDocument, HTML_TYPE, TextDocument, escapeHtml, inlineScriptSource } from './http/html-document.js';
export { clientGroup, compileAddressList, ipv6PrefixLengthSchema, type ProxyHeader } from './http/client-address.js';
export type {
  RouteDefinition,
  RouteGuard,
  GuardPoint,
  GuardOutcome,
  GuardFindings,
  ApiRequest,
  ApiResponse,
  Tier,
  TierGuard,
  TierGuards,
  TokenApprovals,
  HttpMethod,
  JsonSchema,
} from './http/types.js';

// Commands, and the converters of their arguments (a plugin writes its own with converted/invalid/refused).
export {
  CommandRegistry,
  defineCommand,
  usageLine,
  REPLY_DEADLINE_MS,
  type AdminCheck,
  type CommandRate,
  type ReplyOptions,
  type CommandDefinition,
  type CommandInvocation,
  type CommandSender,
  type Converters,
} from './commands.js';
export {
  choice,
  converted,
  invalid,
  many,
  optional,
  refused,
  rest,
  wholeNumber,
  word,
  type ArgumentContext,
  type ArgumentValues,
  type Conversion,
  type Converter,
} from './command-arguments.js';

// The store.
export {
  Store,
  durablePathOf,
  type Migration,
  type PersistedSlice,
  type SliceJournal,
  type StoreOptions,
  type WriteReport,
} from './store/store.js';
export type { JsonPiece } from './store/json-pieces.js';

// Metrics (Prometheus, through prom-client).
export {
  Counter,
  Gauge,
  Histogram,
  LabelTally,
  type HostMetrics,
  type MetricOptions,
  type PluginMetrics,
  type RequestFacts,
} from './metrics.js';

// Small tools for work that must not hold the event loop.
export { RateLimiter, type BucketConfig, type Decision } from './rate-limiter.js';
export { describeUrl, postOnce, type PostOptions, type PostSettle } from './post.js';
export { TimeSlice } from './time-slice.js';
export { firstInOrder } from './first-in-order.js';
