/**
 * Which IRC client each user runs: the bot sends CTCP VERSION to every user it
 * newly sees (paced, never to services or itself) and reads the reply into a
 * client name and version with the table of known clients. A user is asked
 * again only while their client is unknown, and not before `retryMs`.
 *
 * Replies are the users' own text, so they are cleaned before anything is
 * kept: formatting and control characters go, and both parts are cut short.
 */
import type { IrcMessage, IrcPort, NetworkModel, User } from '../../lib/sdk.js';
import { KNOWN_CLIENTS } from './client-table.js';
import type { CollectorContext } from './collector.js';
import type { CollectorUnit } from './unit.js';

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

/** A question of the last {@link RENAMED_ANSWER_MS}, with the `ident@host` it went to. */
interface RecentQuestion {
  question: Question;
  address: string;
}

/** An answer from a nick the model does not have yet, kept for the sync that finds them. */
interface HeldAnswer {
  parsed: ParsedVersion;
  address: string;
  /** {@link VersionAsker.syncCompleted} calls before it came. */
  syncs: number;
}

/**
 * How long after a question an answer from another nick with the asked user's `ident@host` is taken as
 * theirs: they changed nick where the bot could not see it. Clients answer at once; much later, another
 * connection from the same place is the likelier sender.
 */
export const RENAMED_ANSWER_MS = 60_000;

/** The `ident@host` a question or an answer is matched by; hosts are case-insensitive. */
function addressOf(ident: string | null, host: string | null): string | null {
  return ident && host ? `${ident}@${host.toLowerCase()}` : null;
}

/**
 * The `ident@host` others see of `user`, as a reply's source shows it. A user an operator's connect notice
 * brought has no shown host until the next WHO; the host they connected from stands in for it (the same,
 * unless the network cloaks them).
 */
function shownAddressOf(user: User): string | null {
  return addressOf(user.ident, user.host ?? user.realHost);
}

/**
 * The queue of users to ask, the asking (one per {@link VersionAsker.tick}, which the owner paces), and the
 * answers. Everything is kept by the user object, which the model keeps for a user across nick changes and
 * syncs (it starts a new one only for someone it must take for a new user): a user queued or asked under
 * one nick is asked, retried and answered under the next.
 *
 * A user is queued when they appear or change ({@link considerUser}); a user whose client is still unknown
 * `retryMs` after being asked is asked again by {@link tick} itself, as nothing else need happen to them
 * meanwhile (a sync seeing them unchanged is no change). New users and due retries take turns, so neither
 * waits for the other to run out. A question is asked only once the one before it has left the send queue.
 */
export class VersionAsker {
  /** Users to ask, in the order they came; those before `next` are done with. */
  private queue: User[] = [];
  /**
   * The users in `queue` from `next` on. A plain set: the queue holds them anyway, and a weak one of 50,000
   * users (the first sync of a big network queues everybody) cost the garbage collector up to 20 ms of pause
   * per full collection for its ephemerons.
   */
  private queued = new Set<User>();
  private next = 0;
  /** Every question of the last `retryMs`, oldest first; those before `nextAsked` are done with. */
  private asked: Question[] = [];
  private nextAsked = 0;
  /** The questions of the last {@link RENAMED_ANSWER_MS}, oldest first; those before `nextRecent` are older. */
  private recent: RecentQuestion[] = [];
  private nextRecent = 0;
  /** When each user was last asked; held by the user object, so renames keep it and quits free it. */
  private askedAt = new WeakMap<User, number>();
  /** Whether a due retry goes before a new user at the next tick. */
  private retryTurn = false;
  /** The question still in the send queue, if any: the next one waits for it. */
  private sending: object | null = null;
  /** By folded nick: answers from users who changed nick out of the bot's sight, until a sync shows them. */
  private held = new Map<string, HeldAnswer>();
  private syncs = 0;
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
    // Every join and every sync line of a user comes here: the cheap checks first.
    if (user.client !== null || this.queued.has(user)) return;
    const key = this.options.irc.casefold(user.nick);
    if (!this.isAskable(user, key)) return;
    if (this.held.size > 0 && this.takeHeldAnswer(user, key)) return;
    if (!this.isDue(user)) return;
    this.queued.add(user);
    this.queue.push(user);
  }

  /**
   * Ask the next user in the queue who still needs it, or the first user whose retry is due, in turns;
   * returns the nick asked, if any. Nobody while the last question is still in the send queue.
   */
  tick(): string | null {
    if (this.sending) return null;
    const retryFirst = this.retryTurn;
    const nick = retryFirst ? this.retry() : this.askQueued();
    if (nick !== null) {
      this.retryTurn = !retryFirst;
      return nick;
    }
    return retryFirst ? this.askQueued() : this.retry();
  }

  /**
   * Read a VERSION reply; only one from a user the bot asked, whose client is still unknown, counts. A reply
   * from a nick the bot did not ask counts when a question of the last {@link RENAMED_ANSWER_MS} went to a
   * user with the same `ident@host` who is out of the bot's sight and has not answered: they changed nick
   * unseen. If the model does not have that nick yet, the answer waits for the sync that shows them.
   */
  handleReply(message: IrcMessage): boolean {
    const text = versionReplyText(message);
    const source = message.source;
    if (text === null || !source?.nick) return false;
    const { irc, model } = this.options;
    const user = model.users.get(source.nick);
    if (user && user.client !== null) return false;
    const key = irc.casefold(source.nick);
    if (user ? !this.isAskable(user, key) : key === irc.state.nickKey || this.services.has(key)) return false;
    const address = addressOf(source.ident, source.host);
    const asked = user !== undefined && this.askedAt.has(user);
    if (!asked && (address === null || !this.askedUnseen(address))) return false;
    const parsed = parseVersionReply(text);
    if (!parsed) return false;
    if (user) this.setClient(user, parsed);
    else if (address !== null) this.held.set(key, { parsed, address, syncs: this.syncs });
    return true;
  }

  /** A full sync is complete: an answer held through two of them belongs to nobody the network shows. */
  syncCompleted(): void {
    this.syncs++;
    for (const [key, held] of this.held) if (this.syncs - held.syncs >= 2) this.held.delete(key);
  }

  /** A new connection: nobody has been asked on it. */
  reset(): void {
    this.queue = [];
    this.queued = new Set();
    this.next = 0;
    this.asked = [];
    this.nextAsked = 0;
    this.recent = [];
    this.nextRecent = 0;
    this.askedAt = new WeakMap();
    this.retryTurn = false;
    this.sending = null;
    this.held = new Map();
    this.syncs = 0;
  }

  /** The first user in the queue who is still here and still to be asked. */
  private askQueued(): string | null {
    const { irc } = this.options;
    let nick: string | null = null;
    while (nick === null && this.next < this.queue.length) {
      const user = this.queue[this.next++]!;
      this.queued.delete(user);
      if (user.client === null && this.isPresent(user) && this.isAskable(user, irc.casefold(user.nick))) {
        if (this.isDue(user)) nick = this.ask(user);
      }
    }
    const rest = withoutTaken(this.queue, this.next);
    if (rest !== this.queue) {
      this.queue = rest;
      this.next = 0;
    }
    return nick;
  }

  private ask(user: User): string {
    const at = this.clock();
    this.askedAt.set(user, at);
    const question: Question = { user: new WeakRef(user), at };
    this.asked.push(question);
    const address = shownAddressOf(user);
    if (address !== null) this.recent.push({ question, address });
    this.forgetOldQuestions();
    const sending = {};
    this.sending = sending;
    this.options.irc.ctcpRequest(user.nick, 'VERSION', '', () => {
      if (this.sending === sending) this.sending = null;
    });
    return user.nick;
  }

  /** Ask again the first user asked `retryMs` ago or more who is still here, unknown and not asked since. */
  private retry(): string | null {
    const { irc, retryMs } = this.options;
    const now = this.clock();
    let nick: string | null = null;
    while (nick === null && this.nextAsked < this.asked.length) {
      const question = this.asked[this.nextAsked]!;
      if (now - question.at < retryMs) break;
      this.nextAsked++;
      const user = question.user.deref();
      // Asked again since (a later question is theirs), quit, or no longer to be asked (answered, now a service).
      if (!user || this.askedAt.get(user) !== question.at || user.client !== null || !this.isPresent(user)) continue;
      if (this.isAskable(user, irc.casefold(user.nick))) nick = this.ask(user);
    }
    const rest = withoutTaken(this.asked, this.nextAsked);
    if (rest !== this.asked) {
      this.asked = rest;
      this.nextAsked = 0;
    }
    return nick;
  }

  /**
   * Whether a question of the last {@link RENAMED_ANSWER_MS} went to a user with `address` who has not
   * answered and whose nick changes the bot does not see: gone from the model since, or in none of its channels.
   */
  private askedUnseen(address: string): boolean {
    this.forgetOldQuestions();
    for (let index = this.recent.length - 1; index >= this.nextRecent; index--) {
      const { question, address: asked } = this.recent[index]!;
      if (asked !== address) continue;
      const user = question.user.deref();
      if (!user || !this.isPresent(user) || (user.client === null && user.channels.size === 0)) return true;
    }
    return false;
  }

  /** Let go of the questions too old for {@link askedUnseen}. */
  private forgetOldQuestions(): void {
    const since = this.clock() - RENAMED_ANSWER_MS;
    while (this.nextRecent < this.recent.length && this.recent[this.nextRecent]!.question.at <= since) {
      this.nextRecent++;
    }
    const rest = withoutTaken(this.recent, this.nextRecent);
    if (rest !== this.recent) {
      this.recent = rest;
      this.nextRecent = 0;
    }
  }

  /** An answer held for the nick `user` has (folded: `key`), if it came from their `ident@host`. */
  private takeHeldAnswer(user: User, key: string): boolean {
    const held = this.held.get(key);
    if (!held) return false;
    this.held.delete(key);
    if (shownAddressOf(user) !== held.address) return false;
    this.setClient(user, held.parsed);
    return true;
  }

  private setClient(user: User, parsed: ParsedVersion): void {
    this.options.model.upsertUser(user.nick, { client: parsed.client, clientVersion: parsed.version });
  }

  /** Whether the model still has `user` (not someone else under their nick since). */
  private isPresent(user: User): boolean {
    return this.options.model.users.get(user.nick) === user;
  }

  /**
   * Whether `user` is anybody the bot asks: not the bot, a service or on a services server.
   * @param key the user's nick folded as the connection folds it
   */
  private isAskable(user: User, key: string): boolean {
    const { irc, model } = this.options;
    if (key === irc.state.nickKey || this.services.has(key)) return false;
    return user.server === null || model.servers.get(user.server)?.isServices !== true;
  }

  /** Never asked on this connection, or not for `retryMs`. */
  private isDue(user: User): boolean {
    const asked = this.askedAt.get(user);
    return asked === undefined || this.clock() - asked >= this.options.retryMs;
  }
}

/** `queue` without its first `taken` items once they are all of it, or most of a long one; else `queue` itself. */
function withoutTaken<T>(queue: T[], taken: number): T[] {
  if (taken === 0) return queue;
  if (taken === queue.length) return [];
  return taken > 1000 && taken * 2 > queue.length ? queue.slice(taken) : queue;
}

/** The clients as a unit of the collector; `waiting` is the asker's, for the metrics. */
export interface VersionsUnit extends CollectorUnit {
  readonly waiting: number;
}

/**
 * Every user the model adds or changes is considered, each sync's end lets held answers go, the replies are
 * read as they come, and one question goes out per tick of `version_requests_per_second` while synced.
 */
export function versionsUnit({ irc, model, config, connection }: CollectorContext): VersionsUnit {
  const versions = new VersionAsker({
    irc,
    model,
    services: config.services,
    retryMs: config.version_retry_seconds * 1000,
  });
  const reset = (): void => versions.reset();
  const perSecond = config.version_requests_per_second;
  return {
    name: 'clients',
    get waiting() {
      return versions.waiting;
    },
    lines: { NOTICE: (message) => void versions.handleReply(message) },
    reactions: {
      userChanged: (user) => versions.considerUser(user),
      synced: () => versions.syncCompleted(),
    },
    timers:
      perSecond > 0
        ? [
            {
              everyMs: 1000 / perSecond,
              run: () => {
                if (connection.ready && model.ready) versions.tick();
              },
            },
          ]
        : [],
    onReady: reset,
    onDisconnected: reset,
  };
}
