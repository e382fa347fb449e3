/**
 * Users the bot can see, keyed by folded nick. A big network has 100,000 of
 * them, so a user is one flat object, and the strings many users share (server
 * names, the time a sync first saw them) are stored once.
 */
import type { ModelSlice } from './slice.js';

export interface User {
  nick: string;
  ident: string | null;
  host: string | null;
  /** Only known when the network shows it (as an oper: WHOX %i or WHOIS 378). */
  ip: string | null;
  realname: string | null;
  account: string | null;
  server: string | null;
  away: boolean;
  isOperator: boolean;
  /** The IRC client's name from its CTCP VERSION reply (`irssi`, `WeeChat`, ...); null until known. */
  client: string | null;
  /** The client's version from the same reply, when it names one. */
  clientVersion: string | null;
  /** ISO 3166-1 alpha-2 country from the IP or the host; null when unknown. */
  countryCode: string | null;
  /** ISO time the bot first saw the user (the network does not say when they connected). */
  firstSeenAt: string;
  /** Folded names of the channels the bot saw the user in. */
  channels: Set<string>;
}

export type UserFields = Partial<Omit<User, 'nick' | 'channels' | 'firstSeenAt'>>;

/**
 * A copy of `text` that does not keep the line it was cut from alive. V8 represents a substring of
 * 13 or more characters as a view into its parent string; a host or realname kept that way would
 * hold its whole 150-byte WHO line in memory, for every user.
 */
function detached(text: string): string {
  return text.length < 13 ? text : (JSON.parse(JSON.stringify(text)) as string);
}

/** More distinct server names than any real network has; past it, names are no longer shared. */
const MAX_SHARED_SERVER_NAMES = 1000;

export class UsersSlice implements ModelSlice {
  readonly name = 'users';
  private readonly byNick = new Map<string, User>();
  private readonly serverNames = new Map<string, string>();
  private lastSeenTime = NaN;
  private lastSeenText = '';

  constructor(private readonly fold: (name: string) => string) {}

  get size(): number {
    return this.byNick.size;
  }

  get(nick: string): User | undefined {
    return this.byNick.get(this.fold(nick));
  }

  all(): IterableIterator<User> {
    return this.byNick.values();
  }

  /** @internal changed through NetworkModel, which emits the change */
  upsert(nick: string, fields: UserFields, now: Date): User {
    const key = this.fold(nick);
    let user = this.byNick.get(key);
    if (!user) {
      user = {
        nick: detached(nick),
        ident: null,
        host: null,
        ip: null,
        realname: null,
        account: null,
        server: null,
        away: false,
        isOperator: false,
        client: null,
        clientVersion: null,
        countryCode: null,
        firstSeenAt: this.timeText(now),
        channels: new Set(),
      };
      this.byNick.set(key, user);
    } else if (user.nick !== nick) {
      user.nick = detached(nick);
    }
    for (const [field, value] of Object.entries(fields) as [keyof UserFields, never][]) {
      // Unchanged values are left alone: a sync repeats every user, and the stored strings are already compact.
      if (value === undefined || user[field] === value) continue;
      user[field] = (typeof value === 'string' ? this.compact(field, value) : value) as never;
    }
    return user;
  }

  private compact(field: keyof UserFields, value: string): string {
    return field === 'server' ? this.sharedServerName(value) : detached(value);
  }

  private sharedServerName(name: string): string {
    const shared = this.serverNames.get(name);
    if (shared !== undefined) return shared;
    const copy = detached(name);
    if (this.serverNames.size < MAX_SHARED_SERVER_NAMES) this.serverNames.set(copy, copy);
    return copy;
  }

  /** One ISO string per clock tick: a sync adds thousands of users within the same millisecond. */
  private timeText(now: Date): string {
    if (now.getTime() !== this.lastSeenTime) {
      this.lastSeenTime = now.getTime();
      this.lastSeenText = now.toISOString();
    }
    return this.lastSeenText;
  }

  /** @internal */
  rename(oldNick: string, newNick: string): User | undefined {
    const user = this.byNick.get(this.fold(oldNick));
    if (!user) return undefined;
    this.byNick.delete(this.fold(oldNick));
    user.nick = newNick;
    this.byNick.set(this.fold(newNick), user);
    return user;
  }

  /** @internal */
  delete(nick: string): User | undefined {
    const key = this.fold(nick);
    const user = this.byNick.get(key);
    this.byNick.delete(key);
    return user;
  }

  /** @internal */
  clear(): void {
    this.byNick.clear();
  }
}
