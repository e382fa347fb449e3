/**
 * Which IRC client each user runs: the bot sends CTCP VERSION to every user it
 * newly sees (paced, never to services or itself) and reads the reply into a
 * client name and version with the table of known clients. A user is asked
 * again only while their client is unknown, and not before `retryMs`.
 *
 * Replies are the users' own text, so they are cleaned before anything is
 * kept: formatting and control characters go, and both parts are cut short.
 */
import type { IrcMessage, IrcPort } from '../../lib/irc/port.js';
import type { NetworkModel } from '../../lib/model/network.js';
import type { User } from '../../lib/model/users.js';
import { KNOWN_CLIENTS } from './client-table.js';
import { ownNickKey } from './live.js';

/** Longest client name kept (an unknown client's name is the start of its reply). */
export const MAX_CLIENT_LENGTH = 32;
/** Longest version kept. */
export const MAX_VERSION_LENGTH = 32;
/** Only the start of a reply is looked at; the rest of a very long one is never read. */
const MAX_REPLY_READ = 512;

export interface ParsedVersion {
  client: string;
  version: string | null;
}

/** Cut to `max` code points, so no surrogate pair is split. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('').trim();
}

/**
 * A reply made safe to keep and show: no IRC formatting (bold, colours, ...), no control,
 * bidirectional or zero-width characters, no lone surrogates, single spaces, trimmed.
 */
export function cleanReply(text: string): string {
  return (
    text
      .slice(0, MAX_REPLY_READ)
      // mIRC colours (\x03fg,bg) and hex colours (\x04rrggbb,rrggbb) take their digits with them.
      .replace(/\x03(?:\d{1,2}(?:,\d{1,2})?)?/g, '')
      .replace(/\x04(?:[0-9a-f]{6}(?:,[0-9a-f]{6})?)?/gi, '')
      // Bold, italics, underline, strike-through, monospace, reverse and reset mark up text without being any.
      .replace(/[\x02\x0f\x11\x16\x1d\x1e\x1f]/g, '')
      .replace(/[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffc]/g, ' ')
      .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

const DOTTED_VERSION = /(?:^|[^\w.])v?(\d+(?:\.\d+)+(?:-[0-9a-z]+)?)/i;
const BARE_VERSION = /^\s*v?(\d+)\b/i;

function versionAfter(text: string): string | null {
  const found = DOTTED_VERSION.exec(text) ?? BARE_VERSION.exec(text);
  return found ? clip(found[1]!, MAX_VERSION_LENGTH) : null;
}

/**
 * The client and version of a CTCP VERSION reply (the text after `VERSION `); null when nothing
 * usable is left once cleaned. An unknown client is named by the start of its reply.
 */
export function parseVersionReply(text: string): ParsedVersion | null {
  const reply = cleanReply(text);
  if (reply === '') return null;
  for (const known of KNOWN_CLIENTS) {
    const match = known.pattern.exec(reply);
    if (!match) continue;
    const own = known.version?.exec(reply);
    const version = own ? clip(own[1]!, MAX_VERSION_LENGTH) : versionAfter(reply.slice(match.index + match[0].length));
    return { client: known.name, version };
  }
  // An unknown client: its name is what comes before the first version number or separator.
  const name = /^(.+?)(?=\s+v?\d|\s*[-–—([/:|,;<]|$)/.exec(reply)?.[1]?.trim() ?? '';
  if (!/\p{L}/u.test(name)) return null;
  return { client: clip(name, MAX_CLIENT_LENGTH), version: versionAfter(reply.slice(name.length)) };
}

/** The text of a CTCP VERSION reply (`NOTICE bot :\x01VERSION text\x01`), or null for any other line. */
export function versionReplyText(message: IrcMessage): string | null {
  if (message.command !== 'NOTICE') return null;
  const text = message.params[1] ?? '';
  const match = /^\x01VERSION(?: ([^\x01]*))?\x01?$/i.exec(text);
  return match ? (match[1] ?? '') : null;
}

export interface VersionAskerOptions {
  irc: IrcPort;
  model: NetworkModel;
  /** Service nicks (from the config), never asked. */
  services: readonly string[];
  /** A user whose client is still unknown is asked again after this long. */
  retryMs: number;
  clock?: () => number;
}

/** One question asked: the retries come from these, in the order they were asked. */
interface Question {
  /** Weak: a user who quits before their retry is due is not kept for it. */
  user: WeakRef<User>;
  at: number;
}

/**
 * The queue of users to ask, the asking (one per {@link VersionAsker.tick}, which the
 * owner paces), and the replies. Per user it keeps when they were asked, and per
 * question of the last `retryMs` a weak reference to whom it went.
 *
 * A user is queued when they appear or change ({@link considerUser}); a user whose client is
 * still unknown `retryMs` after being asked is asked again by {@link tick} itself, as nothing
 * else need happen to them meanwhile (a sync seeing them unchanged is no change).
 */
export class VersionAsker {
  private queue: string[] = [];
  private queued = new Set<string>();
  private next = 0;
  /** Every question of the last `retryMs`, oldest first; those before `nextAsked` are done with. */
  private asked: Question[] = [];
  private nextAsked = 0;
  /** When each user was last asked; held by the user object, so renames keep it and quits free it. */
  private askedAt = new WeakMap<User, number>();
  private readonly services: Set<string>;
  private readonly clock: () => number;

  constructor(private readonly options: VersionAskerOptions) {
    this.services = new Set(options.services.map((nick) => options.irc.casefold(nick)));
    this.clock = options.clock ?? Date.now;
  }

  /** Users waiting to be asked (retries not due yet are not counted). */
  get waiting(): number {
    return this.queue.length - this.next;
  }

  /** A user appeared or changed: queue them if their client is unknown and they are due. */
  consider(nick: string): void {
    const user = this.options.model.users.get(nick);
    if (user) this.considerUser(user);
  }

  /** {@link consider} for a caller that has the user already. */
  considerUser(user: User): void {
    // Every join and every sync line of a user comes here: the cheap checks first, each name folded once.
    if (user.client !== null) return;
    const key = this.options.irc.casefold(user.nick);
    if (this.queued.has(key) || !this.shouldAsk(user, key)) return;
    this.queued.add(key);
    this.queue.push(key);
  }

  /**
   * Ask the next user in the queue who still needs it, else the first one whose retry is due;
   * returns the nick asked, if any.
   */
  tick(): string | null {
    const { irc, model } = this.options;
    while (this.next < this.queue.length) {
      const key = this.queue[this.next++]!;
      this.queued.delete(key);
      const user = model.users.get(key);
      if (!user || !this.shouldAsk(user, irc.casefold(user.nick))) continue;
      this.compactQueue();
      return this.ask(user);
    }
    this.compactQueue();
    return this.retry();
  }

  /** Read a VERSION reply; only one from a user the bot asked, whose client is still unknown, counts. */
  handleReply(message: IrcMessage): boolean {
    const text = versionReplyText(message);
    const nick = message.source?.nick;
    if (text === null || !nick) return false;
    const user = this.options.model.users.get(nick);
    if (!user || user.client !== null || !this.askedAt.has(user)) return false;
    const parsed = parseVersionReply(text);
    if (!parsed) return false;
    this.options.model.upsertUser(user.nick, { client: parsed.client, clientVersion: parsed.version });
    return true;
  }

  /** A new connection: nobody has been asked on it. */
  reset(): void {
    this.queue = [];
    this.queued = new Set();
    this.next = 0;
    this.asked = [];
    this.nextAsked = 0;
    this.askedAt = new WeakMap();
  }

  private ask(user: User): string {
    const at = this.clock();
    this.askedAt.set(user, at);
    this.asked.push({ user: new WeakRef(user), at });
    this.options.irc.ctcpRequest(user.nick, 'VERSION');
    return user.nick;
  }

  /** Ask again the first user asked `retryMs` ago or more who is still here, unknown and not asked since. */
  private retry(): string | null {
    const { irc, model, retryMs } = this.options;
    const now = this.clock();
    let nick: string | null = null;
    while (nick === null && this.nextAsked < this.asked.length) {
      const question = this.asked[this.nextAsked]!;
      if (now - question.at < retryMs) break;
      this.nextAsked++;
      const user = question.user.deref();
      // Asked again since (a later question is theirs), quit, or no longer to be asked (answered, now a service).
      if (!user || this.askedAt.get(user) !== question.at || model.users.get(user.nick) !== user) continue;
      if (this.shouldAsk(user, irc.casefold(user.nick))) nick = this.ask(user);
    }
    const rest = withoutTaken(this.asked, this.nextAsked);
    if (rest !== this.asked) {
      this.asked = rest;
      this.nextAsked = 0;
    }
    return nick;
  }

  /** @param key the user's nick folded as the connection folds it */
  private shouldAsk(user: User, key: string): boolean {
    const { irc, model } = this.options;
    if (user.client !== null) return false;
    if (key === ownNickKey(irc) || this.services.has(key)) return false;
    if (user.server !== null && model.servers.get(user.server)?.isServices) return false;
    const asked = this.askedAt.get(user);
    return asked === undefined || this.clock() - asked >= this.options.retryMs;
  }

  private compactQueue(): void {
    const rest = withoutTaken(this.queue, this.next);
    if (rest !== this.queue) {
      this.queue = rest;
      this.next = 0;
    }
  }
}

/** `queue` without its first `taken` items once they are all of it, or most of a long one; else `queue` itself. */
function withoutTaken<T>(queue: T[], taken: number): T[] {
  if (taken === 0) return queue;
  if (taken === queue.length) return [];
  return taken > 1000 && taken * 2 > queue.length ? queue.slice(taken) : queue;
}
