/**
 * What WHO cannot say on a server without WHOX (the profile's `whox`; ngIRCd): a user's account, and, to an
 * operator, the IP they connect from (for their country), where the server's WHOIS says them (its profile's
 * `accounts` and `operatorWhoisIp`). Each user is asked WHOIS once per connection,
 * one question at a time, at most `whois_per_second`. The replies are read wherever a WHOIS comes from
 * (the bot's commands ask some too): 330 here, 338 and 378 in countries.ts.
 */
import type { IrcMessage, IrcPort, NetworkModel, User } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import { RPL_WHOISACCOUNT } from './numerics.js';
import type { CollectorUnit } from './unit.js';

/** RPL_WHOISACCOUNT `330 me nick account :is logged in as`: the account of a user the model has. */
export function noteWhoisAccount(message: IrcMessage, model: NetworkModel): void {
  if (message.command !== RPL_WHOISACCOUNT) return;
  const [, nick, account] = message.params;
  if (!nick || !account || !model.users.get(nick)) return;
  model.upsertUser(nick, { account });
}

export interface WhoisFillerOptions {
  irc: IrcPort;
  model: NetworkModel;
  /** Service nicks: never asked (their WHOIS says nothing a user's does). */
  services: readonly string[];
}

/** RPL_ENDOFWHOIS, and ERR_NOSUCHNICK / ERR_NOSUCHSERVER for a nick gone (a remote WHOIS names it as a server). */
const END_OF_WHOIS = new Set(['318', '401', '402']);

/** Queue past which the users already asked are dropped from its front. */
const COMPACT_AFTER = 1024;

export class WhoisFiller {
  /** Users to ask, in the order they came; those before `next` are done with. */
  private queue: User[] = [];
  private next = 0;
  private queued = new WeakSet<User>();
  private asking = false;
  private readonly services: Set<string>;

  constructor(private readonly options: WhoisFillerOptions) {
    this.services = new Set(options.services.map((nick) => options.irc.casefold(nick)));
  }

  /**
   * Whether WHOIS is how the model learns accounts and IPs here: a registered connection to a server without WHOX,
   * whose WHOIS says either (where the server knows no accounts and shows an operator no IP, ircd 2.11, it says
   * nothing WHO did not, and each costs the server's penalty).
   */
  get needed(): boolean {
    const { state } = this.options.irc;
    const { profile } = state;
    return state.registered && !profile.whox && (profile.accounts || (state.isOperator && profile.operatorWhoisIp));
  }

  /** Users waiting to be asked. */
  get waiting(): number {
    return this.queue.length - this.next;
  }

  /** A user appeared or changed: queue them once per connection, unless what WHOIS would tell is known. */
  considerUser(user: User): void {
    if (this.queued.has(user) || !this.needed) return;
    const { irc } = this.options;
    if (user.account !== null && (user.ip !== null || !irc.state.isOperator)) return;
    const key = irc.casefold(user.nick);
    if (key === irc.state.nickKey || this.services.has(key)) return;
    this.queued.add(user);
    this.queue.push(user);
  }

  /** Ask the next queued user who is still on the network; nothing while the last WHOIS is unanswered. */
  async tick(): Promise<string | null> {
    if (this.asking || !this.needed) return null;
    const { irc, model } = this.options;
    let user: User | undefined;
    while (this.next < this.queue.length && !user) {
      const candidate = this.queue[this.next++]!;
      // Gone, or renamed out of the model's sight: the object is no longer the user under that nick.
      if (model.users.get(candidate.nick) === candidate) user = candidate;
    }
    if (this.next > COMPACT_AFTER && this.next * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.next);
      this.next = 0;
    }
    if (!user) return null;
    const nick = user.nick;
    const key = irc.casefold(nick);
    this.asking = true;
    try {
      await irc.request({
        // Asked of the user's own server (`WHOIS nick nick`): on some servers (ngIRCd) only that one shows an
        // operator the IP.
        send: ['WHOIS', nick, nick],
        remote: true,
        reply: () => false,
        end: (line) => END_OF_WHOIS.has(line.command) && irc.casefold(line.params[1] ?? '') === key,
        timeoutMs: 15_000,
      });
    } catch {
      // Disconnected or unanswered: the user waits for the next connection.
    } finally {
      this.asking = false;
    }
    return nick;
  }

  /** A new connection: everyone may be asked again. */
  reset(): void {
    this.queue = [];
    this.next = 0;
    this.queued = new WeakSet();
  }
}

/**
 * The WHOIS filler as a unit of the collector: every user the model adds or changes is considered, one is
 * asked per tick of `whois_per_second`, each connection starts anew, and the accounts are read from every WHOIS.
 */
export function whoisUnit({ irc, model, config }: CollectorContext): CollectorUnit {
  const whois = new WhoisFiller({ irc, model, services: config.services });
  const reset = (): void => whois.reset();
  return {
    name: 'whois',
    lines: { [RPL_WHOISACCOUNT]: (message) => noteWhoisAccount(message, model) },
    reactions: { userChanged: (user) => whois.considerUser(user) },
    timers:
      config.whois_per_second > 0 ? [{ everyMs: 1000 / config.whois_per_second, run: () => void whois.tick() }] : [],
    onReady: reset,
    onDisconnected: reset,
  };
}
