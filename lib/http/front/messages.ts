/** What the bot's thread and the front's thread say to each other. */
import type { LogFields, LogLevel } from '../../logger.js';
import type { ProxyHeader } from '../client-address.js';

/** The private headers between the front and the bot; a client's own are dropped. */
export const FRONT_CLIENT = 'x-front-client';
/** `1` when the client came over HTTPS, as a trusted proxy said. */
export const FRONT_SECURE = 'x-front-secure';
export const FRONT_SERVED = 'x-front-served';
export const FRONT_RENEW = 'x-front-renew';
/** On an answer: the front may give it again for this many milliseconds. */
export const FRONT_REUSE_MS = 'x-front-reuse-ms';
/** On an answer: the name of the route that answered, for the front's access log. */
export const FRONT_ROUTE = 'x-front-route';
/** On an answer: the request's hooks ran, so a rate limit counted its `X-Front-Served`. */
export const FRONT_COUNTED = 'x-front-counted';

/** The front's start, as its `workerData`. */
export interface FrontStart {
  host: string;
  port: number;
  /** The bot's private socket. */
  socketPath: string;
  bodyLimit: number;
  headersTimeout: number;
  requestTimeout: number;
  /** `http.keep_alive_timeout_seconds`, in milliseconds; undefined: Node's. */
  keepAliveTimeout: number | undefined;
  /** `http.max_connections`: the front's client connections at most; undefined: no cap. */
  maxConnections: number | undefined;
  /** `http.trust_proxy`: the front reads the proxies' headers for the client's address and scheme. */
  trustProxy: string | readonly string[] | undefined;
  /** `http.proxy_header`: the one header those proxies write the client into. */
  proxyHeader: ProxyHeader;
  /** `http.access_log`: the front writes the line of each request. */
  accessLog: boolean;
}

/** From the front. */
export type FrontMessage =
  | { type: 'listening'; host: string; port: number; url: string }
  | { type: 'failed'; message: string }
  | { type: 'log'; level: LogLevel; source: string; message: string; fields: LogFields | undefined }
  | { type: 'closed' };

/** To the front. */
export type FrontOrder = { type: 'close' };
