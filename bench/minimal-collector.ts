/**
 * The least a collector can do with the ingest bench's lines, as a yardstick for the real one: a
 * floor for what a redesign of the model kept in JavaScript's maps and arrays would cost per line
 * here, not a design the product could use. It keeps only part of what the API's answers are built
 * from, in the leanest layout plain JavaScript offers:
 *
 * - users by folded nick (a `Map` to a numeric id), with their ident, host, account and realname in
 *   arrays by id, and each user's channels as a short array of channel ids;
 * - channels by folded name (a `Map` to an id), with member and line counts in typed arrays;
 * - today's activity: a row per nick with its lines and 24 hourly counts in typed arrays, and the
 *   lines per nick and channel in a `Map` keyed by one number.
 *
 * Left out, so the bound is low: objects per user or channel, member lists on the channel's side,
 * modes and prefixes, change events and their listeners (countries, the VERSION queue, peaks, the
 * API's caches), hidden lines, past days, the store. A nick change starts a new activity row, as in
 * the real collector.
 */
import { casefold } from '../lib/irc/casemapping.js';
import type { IrcMessage } from '../lib/irc/port.js';

/** Channel ids fit in this many bits of a (row, channel) pair key. */
const CHANNEL_BITS = 12;
const MAX_CHANNELS = 1 << CHANNEL_BITS;
const HOURS = 24;

export class MinimalCollector {
  private readonly userIds = new Map<string, number>();
  private readonly channelIds = new Map<string, number>();
  /** Ids of users who quit, for the next new user. */
  private readonly freeIds: number[] = [];
  private nextUserId = 0;
  private readonly nick: string[] = [];
  private readonly ident: string[] = [];
  private readonly host: string[] = [];
  private readonly account: (string | null)[] = [];
  private readonly realname: string[] = [];
  private readonly channelsOf: number[][] = [];
  private readonly members = new Int32Array(MAX_CHANNELS);
  private readonly channelLines = new Int32Array(MAX_CHANNELS);
  /** Each user's activity row for today, -1 before their first line under their current nick. */
  private dayRow: Int32Array = new Int32Array(0);
  private nextRow = 0;
  private rowLines: Int32Array = new Int32Array(0);
  private rowHours: Int32Array = new Int32Array(0);
  /** Lines per (row, channel), keyed `row * MAX_CHANNELS + channel`. */
  private readonly pairLines = new Map<number, number>();
  /** Chat lines counted, so a caller can check that the lines reached the counts. */
  linesCounted = 0;

  get users(): number {
    return this.userIds.size;
  }

  /** Members of channel `name` (folded or not), 0 for a channel never seen. */
  membersOf(name: string): number {
    const id = this.channelIds.get(casefold(name));
    return id === undefined ? 0 : this.members[id]!;
  }

  /** The id of channel `name`, made on first sight. */
  channel(name: string): number {
    const key = casefold(name);
    let id = this.channelIds.get(key);
    if (id === undefined) {
      id = this.channelIds.size;
      if (id >= MAX_CHANNELS) throw new Error(`more than ${MAX_CHANNELS} channels`);
      this.channelIds.set(key, id);
    }
    return id;
  }

  /** The id of the user `nick`, made on first sight; their WHO fields are stored when they differ. */
  user(nick: string, ident: string, host: string, account: string | null, realname: string): number {
    const key = casefold(nick);
    let id = this.userIds.get(key);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.nextUserId++;
      this.userIds.set(key, id);
      this.nick[id] = nick;
      this.channelsOf[id] = [];
      if (id >= this.dayRow.length) this.dayRow = grown(this.dayRow, id, -1);
      this.dayRow[id] = -1;
    }
    if (this.ident[id] !== ident) this.ident[id] = ident;
    if (this.host[id] !== host) this.host[id] = host;
    if (this.account[id] !== account) this.account[id] = account;
    if (this.realname[id] !== realname) this.realname[id] = realname;
    return id;
  }

  /** Put `user` in `channel`, as a JOIN or a NAMES reply does. */
  addMember(user: number, channel: number): void {
    const channels = this.channelsOf[user]!;
    if (channels.includes(channel)) return;
    channels.push(channel);
    this.members[channel]! += 1;
  }

  handle(message: IrcMessage): void {
    const { source, params } = message;
    if (!source) return;
    switch (message.command) {
      case 'PRIVMSG':
        this.count(source.nick, params[0]!, message.time);
        return;
      case 'JOIN': {
        // Extended join: the account (`*` for none) and the realname follow the channel.
        const account = params[1] === undefined || params[1] === '*' ? null : params[1];
        const user = this.user(source.nick, source.ident, source.host, account, params[2] ?? '');
        this.addMember(user, this.channel(params[0]!));
        return;
      }
      case 'PART': {
        const user = this.userIds.get(casefold(source.nick));
        const channel = this.channelIds.get(casefold(params[0]!));
        if (user === undefined || channel === undefined) return;
        const channels = this.channelsOf[user]!;
        const at = channels.indexOf(channel);
        if (at === -1) return;
        channels.splice(at, 1);
        this.members[channel]! -= 1;
        return;
      }
      case 'QUIT': {
        const key = casefold(source.nick);
        const user = this.userIds.get(key);
        if (user === undefined) return;
        for (const channel of this.channelsOf[user]!) this.members[channel]! -= 1;
        this.userIds.delete(key);
        this.channelsOf[user] = [];
        this.freeIds.push(user);
        return;
      }
      case 'NICK': {
        const key = casefold(source.nick);
        const user = this.userIds.get(key);
        if (user === undefined) return;
        this.userIds.delete(key);
        this.userIds.set(casefold(params[0]!), user);
        this.nick[user] = params[0]!;
        this.dayRow[user] = -1;
        return;
      }
    }
  }

  /** Count a chat line of `nick` in `channel`: the nick's lines and hour, the pair, the channel. */
  private count(nick: string, target: string, time: Date): void {
    const user = this.userIds.get(casefold(nick));
    const channel = this.channelIds.get(casefold(target));
    if (user === undefined || channel === undefined) return;
    let row = this.dayRow[user]!;
    if (row === -1) {
      row = this.nextRow++;
      if (row >= this.rowLines.length) {
        this.rowLines = grown(this.rowLines, row, 0);
        this.rowHours = grown(this.rowHours, row * HOURS + HOURS - 1, 0);
      }
      this.dayRow[user] = row;
    }
    this.rowLines[row]! += 1;
    this.rowHours[row * HOURS + time.getUTCHours()]! += 1;
    const pair = row * MAX_CHANNELS + channel;
    this.pairLines.set(pair, (this.pairLines.get(pair) ?? 0) + 1);
    this.channelLines[channel]! += 1;
    this.linesCounted++;
  }
}

/** A copy of `array` with room for index `needed`, doubled, new slots set to `fill`. */
function grown(array: Int32Array, needed: number, fill: number): Int32Array {
  const bigger = new Int32Array(Math.max(1024, 2 * (needed + 1))).fill(fill);
  bigger.set(array);
  return bigger;
}
