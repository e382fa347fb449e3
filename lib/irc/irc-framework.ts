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
import type { ParsedMessage } from 'irc-framework';
import NetTransport from 'irc-framework/src/transports/net.js';
import type { Logger } from '../logger.js';
import { parseLine } from './line-parser.js';
import { LineSlicer } from './line-slicer.js';
import type { IrcMessage } from './port.js';
import { BaseTransport, type TransportOptions } from './transport.js';

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

/** The connect option SlicedNetTransport finds the bot's own line handler under. */
const BOT_LINES = 'bot_lines';

export function toIrcMessage(parsed: ParsedMessage): IrcMessage {
  const time = parsed.tags.time ? new Date(parsed.tags.time) : new Date();
  return {
    command: parsed.command,
    params: parsed.params,
    source: parsed.prefix ? { nick: parsed.nick || parsed.prefix, ident: parsed.ident, host: parsed.hostname } : null,
    tags: parsed.tags,
    time: Number.isNaN(time.getTime()) ? new Date() : time,
  };
}

/**
 * The library's socket transport, with what it reads handed on in slices of time ({@link LineSlicer}), so a
 * burst of replies never holds the event loop. Everything the library does with a line (parsing, its own
 * state, the raw middleware that brings it to the bot) happens within the slice. The close is passed on
 * after the last line read.
 */
export class SlicedNetTransport extends NetTransport {
  private slicer: LineSlicer | null = null;

  override onSocketData(data: Buffer): void {
    const socket = this.socket;
    if (!socket) return;
    this.slicer ??= new LineSlicer((line) => this.deliver(line), socket);
    this.slicer.push(data);
  }

  /** A line to the bot first; to the library too unless the bot spares it ({@link BOT_ONLY}). */
  private deliver(line: string): void {
    const take = this.options[BOT_LINES] as ((line: string) => boolean) | undefined;
    if (take?.(line)) return;
    this.emit('line', line);
  }

  override onSocketClose(): void {
    if (this.slicer) this.slicer.end(() => super.onSocketClose());
    else super.onSocketClose();
  }

  override disposeSocket(): void {
    this.slicer?.clear();
    this.slicer = null;
    super.disposeSocket();
  }
}

export class IrcFrameworkTransport extends BaseTransport {
  private client: IrcFramework.Client | null = null;
  private closed: Promise<void> = Promise.resolve();
  /** Removes what was put on an attached client. */

  constructor(options: TransportOptions, logger: Logger) {
    super(options, logger);
  }

  /**
   * Use a client the embedding bot connected and registered itself (after its
   * `registered` event). It keeps its own reconnecting (each new registration is
   * followed by `ready` again) and its own CTCP VERSION answer; {@link quit}
   * only lets go of it.
   */
  static attach(client: IrcFramework.Client, options: TransportOptions, logger: Logger): IrcFrameworkTransport {
    if (!client.connected || client.connection.registered === false) {
      throw new Error(
        'IrcFrameworkTransport.attach: the client is not registered yet; call client.connect() and attach in its "registered" event',
      );
    }
    const transport = new IrcFrameworkTransport(options, logger);
    transport.client = client;
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
      ping_interval: 30,
      ping_timeout: 120,
      transport: SlicedNetTransport,
    });
  }

  /** Hands `line` to the bot; whether the library is spared it ({@link BOT_ONLY}). */
  private takeLine(line: string): boolean {
    const message = parseLine(line);
    if (!message) return false;
    this.handleMessage(message);
    return BOT_ONLY.has(message.command);
  }

  protected writeLine(line: string): void {
    if (this.client?.connected) this.client.raw(line);
  }

  protected async closeConnection(message: string): Promise<void> {
    const closed = this.closed;
    this.client?.quit(message);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3000).unref());
    await Promise.race([closed, timeout]);
  }

  /** Listen to an attached client, now and after each reconnect of its own. */
  private listenToAttached(): void {
    const client = this.client!;
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
      const onClose = (error?: Error): void => this.handleDisconnected(error ? error.message : 'connection closed');
      client.on('socket connected', onConnected);
      client.on('socket close', onClose);
      this.detach = () => {
        listening = false;
        client.off('socket connected', onConnected);
        client.off('socket close', onClose);
      };
    }
    if (client.connected) this.adoptConnection(client.user.nick);
  }
}
