/**
 * A minimal collector for the ingest bench's lines, as a yardstick for the real one: how fast a model
 * kept in JavaScript's maps and typed arrays, handling one line at a time, can take these lines on
 * this machine. It is not a design the product could use: it keeps only part of what the API's
 * answers are built from, in the leanest layout of that kind:
 *
 * - users by folded nick (a `Map` to a numeric id), with their ident, host, account and realname in
 *   arrays by id, and each user's channels as a short array of channel ids;
 * - channels by folded name (a `Map` to an id), with member and line counts in typed arrays;
 * - today's activity: a row per nick in one typed array (its lines, then 24 hourly counts), and the
 *   lines per nick and channel in a `Map` keyed by one number.
 *
 * Left out: objects per user or channel, member lists on the channel's side, modes and prefixes,
 * change events and their listeners (countries, the VERSION queue, peaks, the API's caches), hidden
 * lines, past days, the store. As in the real collector, a nick counts under its folded name, and
 * a user's new nick starts a new row; a user who quits takes their row with them (the real
 * collector would find it again if the nick came back the same day, which the bench never does).
 */
import { casefold } from '../lib/irc/casemapping.js';
import type { IrcMessage } from '../lib/irc/port.js';

/** Channel ids fit in this many bits of a (row, channel) pair key. */
const CHANNEL_BITS = 12;
const MAX_CHANNELS = 1 << CHANNEL_BITS;
const HOURS = 24;
/** A row: the nick's lines today, then its lines in each hour (UTC). */
const ROW = 1 + HOURS;
const NO_ROW = -1;

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
  /** Each user's row for today, {@link NO_ROW} before their first line under their current nick. */
  private rowOf: Int32Array = new Int32Array(1024).fill(NO_ROW);
  private rowCount = 0;
  private rows: Int32Array = new Int32Array(1024 * ROW);
  /** Lines per (row, channel), keyed `row * MAX_CHANNELS + channel`. */
  private readonly pairLines = new Map<number, number>();
  private chatLines = 0;

  get users(): number {
    return this.userIds.size;
  }

  /** Chat lines counted today. */
  get linesCounted(): number {
    return this.chatLines;
  }

  /** Nicks with a row today. */
  get nicksCounted(): number {
    return this.rowCount;
  }

  /** (Nick, channel) pairs counted today. */
  get pairsCounted(): number {
    return this.pairLines.size;
  }

  /** The lines of every nick's hours today, added up. */
  hourlyTotal(): number {
    let total = 0;
    for (let row = 0; row < this.rowCount; row++) {
      for (let hour = 1; hour <= HOURS; hour++) total += this.rows[row * ROW + hour]!;
    }
    return total;
  }

  /** Members of channel `name`, 0 for a channel never seen. */
  membersOf(name: string): number {
    const id = this.channelIds.get(casefold(name));
    return id === undefined ? 0 : this.members[id]!;
  }

  /** Chat lines counted today in channel `name`, 0 for a channel never seen. */
  linesIn(name: string): number {
    const id = this.channelIds.get(casefold(name));
    return id === undefined ? 0 : this.channelLines[id]!;
  }

  /** The id of channel `name`, made on first sight. */
  channelId(name: string): number {
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
  userId(nick: string, ident: string, host: string, account: string | null, realname: string): number {
    const key = casefold(nick);
    let id = this.userIds.get(key);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.nextUserId++;
      this.userIds.set(key, id);
      this.nick[id] = nick;
      this.channelsOf[id] = [];
      if (id >= this.rowOf.length) this.rowOf = grown(this.rowOf, 2 * this.rowOf.length, NO_ROW);
      this.rowOf[id] = NO_ROW;
    }
    if (this.ident[id] !== ident) this.ident[id] = ident;
    if (this.host[id] !== host) this.host[id] = host;
    if (this.account[id] !== account) this.account[id] = account;
    if (this.realname[id] !== realname) this.realname[id] = realname;
    return id;
  }

  /** Put user `id` in channel `channel`, as a JOIN or a NAMES reply does. */
  addMember(id: number, channel: number): void {
    const channels = this.channelsOf[id]!;
    if (channels.includes(channel)) return;
    channels.push(channel);
    this.members[channel]! += 1;
  }

  /** Take one line from the server: PRIVMSG, JOIN (extended), PART, QUIT and NICK change the state. */
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
        const id = this.userId(source.nick, source.ident, source.host, account, params[2] ?? '');
        this.addMember(id, this.channelId(params[0]!));
        return;
      }
      case 'PART': {
        const id = this.userIds.get(casefold(source.nick));
        const channel = this.channelIds.get(casefold(params[0]!));
        if (id === undefined || channel === undefined) return;
        const channels = this.channelsOf[id]!;
        const at = channels.indexOf(channel);
        if (at === -1) return;
        channels.splice(at, 1);
        this.members[channel]! -= 1;
        return;
      }
      case 'QUIT':
        this.remove(casefold(source.nick));
        return;
      case 'NICK': {
        const key = casefold(source.nick);
        const id = this.userIds.get(key);
        if (id === undefined) return;
        const newKey = casefold(params[0]!);
        this.nick[id] = params[0]!;
        if (newKey === key) return; // only the case changed: the same nick, the same row
        // A nick the model still holds for someone else: that user is gone, as in the real model.
        this.remove(newKey);
        this.userIds.delete(key);
        this.userIds.set(newKey, id);
        this.rowOf[id] = NO_ROW;
        return;
      }
    }
  }

  /** Forget the user with folded nick `key`, if any, and their memberships. */
  private remove(key: string): void {
    const id = this.userIds.get(key);
    if (id === undefined) return;
    for (const channel of this.channelsOf[id]!) this.members[channel]! -= 1;
    this.userIds.delete(key);
    this.channelsOf[id] = [];
    this.freeIds.push(id);
  }

  /** Count a chat line of `nick` in `target`: the nick's lines and hour, the pair, the channel. */
  private count(nick: string, target: string, time: Date): void {
    const id = this.userIds.get(casefold(nick));
    const channel = this.channelIds.get(casefold(target));
    if (id === undefined || channel === undefined) return;
    let row = this.rowOf[id]!;
    if (row === NO_ROW) {
      row = this.rowCount++;
      if ((row + 1) * ROW > this.rows.length) this.rows = grown(this.rows, 2 * this.rows.length, 0);
      this.rowOf[id] = row;
    }
    this.rows[row * ROW]! += 1;
    this.rows[row * ROW + 1 + time.getUTCHours()]! += 1;
    const pair = row * MAX_CHANNELS + channel;
    this.pairLines.set(pair, (this.pairLines.get(pair) ?? 0) + 1);
    this.channelLines[channel]! += 1;
    this.chatLines++;
  }
}

/** A copy of `array` in a new array of `length` slots, the new slots set to `fill`. */
function grown(array: Int32Array, length: number, fill: number): Int32Array {
  const bigger = new Int32Array(length).fill(fill);
  bigger.set(array);
  return bigger;
}
