import net from 'node:net';

/** One parsed IRC line (IRCv3 tags, prefix, command, params). */
export interface IrcMessage {
  raw: string;
  tags: Record<string, string | true>;
  prefix: string | null;
  /** The nick part of the prefix (the whole prefix for a server). */
  nick: string | null;
  /** Upper-cased command or three-digit numeric. */
  command: string;
  params: string[];
}

/** WEBIRC gateway claim sent before registration. */
export interface WebircOptions {
  password: string;
  gateway?: string;
  hostname: string;
  ip: string;
}

/** Options of {@link IrcClient}. Only loopback hosts are accepted. */
export interface IrcClientOptions {
  port: number;
  nick: string;
  host?: string;
  user?: string;
  realname?: string;
  /** Reply to CTCP VERSION with this string; no reply when null/undefined. */
  ctcpVersion?: string | null;
  /** Print every line sent and received. */
  log?: boolean;
  /** Keep every received line in `lines` (default true). */
  keep?: boolean;
  /** Skip parsing of lines nobody waits for (big crowds; PING and CTCP VERSION are still handled). */
  lite?: boolean;
  webirc?: WebircOptions;
  sasl?: { account: string; password: string };
  /** Extra capabilities to request (CAP negotiation happens when this or sasl is set). */
  caps?: string[];
  registerTimeout?: number;
  /** The loopback address to connect from (`127.0.3.1`): a server that limits connections per address sees others. */
  localAddress?: string;
}

/** Options of {@link IrcClient.waitFor}. */
export interface WaitOptions {
  timeout?: number;
  /** Used in the timeout error message. */
  what?: string;
}

/** Outcome of {@link IrcClient.register}. */
export interface RegisterResult {
  /** True when 001 arrived. */
  ok: boolean;
  /** The SASL result numeric (903 success, 904 failure, ...) or null without SASL. */
  sasl: string | null;
  saslText: string | null;
  /** The line that ended registration (001, 433, 465 or ERROR). */
  last: IrcMessage;
}

/** A line predicate, or a command name to match. */
export type LineMatcher = string | ((message: IrcMessage) => boolean);

interface Waiter {
  predicate: (message: IrcMessage) => boolean;
  resolve: (value: IrcMessage | IrcMessage[]) => void;
  reject: (error: Error) => void;
  what: string;
  collected: IrcMessage[] | null;
  timer: NodeJS.Timeout;
}

const loopbackHosts = new Set(['127.0.0.1', '::1', 'localhost']);
const saslResults = new Set(['903', '904', '905', '906', '907', '908']);
const registrationEnds = new Set(['001', '433', '465', 'ERROR']);

/** Parses one raw IRC line (without CR LF). */
export function parseLine(raw: string): IrcMessage {
  let line = raw;
  const tags: Record<string, string | true> = {};
  let prefix: string | null = null;
  if (line.startsWith('@')) {
    const space = line.indexOf(' ');
    for (const pair of line.slice(1, space).split(';')) {
      const equals = pair.indexOf('=');
      if (equals < 0) tags[pair] = true;
      else tags[pair.slice(0, equals)] = pair.slice(equals + 1);
    }
    line = line.slice(space + 1);
  }
  if (line.startsWith(':')) {
    const space = line.indexOf(' ');
    prefix = space < 0 ? line.slice(1) : line.slice(1, space);
    line = space < 0 ? '' : line.slice(space + 1);
  }
  const params: string[] = [];
  while (line.length) {
    if (line.startsWith(':')) {
      params.push(line.slice(1));
      break;
    }
    const space = line.indexOf(' ');
    if (space < 0) {
      params.push(line);
      break;
    }
    params.push(line.slice(0, space));
    line = line.slice(space + 1).replace(/^ +/, '');
  }
  const command = (params.shift() ?? '').toUpperCase();
  const bang = prefix?.indexOf('!') ?? -1;
  const nick = prefix !== null && bang >= 0 ? prefix.slice(0, bang) : prefix;
  return { raw, tags, prefix, nick, command, params };
}

/**
 * A small IRC client for tests and the crowd: plays a person on the loopback test network.
 * Handles PING, CTCP VERSION (when configured), WEBIRC and SASL PLAIN; everything else is
 * up to the caller through `waitFor`, `request` and `onLine`.
 */
export class IrcClient {
  readonly options: Required<Pick<IrcClientOptions, 'host' | 'user' | 'realname'>> & IrcClientOptions;
  /** The current nick (updated from 001). */
  nick: string;
  /** Every parsed line received so far (when `keep` is on). */
  readonly lines: IrcMessage[] = [];
  registered = false;
  closed = false;
  /** The last socket error, if any. */
  error: Error | null = null;
  /** Called for every raw line before parsing. */
  onRaw: ((raw: string) => void) | null = null;
  /** Called for every parsed line. */
  onLine: ((message: IrcMessage) => void) | null = null;

  private socket: net.Socket | null = null;
  private buffer = '';
  private waiters: Waiter[] = [];
  private readonly closeListeners: (() => void)[] = [];

  constructor(options: IrcClientOptions) {
    this.options = { host: '127.0.0.1', user: 'tester', realname: 'Test client', ...options };
    if (!loopbackHosts.has(this.options.host)) {
      throw new Error(`IrcClient connects to loopback only, got host ${this.options.host}`);
    }
    this.nick = options.nick;
  }

  /** Opens the TCP connection (no registration yet). */
  connect(): Promise<this> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({
        host: this.options.host,
        port: this.options.port,
        ...(this.options.localAddress ? { localAddress: this.options.localAddress } : {}),
      });
      this.socket = socket;
      socket.setEncoding('utf8');
      socket.setNoDelay(true);
      socket.once('error', reject);
      socket.on('error', (error) => {
        this.error = error;
      });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(this);
      });
      socket.on('data', (chunk: string) => this.onData(chunk));
      socket.on('close', () => {
        this.closed = true;
        for (const waiter of this.waiters.splice(0)) {
          clearTimeout(waiter.timer);
          waiter.reject(new Error(`${this.nick}: connection closed while waiting for ${waiter.what}`));
        }
        for (const listener of this.closeListeners.splice(0)) listener();
      });
    });
  }

  /** Sends one raw line (CR LF is appended). Ignored once the connection is closed. */
  send(line: string): void {
    if (!this.socket || this.closed) return;
    if (this.options.log) console.log(`>> [${this.nick}] ${line}`);
    this.socket.write(`${line}\r\n`);
  }

  /** Resolves with the first line matching, received after this call. */
  waitFor(matcher: LineMatcher, options: WaitOptions = {}): Promise<IrcMessage> {
    return this.addWaiter(matcher, options, false) as Promise<IrcMessage>;
  }

  /** Resolves with every line received up to and including the first one matching. */
  collectUntil(matcher: LineMatcher, options: WaitOptions = {}): Promise<IrcMessage[]> {
    return this.addWaiter(matcher, options, true) as Promise<IrcMessage[]>;
  }

  /** Sends a command and collects the replies up to the first of the end commands (e.g. 318 for WHOIS). */
  request(line: string, endCommands: string | string[], timeout = 10000): Promise<IrcMessage[]> {
    const ends = Array.isArray(endCommands) ? endCommands : [endCommands];
    const replies = this.collectUntil((message) => ends.includes(message.command), {
      timeout,
      what: ends.join('/'),
    });
    this.send(line);
    return replies;
  }

  /** Registers: optional WEBIRC, optional CAP/SASL PLAIN, then NICK/USER until 001 (or 433/465/ERROR). */
  async register(): Promise<RegisterResult> {
    const options = this.options;
    let sasl: string | null = null;
    let saslText: string | null = null;
    const negotiate = Boolean(options.sasl || options.caps?.length);
    if (options.webirc) {
      const { password, gateway = 'testgw', hostname, ip } = options.webirc;
      this.send(`WEBIRC ${password} ${gateway} ${hostname} ${ip}`);
    }
    // Armed before NICK so a fast 433 or ERROR is never missed.
    const finished = this.waitFor((message) => registrationEnds.has(message.command), {
      what: '001',
      timeout: options.registerTimeout ?? 15000,
    });
    finished.catch(() => undefined);
    const capLs = negotiate
      ? this.waitFor(
          (message) => message.command === 'CAP' && message.params[1] === 'LS' && message.params[2] !== '*',
          {
            what: 'CAP LS',
          },
        )
      : null;
    capLs?.catch(() => undefined);
    if (negotiate) this.send('CAP LS 302');
    this.send(`NICK ${options.nick}`);
    this.send(`USER ${options.user} 0 * :${options.realname}`);
    if (capLs) {
      await capLs;
      const wanted = [...(options.caps ?? []), ...(options.sasl ? ['sasl'] : [])];
      const answer = await this.request(`CAP REQ :${wanted.join(' ')}`, 'CAP').then((lines) => lines.at(-1));
      if (!answer || answer.params[1] !== 'ACK') {
        throw new Error(`${this.nick}: CAP REQ refused: ${answer?.raw ?? 'no answer'}`);
      }
      if (options.sasl) {
        const challenge = (await this.request('AUTHENTICATE PLAIN', ['AUTHENTICATE', ...saslResults])).at(-1);
        let last = challenge;
        if (challenge?.command === 'AUTHENTICATE') {
          const { account, password } = options.sasl;
          const blob = Buffer.from(`${account}\0${account}\0${password}`).toString('base64');
          last = (await this.request(`AUTHENTICATE ${blob}`, [...saslResults])).at(-1);
        }
        sasl = last?.command ?? null;
        saslText = last?.params.at(-1) ?? null;
      }
      this.send('CAP END');
    }
    const last = await finished;
    return { ok: last.command === '001', sasl, saslText, last };
  }

  /** Sends QUIT and closes our side; resolves when the connection is closed. */
  quit(message = 'bye'): Promise<void> {
    if (this.closed || !this.socket) return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.closeListeners.push(resolve));
    this.send(`QUIT :${message}`);
    this.socket.end();
    const socket = this.socket;
    // A server that never closes must not hang the caller.
    const timer = setTimeout(() => socket.destroy(), 3000);
    return closed.finally(() => clearTimeout(timer));
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.socket?.destroy();
  }

  private addWaiter(matcher: LineMatcher, options: WaitOptions, collect: boolean): Promise<IrcMessage | IrcMessage[]> {
    const predicate = typeof matcher === 'string' ? (message: IrcMessage) => message.command === matcher : matcher;
    const what = options.what ?? (typeof matcher === 'string' ? matcher : 'line');
    if (this.closed) return Promise.reject(new Error(`${this.nick}: connection closed, cannot wait for ${what}`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        what,
        collected: collect ? [] : null,
        timer: setTimeout(() => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(new Error(`${this.nick}: timeout waiting for ${what}`));
        }, options.timeout ?? 10000),
      };
      this.waiters.push(waiter);
    });
  }

  private onData(chunk: string): void {
    const text = this.buffer + chunk;
    let start = 0;
    let newline: number;
    while ((newline = text.indexOf('\n', start)) >= 0) {
      const end = text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      const raw = text.slice(start, end);
      start = newline + 1;
      if (raw) this.onRawLine(raw);
    }
    this.buffer = start ? text.slice(start) : text;
  }

  private onRawLine(raw: string): void {
    this.onRaw?.(raw);
    if (
      this.options.lite &&
      this.waiters.length === 0 &&
      !this.onLine &&
      !raw.startsWith('PING') &&
      !raw.includes('\x01VERSION\x01')
    ) {
      return;
    }
    const message = parseLine(raw);
    if (this.options.log) console.log(`<< [${this.nick}] ${raw}`);
    if (message.command === 'PING') this.send(`PONG :${message.params[0] ?? ''}`);
    if (message.command === '001') {
      this.registered = true;
      this.nick = message.params[0] ?? this.nick;
    }
    if (message.command === 'NICK' && message.nick === this.nick && message.params[0]) this.nick = message.params[0];
    if (
      message.command === 'PRIVMSG' &&
      this.options.ctcpVersion &&
      message.params[1] === '\x01VERSION\x01' &&
      message.nick
    ) {
      this.send(`NOTICE ${message.nick} :\x01VERSION ${this.options.ctcpVersion}\x01`);
    }
    if (this.options.keep !== false) this.lines.push(message);
    this.onLine?.(message);
    for (const waiter of [...this.waiters]) {
      waiter.collected?.push(message);
      if (waiter.predicate(message)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        clearTimeout(waiter.timer);
        waiter.resolve(waiter.collected ?? message);
      }
    }
  }
}
