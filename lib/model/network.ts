/**
 * The network model: one typed, in-memory picture of the network shared by
 * every plugin. It changes only through the named methods below, each of which
 * emits a {@link ModelChange} afterwards, when something did change: a user or a
 * member given again as the model knows them is no change. It knows nothing of
 * persistence.
 */
import { casefold, type Casemapping } from '../irc/casemapping.js';
import { ChannelsSlice, type Channel, type ChannelFields } from './channels.js';
import { ServersSlice, type Server, type ServerFields } from './servers.js';
import { ServicesSlice, type ServiceCommands } from './services.js';
import type { ModelChange, ModelSlice } from './slice.js';
import { UsersSlice, type User, type UserFields } from './users.js';

/** The network's own counts (LUSERS) and the state of the bot's view of it. */
export interface NetworkStats {
  users: number | null;
  invisible: number | null;
  channels: number | null;
  operators: number | null;
  servers: number | null;
  maxUsers: number | null;
  /** ISO time of the last complete sync; null before the first one. */
  syncedAt: string | null;
  /** Whether the bot was an operator during that sync (it then sees +i users too). */
  syncedAsOperator: boolean;
  /** How long that sync took, in milliseconds; null before the first one (or when not measured). */
  syncMs: number | null;
}

/** More change listeners than this is a leak (a listener added per request, per connection, ...), not a design. */
const MAX_LISTENERS = 50;

export class NetworkModel {
  readonly users: UsersSlice;
  readonly channels: ChannelsSlice;
  readonly servers: ServersSlice;
  /** The service command lists; kept across reconnects (they describe the services, not the connection). */
  readonly services: ServicesSlice;
  private casemappingValue: Casemapping = 'rfc1459';
  private connectedValue = false;
  private readonly statsValue: NetworkStats = {
    users: null,
    invisible: null,
    channels: null,
    operators: null,
    servers: null,
    maxUsers: null,
    syncedAt: null,
    syncedAsOperator: false,
    syncMs: null,
  };
  private readonly extraSlices = new Map<string, ModelSlice>();
  /**
   * Replaced, never changed in place, when a listener comes or goes: an emit runs the listeners there were
   * when it started (as EventEmitter does), without copying the list for every change.
   */
  private listeners: readonly ((change: ModelChange) => void)[] = [];

  constructor(private readonly clock: () => Date = () => new Date()) {
    this.users = new UsersSlice(this.foldName);
    this.channels = new ChannelsSlice(this.foldName);
    this.servers = new ServersSlice();
    this.services = new ServicesSlice();
  }

  get casemapping(): Casemapping {
    return this.casemappingValue;
  }

  /** The time by the model's clock, which dates its timestamps (the host's; tests pin it). */
  now(): Date {
    return this.clock();
  }

  /** Connected and synced at least once since: the data reflects the network. */
  get ready(): boolean {
    return this.connectedValue && this.statsValue.syncedAt !== null;
  }

  get connected(): boolean {
    return this.connectedValue;
  }

  get stats(): Readonly<NetworkStats> {
    return this.statsValue;
  }

  fold(name: string): string {
    return casefold(name, this.casemappingValue);
  }

  /** {@link fold} as a function value, for the slices. */
  private readonly foldName = (name: string): string => casefold(name, this.casemappingValue);

  on(event: 'change', listener: (change: ModelChange) => void): () => void {
    this.listeners = [...this.listeners, listener];
    if (this.listeners.length === MAX_LISTENERS + 1) {
      process.emitWarning(
        `NetworkModel: more than ${MAX_LISTENERS} "${event}" listeners; a listener is probably added without being removed`,
        'MaxListenersExceededWarning',
      );
    }
    return () => {
      const index = this.listeners.lastIndexOf(listener);
      if (index >= 0) this.listeners = this.listeners.filter((_, other) => other !== index);
    };
  }

  /** Every slice: the built-in ones, then those added (tokens, activity, ...), for persistence and lookup. */
  slices(): ModelSlice[] {
    return [this.users, this.channels, this.servers, this.services, ...this.extraSlices.values()];
  }

  addSlice(slice: ModelSlice): void {
    if (this.slices().some((existing) => existing.name === slice.name)) {
      throw new Error(`model slice "${slice.name}" is registered twice`);
    }
    this.extraSlices.set(slice.name, slice);
  }

  /** Announce a change made inside a slice that owns its own methods. */
  changed(change: ModelChange): void {
    for (const listener of this.listeners) listener(change);
  }

  /** Whether anyone listens: with nobody, the hot paths do not even build the change. */
  private get heard(): boolean {
    return this.listeners.length > 0;
  }

  // --- connection -----------------------------------------------------------

  /** A new connection: the live picture starts empty under the network's casemapping. */
  connectionOpened(casemapping: Casemapping): void {
    this.casemappingValue = casemapping;
    this.clearLive();
    this.connectedValue = true;
    this.changed({ slice: 'network', kind: 'connected' });
  }

  /** The connection is gone: nothing live can be trusted until the next sync. */
  connectionLost(): void {
    this.connectedValue = false;
    this.clearLive();
    this.changed({ slice: 'network', kind: 'disconnected' });
  }

  updateStats(fields: Partial<Omit<NetworkStats, 'syncedAt' | 'syncedAsOperator' | 'syncMs'>>): void {
    Object.assign(this.statsValue, fields);
    this.changed({ slice: 'network', kind: 'stats' });
  }

  /** A sync completed; `durationMs` is how long it took, when the caller measured it. */
  markSynced(asOperator: boolean, durationMs: number | null = null): void {
    this.statsValue.syncedAt = this.clock().toISOString();
    this.statsValue.syncedAsOperator = asOperator;
    this.statsValue.syncMs = durationMs;
    this.changed({ slice: 'network', kind: 'synced' });
  }

  // --- users ------------------------------------------------------------------

  // The methods a live line leads to take the folded names as optional last parameters: a caller that has
  // folded them already (the collector folds each name of a line once) saves folding them again here.

  /** @param key `nick` folded, when the caller has it already */
  upsertUser(nick: string, fields: UserFields = {}, key = this.fold(nick)): User {
    const known = this.users.byKey(key);
    const user = known ?? this.users.add(nick, this.clock, key);
    // Nothing new (a sync's WHO row, a known user re-joining): no change, so no listener runs and no cache is dropped.
    if (this.users.update(user, nick, fields) || known === undefined) {
      if (this.heard) this.changed({ slice: 'users', kind: 'upsert', name: user.nick });
    }
    return user;
  }

  /**
   * @param oldKey `oldNick` folded, when the caller has it already
   * @param newKey `newNick` folded, when the caller has it already
   */
  renameUser(oldNick: string, newNick: string, oldKey = this.fold(oldNick), newKey = this.fold(newNick)): void {
    const user = this.users.byKey(oldKey);
    if (!user) return;
    // Someone the model still has under the new nick is gone (a server lets no two users share a nick).
    const holder = this.users.byKey(newKey);
    if (holder && holder !== user) this.removeUser(holder.nick, newKey);
    this.users.rename(oldNick, newNick, oldKey, newKey);
    // Channels know their members as user objects, which a rename keeps: nothing else to change.
    if (this.heard) this.changed({ slice: 'users', kind: 'rename', name: newNick });
  }

  /**
   * The user quit or was killed: gone from every channel.
   * @param key `nick` folded, when the caller has it already
   */
  removeUser(nick: string, key = this.fold(nick)): void {
    const user = this.users.delete(nick, key);
    if (!user) return;
    for (const channel of user.channels) {
      if (channel.members.delete(user)) channel.users = Math.max(0, channel.users - 1);
    }
    // Someone still holding the object (a weak reference, a request in flight) sees no channel it is not in.
    user.channels.clear();
    if (this.heard) this.changed({ slice: 'users', kind: 'remove', name: user.nick });
  }

  // --- channels -----------------------------------------------------------------

  /** @param key `name` folded, when the caller has it already */
  upsertChannel(name: string, fields: ChannelFields = {}, key = this.fold(name)): Channel {
    const channel = this.channels.upsert(name, fields, key);
    if (this.heard) this.changed({ slice: 'channels', kind: 'upsert', name: channel.name });
    return channel;
  }

  removeChannel(name: string): void {
    const channelKey = this.fold(name);
    const channel = this.channels.delete(name, channelKey);
    if (!channel) return;
    this.dropMembers(channel);
    this.changed({ slice: 'channels', kind: 'remove', name: channel.name });
  }

  /**
   * The bot left `channelName`: its members are no longer seen. The users stay known (the
   * collector decides when to forget them), and the channel keeps `users` as the count to show.
   */
  clearMembers(channelName: string, users: number): void {
    const channel = this.channels.get(channelName);
    if (!channel) return;
    this.dropMembers(channel);
    this.upsertChannel(channel.name, { joined: false, users });
  }

  /**
   * Empty `channel`'s members, and take it out of each one's channels. The members of a secret or private
   * channel may still be in it, out of the bot's sight: they are marked so that public answers keep them out.
   */
  private dropMembers(channel: Channel): void {
    for (const member of channel.members.keys()) {
      member.channels.delete(channel);
      if (channel.hidden) member.inUnwatchedHiddenChannel = true;
    }
    channel.members.clear();
  }

  /**
   * A member joined (or was listed by NAMES/WHO) with the given prefixes.
   * @param channelKey `channelName` folded, when the caller has it already
   * @param userKey `nick` folded, when the caller has it already
   */
  addMember(
    channelName: string,
    nick: string,
    prefix = '',
    channelKey = this.fold(channelName),
    userKey = this.fold(nick),
  ): void {
    const channel = this.channels.byKey(channelKey) ?? this.channels.upsert(channelName, {}, channelKey);
    const user = this.users.byKey(userKey) ?? this.users.add(nick, this.clock, userKey);
    const { members } = channel;
    let changed = false;
    // Looked up before it is written: a member listed again with the same prefixes is no change.
    const known = members.get(user);
    if (known !== prefix) {
      members.set(user, prefix);
      if (channel.joined && known === undefined) channel.users = members.size;
      changed = true;
    }
    if (!user.channels.has(channel)) {
      user.channels.add(channel);
      changed = true;
    }
    if (changed && this.heard) this.changed({ slice: 'channels', kind: 'join', name: channel.name });
  }

  /** The prefixes of `nick` in `channelName`; undefined when they are not a member (as far as the bot knows). */
  memberPrefix(channelName: string, nick: string): string | undefined {
    const user = this.users.get(nick);
    return user && this.channels.get(channelName)?.members.get(user);
  }

  setMemberPrefix(channelName: string, nick: string, prefix: string): void {
    const channel = this.channels.get(channelName);
    const user = this.users.get(nick);
    if (!channel || !user || !channel.members.has(user)) return;
    channel.members.set(user, prefix);
    this.changed({ slice: 'channels', kind: 'prefix', name: channel.name });
  }

  /**
   * A member left (PART or KICK). The user stays known; the collector decides when to forget them.
   * @param channelKey `channelName` folded, when the caller has it already
   * @param userKey `nick` folded, when the caller has it already
   */
  removeMember(
    channelName: string,
    nick: string,
    channelKey = this.fold(channelName),
    userKey = this.fold(nick),
  ): void {
    const channel = this.channels.byKey(channelKey);
    const user = this.users.byKey(userKey);
    if (!channel || !user) return;
    const wasMember = channel.members.delete(user);
    if (wasMember && channel.joined) channel.users = channel.members.size;
    // A PART of someone the bot did not see join (its members are not known yet) is no change.
    if ((user.channels.delete(channel) || wasMember) && this.heard) {
      this.changed({ slice: 'channels', kind: 'part', name: channel.name });
    }
  }

  // --- servers ------------------------------------------------------------------

  upsertServer(name: string, fields: ServerFields = {}): Server {
    const server = this.servers.upsert(name, fields);
    this.changed({ slice: 'servers', kind: 'upsert', name: server.name });
    return server;
  }

  /**
   * The server is no longer linked (a split, or LINKS no longer shows it): it goes, and every user on it
   * with it, as the network's own QUITs for them would take them.
   */
  removeServer(name: string): void {
    const server = this.servers.delete(name);
    if (!server) return;
    const key = server.name.toLowerCase();
    for (const user of [...this.users.all()]) {
      if (user.server !== null && user.server.toLowerCase() === key) this.removeUser(user.nick);
    }
    this.changed({ slice: 'servers', kind: 'remove', name: server.name });
  }

  /** A latency measurement of a known server: the round trip in ms, or null when it did not answer. */
  setServerLatency(name: string, latencyMs: number | null): void {
    const server = this.servers.get(name);
    if (!server) return;
    server.latencyMs = latencyMs;
    server.measuredAt = this.clock().toISOString();
    this.changed({ slice: 'servers', kind: 'latency', name: server.name });
  }

  // --- services -----------------------------------------------------------------

  /** The command lists of the services that answered HELP this time; services not listed are gone. */
  setServiceCommands(lists: readonly ServiceCommands[]): void {
    this.services.replace(lists, this.clock().toISOString());
    this.changed({ slice: 'services', kind: 'commands' });
  }

  private clearLive(): void {
    this.users.clear();
    this.channels.clear();
    this.servers.clear();
    this.statsValue.syncedAt = null;
    this.statsValue.syncMs = null;
  }
}
