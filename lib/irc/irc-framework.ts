/**
 * The irc-framework adapter: the library opens the socket and does CAP
 * negotiation and SASL PLAIN; every line it reads comes to the bot first, parsed
 * by the bot's own parser (lib/irc/line-parser.ts), and the library is handed only
 * the lines it needs (an attached client's lines come through the library's raw
 * middleware, which sees every line). Reconnecting is ours,
 * not the library's, so the backoff is the same on every transport. The library's
 * own CTCP VERSION answer is off: the host's bot policy answers CTCP alike on both.
 */
import IrcFramework from 'irc-framework';
import type { Logger } from '../logger.js';
import { BOT_LINES, SlicedNetTransport } from './irc-framework-socket.js';
import { parseLine } from './line-parser.js';
import type { IrcMessage } from './port.js';
import { BaseTransport, DEFAULT_KEEPALIVE, type Keepalive, type TransportOptions } from './transport.js';

/**
 * What the library is not handed on a connection of its own, once the bot has the line: replies it would only
 * gather in caches until their end (WHO, LIST, NAMES, LINKS: on a big network tens of thousands of rows, kept
 * long enough to be promoted to the old heap and collected there) and traffic it would only turn into events
 * nobody here listens to, restarting its ping-timeout timer for each. Registration, CAP, SASL, PING/PONG, NICK
 * and errors still reach it. An attached client gets everything: its owner may listen to the library's events.
 */
const BOT_ONLY = new Set([
  ...['352', '354', '315', '321', '322', '323', '353', '366', '364', '365', '332', '333', '324', '329'],
  ...['PRIVMSG', 'NOTICE', 'TAGMSG', 'JOIN', 'PART', 'QUIT', 'KICK', 'AWAY', 'ACCOUNT', 'CHGHOST', 'TOPIC'],
]);

/** A line as irc-framework parses it (its `ParsedMessage`). */
export interface IrcFrameworkMessage {
  tags: Record<string, string>;
  prefix: string;
  nick: string;
  ident: string;
  hostname: string;
  command: string;
  params: string[];
}

/**
 * What {@link IrcFrameworkTransport.attach} uses of your irc-framework `Client` (4.x): any such client is one.
 * Declared here, not taken from the library (which ships no types), so that the package's types stand alone.
 */
export interface IrcFrameworkClient {
  /** Whether the socket is open. */
  readonly connected: boolean;
  /** `registered`: when registration finished, false before (and while the `registered` event runs). */
  readonly connection: { readonly registered: number | false };
  readonly user: { readonly nick: string };
  /** Write one raw line. */
  raw(line: string): void;
  /** Add a middleware: the adapter reads every line through the raw one. */
  use(
    middleware: (
      client: unknown,
      raw: {
        use(
          handler: (
            command: string,
            message: IrcFrameworkMessage,
            rawLine: string,
            source: unknown,
            next: (error?: Error) => void,
          ) => void,
        ): void;
      },
      parsed: unknown,
    ) => void,
  ): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

export function toIrcMessage(parsed: IrcFrameworkMessage): IrcMessage {
  const time = parsed.tags.time ? new Date(parsed.tags.time) : new Date();
  return {
    command: parsed.command,
    params: parsed.params,
    source: parsed.prefix ? { nick: parsed.nick || parsed.prefix, ident: parsed.ident, host: parsed.hostname } : null,
    tags: parsed.tags,
    time: Number.isNaN(time.getTime()) ? new Date() : time,
  };
}

export class IrcFrameworkTransport extends BaseTransport {
  /** The client of a connection of its own. */
  private client: IrcFramework.Client | null = null;
  /** The client the embedding bot handed over ({@link attach}). */
  private ownersClient: IrcFrameworkClient | null = null;
  private closed: Promise<void> = Promise.resolve();

  /** When a line the library was spared last counted as a sign of life for its ping timeout. */
  private sparedAliveAt = 0;

  /** `keepalive`: the library's PING interval and ping timeout (tests shorten them). */
  constructor(
    options: TransportOptions,
    logger: Logger,
    private readonly keepalive: Keepalive = DEFAULT_KEEPALIVE,
  ) {
    super(options, logger);
  }

  /**
   * Use a client the embedding bot connected itself: in its `registered` event or any time after. (irc-framework
   * marks the connection registered only after that event's listeners ran; the transport takes the connection
   * over then.) The client keeps its own reconnecting (each new registration is followed by `ready` again) and
   * its own CTCP VERSION answer; {@link quit} only lets go of it.
   */
  static attach(client: IrcFrameworkClient, options: TransportOptions, logger: Logger): IrcFrameworkTransport {
    if (!client.connected) {
      throw new Error(
        'IrcFrameworkTransport.attach: the client is not connected; call client.connect() and attach in its "registered" event',
      );
    }
    const transport = new IrcFrameworkTransport(options, logger);
    transport.ownersClient = client;
    transport.adopted = true;
    return transport;
  }

  protected openConnection(): void {
    if (this.adopted) {
      this.listenToAttached();
      return;
    }
    this.client?.removeAllListeners();
    const client = new IrcFramework.Client();
    this.client = client;
    let markClosed: () => void = () => undefined;
    this.closed = new Promise((resolve) => (markClosed = resolve));
    client.on('socket connected', () => this.handleConnected());
    client.on('socket error', (error) => this.logger.warn('socket error', { error: error.message }));
    client.on('socket close', (error) => {
      markClosed();
      if (client === this.client) this.handleDisconnected(error ? error.message : 'connection closed');
    });
    const { options } = this;
    client.connect({
      host: options.host,
      port: options.port,
      tls: options.tls,
      rejectUnauthorized: options.tlsVerify,
      nick: options.nick,
      username: options.username,
      gecos: options.realname,
      ...(options.sasl ? { account: { account: options.sasl.account, password: options.sasl.password } } : {}),
      // The host's bot policy answers CTCP VERSION (and PING), paced and limited per client; the library would
      // answer every VERSION at once, past the send queue.
      version: null,
      // Read by SlicedNetTransport (the library hands the transport its options): every line comes to the bot
      // first, parsed once by its own parser; a client replaced since (a reconnect) is not listened to.
      ...{ [BOT_LINES]: (line: string) => client === this.client && this.takeLine(line) },
      auto_reconnect: false,
      enable_chghost: true,
      ping_interval: this.keepalive.pingAfterMs / 1000,
      ping_timeout: this.keepalive.deadAfterMs / 1000,
      transport: SlicedNetTransport,
    });
  }

  /** Hands `line` to the bot; whether the library is spared it ({@link BOT_ONLY}). */
  private takeLine(line: string): boolean {
    const message = parseLine(line);
    if (!message) return false;
    this.handleMessage(message);
    if (!BOT_ONLY.has(message.command)) return false;
    this.keepLibraryAlive();
    return true;
  }

  /**
   * irc-framework counts only the lines it is handed as signs of life: during a long WHO or LIST, or a server's
   * penalty that holds back the PONG to its PING, the rows it is spared would otherwise end in its "Ping timeout"
   * on a connection that is delivering. Told at most a few times per timeout, not per line.
   */
  private keepLibraryAlive(): void {
    const now = Date.now();
    if (now - this.sparedAliveAt < Math.min(1000, this.keepalive.deadAfterMs / 4)) return;
    this.sparedAliveAt = now;
    (this.client as { resetPingTimeoutTimer?: () => void } | null)?.resetPingTimeoutTimer?.();
  }

  protected writeLine(line: string): void {
    const client = this.ownersClient ?? this.client;
    if (client?.connected) client.raw(line);
  }

  protected async closeConnection(message: string): Promise<void> {
    const closed = this.closed;
    this.client?.quit(message);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3000).unref());
    await Promise.race([closed, timeout]);
  }

  /** Listen to an attached client, now and after each reconnect of its own. */
  private listenToAttached(): void {
    const client = this.ownersClient!;
    if (!this.detach) {
      // irc-framework has no way to remove a middleware: this one goes quiet instead.
      let listening = true;
      client.use((_client, raw) => {
        raw.use((_command, message, _line, source, next) => {
          if (listening && source === client) this.handleMessage(toIrcMessage(message));
          next();
        });
      });
      const onConnected = (): void => this.handleConnected();
      const onClose = (error?: Error): void => {
        client.off('connected', this.adoptRegistered);
        this.handleDisconnected(error ? error.message : 'connection closed');
      };
      client.on('socket connected', onConnected);
      client.on('socket close', onClose);
      this.detach = () => {
        listening = false;
        client.off('socket connected', onConnected);
        client.off('socket close', onClose);
        client.off('connected', this.adoptRegistered);
      };
    }
    if (!client.connected) return;
    // Attached in the `registered` event, or while registering: the library's `connected` event follows
    // the moment it marks the connection registered.
    if (client.connection.registered === false) client.on('connected', this.adoptRegistered);
    else this.adoptConnection(client.user.nick);
  }

  /** Take over an attached client's connection once the library has it registered. */
  private readonly adoptRegistered = (): void => {
    const client = this.ownersClient!;
    client.off('connected', this.adoptRegistered);
    if (client.connected) this.adoptConnection(client.user.nick);
  };
}
