/** Users the bot can see, keyed by folded nick. */
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
  /** ISO time the bot first saw the user (the network does not say when they connected). */
  firstSeenAt: string;
  /** Folded names of the channels the bot saw the user in. */
  channels: Set<string>;
}

export type UserFields = Partial<Omit<User, 'nick' | 'channels' | 'firstSeenAt'>>;

export class UsersSlice implements ModelSlice {
  readonly name = 'users';
  private readonly byNick = new Map<string, User>();

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
        nick,
        ident: null,
        host: null,
        ip: null,
        realname: null,
        account: null,
        server: null,
        away: false,
        isOperator: false,
        firstSeenAt: now.toISOString(),
        channels: new Set(),
      };
      this.byNick.set(key, user);
    } else {
      user.nick = nick;
    }
    for (const [field, value] of Object.entries(fields) as [keyof UserFields, never][]) {
      if (value !== undefined) user[field] = value;
    }
    return user;
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
