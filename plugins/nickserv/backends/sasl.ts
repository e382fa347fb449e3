/**
 * The `sasl` backend: asks the IRC server itself, the way every IRC client
 * logs in. A short-lived connection negotiates `CAP LS 302`, requests `sasl`,
 * runs `AUTHENTICATE PLAIN` with the nick and password, and quits on the
 * result. It never sends NICK, USER or `CAP END`, so registration cannot
 * complete: the connection is never a user, and no WHO, LUSERS count or
 * connect notice ever shows it (checked on InspIRCd 3 + Atheme).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { errorMessage } from '../../../lib/sdk.js';
import {
  abortReason,
  ServiceUnavailableError,
  type CheckOutcome,
  type CheckRequest,
  type CredentialBackend,
} from './backend.js';

export interface SaslBackendOptions {
  host: string;
  port: number;
  tls: boolean;
  tlsVerify: boolean;
  /** The whole exchange, connect to result, must finish within this. */
  timeoutMs: number;
  /** Opens the connection; tests pass a fake. Defaults to TCP or TLS per `tls`. */
  connect?: (options: SaslBackendOptions) => Duplex;
  /**
   * Whether the nickname service is on the network now (the plugin asks WHOIS over the bot's connection).
   * Asked when CAP LS lists no `sasl`, which means either that services are away (InspIRCd withdraws the
   * cap) or that the server has no SASL at all (ircd-hybrid, ngircd); the error then says which.
   */
  servicesOnline?: () => Promise<boolean>;
  /**
   * Whether the IRC server's software logs users in with SASL at all, as the bot's own connection's server
   * profile says (its `sasl`: null where it cannot tell). False: a CAP LS without `sasl` means this server has
   * none, whether or not the services are on the network, and nobody is asked.
   */
  serverSasl?: () => boolean | null;
}

/** The error when CAP LS lists no SASL although the nickname service is on the network. */
export const NO_SASL_MESSAGE =
  'this IRC server offers no SASL; choose the atheme-jsonrpc or anope-xmlrpc backend (plugins.nickserv.backend)';

const RPL_LOGGEDIN = '900';
const ERR_NICKLOCKED = '902';
const RPL_SASLSUCCESS = '903';
const ERR_SASLFAIL = '904';
const ERR_SASLTOOLONG = '905';
const ERR_SASLABORTED = '906';
const ERR_SASLALREADY = '907';
const RPL_SASLMECHS = '908';
const ERR_UNKNOWNCOMMAND = '421';
const ERR_NOTREGISTERED = '451';
const ERR_YOUREBANNEDCREEP = '465';

/**
 * SASL results that are not an answer about the password. Each one means the
 * server or services could not judge it, so the check is "unavailable".
 */
const UNAVAILABLE_NUMERICS: Readonly<Record<string, string>> = {
  // The server binds SASL to nicks and refuses this connection's; it says nothing about the password.
  [ERR_NICKLOCKED]: 'the IRC server refused SASL for this connection (902 ERR_NICKLOCKED)',
  // The credentials exceed what the server relays to services, so services never saw them.
  [ERR_SASLTOOLONG]: 'the credentials are longer than the IRC server relays to services (905 ERR_SASLTOOLONG)',
  // This backend never aborts, so the server or services gave up (services restarting, for one).
  [ERR_SASLABORTED]: 'the IRC server aborted the SASL exchange (906 ERR_SASLABORTED)',
  // Impossible on a fresh connection; the server and this backend disagree about the protocol.
  [ERR_SASLALREADY]: 'the IRC server says this new connection is already authenticated (907 ERR_SASLALREADY)',
  [ERR_UNKNOWNCOMMAND]: 'the IRC server does not know CAP or AUTHENTICATE (421): it has no SASL',
  [ERR_NOTREGISTERED]: 'the IRC server wants NICK and USER before SASL (451), which this backend never sends',
  [ERR_YOUREBANNEDCREEP]: 'the IRC server bans connections from this host (465)',
};

/** Longest base64 piece of one AUTHENTICATE line (IRCv3 SASL). */
const AUTHENTICATE_CHUNK = 400;
/** A server line longer than this without a line end is garbage; real lines are under 8 KiB. */
const MAX_LINE_BYTES = 16384;
/** After QUIT, how long the server gets to close before the socket is destroyed. */
const QUIT_GRACE_MS = 2000;

interface Line {
  command: string;
  params: string[];
}

/** Parse one server line into command and parameters; tags and source are not needed here. */
export function parseLine(raw: string): Line | null {
  let rest = raw;
  if (rest.startsWith('@')) rest = rest.slice(rest.indexOf(' ') + 1).trimStart();
  if (rest.startsWith(':')) rest = rest.slice(rest.indexOf(' ') + 1).trimStart();
  let trailing: string | undefined;
  const trailingAt = rest.startsWith(':') ? 0 : rest.indexOf(' :');
  if (trailingAt >= 0) {
    trailing = rest.slice(trailingAt + (trailingAt === 0 ? 1 : 2));
    rest = rest.slice(0, trailingAt);
  }
  const words = rest.split(' ').filter((word) => word !== '');
  const command = words.shift();
  if (!command) return null;
  return { command: command.toUpperCase(), params: trailing === undefined ? words : [...words, trailing] };
}

/** The `AUTHENTICATE` lines carrying a PLAIN response: 400-byte base64 pieces, `+` after an exact multiple. */
export function plainResponseLines(nick: string, password: string): string[] {
  // authzid is left empty (RFC 4616): "the identity the credentials belong to", which is what is asked.
  const encoded = Buffer.from(`\0${nick}\0${password}`, 'utf8').toString('base64');
  const lines: string[] = [];
  for (let start = 0; start < encoded.length; start += AUTHENTICATE_CHUNK) {
    lines.push(`AUTHENTICATE ${encoded.slice(start, start + AUTHENTICATE_CHUNK)}`);
  }
  if (encoded.length % AUTHENTICATE_CHUNK === 0) lines.push('AUTHENTICATE +');
  return lines;
}

/** `sasl` or `sasl=PLAIN,EXTERNAL` from a CAP LS list: undefined when absent, [] when no list is given. */
function saslMechanisms(caps: string[]): string[] | undefined {
  for (const cap of caps) {
    if (cap === 'sasl') return [];
    if (cap.startsWith('sasl=')) return cap.slice('sasl='.length).split(',');
  }
  return undefined;
}

function defaultConnect(options: SaslBackendOptions): Duplex {
  if (!options.tls) return net.connect({ host: options.host, port: options.port });
  return tls.connect({
    host: options.host,
    port: options.port,
    servername: net.isIP(options.host) ? undefined : options.host,
    rejectUnauthorized: options.tlsVerify,
  });
}

/** One check: one connection, driven by the server's lines until a result, an error or the timeout. */
class SaslExchange {
  private readonly socket: Duplex;
  private buffered = '';
  private readonly advertised: string[] = [];
  private account: string | null = null;
  private offeredMechanisms: string | null = null;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = (): void => this.fail(abortReason(this.request.signal));

  constructor(
    private readonly options: SaslBackendOptions,
    private readonly request: CheckRequest,
    private readonly resolve: (outcome: CheckOutcome) => void,
    private readonly reject: (error: ServiceUnavailableError) => void,
  ) {
    // First, so a connect that throws (a malformed host) leaves no timer or listener behind.
    this.socket = (options.connect ?? defaultConnect)(options);
    this.timer = setTimeout(
      () => this.fail(`no SASL result from the IRC server within ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    request.signal.addEventListener('abort', this.onAbort, { once: true });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => this.receive(chunk));
    this.socket.on('error', (error) => this.fail(`cannot talk to the IRC server: ${errorMessage(error)}`));
    this.socket.on('close', () => this.fail('the IRC server closed the connection before the SASL result'));
    // Written before the connection is up; the socket queues it. 302 keeps registration open until CAP END.
    this.write('CAP LS 302');
  }

  private write(line: string): void {
    if (this.socket.writable) this.socket.write(`${line}\r\n`);
  }

  private receive(chunk: string): void {
    this.buffered += chunk;
    let end: number;
    while (!this.settled && (end = this.buffered.indexOf('\n')) >= 0) {
      const raw = this.buffered.slice(0, end).replace(/\r$/, '');
      this.buffered = this.buffered.slice(end + 1);
      const line = parseLine(raw);
      if (line) this.handle(line);
    }
    if (this.buffered.length > MAX_LINE_BYTES) this.fail('the IRC server sent a line without an end');
  }

  private handle({ command, params }: Line): void {
    switch (command) {
      case 'PING':
        this.write(`PONG :${params.at(-1) ?? ''}`);
        return;
      case 'CAP':
        this.handleCap(params);
        return;
      case 'AUTHENTICATE':
        if (params[0] === '+') {
          for (const line of plainResponseLines(this.request.nick, this.request.password)) this.write(line);
        }
        return;
      case 'ERROR':
        this.fail(`the IRC server closed the connection: ${params.at(-1) ?? 'no reason given'}`);
        return;
      case RPL_LOGGEDIN:
        this.account = params[2] ?? null;
        return;
      case RPL_SASLMECHS:
        this.offeredMechanisms = params[1] ?? '';
        return;
      case RPL_SASLSUCCESS:
        // A server always names the account in 900 first; the nick is the best guess if one did not.
        this.succeed({ valid: true, account: this.account ?? this.request.nick });
        return;
      case ERR_SASLFAIL:
        // 904 right after 908 means "not this mechanism": PLAIN is unsupported, nothing was checked.
        if (this.offeredMechanisms !== null) {
          this.fail(`the IRC server does not accept SASL PLAIN (it offers: ${this.offeredMechanisms || 'nothing'})`);
        } else {
          this.succeed({ valid: false, reason: null });
        }
        return;
    }
    const unavailable = UNAVAILABLE_NUMERICS[command];
    if (unavailable) this.fail(unavailable);
  }

  private handleCap(params: string[]): void {
    const subcommand = params[1]?.toUpperCase();
    if (subcommand === 'LS') {
      // `CAP * LS * :caps` continues; `CAP * LS :caps` is the last line.
      const more = params.length >= 4 && params[2] === '*';
      this.advertised.push(...(params.at(-1) ?? '').split(' ').filter(Boolean));
      if (more) return;
      const mechanisms = saslMechanisms(this.advertised);
      if (mechanisms === undefined) {
        this.failWithoutSasl();
      } else if (mechanisms.length > 0 && !mechanisms.includes('PLAIN')) {
        this.fail(`the IRC server does not accept SASL PLAIN (it offers: ${mechanisms.join(', ')})`);
      } else {
        this.write('CAP REQ :sasl');
      }
    } else if (subcommand === 'ACK') {
      if ((params.at(-1) ?? '').split(' ').includes('sasl')) this.write('AUTHENTICATE PLAIN');
    } else if (subcommand === 'NAK') {
      this.fail('the IRC server refused the sasl capability (CAP NAK): the nickname service is probably down');
    }
  }

  /**
   * CAP LS lists no SASL: InspIRCd withdraws the cap while the SASL target (services) is not linked, and
   * some servers have none at all. The connection ends now; the server profile says which where it knows,
   * else the nickname service's presence.
   */
  private failWithoutSasl(): void {
    const down = 'the IRC server offers no SASL right now: the nickname service is down or not linked';
    const { servicesOnline, serverSasl } = this.options;
    if (serverSasl?.() === false) return this.fail(NO_SASL_MESSAGE);
    if (!servicesOnline) return this.fail(down);
    // NickServ away: services are down, and the server may have no SASL even once they are back.
    const downOrNone = `${down}, or this server has no SASL at all (${NO_SASL_MESSAGE})`;
    if (!this.settle()) return;
    servicesOnline().then(
      (online) => this.reject(new ServiceUnavailableError(online ? NO_SASL_MESSAGE : downOrNone)),
      () => this.reject(new ServiceUnavailableError(downOrNone)),
    );
  }

  private succeed(outcome: CheckOutcome): void {
    if (this.settle()) this.resolve(outcome);
  }

  private fail(reason: string): void {
    if (this.settle()) this.reject(new ServiceUnavailableError(reason));
  }

  /** Stop listening and leave: QUIT without CAP END, so the connection never registers. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.request.signal.removeEventListener('abort', this.onAbort);
    const { socket } = this;
    if (!socket.destroyed) {
      this.write('QUIT');
      socket.end();
      setTimeout(() => socket.destroy(), QUIT_GRACE_MS).unref();
    }
    // Late errors (a reset after QUIT) have nobody left to tell.
    socket.on('error', () => undefined);
    return true;
  }
}

/** The `sasl` backend against `options.host:options.port`. */
export function saslBackend(options: SaslBackendOptions): CredentialBackend {
  return {
    name: 'sasl',
    throughIrc: true,
    target: `${options.host}:${options.port}${options.tls ? ' (TLS)' : ''}`,
    check(request) {
      if (request.signal.aborted) return Promise.reject(new ServiceUnavailableError(abortReason(request.signal)));
      return new Promise((resolve, reject) => {
        try {
          new SaslExchange(options, request, resolve, reject);
        } catch (error) {
          reject(new ServiceUnavailableError(`cannot connect to the IRC server: ${errorMessage(error)}`));
        }
      });
    },
  };
}
