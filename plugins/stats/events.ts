/**
 * The network's events as they happen (the service `stats.events`). The model only says that something
 * changed, after the change: by then a user who quit is gone with their channels, and a PART looks like a KICK.
 * So the events are taken where the collector reads them: the live handlers (live.ts) and the client notices
 * (notices.ts) tell the tap of each line before they apply it, with what it needs to know who may see it. What
 * no single line says (a channel formed or emptied, a server linked or split, new counts) the tap works out from
 * the model's changes, comparing with what it announced before; until the first sync is done those are only
 * recorded, so a start does not announce every channel as formed.
 *
 * Each event comes in a full form and a public one (contract.ts, {@link NetworkEvent}); the public form follows
 * the public API's rules. Nothing is built while nobody listens.
 */
import {
  isPublicUser,
  type Channel,
  type Logger,
  type ModelChange,
  type NetworkModel,
  type User,
} from '../../lib/sdk.js';
import { errorMessage } from '../../lib/sdk.js';
import type { EventsService, NetworkEvent, NetworkEventData, NetworkEventType } from './contract.js';

type Listener = (event: NetworkEvent) => void;

/** What says who a user is, as far as the collector knows it. */
export function identityOf(user: User): NetworkEventData {
  return {
    ident: user.ident,
    host: user.host,
    real_host: user.realHost,
    ip: user.ip,
    realname: user.realname,
    account: user.account,
  };
}

/** The public names among a user's channels, sorted; with `all`, every one. */
function channelNames(user: User, all: boolean): string[] {
  const names: string[] = [];
  for (const channel of user.channels) if (all || !channel.hidden) names.push(channel.name);
  return names.sort();
}

export class EventTap {
  private readonly listeners = new Set<Listener>();
  /** The channels announced, by folded name: true where public readers were told of it. */
  private readonly channels = new Map<string, boolean>();
  /** The servers announced, by lower-case name. */
  private readonly servers = new Set<string>();
  /** The counts last announced, as their JSON. */
  private counts = '';

  constructor(
    private readonly model: NetworkModel,
    private readonly logger: Logger,
  ) {}

  /** Whether anybody listens: the live handlers build nothing otherwise. */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  service(): EventsService {
    return {
      subscribe: (listener) => {
        this.listeners.add(listener);
        return () => void this.listeners.delete(listener);
      },
    };
  }

  private emit(
    type: NetworkEventType,
    data: NetworkEventData | null,
    publicData: NetworkEventData | null,
    about: { channel?: string; server?: string } = {},
  ): void {
    const event: NetworkEvent = { type, time: Date.now(), data, publicData, ...about };
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error('an event listener failed', { type, error: errorMessage(error) });
      }
    }
  }

  // --- what a line says, told by the live handlers before they apply it ----------------------------------------

  /** `user` joined `channel` (both as the model has them after the JOIN). */
  joined(channel: Channel, user: User): void {
    const data = { channel: channel.name, nick: user.nick };
    this.emit('join', { ...data, identity: identityOf(user) }, channel.hidden ? null : data, { channel: channel.name });
  }

  /** `nick` left `channel`: parted, or was kicked (`by` someone, null when the line does not say who). */
  left(channel: Channel, nick: string, reason: string | null, by?: string | null): void {
    const data =
      by === undefined ? { channel: channel.name, nick, reason } : { channel: channel.name, nick, by, reason };
    this.emit(by === undefined ? 'part' : 'kick', data, channel.hidden ? null : data, { channel: channel.name });
  }

  /** `user` quit (or was killed `by` someone); told before the model forgets them. */
  quit(user: User, reason: string | null, by?: string | null): void {
    const extra = by === undefined ? {} : { killed_by: by };
    const data = { nick: user.nick, reason, ...extra, channels: channelNames(user, true), identity: identityOf(user) };
    const publicData = isPublicUser(user)
      ? { nick: user.nick, reason, ...extra, channels: channelNames(user, false) }
      : null;
    this.emit('quit', data, publicData);
  }

  /** `user` is now `to`; told before the rename. */
  renamed(user: User, to: string): void {
    const data = { old_nick: user.nick, new_nick: to };
    this.emit('nick', data, isPublicUser(user) ? data : null);
  }

  /** A new client: `user` as the model has it after the server's notice. */
  connected(user: User): void {
    const data = { nick: user.nick, server: user.server };
    this.emit('connect', { ...data, identity: identityOf(user) }, isPublicUser(user) ? data : null, {
      ...(user.server ? { server: user.server } : {}),
    });
  }

  topic(channel: Channel, topic: string, by: string | null): void {
    const data = { channel: channel.name, topic, set_by: by };
    this.emit('topic', data, channel.hidden ? null : data, { channel: channel.name });
  }

  /**
   * A MODE on `channel` (as the model has it after the change): `change` as the line gave it, with its
   * `parameters`. The public form carries the channel's public modes after the change, and of the parameters only
   * the nicks given or taken a rank (a ban mask, a key or a limit may say more than the public API shows).
   */
  modes(channel: Channel, by: string | null, change: string, parameters: readonly string[], nicks: string[]): void {
    const data = { channel: channel.name, by, change, parameters: [...parameters], modes: channel.modes };
    const publicData = { channel: channel.name, by, change, parameters: nicks, modes: channel.modes };
    this.emit('mode', data, channel.hidden ? null : publicData, { channel: channel.name });
  }

  away(user: User, away: boolean, message: string | null): void {
    const publicData = { nick: user.nick, away };
    this.emit('away', { ...publicData, message }, isPublicUser(user) ? publicData : null);
  }

  /** `user` logged in to `account` (null: logged out). An account is never public. */
  account(user: User, account: string | null): void {
    this.emit('account', { nick: user.nick, identity: { ...identityOf(user), account } }, null);
  }

  // --- what the model's changes say ----------------------------------------------------------------------------

  /** A change of the model (every one, in order): channels formed and emptied, servers linked and split, counts. */
  changed(change: ModelChange): void {
    // Nobody listens, and nobody will: the events plugin subscribes at its start, before the first sync.
    if (!this.listening) return;
    if (change.slice === 'channels' && change.name !== undefined) this.channelChanged(change.name);
    else if (change.slice === 'servers' && change.name !== undefined) this.serverChanged(change.name);
    else if (change.slice === 'network' && change.kind === 'stats') this.countsChanged();
  }

  private channelChanged(name: string): void {
    const { model } = this;
    const key = model.fold(name);
    const channel = model.channels.byKey(key);
    const told = this.channels.get(key);
    const announce = model.ready;
    if (!channel) {
      if (told === undefined) return;
      this.channels.delete(key);
      if (announce) {
        const data = { channel: name };
        this.emit('channel_emptied', data, told ? data : null, { channel: name });
      }
      return;
    }
    const open = !channel.hidden;
    if (told === open) return;
    this.channels.set(key, open);
    if (!announce) return;
    const data = { channel: channel.name };
    if (told === undefined) {
      this.emit('channel_created', data, open ? data : null, { channel: channel.name });
    } else {
      // Seen before by full readers; public readers see it appear (a mode check said it is public) or go (+s).
      this.emit(open ? 'channel_created' : 'channel_emptied', null, data, { channel: channel.name });
    }
  }

  private serverChanged(name: string): void {
    const lower = name.toLowerCase();
    const server = this.model.servers.get(name);
    const known = this.servers.has(lower);
    if (server ? known : !known) return;
    if (server) this.servers.add(lower);
    else this.servers.delete(lower);
    if (!this.model.ready) return;
    const data = server
      ? { server: server.name, uplink: server.uplink, description: server.description }
      : { server: name };
    this.emit(server ? 'server_linked' : 'server_split', data, data, { server: name });
  }

  private countsChanged(): void {
    const { users, channels, operators, servers, maxUsers } = this.model.stats;
    const data = { users, channels, operators, servers, max_users: maxUsers };
    const text = JSON.stringify(data);
    if (text === this.counts) return;
    this.counts = text;
    if (this.model.ready) this.emit('counts', data, data);
  }
}
