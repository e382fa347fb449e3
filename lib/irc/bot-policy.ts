/**
 * How the bot behaves as a client on the network, beyond what plugins do: it answers CTCP PING and
 * VERSION as IRC clients do, and when SASL could not log it in (services away, e.g. after a netsplit, or
 * a server without SASL) it IDENTIFYs to NickServ once NickServ is there, until a WHOIS shows it logged in. The host installs this on its transport; the transport
 * itself only keeps the session, the requests and the connection.
 */
import type { Logger } from '../logger.js';
import { ClientThrottle, RateLimiter, type BucketConfig } from '../rate-limiter.js';
import type { IrcMessage, IrcTransport, Unsubscribe } from './port.js';
import { isOnline } from './presence.js';
import { askService } from './service-answer.js';
import { stripFormatting } from './text.js';

/**
 * CTCP requests (PING, VERSION) one client (ident@host) gets answered: 3 at once, then one every 5 s.
 * Fixed rather than `irc.commands`: a CTCP answer costs a line as a command does, but nobody needs many.
 */
export const CTCP_ANSWERS_PER_CLIENT: BucketConfig = { capacity: 3, refill_per_second: 0.2 };
/** CTCP requests answered for all clients together: 10 at once, then one a second (many clients flooding). */
export const CTCP_ANSWERS_IN_ALL: BucketConfig = { capacity: 10, refill_per_second: 1 };
/**
 * A CTCP answer that has not left this long after its request is dropped: a PING answered late measures
 * nothing, and with slow pacing the answers would otherwise pile up ahead of the bot's other output.
 */
export const CTCP_DEADLINE_MS = 10_000;
/** The urgent lane CTCP answers share in the send queue (no folded nick can hold \x01). */
const CTCP_LANE = '\x01ctcp';
/** How long the bot waits for NickServ's answer to IDENTIFY, and then before it tries again (doubling). */
export interface IdentifyTiming {
  answerMs: number;
  retryMs: number;
  maxRetryMs: number;
}

const IDENTIFY_TIMING: IdentifyTiming = { answerMs: 5000, retryMs: 30_000, maxRetryMs: 600_000 };
/** After NickServ's first notice, the rest of its answer comes within this. */
const NICKSERV_PAUSE_MS = 300;

/** How long the bot waits for its nick to come back after each try, and between two rounds of tries. */
export interface NickTiming {
  answerMs: number;
  retryMs: number;
}

const NICK_TIMING: NickTiming = { answerMs: 5000, retryMs: 60_000 };

/** What the nick services offer to take a nick back, in the order they are tried (Atheme, Anope, either). */
const TAKE_BACK = ['REGAIN', 'RECOVER', 'GHOST'] as const;
/** NickServ's answer to a command it does not have (Atheme: "Invalid command", Anope: "Unknown command"). */
const UNKNOWN_COMMAND = /\b(invalid|unknown|no such) command\b/i;

export interface BotPolicyOptions {
  /** The answer to CTCP VERSION. */
  version: string;
  /** The nick the bot is configured with: registered under another (it was taken), it takes this one back. */
  nick?: string;
  /** Waits around taking the nick back; tests shorten them. */
  nickTiming?: NickTiming;
  /** The account to IDENTIFY to when SASL did not log the bot in; none: never. */
  sasl?: { account: string; password: string } | undefined;
  /** Whether the connection belongs to another bot that the host was attached to: its CTCP is that bot's business. */
  attached?: () => boolean;
  /** Waits around IDENTIFY; tests shorten them. */
  identifyTiming?: IdentifyTiming;
}

/** Install the bot's behaviour on `irc`; returns the function that removes it. */
export function installBotPolicy(irc: IrcTransport, options: BotPolicyOptions, logger: Logger): Unsubscribe {
  const attached = options.attached ?? (() => false);
  const ctcp = new CtcpAnswers(irc, options.version, logger);
  let connection = 0;
  let saidNoAccounts = false;
  const offs = [
    irc.on('message', (message) => {
      if (!attached()) ctcp.answer(message);
    }),
    irc.on('ready', () => {
      connection++;
      const { profile } = irc.state;
      if (options.sasl && !profile.accounts) {
        // Nothing to log in to, on this connection or the next: said once, never tried.
        if (!saidNoAccounts) {
          logger.error(
            `this network's IRC server (${profile.family ?? profile.version}) has no accounts, so there are no ` +
              'account services to log in to: the bot stays logged out. Remove irc.sasl from the config.',
            { account: options.sasl.account },
          );
        }
        saidNoAccounts = true;
      } else if (options.sasl && irc.state.account === null) {
        const timing = options.identifyTiming ?? IDENTIFY_TIMING;
        void identifyUntilLoggedIn(irc, options.sasl, timing, logger, () => connection);
      }
      const { nick } = options;
      if (nick !== undefined && !attached() && irc.casefold(irc.state.nick) !== irc.casefold(nick)) {
        // Logged in at registration (SASL), services are asked at once; else NICK alone until IDENTIFY logs in.
        void takeNickBack(irc, nick, options.nickTiming ?? NICK_TIMING, logger, () => connection);
      }
    }),
    irc.on('disconnected', () => void connection++),
  ];
  return () => {
    for (const off of offs) off();
    connection++;
  };
}

/**
 * Answers CTCP PING (its payload echoed) and VERSION by NOTICE, sent in private or to a channel, as IRC
 * clients do, through the send queue and within {@link CTCP_ANSWERS_PER_CLIENT} and
 * {@link CTCP_ANSWERS_IN_ALL}: requests beyond them go unanswered, so a flood costs the bot no more than a
 * few lines. Here rather than in either library, so both transports answer alike.
 */
class CtcpAnswers {
  /** By ident@host: the CTCP requests each client may still have answered. */
  private readonly allowance = new ClientThrottle(CTCP_ANSWERS_PER_CLIENT);
  /** The CTCP requests all clients together may still have answered. */
  private readonly total = new RateLimiter(CTCP_ANSWERS_IN_ALL);
  /** Whether the limit of all clients together refuses answers, logged once until one is answered again. */
  private allThrottled = false;

  constructor(
    private readonly irc: IrcTransport,
    private readonly version: string,
    private readonly logger: Logger,
  ) {}

  answer(message: IrcMessage): void {
    const text = message.params[1] ?? '';
    const { source } = message;
    if (message.command !== 'PRIVMSG' || !source?.nick || !text.startsWith('\x01')) return;
    if (this.irc.state.isSelf(source.nick)) return;
    // The closing \x01 is optional (CTCP); the payload is whatever follows the first space.
    const body = text.slice(1, text.endsWith('\x01') && text.length > 1 ? -1 : undefined);
    const space = body.indexOf(' ');
    const type = (space < 0 ? body : body.slice(0, space)).toUpperCase();
    let answer: string;
    if (type === 'PING') answer = space < 0 ? 'PING' : `PING ${body.slice(space + 1)}`;
    else if (type === 'VERSION') answer = `VERSION ${this.version}`;
    else return;
    if (!this.allowed(`${source.ident}@${source.host}`.toLowerCase())) return;
    const deadline = Date.now() + CTCP_DEADLINE_MS;
    // One line, as the request was: a CTCP answer split in two is no answer.
    this.irc.sendLine('NOTICE', [source.nick, `\x01${answer}\x01`], {
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
  private allowed(client: string): boolean {
    const decision = this.allowance.take(client);
    if (!decision.allowed) {
      if (decision.firstRefusal) this.logger.warn('CTCP requests throttled: not answered', { client });
      return false;
    }
    if (!this.total.take('').allowed) {
      if (!this.allThrottled) {
        this.allThrottled = true;
        this.logger.warn('CTCP requests throttled: too many from all clients together; not answered');
      }
      return false;
    }
    this.allThrottled = false;
    return true;
  }
}

/**
 * SASL was configured but did not log the bot in (services were away, or the server has no SASL, as
 * ircd-hybrid and ngircd have not): IDENTIFY to NickServ once WHOIS finds it on the network, then confirm
 * with a WHOIS of itself (330, which the session reads), since a server without SASL never sends 900.
 * Confirmed, it stops; refused or unconfirmed, it says what NickServ answered and tries again later, each
 * time later. It gives up when this connection (`connection()` changes) is over.
 */
async function identifyUntilLoggedIn(
  irc: IrcTransport,
  sasl: { account: string; password: string },
  timing: IdentifyTiming,
  logger: Logger,
  connection: () => number,
): Promise<void> {
  logger.warn('not logged in after registration; will IDENTIFY to NickServ when it is online', {
    account: sasl.account,
  });
  const startedFor = connection();
  const wanted = (): boolean => irc.state.connected && irc.state.account === null && connection() === startedFor;
  let away = 0;
  let refused = 0;
  while (wanted()) {
    if (!(await isOnline(irc, 'NickServ'))) {
      await sleep(Math.min(1000 * 2 ** away++, 30_000));
      continue;
    }
    away = 0;
    if (!wanted()) return;
    const answer = await identify(irc, sasl, timing.answerMs);
    if (irc.state.account === null && irc.state.connected) await isOnline(irc, irc.state.nick);
    if (irc.state.account !== null || !wanted()) return;
    const retryMs = Math.min(timing.retryMs * 2 ** refused++, timing.maxRetryMs);
    logger.error('IDENTIFY did not log the bot in: WHOIS shows no account; will try again', {
      account: sasl.account,
      nickserv: answer.join(' / ') || 'no answer',
      retry_seconds: Math.round(retryMs / 1000),
    });
    await sleep(retryMs);
  }
}

/**
 * Send IDENTIFY and collect what NickServ answers the bot: until a 900 or a short pause after its first
 * notice, at most `answerMs` from when the line left the paced queue (a busy queue is not NickServ's delay,
 * and the WHOIS that confirms the login, unpaced, must not overtake it).
 */
async function identify(
  irc: IrcTransport,
  sasl: { account: string; password: string },
  answerMs: number,
): Promise<string[]> {
  const said = await askService(irc, 'NickServ', `IDENTIFY ${sasl.account} ${sasl.password}`, {
    quietMs: NICKSERV_PAUSE_MS,
    timeoutMs: answerMs,
    ends: (message) => message.command === '900',
  });
  return said.map(stripFormatting);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves true once the bot's nick is `nick`, false after `ms` (or when the connection is over). */
function nickBecomes(irc: IrcTransport, nick: string, ms: number): Promise<boolean> {
  const has = (): boolean => irc.casefold(irc.state.nick) === irc.casefold(nick);
  if (has()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (result: boolean): void => {
      clearTimeout(timer);
      offMessage();
      offGone();
      resolve(result);
    };
    const timer = setTimeout(() => done(has()), ms);
    timer.unref();
    const offMessage = irc.on('message', (message) => {
      if (message.command === 'NICK' && has()) done(true);
    });
    const offGone = irc.on('disconnected', () => done(false));
  });
}

/**
 * Registered under another nick because `nick` was taken: take it back. Once logged in (SASL at registration,
 * or IDENTIFY later), the bot asks NickServ once for what services offer — `REGAIN` (Atheme), `RECOVER`
 * (Anope), `GHOST` — each followed by a NICK of its own where the service did not change the nick itself.
 * Services cannot help with a nick the bot's account does not own: from then on, and without an account, it
 * sends NICK alone, every `retryMs` and then twice as long each time (at most ten times), for as long as
 * this connection lasts. The log says what happened.
 */
async function takeNickBack(
  irc: IrcTransport,
  nick: string,
  timing: NickTiming,
  logger: Logger,
  connection: () => number,
): Promise<void> {
  const startedFor = connection();
  const going = (): boolean => irc.state.connected && connection() === startedFor;
  const tookBack = (how: string): true => {
    logger.info('took the nick back', { nick, with: how });
    return true;
  };
  let askedServices = false;
  let waitMs = timing.retryMs;
  while (going()) {
    if (irc.state.account !== null && !askedServices) {
      askedServices = true;
      if (await askServicesForNick(irc, nick, timing, going, tookBack)) return;
    } else {
      irc.send('NICK', nick);
      if (await nickBecomes(irc, nick, timing.answerMs)) {
        tookBack('NICK');
        return;
      }
    }
    if (!going()) return;
    logger.warn('could not take the nick back yet; trying NICK again', {
      nick,
      using: irc.state.nick,
      account: irc.state.account ?? 'none',
      retry_seconds: Math.round(waitMs / 1000),
    });
    await new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref());
    waitMs = Math.min(waitMs * 2, timing.retryMs * 10);
  }
}

/** NickServ's REGAIN, RECOVER, GHOST in turn, each followed by a NICK; whether the nick came back. */
async function askServicesForNick(
  irc: IrcTransport,
  nick: string,
  timing: NickTiming,
  going: () => boolean,
  tookBack: (how: string) => true,
): Promise<boolean> {
  for (const command of TAKE_BACK) {
    if (!going()) return false;
    const said = await askService(irc, 'NickServ', `${command} ${nick}`, {
      quietMs: NICKSERV_PAUSE_MS,
      timeoutMs: timing.answerMs,
      ends: (message) => message.command === 'NICK' && irc.casefold(irc.state.nick) === irc.casefold(nick),
    });
    if (await nickBecomes(irc, nick, NICKSERV_PAUSE_MS)) return tookBack(command);
    // A service without the command says so: the next one, without a NICK that would only be refused.
    if (said.some((line) => UNKNOWN_COMMAND.test(stripFormatting(line)))) continue;
    if (!going()) return false;
    irc.send('NICK', nick);
    if (await nickBecomes(irc, nick, timing.answerMs)) return tookBack(command);
  }
  return false;
}
