/**
 * The matrix-org-irc adapter (the library behind matrix-appservice-irc). The
 * library registers: CAP, SASL PLAIN (its account is `userName`, which is the
 * ident too), PING answers, another nick when the configured one is taken at
 * registration. CTCP requests are kept from it (it would answer every PING at
 * once, past the send queue): the host's bot policy answers PING and VERSION.
 *
 * Lines are read from the socket here, not from the library's `raw` event: its
 * parser drops an empty last parameter (`351 me version server :`), lower-cases
 * channel names in place and reads no IRCv3 tags. So no capability that adds
 * tags is requested (accounts come from WHOIS, times from the local clock);
 * the ones that add none (away-notify, extended-join, ...) are.
 *
 * The socket is opened here as well, so TLS checking and reconnecting (with
 * the shared backoff) work as on every transport. The library's own retries
 * and flood protection stay off: the Pacer paces.
 */
import net from 'node:net';
import tls from 'node:tls';
import { Client, type IrcConnection, type Message } from 'matrix-org-irc';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import { parseLine } from './line-parser.js';
import { LineReader, LineSlicer } from './line-slicer.js';
import type { IrcMessage } from './port.js';
import { BaseTransport, DEFAULT_KEEPALIVE, type Keepalive, type TransportOptions } from './transport.js';
import { UNTAGGED_CAPS } from './untagged-caps.js';

export type { Keepalive } from './transport.js';

type RawHandler = (message: Message) => void;

function checkRegistered(client: Client, method: string): void {
  // hostMask is set from RPL_WELCOME.
  if (!client.conn || client.hostMask === '') {
    throw new Error(
      `MatrixIrcTransport.${method}: the client is not registered yet; call client.connect() and hand it over in its "registered" event`,
    );
  }
}

export class MatrixIrcTransport extends BaseTransport {
  private client: Client | null = null;
  private socket: net.Socket | null = null;
  private closed: Promise<void> = Promise.resolve();
  private keepaliveTimer: NodeJS.Timeout | null = null;
  private lastReceived = 0;
  private readonly offeredCaps = new Set<string>();
  /** Removes the listeners put on an attached client's connection. */

  constructor(
    options: TransportOptions,
    logger: Logger,
    private readonly keepalive: Keepalive = DEFAULT_KEEPALIVE,
  ) {
    super(options, logger);
  }

  /**
   * Use a client the embedding bot connected and registered itself (after its
   * `registered` event). Lines are read from its connection; after a
   * disconnect, hand over the next client with {@link replaceClient}. {@link quit}
   * only lets go of the client. The bot's own code answers CTCP VERSION.
   */
  static attach(client: Client, options: TransportOptions, logger: Logger): MatrixIrcTransport {
    checkRegistered(client, 'attach');
    const transport = new MatrixIrcTransport(options, logger);
    transport.client = client;
    transport.adopted = true;
    return transport;
  }

  /**
   * Move an attached transport to the owner's new client. matrix-org-irc 3.0.0
   * cannot register again after a reconnect of its own on a server with CAP
   * (its capability handlers run once per client), so an owner makes a new
   * client for each connection and hands it over here; `ready` follows.
   */
  replaceClient(client: Client): void {
    if (!this.adopted) throw new Error('MatrixIrcTransport.replaceClient: this transport opens its own connections');
    checkRegistered(client, 'replaceClient');
    this.detach?.();
    this.detach = null;
    if (this.state.connected) this.handleDisconnected('the client was replaced');
    this.client = client;
    this.listenToAttached();
  }

  protected openConnection(): void {
    if (this.adopted) this.listenToAttached();
    else this.openOwnConnection();
  }

  protected writeLine(line: string): void {
    if (this.adopted) {
      if (this.state.connected) this.client?.conn?.write(`${line}\r\n`);
    } else if (this.socket && !this.socket.destroyed && this.state.connected) {
      this.socket.write(`${line}\r\n`);
    }
  }

  protected async closeConnection(message: string): Promise<void> {
    const { client, socket } = this;
    const closed = this.closed;
    if (client && socket && !socket.destroyed) {
      try {
        client.disconnect(message);
      } catch (error) {
        this.logger.warn('QUIT could not be sent', { error: errorMessage(error) });
      }
    }
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 3000).unref());
    await Promise.race([closed, timeout]);
    socket?.destroy();
  }

  private openOwnConnection(): void {
    this.dropOwnConnection();
    const { options } = this;
    const socket = options.tls
      ? tls.connect({
          host: options.host,
          port: options.port,
          rejectUnauthorized: options.tlsVerify,
          ...(net.isIP(options.host) ? {} : { servername: options.host }),
        })
      : net.connect({ host: options.host, port: options.port });
    const client = new Client(
      options.host,
      options.nick,
      {
        userName: options.sasl?.account ?? options.username,
        realName: options.realname,
        port: options.port,
        autoConnect: false,
        autoRejoin: false,
        retryCount: 0,
        floodProtection: false,
        ...(options.sasl ? { sasl: true, password: options.sasl.password } : {}),
      },
      undefined,
      socket as unknown as IrcConnection,
    );
    this.client = client;
    this.socket = socket;
    this.offeredCaps.clear();
    let markClosed: () => void = () => undefined;
    this.closed = new Promise((resolve) => (markClosed = resolve));
    this.wrapLibraryHandler(client, socket);
    // Error numerics (401, 482, ...) reach plugins as lines; the library's event needs a listener or it throws.
    client.on('error', (reply) =>
      this.logger.debug('error reply', { numeric: reply.rawCommand, reply: reply.args.at(-1) }),
    );
    client.on('connect', () => {
      if (client !== this.client) return;
      this.handleConnected();
      this.startKeepalive(socket);
    });
    // The library reads the socket too (its own listener, added by connect() below): both get each line in
    // the same slice of time, the bot first, as when each read a whole chunk.
    let libraryReaders: ((chunk: Buffer) => void)[] = [];
    const slicer = new LineSlicer((line) => {
      if (client !== this.client) return;
      this.receiveLine(line);
      for (const read of libraryReaders) read.call(socket, Buffer.from(`${line}\r\n`));
    }, socket);
    const onData = (chunk: Buffer): void => slicer.push(chunk);
    socket.on('data', onData);
    let lastError: string | null = null;
    socket.on('error', (error) => {
      lastError = error.message;
      this.logger.warn('socket error', { error: error.message });
    });
    // The library only emits `abort` on an idle timeout (its socket is not its own); end the socket.
    socket.on('timeout', () => socket.destroy(new Error('the connection was idle too long')));
    socket.on('close', () => {
      // Closed for the bot once the lines read before the close are handled.
      slicer.end(() => {
        markClosed();
        if (client !== this.client) return;
        this.stopKeepalive();
        this.handleDisconnected(lastError ?? 'connection closed');
      });
    });
    client.connect();
    libraryReaders = socket.listeners('data').filter((listener) => listener !== onData) as typeof libraryReaders;
    for (const read of libraryReaders) socket.off('data', read);
  }

  /** Forget the previous connection's client (a reconnect makes a new one). */
  private dropOwnConnection(): void {
    this.stopKeepalive();
    this.client?.removeAllListeners();
    if (this.socket && !this.socket.destroyed) this.socket.destroy();
    this.client = null;
    this.socket = null;
  }

  /**
   * The library's own line handler runs inside ours, so that a throw in it (it
   * throws when the server offers SASL without PLAIN) ends this connection and
   * not the process, and so that it does not see what is not its business.
   */
  private wrapLibraryHandler(client: Client, socket: net.Socket): void {
    const handlers = client.listeners('raw') as RawHandler[];
    client.removeAllListeners('raw');
    client.on('raw', (message) => {
      if (this.hiddenFromLibrary(message)) return;
      try {
        for (const handler of handlers) handler.call(client, message);
      } catch (error) {
        this.logger.error('matrix-org-irc failed on a line; dropping the connection', {
          command: message.rawCommand,
          error: errorMessage(error),
        });
        socket.destroy();
      }
    });
  }

  private hiddenFromLibrary(message: Message): boolean {
    const [, subcommand] = message.args;
    // Answers to our own CAP REQ: the library asked for sasl only, and would end negotiation on them.
    if (message.rawCommand === 'CAP' && (subcommand === 'ACK' || subcommand === 'NAK')) {
      return !(message.args.at(-1) ?? '').split(' ').includes('sasl');
    }
    // CTCP is answered by the host's bot policy, as on every transport.
    if (message.rawCommand === 'PRIVMSG' && (message.args[1] ?? '').startsWith('\x01')) return true;
    // A nick taken is the transport's to answer (another nick at registration) or whoever sent NICK's; the
    // library would pick another nick of its own.
    return message.rawCommand === '433' || message.rawCommand === '437';
  }

  private receiveLine(line: string): void {
    this.lastReceived = Date.now();
    const message = parseLine(line);
    if (!message) return;
    if (!this.adopted) this.negotiate(message);
    this.handleMessage(message);
  }

  /**
   * Ask for the untagged capabilities on the last `CAP * LS` line, before the
   * library sends its own REQ or END for it; end negotiation when the server
   * refuses sasl, which the library would wait on forever.
   */
  private negotiate(message: IrcMessage): void {
    if (message.command !== 'CAP' || this.state.registered) return;
    const [, subcommand] = message.params;
    const list = (message.params.at(-1) ?? '').split(' ').filter(Boolean);
    if (subcommand === 'LS') {
      for (const token of list) this.offeredCaps.add(token.split('=')[0]!);
      if (message.params[2] === '*' && message.params.length > 3) return;
      const wanted = UNTAGGED_CAPS.filter((cap) => this.offeredCaps.has(cap));
      if (wanted.length > 0) this.writeLine(`CAP REQ :${wanted.join(' ')}`);
      if (this.options.sasl && !this.offeredCaps.has('sasl')) {
        this.logger.error('the server offers no SASL; logging in with IDENTIFY after registration instead');
      }
    } else if (subcommand === 'NAK' && list.includes('sasl')) {
      this.writeLine('CAP END');
    }
  }

  /** PING a silent server; drop the connection when it stays silent (a dead link sends no RST). */
  private startKeepalive(socket: net.Socket): void {
    this.stopKeepalive();
    this.lastReceived = Date.now();
    const { pingAfterMs, deadAfterMs } = this.keepalive;
    this.keepaliveTimer = setInterval(
      () => {
        const silentMs = Date.now() - this.lastReceived;
        if (silentMs >= deadAfterMs)
          socket.destroy(new Error(`ping timeout: nothing from the server for ${silentMs} ms`));
        else if (silentMs >= pingAfterMs && this.state.registered) this.writeLine(`PING :keepalive-${Date.now()}`);
      },
      Math.max(10, Math.min(pingAfterMs, deadAfterMs) / 3),
    );
    this.keepaliveTimer.unref();
  }

  private stopKeepalive(): void {
    if (this.keepaliveTimer) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }

  /** Read the lines of an attached client's connection. */
  private listenToAttached(): void {
    const client = this.client!;
    this.detach?.();
    const connection = client.conn!;
    const reader = new LineReader();
    const onData = (chunk: Buffer | string): void => {
      reader.push(chunk);
      for (let line = reader.next(); line !== null; line = reader.next()) this.receiveLine(line);
    };
    const onClose = (): void => this.handleDisconnected('connection closed');
    connection.on('data', onData);
    connection.on('close', onClose);
    this.detach = () => {
      connection.off('data', onData);
      connection.off('close', onClose);
    };
    this.adoptConnection(client.nick);
  }
}
