/**
 * What every adapter shares: session state kept from the server's own lines,
 * the paced send queue, request/reply collection, OPER and bot mode after
 * registration, CTCP PING and VERSION answers, and reconnecting with
 * exponential backoff and jitter. An adapter supplies only how to open a
 * connection, write a line and close.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from '../logger.js';
import { errorMessage } from '../logger.js';
import { ClientThrottle, RateLimiter, type BucketConfig } from '../rate-limiter.js';
import { casefold, parseCasemapping, type Casemapping } from './casemapping.js';
import { Pacer, type LineOptions } from './pacer.js';
import { formatLine, splitText } from './text.js';
import type {
  IrcEventName,
  IrcEvents,
  IrcMessage,
  IrcRequest,
  IrcSessionState,
  IrcTransport,
  Unsubscribe,
} from './port.js';

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
  /** Answer to CTCP VERSION. */
  version: string;
  /** Give up on a connection that has not registered after this long (default 30 s). */
  registrationTimeoutMs?: number;
}

/**
 * A connection that has not registered after this long is dropped and retried: a server
 * waits for SASL (and CAP END) indefinitely, and services relinking after a netsplit may
 * leave AUTHENTICATE unanswered.
 */
const REGISTRATION_TIMEOUT_MS = 30000;

/**
 * CTCP requests (PING, VERSION) one client (ident@host) gets answered: 3 at once, then one every 5 s.
 * Fixed rather than `irc.commands`: a CTCP answer costs a line as a command does, but nobody needs many.
 */
export const CTCP_ANSWERS_PER_CLIENT: BucketConfig = { capacity: 3, refill_per_second: 0.2 };
/** CTCP requests answered for all clients together: 10 at once, then one a second (many clients flooding). */
export const CTCP_ANSWERS_IN_ALL: BucketConfig = { capacity: 10, refill_per_second: 1 };
/** The urgent lane CTCP answers share in the send queue (no folded nick can hold \x01). */
const CTCP_LANE = '\x01ctcp';
/**
 * A CTCP answer that has not left this long after its request is dropped: a PING answered late measures
 * nothing, and with slow pacing the answers would otherwise pile up ahead of the bot's other output.
 */
export const CTCP_DEADLINE_MS = 10_000;

class SessionState implements IrcSessionState {
  connected = false;
  registered = false;
  nick: string;
  account: string | null = null;
  isOperator = false;
  server = '';
  serverVersion = '';
  isupport = new Map<string, string>();
  caps = new Set<string>();
  casemapping: Casemapping = 'rfc1459';
  prefixes: { mode: string; symbol: string }[] = [
    { mode: 'o', symbol: '@' },
    { mode: 'v', symbol: '+' },
  ];

  constructor(nick: string) {
    this.nick = nick;
  }

  reset(nick: string): void {
    this.connected = false;
    this.registered = false;
    this.nick = nick;
    this.account = null;
    this.isOperator = false;
    this.server = '';
    this.serverVersion = '';
    this.isupport.clear();
    this.caps.clear();
  }
}

/**
 * Requests whose reply is awaited go out, in order (answers to people first), as soon as fewer than this
 * many are unanswered, outside the paced queue: one that waits for its reply before the next cannot flood
 * a server (its receive queue holds a line or two at most; a server that throttles commands only delays
 * them), while pacing them cost a big network's sync tens of seconds (one WHO per line slot).
 */
export const REQUESTS_IN_FLIGHT = 2;

const NO_PENDING: readonly PendingRequest[] = [];

interface PendingRequest {
  request: IrcRequest;
  collected: IrcMessage[];
  resolve: (lines: IrcMessage[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

export abstract class BaseTransport implements IrcTransport {
  readonly state: SessionState;
  protected readonly events = new EventEmitter();
  private readonly pacer: Pacer;
  /** Requests sent and not yet answered. */
  private readonly pending: PendingRequest[] = [];
  /** Requests waiting for their turn to be sent, answers to people first, each in order. */
  private readonly waiting: { urgent: PendingRequest[]; other: PendingRequest[] } = { urgent: [], other: [] };
  /**
   * Set by adapters that were handed a connection (attach): the embedding bot
   * owns it, so it is never reconnected from here; its own reconnects are followed.
   */
  protected adopted = false;
  private reconnectAttempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** Fires when a connection has not registered in time (e.g. SASL left unanswered while services relink). */
  private registrationTimer: NodeJS.Timeout | null = null;
  private quitting = false;
  private readySent = false;
  /** Counts connections, so a loop started for one connection ends with it. */
  private connectionNumber = 0;
  /** By ident@host: the CTCP requests each client may still have answered. */
  private readonly ctcpAllowance = new ClientThrottle(CTCP_ANSWERS_PER_CLIENT);
  /** The CTCP requests all clients together may still have answered. */
  private readonly ctcpTotal = new RateLimiter(CTCP_ANSWERS_IN_ALL);
  /** Whether the limit of all clients together refuses answers, logged once until one is answered again. */
  private ctcpAllThrottled = false;

  constructor(
    protected readonly options: TransportOptions,
    protected readonly logger: Logger,
  ) {
    this.state = new SessionState(options.nick);
    this.pacer = new Pacer({
      burst: options.pacing.burst,
      intervalMs: options.pacing.intervalMs,
      write: (line) => this.writeLine(line),
    });
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
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
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
    this.pacer.enqueue(formatLine(command, params));
  }

  privmsg(target: string, text: string, onSent?: () => void): void {
    const pieces = splitText(text);
    pieces.forEach((piece, index) =>
      this.pacer.enqueue(formatLine('PRIVMSG', [target, piece]), index === pieces.length - 1 ? onSent : undefined),
    );
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
    return new Promise((resolve, reject) => {
      if (!this.state.connected) {
        reject(new Error(`not connected; cannot send ${request.send[0]}`));
        return;
      }
      const pending: PendingRequest = { request, collected: [], resolve, reject, timer: undefined };
      (request.urgent ? this.waiting.urgent : this.waiting.other).push(pending);
      this.sendRequests();
    });
  }

  /** Send waiting requests while fewer than {@link REQUESTS_IN_FLIGHT} are unanswered. */
  private sendRequests(): void {
    while (this.pending.length < REQUESTS_IN_FLIGHT && this.state.connected) {
      const pending = this.waiting.urgent.shift() ?? this.waiting.other.shift();
      if (!pending) return;
      const { request } = pending;
      const timeoutMs = request.timeoutMs ?? 15000;
      // The clock runs from the moment the line is written: a request waiting its turn is not timed out.
      pending.timer = setTimeout(() => {
        this.removePending(pending);
        pending.reject(new Error(`no complete reply to ${request.send[0]} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.push(pending);
      this.writeLine(formatLine(request.send[0]!, request.send.slice(1)));
      request.onSent?.();
    }
  }

  casefold(name: string): string {
    return casefold(name, this.state.casemapping);
  }

  /** Adapters call this when the socket is open. */
  protected handleConnected(): void {
    this.connectionNumber++;
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
    for (const pending of this.pending.length > 0 ? [...this.pending] : NO_PENDING) {
      const { request } = pending;
      const isEnd = request.end(message);
      if (isEnd) pending.collected.push(message);
      else if (request.reply(message)) {
        if (request.onReply) request.onReply(message);
        else pending.collected.push(message);
      }
      if (isEnd) {
        this.removePending(pending);
        pending.resolve(pending.collected);
      }
    }
    // An attached client's CTCP is its owner's business.
    if (!this.adopted) this.answerCtcp(message);
  }

  /**
   * Answer CTCP PING (its payload echoed) and VERSION ({@link TransportOptions.version}) by NOTICE, sent in
   * private or to a channel, as IRC clients do. Here rather than by either library, so both transports answer
   * alike, through the send queue and within {@link CTCP_ANSWERS_PER_CLIENT} and {@link CTCP_ANSWERS_IN_ALL}:
   * requests beyond them go unanswered, so a flood costs the bot no more than a few lines.
   */
  private answerCtcp(message: IrcMessage): void {
    const text = message.params[1] ?? '';
    const { source } = message;
    if (message.command !== 'PRIVMSG' || !source?.nick || !text.startsWith('\x01')) return;
    if (this.casefold(source.nick) === this.casefold(this.state.nick)) return;
    // The closing \x01 is optional (CTCP); the payload is whatever follows the first space.
    const body = text.slice(1, text.endsWith('\x01') && text.length > 1 ? -1 : undefined);
    const space = body.indexOf(' ');
    const type = (space < 0 ? body : body.slice(0, space)).toUpperCase();
    let answer: string;
    if (type === 'PING') answer = space < 0 ? 'PING' : `PING ${body.slice(space + 1)}`;
    else if (type === 'VERSION') answer = `VERSION ${this.options.version}`;
    else return;
    if (!this.ctcpAllowed(`${source.ident}@${source.host}`.toLowerCase())) return;
    const deadline = Date.now() + CTCP_DEADLINE_MS;
    this.pacer.enqueue(formatLine('NOTICE', [source.nick, `\x01${answer}\x01`]), undefined, {
      urgent: true,
      key: CTCP_LANE,
      stillWanted: () => Date.now() <= deadline,
    });
  }

  /**
   * Whether a client's CTCP request is answered. A refusal is logged once per run: per client when it is
   * that client's limit, once for everyone when it is the limit of all clients together (a flood from many
   * hosts then writes one line, not one per host).
   */
  private ctcpAllowed(client: string): boolean {
    const decision = this.ctcpAllowance.take(client);
    if (!decision.allowed) {
      if (decision.firstRefusal) this.logger.warn('CTCP requests throttled: not answered', { client });
      return false;
    }
    if (!this.ctcpTotal.take('').allowed) {
      if (!this.ctcpAllThrottled) {
        this.ctcpAllThrottled = true;
        this.logger.warn('CTCP requests throttled: too many from all clients together; not answered');
      }
      return false;
    }
    this.ctcpAllThrottled = false;
    return true;
  }

  /** Adapters call this when the socket has closed, for whatever reason. */
  protected handleDisconnected(reason: string): void {
    const wasConnected = this.state.connected;
    this.clearRegistrationTimer();
    this.state.reset(this.options.nick);
    this.pacer.clear();
    for (const pending of [
      ...this.pending.splice(0),
      ...this.waiting.urgent.splice(0),
      ...this.waiting.other.splice(0),
    ]) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`disconnected before the reply to ${pending.request.send[0]}: ${reason}`));
    }
    if (wasConnected) {
      if (this.quitting) this.logger.info('disconnected', { reason });
      else this.logger.warn('disconnected', { reason });
      this.emit('disconnected', reason);
    }
    if (!this.quitting && !this.adopted) this.scheduleReconnect();
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
        reply: (message) => ['312', '313', '330'].includes(message.command) && this.isSelf(message.params[1]),
        end: (message) => ['318', '401'].includes(message.command) && this.isSelf(message.params[1]),
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

  private isSelf(nick: string | undefined): boolean {
    return nick !== undefined && this.casefold(nick) === this.casefold(this.state.nick);
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer) return;
    const { minMs, maxMs } = this.options.reconnect;
    const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(this.reconnectAttempts, 20));
    // Full jitter: many bots dropped by one netsplit must not come back in step.
    const wait = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.reconnectAttempts++;
    this.logger.info('reconnecting', { attempt: this.reconnectAttempts, wait_ms: wait });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.quitting) this.openConnection();
    }, wait);
  }

  private removePending(pending: PendingRequest): void {
    clearTimeout(pending.timer);
    const index = this.pending.indexOf(pending);
    if (index >= 0) this.pending.splice(index, 1);
    this.sendRequests();
  }

  private emit<E extends IrcEventName>(event: E, ...args: IrcEvents[E]): void {
    try {
      this.events.emit(event, ...args);
    } catch (error) {
      // Listeners from plugins are wrapped by the host; this guards the transport's own loop.
      this.logger.error(`listener for ${event} threw`, { error: errorMessage(error) });
    }
  }

  private updateState(message: IrcMessage): void {
    const { state } = this;
    const { params } = message;
    switch (message.command) {
      case '001':
        state.registered = true;
        state.nick = params[0] ?? state.nick;
        state.server = message.source?.nick ?? '';
        this.reconnectAttempts = 0;
        this.clearRegistrationTimer();
        this.logger.info('registered', { nick: state.nick, server: state.server });
        break;
      case '004': // RPL_MYINFO: me server version usermodes chanmodes
        state.serverVersion = params[2] ?? '';
        break;
      case '351': // RPL_VERSION: me version.debuglevel server :comments
        // An attached client's 004 went by before the transport saw it: the VERSION its resync asks answers
        // (before its WHOIS names the server). Else only our own server's answer: a latency probe asks services too.
        if (state.serverVersion === '' && (state.server === '' || message.source?.nick === state.server)) {
          state.serverVersion = (params[1] ?? '').replace(/\.$/, '');
        }
        break;
      case '005':
        this.applyIsupport(params.slice(1, -1));
        break;
      case '376': // RPL_ENDOFMOTD
      case '422': // ERR_NOMOTD
        if (!this.readySent) {
          this.readySent = true;
          void this.afterRegistration();
        }
        break;
      case '900': // RPL_LOGGEDIN
        state.account = params[2] ?? null;
        this.logger.info('logged in', { account: state.account });
        break;
      case '901': // RPL_LOGGEDOUT
        state.account = null;
        break;
      case '904':
      case '905':
        this.logger.error('SASL login failed', { numeric: message.command, reply: params.at(-1) });
        break;
      case '381': // RPL_YOUREOPER
        state.isOperator = true;
        break;
      case 'NICK':
        if (message.source && this.casefold(message.source.nick) === this.casefold(state.nick)) {
          state.nick = params[0] ?? state.nick;
        }
        break;
      case 'MODE':
        if (params[0] && this.casefold(params[0]) === this.casefold(state.nick)) this.applyUserModes(params[1] ?? '');
        break;
      case 'CAP':
        this.applyCap(params[1] ?? '', params.at(-1) ?? '');
        break;
    }
  }

  private applyIsupport(tokens: string[]): void {
    const { state } = this;
    for (const token of tokens) {
      if (token.startsWith('-')) {
        state.isupport.delete(token.slice(1));
        continue;
      }
      const equals = token.indexOf('=');
      const key = equals < 0 ? token : token.slice(0, equals);
      const value = equals < 0 ? '' : token.slice(equals + 1);
      state.isupport.set(key, value);
      if (key === 'CASEMAPPING') state.casemapping = parseCasemapping(value);
      if (key === 'PREFIX') {
        const match = /^\(([^)]*)\)(.*)$/.exec(value);
        if (match && match[1]!.length === match[2]!.length) {
          state.prefixes = [...match[1]!].map((mode, index) => ({ mode, symbol: match[2]![index]! }));
        }
      }
    }
  }

  private applyUserModes(modes: string): void {
    let adding = true;
    for (const mode of modes) {
      if (mode === '+' || mode === '-') adding = mode === '+';
      else if (mode === 'o') this.state.isOperator = adding;
    }
  }

  private applyCap(subcommand: string, list: string): void {
    const names = list.split(' ').filter(Boolean);
    // LIST answers CAP LIST, asked when a registered connection is adopted.
    if (subcommand === 'ACK' || subcommand === 'LIST') {
      for (const name of names) {
        if (name.startsWith('-')) this.state.caps.delete(name.slice(1));
        else this.state.caps.add(name);
      }
    } else if (subcommand === 'DEL') {
      for (const name of names) this.state.caps.delete(name);
    }
  }

  /**
   * SASL was configured but did not log us in (services were away, e.g. just
   * after a netsplit): IDENTIFY to NickServ as soon as it is back online.
   */
  private async identifyWhenServicesReturn(): Promise<void> {
    const { sasl } = this.options;
    if (!sasl) return;
    this.logger.warn('not logged in after registration; will IDENTIFY to NickServ when it is online', {
      account: sasl.account,
    });
    const startedFor = this.connectionNumber;
    for (
      let attempt = 0;
      this.state.connected && this.state.account === null && this.connectionNumber === startedFor;
      attempt++
    ) {
      try {
        const reply = await this.request({
          send: ['ISON', 'NickServ'],
          reply: () => false,
          end: (message) => message.command === '303',
          timeoutMs: 10000,
        });
        if (/\bNickServ\b/i.test(reply.at(-1)?.params.at(-1) ?? '')) {
          this.send('PRIVMSG', 'NickServ', `IDENTIFY ${sasl.account} ${sasl.password}`);
          await new Promise((resolve) => setTimeout(resolve, 5000));
          continue;
        }
      } catch {
        // disconnected or no answer: the loop condition decides
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** attempt, 30000)));
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
    if (this.options.sasl && this.state.account === null) void this.identifyWhenServicesReturn();
    const botMode = this.state.isupport.get('BOT');
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
