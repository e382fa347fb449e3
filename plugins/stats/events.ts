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

/** What a MODE line's parameters were: the nicks given or taken a rank, and every parameter but a list's (a mask). */
export interface ModeParameters {
  ranked: string[];
  withoutMasks: string[];
}

/** A channel as announced: its name, and whether public readers were told of it. */
interface Announced {
  name: string;
  open: boolean;
}

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
  /** The channels announced, by folded name. */
  private readonly channels = new Map<string, Announced>();
  /** The servers announced: their names by lower-case name. */
  private readonly servers = new Map<string, string>();
  /** What was announced when the connection was lost, until the next connection's first sync is done. */
  private beforeOutage: { channels: Map<string, Announced>; servers: Map<string, string> } | null = null;
  private everSynced = false;
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
    tokenData?: NetworkEventData | null,
  ): void {
    const event: NetworkEvent = {
      type,
      time: Date.now(),
      data,
      publicData,
      ...about,
      ...(tokenData === undefined ? {} : { tokenData }),
    };
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

  /**
   * `user` quit (or was killed `by` someone); told before the model forgets them. `reasonIsPublic`: the reason is
   * what everyone in the user's channels saw. An operator is told more (InspIRCd gives operators a ban's or a
   * kill's reason where others see "G-Lined"; its server notices carry that text): that reason stays out of the
   * public form.
   */
  quit(user: User, reason: string | null, reasonIsPublic: boolean, by?: string | null): void {
    const extra = by === undefined ? {} : { killed_by: by };
    const data = { nick: user.nick, reason, ...extra, channels: channelNames(user, true), identity: identityOf(user) };
    const publicData = isPublicUser(user)
      ? { nick: user.nick, reason: reasonIsPublic ? reason : null, ...extra, channels: channelNames(user, false) }
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
   * `parameters`. A list mode's parameter (a ban, exception or invite mask) says where users connect from: only
   * readers allowed to see who users are get it. The public form carries the channel's public modes after the
   * change, and of the parameters only the nicks given or taken a rank (a key or a limit is not public either).
   */
  modes(
    channel: Channel,
    by: string | null,
    change: string,
    parameters: readonly string[],
    sorted: ModeParameters,
  ): void {
    const about = { channel: channel.name, by, change };
    const data = { ...about, parameters: [...parameters], modes: channel.modes };
    const tokenData = { ...about, parameters: sorted.withoutMasks, modes: channel.modes };
    const publicData = { ...about, parameters: sorted.ranked, modes: channel.modes };
    this.emit('mode', data, channel.hidden ? null : publicData, { channel: channel.name }, tokenData);
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

  /**
   * A change of the model (every one, in order): channels formed and emptied, servers linked and split, counts.
   * A lost connection empties the model without a change per channel: what changed meanwhile is told once the
   * next connection's first sync is done, by comparing with what was announced before.
   */
  changed(change: ModelChange): void {
    // Nobody listens, and nobody will: the events plugin subscribes at its start, before the first sync.
    if (!this.listening) return;
    // A rank or a part neither forms, empties nor hides a channel: the most frequent changes cost nothing here.
    if (change.slice === 'channels' && change.name !== undefined) {
      if (change.kind !== 'prefix' && change.kind !== 'part') this.channelChanged(change.name);
    } else if (change.slice === 'servers' && change.name !== undefined) this.serverChanged(change.name);
    else if (change.slice !== 'network') return;
    else if (change.kind === 'stats') this.countsChanged();
    else if (change.kind === 'disconnected' && this.everSynced && !this.beforeOutage) {
      this.beforeOutage = { channels: new Map(this.channels), servers: new Map(this.servers) };
    } else if (change.kind === 'synced') {
      this.everSynced = true;
      if (this.beforeOutage) this.tellOutage(this.beforeOutage);
      this.beforeOutage = null;
      // The sync's LUSERS came while the model was not ready yet.
      this.countsChanged();
    }
  }

  private channelChanged(name: string): void {
    const { model } = this;
    const key = model.fold(name);
    const channel = model.channels.byKey(key);
    const told = this.channels.get(key);
    // Until the (first) sync is done, only recorded: a start or a reconnect is not every channel forming.
    const announce = model.ready;
    if (!channel) {
      if (told === undefined) return;
      this.channels.delete(key);
      if (announce) this.channelGone(told);
      return;
    }
    const open = !channel.hidden;
    if (told?.open === open) return;
    const now = { name: channel.name, open };
    this.channels.set(key, now);
    if (announce) this.channelCame(told, now);
  }

  /** A channel is gone: an emptied channel, public where it was. */
  private channelGone(told: Announced): void {
    const data = { channel: told.name };
    this.emit('channel_emptied', data, told.open ? data : null, { channel: told.name });
  }

  /** A channel is new (`told` undefined), or public readers see it appear (a mode check said so) or go (+s, +p). */
  private channelCame(told: Announced | undefined, now: Announced): void {
    const data = { channel: now.name };
    if (told === undefined) this.emit('channel_created', data, now.open ? data : null, { channel: now.name });
    else this.emit(now.open ? 'channel_created' : 'channel_emptied', null, data, { channel: now.name });
  }

  private serverChanged(name: string): void {
    const lower = name.toLowerCase();
    const server = this.model.servers.get(name);
    if (server ? this.servers.has(lower) : !this.servers.has(lower)) return;
    if (server) this.servers.set(lower, server.name);
    else this.servers.delete(lower);
    if (this.model.ready) this.serverTold(server?.name ?? name);
  }

  /** `name` linked (the model has it) or split. */
  private serverTold(name: string): void {
    const server = this.model.servers.get(name);
    const data = server
      ? { server: server.name, uplink: server.uplink, description: server.description }
      : { server: name };
    this.emit(server ? 'server_linked' : 'server_split', data, data, { server: name });
  }

  /** The first sync after an outage is done: what changed since the connection was lost. */
  private tellOutage(before: { channels: Map<string, Announced>; servers: Map<string, string> }): void {
    const { model } = this;
    this.channels.clear();
    for (const channel of model.channels.all()) {
      this.channels.set(model.fold(channel.name), { name: channel.name, open: !channel.hidden });
    }
    for (const [key, told] of before.channels) if (!this.channels.has(key)) this.channelGone(told);
    for (const [key, now] of this.channels) {
      const told = before.channels.get(key);
      if (told?.open !== now.open) this.channelCame(told, now);
    }
    this.servers.clear();
    for (const server of model.servers.all()) this.servers.set(server.name.toLowerCase(), server.name);
    for (const [lower, name] of before.servers) if (!this.servers.has(lower)) this.serverTold(name);
    for (const [lower, name] of this.servers) if (!before.servers.has(lower)) this.serverTold(name);
  }

  private countsChanged(): void {
    const { users, channels, operators, servers, maxUsers } = this.model.stats;
    const data = { users, channels, operators, servers, max_users: maxUsers };
    const text = JSON.stringify(data);
    // Until the model is ready, the counts wait for the sync's end (changed, above), and are told then.
    if (text === this.counts || !this.model.ready) return;
    this.counts = text;
    this.emit('counts', data, data);
  }
}
