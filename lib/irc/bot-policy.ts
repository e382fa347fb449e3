/**
 * How the bot behaves as a client on the network, beyond what plugins do: it answers CTCP PING and
 * VERSION as IRC clients do, and when SASL could not log it in (services away, e.g. after a netsplit) it
 * IDENTIFYs to NickServ once NickServ is back. The host installs this on its transport; the transport
 * itself only keeps the session, the requests and the connection.
 */
import type { Logger } from '../logger.js';
import { ClientThrottle, RateLimiter, type BucketConfig } from '../rate-limiter.js';
import type { IrcMessage, IrcTransport, Unsubscribe } from './port.js';

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
/** How long after an IDENTIFY the bot waits for services to log it in before it asks again. */
const IDENTIFY_WAIT_MS = 5000;

export interface BotPolicyOptions {
  /** The answer to CTCP VERSION. */
  version: string;
  /** The account to IDENTIFY to when SASL did not log the bot in; none: never. */
  sasl?: { account: string; password: string } | undefined;
  /** Whether the connection belongs to another bot that the host was attached to: its CTCP is that bot's business. */
  attached?: () => boolean;
}

/** Install the bot's behaviour on `irc`; returns the function that removes it. */
export function installBotPolicy(irc: IrcTransport, options: BotPolicyOptions, logger: Logger): Unsubscribe {
  const attached = options.attached ?? (() => false);
  const ctcp = new CtcpAnswers(irc, options.version, logger);
  let connection = 0;
  const offs = [
    irc.on('message', (message) => {
      if (!attached()) ctcp.answer(message);
    }),
    irc.on('ready', () => {
      connection++;
      if (options.sasl && irc.state.account === null) {
        void identifyWhenServicesReturn(irc, options.sasl, logger, () => connection);
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
 * SASL was configured but did not log the bot in: IDENTIFY to NickServ as soon as it is online, until
 * logged in or this connection (`connection()` changes) is over.
 */
async function identifyWhenServicesReturn(
  irc: IrcTransport,
  sasl: { account: string; password: string },
  logger: Logger,
  connection: () => number,
): Promise<void> {
  logger.warn('not logged in after registration; will IDENTIFY to NickServ when it is online', {
    account: sasl.account,
  });
  const startedFor = connection();
  for (let attempt = 0; irc.state.connected && irc.state.account === null && connection() === startedFor; attempt++) {
    try {
      const reply = await irc.request({
        send: ['ISON', 'NickServ'],
        reply: () => false,
        end: (message) => message.command === '303',
        timeoutMs: 10000,
      });
      if (/\bNickServ\b/i.test(reply.at(-1)?.params.at(-1) ?? '')) {
        irc.send('PRIVMSG', 'NickServ', `IDENTIFY ${sasl.account} ${sasl.password}`);
        await new Promise((resolve) => setTimeout(resolve, IDENTIFY_WAIT_MS));
        continue;
      }
    } catch {
      // disconnected or no answer: the loop condition decides
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** attempt, 30000)));
  }
}
