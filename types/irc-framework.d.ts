/**
 * A narrow declaration of the parts of irc-framework 4.14 this project calls.
 * The library ships no types; everything not listed here is deliberately unused.
 */
declare module 'irc-framework' {
  export interface ParsedMessage {
    tags: Record<string, string>;
    prefix: string;
    nick: string;
    ident: string;
    hostname: string;
    command: string;
    params: string[];
  }

  export interface ClientOptions {
    host: string;
    port: number;
    tls?: boolean;
    rejectUnauthorized?: boolean;
    nick: string;
    username?: string;
    gecos?: string;
    /** SASL PLAIN credentials. */
    account?: { account: string; password: string };
    /** Automatic answer to CTCP VERSION; null turns it off. */
    version?: string | null;
    auto_reconnect?: boolean;
    enable_chghost?: boolean;
    ping_interval?: number;
    ping_timeout?: number;
    message_max_length?: number;
    /** The class that opens the socket and splits it into lines (default: the library's NetTransport). */
    transport?: new (options: unknown) => unknown;
  }

  /** Parse one raw line (tags, prefix, command, params). */
  export function ircLineParser(line: string): ParsedMessage;

  type RawMiddleware = (
    command: string,
    message: ParsedMessage,
    rawLine: string,
    client: Client,
    next: (error?: Error) => void,
  ) => void;

  interface MiddlewareHandler {
    use(middleware: RawMiddleware): void;
  }

  /** A PRIVMSG, NOTICE or ACTION, as the client's `message` event gives it. */
  export interface MessageEvent {
    type: 'privmsg' | 'notice' | 'action';
    nick: string;
    target: string;
    message: string;
    /** Answer where it came from: the channel, or the sender of a private message. */
    reply(text: string): void;
  }

  export class Client {
    constructor(options?: Partial<ClientOptions>);
    readonly connected: boolean;
    connect(options?: ClientOptions): void;
    /** Write one raw line as is (a single string argument is not re-quoted). */
    raw(line: string): void;
    quit(message?: string): void;
    join(channel: string, key?: string): void;
    requestCap(cap: string | string[]): void;
    use(middleware: (client: Client, raw: MiddlewareHandler, parsed: MiddlewareHandler) => void): this;
    on(event: 'socket close', listener: (error?: Error) => void): this;
    on(event: 'socket error', listener: (error: Error) => void): this;
    on(event: 'socket connected', listener: () => void): this;
    on(event: 'message', listener: (event: MessageEvent) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    off(event: string, listener: (...args: never[]) => void): this;
    removeAllListeners(): this;
    /** `registered` is the time registration finished, false before. */
    connection: { registered: number | false; end(data?: string, hasQuitMessage?: boolean): void };
    user: { nick: string };
  }
}

/** The library's TCP/TLS transport, which {@link ClientOptions.transport} may replace with a subclass. */
declare module 'irc-framework/src/transports/net.js' {
  import type { EventEmitter } from 'node:events';
  import type { Socket } from 'node:net';

  class NetTransport extends EventEmitter {
    constructor(options: unknown);
    /** The options the client connected with (ClientOptions, and any key the subclass reads). */
    options: Record<string, unknown>;
    socket: Socket | null;
    /** Called with each chunk read; emits `line` for each whole line. */
    onSocketData(data: Buffer): void;
    /** Called when the socket closed; emits `close`. */
    onSocketClose(): void;
    disposeSocket(): void;
  }
  export = NetTransport;
}
