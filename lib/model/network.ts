/**
 * The network model: one typed, in-memory picture of the network shared by
 * every plugin. It changes only through the named methods below, each of which
 * emits a {@link ModelChange} afterwards. It knows nothing of persistence.
 */
import { EventEmitter } from 'node:events';
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
}

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
  };
  private readonly extraSlices = new Map<string, ModelSlice>();
  private readonly events = new EventEmitter();

  constructor(private readonly clock: () => Date = () => new Date()) {
    const fold = (name: string): string => casefold(name, this.casemappingValue);
    this.users = new UsersSlice(fold);
    this.channels = new ChannelsSlice(fold);
    this.servers = new ServersSlice();
    this.services = new ServicesSlice();
    this.events.setMaxListeners(50);
  }

  get casemapping(): Casemapping {
    return this.casemappingValue;
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

  on(event: 'change', listener: (change: ModelChange) => void): () => void {
    this.events.on(event, listener);
    return () => this.events.off(event, listener);
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
    this.events.emit('change', change);
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

  updateStats(fields: Partial<Omit<NetworkStats, 'syncedAt' | 'syncedAsOperator'>>): void {
    Object.assign(this.statsValue, fields);
    this.changed({ slice: 'network', kind: 'stats' });
  }

  markSynced(asOperator: boolean): void {
    this.statsValue.syncedAt = this.clock().toISOString();
    this.statsValue.syncedAsOperator = asOperator;
    this.changed({ slice: 'network', kind: 'synced' });
  }

  // --- users ------------------------------------------------------------------

  upsertUser(nick: string, fields: UserFields = {}): User {
    const user = this.users.upsert(nick, fields, this.clock());
    this.changed({ slice: 'users', kind: 'upsert', name: user.nick });
    return user;
  }

  renameUser(oldNick: string, newNick: string): void {
    const user = this.users.rename(oldNick, newNick);
    if (!user) return;
    const oldKey = this.fold(oldNick);
    const newKey = this.fold(newNick);
    for (const channelKey of user.channels) {
      const members = this.channels.get(channelKey)?.members;
      if (!members) continue;
      const prefix = members.get(oldKey) ?? '';
      members.delete(oldKey);
      members.set(newKey, prefix);
    }
    this.changed({ slice: 'users', kind: 'rename', name: newNick });
  }

  /** The user quit or was killed: gone from every channel. */
  removeUser(nick: string): void {
    const user = this.users.delete(nick);
    if (!user) return;
    const key = this.fold(nick);
    for (const channelKey of user.channels) {
      const channel = this.channels.get(channelKey);
      if (channel?.members.delete(key)) channel.users = Math.max(0, channel.users - 1);
    }
    this.changed({ slice: 'users', kind: 'remove', name: user.nick });
  }

  // --- channels -----------------------------------------------------------------

  upsertChannel(name: string, fields: ChannelFields = {}): Channel {
    const channel = this.channels.upsert(name, fields);
    this.changed({ slice: 'channels', kind: 'upsert', name: channel.name });
    return channel;
  }

  removeChannel(name: string): void {
    const channel = this.channels.delete(name);
    if (!channel) return;
    const channelKey = this.fold(name);
    for (const memberKey of channel.members.keys()) this.users.get(memberKey)?.channels.delete(channelKey);
    this.changed({ slice: 'channels', kind: 'remove', name: channel.name });
  }

  /** A member joined (or was listed by NAMES/WHO) with the given prefixes. */
  addMember(channelName: string, nick: string, prefix = ''): void {
    const channel = this.channels.get(channelName) ?? this.channels.upsert(channelName, {});
    const user = this.users.get(nick) ?? this.users.upsert(nick, {}, this.clock());
    const channelKey = this.fold(channel.name);
    const userKey = this.fold(user.nick);
    if (!channel.members.has(userKey) && channel.joined) channel.users = channel.members.size + 1;
    channel.members.set(userKey, prefix);
    user.channels.add(channelKey);
    this.changed({ slice: 'channels', kind: 'join', name: channel.name });
  }

  setMemberPrefix(channelName: string, nick: string, prefix: string): void {
    const channel = this.channels.get(channelName);
    const userKey = this.fold(nick);
    if (!channel?.members.has(userKey)) return;
    channel.members.set(userKey, prefix);
    this.changed({ slice: 'channels', kind: 'prefix', name: channel.name });
  }

  /** A member left (PART or KICK). The user stays known; the collector decides when to forget them. */
  removeMember(channelName: string, nick: string): void {
    const channel = this.channels.get(channelName);
    if (!channel) return;
    const userKey = this.fold(nick);
    if (channel.members.delete(userKey) && channel.joined) channel.users = channel.members.size;
    const user = this.users.get(nick);
    user?.channels.delete(this.fold(channel.name));
    this.changed({ slice: 'channels', kind: 'part', name: channel.name });
  }

  // --- servers ------------------------------------------------------------------

  upsertServer(name: string, fields: ServerFields = {}): Server {
    const server = this.servers.upsert(name, fields);
    this.changed({ slice: 'servers', kind: 'upsert', name: server.name });
    return server;
  }

  removeServer(name: string): void {
    if (this.servers.delete(name)) this.changed({ slice: 'servers', kind: 'remove', name });
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
  }
}
