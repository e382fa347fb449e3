/**
 * What every adapter shares: the connection's life (registration watchdog, OPER and bot mode after
 * registration, `ready`, reconnecting) around three parts of its own — the session state kept from the
 * server's lines (session.ts), the paced send queue (pacer.ts) and requests with their replies
 * (requests.ts). An adapter supplies only how to open a connection, write a line and close. How the bot
 * behaves as a client (CTCP answers, IDENTIFY when services return) is installed by the host
 * (bot-policy.ts).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import { casefold } from './casemapping.js';
import { Pacer, penaltyIntervalFor, type LineOptions } from './pacer.js';
import { Reconnector } from './reconnect.js';
import { RequestLane, requestLimitsFor, TRY_AGAIN, type TryAgainOptions } from './requests.js';
import { ReadGauge } from './read-gauge.js';
import { SessionState } from './session.js';
import { formatLine, splitText } from './text.js';
import type { IrcEventName, IrcEvents, IrcMessage, IrcRequest, IrcTransport, Unsubscribe } from './port.js';

/** When a silent server gets a PING, and when it counts as gone (irc-framework's defaults). */
export interface Keepalive {
  pingAfterMs: number;
  deadAfterMs: number;
}

export const DEFAULT_KEEPALIVE: Keepalive = { pingAfterMs: 30000, deadAfterMs: 120000 };

export interface TransportOptions {
  host: string;
  port: number;
  tls: boolean;
  tlsVerify: boolean;
  nick: string;
  username: string;
  realname: string;
  sasl?: { account: string; password: string } | undefined;
  oper?: { name: string; password: string } | undefined;
  pacing: { burst: number; intervalMs: number };
  reconnect: { minMs: number; maxMs: number };
  /** Give up on a connection that has not registered after this long (default 30 s). */
  registrationTimeoutMs?: number;
  /**
   * How a request the server refused with RPL_TRYAGAIN (263) is sent again; default `TRY_AGAIN`: 4 more tries,
   * after waits of 2, 4, 8 and 16 s.
   */
  tryAgain?: TryAgainOptions;
}

/** Nicks tried at one registration after the configured one was refused, before the watchdog takes over. */
const MAX_FALLBACK_NICKS = 5;

/**
 * A connection that has not registered after this long is dropped and retried: a server
 * waits for SASL (and CAP END) indefinitely, and services relinking after a netsplit may
 * leave AUTHENTICATE unanswered.
 */
const REGISTRATION_TIMEOUT_MS = 30000;

/**
 * How long the gauge's PING may wait for its answer from its turn: the server answers it once it has read the lines
 * before it, seconds later while it holds them; past this the lines are taken as read (read-gauge.ts).
 */
const MARKER_TIMEOUT_MS = 60_000;

export abstract class BaseTransport implements IrcTransport {
  readonly state: SessionState;
  protected readonly events = new EventEmitter();
  private readonly pacer: Pacer;
  private readonly requests: RequestLane;
  /** How far the server has read the bot's lines; holds the paced ones while it lags behind (read-gauge.ts). */
  private readonly gauge: ReadGauge;
  private readonly reconnector: Reconnector;
  /**
   * Set by adapters that were handed a connection (attach): the embedding bot
   * owns it, so it is never reconnected from here; its own reconnects are followed.
   */
  protected adopted = false;
  /** Fires when a connection has not registered in time (e.g. SASL left unanswered while services relink). */
  private registrationTimer: NodeJS.Timeout | null = null;
  private quitting = false;
  private readySent = false;
  /** When a change of the server's hold on the bot's lines was last logged at info. */
  private lagLoggedAt = -Infinity;
  /** Counts connections, so a loop started for one connection ends with it. */
  private connectionNumber = 0;
  constructor(
    protected readonly options: TransportOptions,
    protected readonly logger: Logger,
  ) {
    this.state = new SessionState(options.nick);
    this.gauge = new ReadGauge({
      mark: () => this.markRead(),
      busy: () => this.requests.busy,
      opened: () => this.pacer.resume(),
      changed: (lagged, lagMs) => {
        this.state.lagged = lagged;
        this.logLag(lagged, lagMs);
      },
    });
    this.pacer = new Pacer({
      burst: options.pacing.burst,
      intervalMs: options.pacing.intervalMs,
      minIntervalMs: () => penaltyIntervalFor(this.state),
      mayWrite: () => this.gauge.mayWrite(),
      write: (line) => this.put(line),
    });
    this.requests = new RequestLane(
      (line) => this.put(line),
      () => this.state.connected,
      options.tryAgain ?? TRY_AGAIN,
      () => this.state.profile.tryAgainText,
      () => requestLimitsFor(this.state.profile),
      this.gauge,
    );
    this.reconnector = new Reconnector(options.reconnect, logger);
    logger.addSecret(options.sasl?.password);
    logger.addSecret(options.oper?.password);
  }

  /**
   * Open the socket and register (NICK/USER/CAP/SASL) — the library does this part.
   * An adopted connection starts listening to the client here instead, and calls
   * {@link adoptConnection} when it is registered already.
   */
  protected abstract openConnection(): void;
  /** Write one line now, unpaced. */
  protected abstract writeLine(line: string): void;
  /** Send QUIT and close; resolve when the socket is closed. Never called for an adopted client. */
  protected abstract closeConnection(message: string): Promise<void>;
  /** Stops listening to an adopted client (set by the adapter when it starts listening). */
  protected detach: (() => void) | null = null;

  on<E extends IrcEventName>(event: E, listener: (...args: IrcEvents[E]) => void): Unsubscribe {
    const untyped = listener as (...args: unknown[]) => void;
    this.events.on(event, untyped);
    return () => this.events.off(event, untyped);
  }

  connect(): void {
    this.quitting = false;
    if (this.adopted) {
      this.logger.info('attaching to a connected client', { nick: this.options.nick });
      this.openConnection();
      return;
    }
    this.logger.info('connecting', {
      host: this.options.host,
      port: this.options.port,
      tls: this.options.tls,
      nick: this.options.nick,
    });
    this.openConnection();
  }

  async quit(message: string): Promise<void> {
    this.quitting = true;
    this.reconnector.cancel();
    this.pacer.clear();
    if (this.adopted) {
      // An adopted client stays with its owner: stop listening, send no QUIT.
      this.detach?.();
      this.detach = null;
      if (this.state.connected) this.handleDisconnected('detached from the client');
    } else if (this.state.connected) {
      await this.closeConnection(message);
    }
  }

  send(command: string, ...params: string[]): void {
    this.sendLine(command, params);
  }

  privmsg(target: string, text: string, onSent?: () => void): void {
    const pieces = splitText(text);
    pieces.forEach((piece, index) =>
      this.pacer.enqueue(formatLine('PRIVMSG', [target, piece]), index === pieces.length - 1 ? onSent : undefined),
    );
  }

  sendLine(command: string, params: readonly string[], options?: LineOptions): void {
    this.pacer.enqueue(formatLine(command, params), undefined, options);
  }

  notice(target: string, text: string, options?: LineOptions): void {
    for (const piece of splitText(text)) this.pacer.enqueue(formatLine('NOTICE', [target, piece]), undefined, options);
  }

  ctcpRequest(target: string, type: string, text?: string, onSent?: () => void): void {
    this.pacer.enqueue(formatLine('PRIVMSG', [target, `\x01${type}${text ? ' ' + text : ''}\x01`]), onSent);
  }

  ctcpReply(target: string, type: string, text: string): void {
    this.send('NOTICE', target, `\x01${type} ${text}\x01`);
  }

  request(request: IrcRequest): Promise<IrcMessage[]> {
    return this.requests.add(request);
  }

  /** A paced or requested line, counted as written ({@link ReadGauge}). */
  private put(line: string): void {
    this.gauge.wrote();
    this.writeLine(line);
  }

  /** A PING whose answer says the server has read every line written before it (the gauge's marker). */
  private markRead(): Promise<unknown> {
    if (!this.state.connected) return Promise.reject(new Error('not connected'));
    const token = `read-${this.connectionNumber}-${this.gauge.written()}`;
    return this.request({
      send: ['PING', token],
      reply: () => false,
      end: (message) => message.command === 'PONG' && message.params.at(-1) === token,
      timeoutMs: MARKER_TIMEOUT_MS,
    });
  }

  /** When the server starts or stops holding the bot's lines: at most one line at info a minute, the rest at debug. */
  private logLag(lagged: boolean, lagMs: number): void {
    const now = Date.now();
    const level = now - this.lagLoggedAt >= 60_000 ? 'info' : 'debug';
    if (level === 'info') this.lagLoggedAt = now;
    if (lagged) {
      this.logger[level](
        'the server holds the bot’s lines (a penalty for commands, e.g. fake lag); paced lines wait for it',
        {
          held_ms: lagMs,
        },
      );
    } else this.logger[level]('the server reads the bot’s lines at once again', { held_ms: lagMs });
  }

  /** Whether the connection was handed over by another bot (attach), which owns it. */
  get attached(): boolean {
    return this.adopted;
  }

  casefold(name: string): string {
    return casefold(name, this.state.casemapping);
  }

  /** Adapters call this when the socket is open. */
  protected handleConnected(): void {
    this.connectionNumber++;
    this.gauge.reset();
    this.fallbacksTried = 0;
    this.state.connected = true;
    this.readySent = false;
    this.clearRegistrationTimer();
    // An adopted client registers (or not) under its owner's rules.
    if (this.adopted) return;
    const connection = this.connectionNumber;
    this.registrationTimer = setTimeout(() => {
      this.registrationTimer = null;
      if (this.connectionNumber !== connection || !this.state.connected || this.state.registered) return;
      this.logger.warn('registration did not complete; reconnecting', {
        after_ms: this.options.registrationTimeoutMs ?? REGISTRATION_TIMEOUT_MS,
      });
      void this.closeConnection('Registration timed out');
    }, this.options.registrationTimeoutMs ?? REGISTRATION_TIMEOUT_MS);
    // The socket keeps the process alive; this watchdog alone must not.
    this.registrationTimer.unref();
  }

  private clearRegistrationTimer(): void {
    if (this.registrationTimer) clearTimeout(this.registrationTimer);
    this.registrationTimer = null;
  }

  /** Adapters call this for every line received. */
  protected handleMessage(message: IrcMessage): void {
    this.updateState(message);
    this.emit('message', message);
    this.requests.match(message);
  }

  /** Adapters call this when the socket has closed, for whatever reason. */
  protected handleDisconnected(reason: string): void {
    const wasConnected = this.state.connected;
    this.clearRegistrationTimer();
    this.state.reset(this.options.nick);
    this.pacer.clear();
    this.requests.rejectAll(reason);
    if (wasConnected) {
      if (this.quitting) this.logger.info('disconnected', { reason });
      else this.logger.warn('disconnected', { reason });
      this.emit('disconnected', reason);
    }
    if (!this.quitting && !this.adopted) {
      this.reconnector.schedule(() => {
        if (!this.quitting) this.openConnection();
      });
    }
  }

  /**
   * Adapters call this for a client that was connected and registered before it
   * was handed over: the lines that built the session state went by unseen, so
   * the server is asked again (CAP LIST, VERSION for ISUPPORT, WHOIS of itself
   * for account, operator status and server); then OPER if configured, and `ready`.
   */
  protected adoptConnection(nick: string): void {
    this.handleConnected();
    this.state.registered = true;
    this.state.nick = nick;
    // A MOTD the owner asks for later must not start another sync.
    this.readySent = true;
    void this.resyncAdopted(nick);
  }

  private async resyncAdopted(nick: string): Promise<void> {
    const startedFor = this.connectionNumber;
    const token = `resync-${startedFor}-${Date.now()}`;
    try {
      await this.request({
        send: ['CAP', 'LIST'],
        reply: () => false,
        // `CAP me LIST * :...` continues; 421/451: a server without CAP.
        end: (message) =>
          (message.command === 'CAP' && message.params[1] === 'LIST' && message.params.length < 4) ||
          message.command === '421',
        timeoutMs: 10000,
      });
      // VERSION makes the server send its 005 lines again; the PONG after them marks their end. Both go
      // out as requests, in order; the VERSION answer (351) itself is read as any line is.
      void this.request({
        send: ['VERSION'],
        reply: () => false,
        end: (message) => ['351', '402', '421'].includes(message.command),
        timeoutMs: 10000,
      }).catch(() => undefined);
      await this.request({
        send: ['PING', token],
        reply: () => false,
        end: (message) => message.command === 'PONG' && message.params.at(-1) === token,
        timeoutMs: 10000,
      });
      const whois = await this.request({
        send: ['WHOIS', nick],
        reply: (message) => ['312', '313', '330'].includes(message.command) && this.state.isSelf(message.params[1]),
        end: (message) => ['318', '401'].includes(message.command) && this.state.isSelf(message.params[1]),
        timeoutMs: 10000,
      });
      for (const line of whois) {
        if (line.command === '312') this.state.server = line.params[2] ?? this.state.server;
        if (line.command === '313') this.state.isOperator = true;
        if (line.command === '330') this.state.account = line.params[2] ?? null;
      }
    } catch (error) {
      this.logger.warn('could not ask the server for the session state of the attached client', {
        error: errorMessage(error),
      });
    }
    if (this.state.connected && this.connectionNumber === startedFor) {
      this.logger.info('attached', { nick: this.state.nick, server: this.state.server });
      await this.afterRegistration();
    }
  }

  private emit<E extends IrcEventName>(event: E, ...args: IrcEvents[E]): void {
    try {
      this.events.emit(event, ...args);
    } catch (error) {
      // Listeners from plugins are wrapped by the host; this guards the transport's own loop.
      this.logger.error(`listener for ${event} threw`, { error: errorMessage(error) });
    }
  }

  /** Nicks tried at this connection's registration after the configured one was taken. */
  private fallbacksTried = 0;

  /**
   * The configured nick is taken (433), held (437, a nick delay) or refused (432: the fallback too long for the
   * server) while registering: register with another — `Nick_`, `Nick__`, then the nick's first five
   * characters and four digits, each at most nine characters (RFC 1459's NICKLEN, before ISUPPORT says more) —
   * so the service runs meanwhile; the bot policy takes the nick back once registered. At most
   * {@link MAX_FALLBACK_NICKS} tries a connection; then the registration watchdog reconnects.
   */
  private nickTakenAtRegistration(message: IrcMessage): void {
    if (this.adopted || this.state.registered || !this.state.connected) return;
    if (message.command !== '433' && message.command !== '437' && message.command !== '432') return;
    const wanted = this.options.nick;
    const tried = ++this.fallbacksTried;
    if (tried > MAX_FALLBACK_NICKS) {
      if (tried === MAX_FALLBACK_NICKS + 1) {
        this.logger.error('no nick could be registered; trying again with the next connection', {
          nick: wanted,
          tries: MAX_FALLBACK_NICKS,
        });
      }
      return;
    }
    const fallback =
      tried <= 2
        ? `${wanted.slice(0, 9 - tried)}${'_'.repeat(tried)}`
        : `${wanted.slice(0, 5)}${Math.floor(1000 + Math.random() * 9000)}`;
    this.logger.warn('the nick is taken: registering with another, to take it back once registered', {
      nick: message.params[1] ?? wanted,
      instead: fallback,
    });
    this.writeLine(`NICK ${fallback}`);
  }

  /** The session learns from the line; the connection acts on the steps it marks. */
  private updateState(message: IrcMessage): void {
    const { state } = this;
    this.nickTakenAtRegistration(message);
    switch (state.apply(message)) {
      case 'registered':
        this.reconnector.succeeded();
        this.clearRegistrationTimer();
        this.logger.info('registered', { nick: state.nick, server: state.server });
        break;
      case 'motd-ended':
        if (!this.readySent) {
          this.readySent = true;
          void this.afterRegistration();
        }
        break;
      case 'logged-in':
        this.logger.info('logged in', { account: state.account });
        break;
      case 'sasl-failed':
        this.logger.error('SASL login failed', { numeric: message.command, reply: message.params.at(-1) });
        break;
      case undefined:
        break;
    }
  }

  /** OPER if configured, bot mode if the server has one, then `ready`. */
  private async afterRegistration(): Promise<void> {
    const { oper } = this.options;
    // An adopted connection may be an operator already.
    if (oper && !this.state.isOperator) {
      try {
        const reply = await this.request({
          send: ['OPER', oper.name, oper.password],
          reply: () => false,
          end: (message) => ['381', '491', '464', '481'].includes(message.command),
          timeoutMs: 10000,
        });
        const last = reply.at(-1)!;
        if (last.command === '381') this.logger.info('opered up', { oper: oper.name });
        else this.logger.error('OPER refused', { numeric: last.command, reply: last.params.at(-1) });
      } catch (error) {
        this.logger.error('OPER got no answer', { error: errorMessage(error) });
      }
    }
    const { botMode } = this.state.profile;
    if (botMode) this.send('MODE', this.state.nick, `+${botMode}`);
    if (this.state.connected) {
      this.logger.info('ready', {
        account: this.state.account,
        operator: this.state.isOperator,
        caps: [...this.state.caps].sort().join(','),
      });
      this.emit('ready');
    }
  }
}
