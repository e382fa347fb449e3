/**
 * Users the bot can see, keyed by folded nick. A big network has 100,000 of
 * them, so a user is one flat object, and the strings many users share (server
 * names, the time a sync first saw them) are stored once.
 */
import type { User } from './entities.js';
import type { ModelSlice } from './slice.js';

export type { User } from './entities.js';

export type UserFields = Partial<Omit<User, 'nick' | 'channels' | 'firstSeenAt' | 'inUnwatchedHiddenChannel'>>;

/**
 * A copy of `text` that does not keep the line it was cut from alive. V8 represents a substring of
 * 13 or more characters as a view into its parent string; a host or realname kept that way would
 * hold its whole 150-byte WHO line in memory, for every user.
 */
export function detached(text: string): string {
  return text.length < 13 ? text : (JSON.parse(JSON.stringify(text)) as string);
}

/**
 * Users a public answer may name: those the bot sees in at least one public channel, or in no channel at all,
 * unless the bot left a secret or private channel they were in (they may still be there; see
 * {@link User.inUnwatchedHiddenChannel}).
 */
export function isPublicUser(user: User): boolean {
  for (const channel of user.channels) if (!channel.hidden) return true;
  return user.channels.size === 0 && !user.inUnwatchedHiddenChannel;
}

/**
 * The key to keep for `name` (stored, so detached) when `key` is its fold from a line: a key cut from
 * the line would keep the line alive as long as the key is kept. Short keys are copies already.
 */
function storedKey(key: string, name: string, fold: (name: string) => string): string {
  return key.length < 13 ? key : fold(name);
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

  /** The user whose folded nick is `key` (a caller that folded the nick already saves folding it again). */
  byKey(key: string): User | undefined {
    return this.byNick.get(key);
  }

  all(): IterableIterator<User> {
    return this.byNick.values();
  }

  /** Each user with their folded nick: a pass over every user that needs the key need not fold every nick. */
  entries(): IterableIterator<[key: string, user: User]> {
    return this.byNick.entries();
  }

  /**
   * @internal changed through NetworkModel, which emits the change. A user the slice does not have yet
   * (the caller looked): no fields known, first seen now.
   * @param key `nick` folded
   */
  add(nick: string, clock: () => Date, key: string): User {
    const user: User = {
      nick: detached(nick),
      ident: null,
      host: null,
      realHost: null,
      ip: null,
      realname: null,
      account: null,
      server: null,
      away: false,
      isOperator: false,
      client: null,
      clientVersion: null,
      countryCode: null,
      // Read the clock only for a new user: a Date per line for the others would be garbage.
      firstSeenAt: this.timeText(clock()),
      channels: new Set(),
      inUnwatchedHiddenChannel: false,
    };
    this.byNick.set(storedKey(key, user.nick, this.fold), user);
    return user;
  }

  /**
   * @internal Set the fields given (undefined ones are left alone) and the nick's case as `nick` has it.
   * @returns whether anything changed (a sync repeats every user, a re-join what is known: often nothing does)
   */
  update(user: User, nick: string, fields: UserFields): boolean {
    let changed = false;
    if (user.nick !== nick) {
      user.nick = detached(nick);
      changed = true;
    }
    // for-in over a small literal allocates nothing, where Object.entries made an array per field on every line.
    for (const field in fields) {
      const value = fields[field as keyof UserFields];
      // Unchanged values are left alone: the stored strings are already compact.
      if (value === undefined || user[field as keyof UserFields] === value) continue;
      (user as unknown as Record<string, unknown>)[field] =
        typeof value === 'string' ? this.compact(user, field as keyof UserFields, value) : value;
      changed = true;
    }
    return changed;
  }

  private compact(user: User, field: keyof UserFields, value: string): string {
    if (field === 'server') return this.sharedServerName(value);
    // Most users have no cloak: their real host is the host, kept once.
    if (field === 'realHost' && value === user.host) return user.host;
    return detached(value);
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

  /**
   * @internal
   * @param oldKey `oldNick` folded, when the caller has it already
   * @param newKey `newNick` folded, when the caller has it already
   */
  rename(oldNick: string, newNick: string, oldKey = this.fold(oldNick), newKey = this.fold(newNick)): User | undefined {
    const user = this.byNick.get(oldKey);
    if (!user) return undefined;
    this.byNick.delete(oldKey);
    user.nick = detached(newNick);
    this.byNick.set(storedKey(newKey, user.nick, this.fold), user);
    return user;
  }

  /**
   * @internal
   * @param key `nick` folded, when the caller has it already
   */
  delete(nick: string, key = this.fold(nick)): User | undefined {
    const user = this.byNick.get(key);
    if (user) this.byNick.delete(key);
    return user;
  }

  /** @internal */
  clear(): void {
    this.byNick.clear();
  }
}
