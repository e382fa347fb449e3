/**
 * The channels: LIST, and for an operator on a network that hides modes in LIST,
 * MODE queries. A channel is public only when the bot knows it is neither secret
 * (+s) nor private (+p); until then it is hidden, so the API never shows a channel
 * the bot only sees because it is an operator. Server-local channels (`&` where CHANTYPES has it, RFC 2811:
 * the server profile's `isLocalChannel`) are always hidden: one exists on one server only, so it is not part
 * of the network's channels a public list shows, and the bot (on one server) would see only its own.
 */
import { TimeSlice, type Channel, type IrcMessage } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';
import { inTurn } from './in-turn.js';

/** User-count bands for a chunked LIST (ELIST=U): 1, 2, 3–4, 5–9, 10–49, 50 and more. */
export const LIST_BANDS = ['<2', '>1,<3', '>2,<5', '>4,<10', '>9,<50', '>49'];

/** MODE queries in flight at once: enough to hide the round trip, few enough for the send queue. */
const MODE_QUERIES_IN_FLIGHT = 4;

/** Collector bookkeeping across syncs. */
export interface ListState {
  /** When the bot last asked each channel's modes (folded name → ms). */
  modeChecks: Map<string, number>;
  /**
   * The whole LIST taken last, or under way. A sync's LIST and the one between syncs may be due together: the
   * second waits for the first, so that what the older answer has not listed is not taken as gone after the newer
   * answer has added it.
   */
  wholeList: Promise<unknown>;
  /** When the last whole LIST was asked (ms; 0 before the first). */
  listedAt: number;
  /** When the last LIST of either kind, whole or of the new channels, was asked (ms; 0 before the first). */
  newListedAt: number;
  /**
   * What the last whole LIST cost the server, in ms from its turn to its end (the request's `onTurn`; 0 before the
   * first), or to its timeout: while the server holds the bot's lines, the next comes no sooner than a few times
   * that (sync.ts, `LIST_COST_SHARE`).
   */
  wholeListCostMs: number;
  /**
   * Which LIST last listed each channel (folded name → the LIST's number, counted up by {@link ListState.lists}).
   * Kept from one LIST to the next rather than a set per LIST: a set of 10,000 names built every 5 s outlived
   * the young generation and was promoted, a seventh of what the bot promoted under churn at 50,000 users.
   */
  listedBy: Map<string, number>;
  /** LISTs taken so far, of either kind. */
  lists: number;
  /**
   * Channels a notice said were formed whose first MODE query is still to come ({@link FormedChannels}, after its
   * wait for the creator's and the services' modes), with when the latest wait ends (ms): nothing asks them
   * sooner, and a LIST that shows modes does not make them public meanwhile.
   */
  formedWaiting: Map<string, number>;
}

export function createListState(): ListState {
  return {
    modeChecks: new Map(),
    wholeList: Promise.resolve(),
    listedAt: 0,
    newListedAt: 0,
    wholeListCostMs: 0,
    listedBy: new Map(),
    lists: 0,
    formedWaiting: new Map(),
  };
}

/** One RPL_LIST entry. */
export interface ListEntry {
  name: string;
  users: number;
  topic: string;
  /** Mode letters when the server shows them (`[+nst] topic`, InspIRCd's modesinlist); parameters dropped. */
  modes: string | null;
}

const MODES_PREFIX = /^\[\+([A-Za-z]*)(?: [^\]]*)?\] ?/;

/**
 * RPL_LIST `322 me <channel> <users> :[+modes params] <topic>`; null for a private channel shown as `*`. Where
 * the server never shows modes in LIST (its profile's `listShowsModes` is false, `modesShown` here), a topic
 * that starts with `[+` is all topic.
 */
export function parseListEntry(message: IrcMessage, modesShown: boolean | null = null): ListEntry | null {
  const [, name, users = '0', text = ''] = message.params;
  if (!name || name === '*') return null;
  const match = modesShown === false ? null : MODES_PREFIX.exec(text);
  return {
    name,
    users: Number(users) || 0,
    topic: match ? text.slice(match[0].length) : text,
    modes: match ? [...match[1]!].sort().join('') : null,
  };
}

/**
 * The LIST requests of one sync: all at once, or by user-count bands on a big network whose server allows it
 * (its profile's `listsByUsers`: ELIST with `U`).
 */
export function listQueries(
  networkChannels: number | null,
  chunkAbove: number,
  listsByUsers: boolean,
  listEveryChannel: readonly string[] = [],
): string[][] {
  const big = networkChannels === null || networkChannels > chunkAbove;
  if (big && listsByUsers) return LIST_BANDS.map((band) => ['LIST', band]);
  return [['LIST', ...listEveryChannel]];
}

/**
 * Whether a LIST the bot asks now may list secret or private channels: it is an operator, and its server lists those
 * to an operator (the profile's `operatorListsSecret`). Then a channel LIST shows without modes is hidden until a
 * MODE query says it is public.
 */
export function listsSecretOf({ irc }: Pick<SyncContext, 'irc'>): boolean {
  return irc.state.isOperator && irc.state.profile.operatorListsSecret;
}

/** MODE #channel: the live handler applies the 324 reply; this records the check, or forgets a gone channel. */
async function checkModes(context: SyncContext, state: ListState, name: string): Promise<void> {
  const { irc, model } = context;
  // Formed a moment ago: its own query comes once its wait is over (FormedChannels), whoever chose it before.
  if (state.formedWaiting.has(model.fold(name))) return;
  if (irc.state.profile.isModelessChannel(name)) {
    // No modes to ask (the server would answer 477): never secret.
    if (model.channels.get(name)) {
      model.upsertChannel(name, { modes: '', hidden: false });
      state.modeChecks.set(model.fold(name), Date.now());
    }
    return;
  }
  const same = (line: IrcMessage): boolean => irc.casefold(line.params[1] ?? '') === irc.casefold(name);
  const lines = await irc.request({
    send: ['MODE', name],
    reply: () => false,
    end: (line) => ['324', '403', '401', '442', '477'].includes(line.command) && same(line),
    timeoutMs: 30000,
  });
  const answer = lines.at(-1)?.command;
  // A channel a LIST took as gone meanwhile is not recorded: the map would keep every name ever answered.
  if (answer === '324') {
    if (model.channels.get(name)) state.modeChecks.set(model.fold(name), Date.now());
  } else if (answer === '403' || answer === '401') {
    state.modeChecks.delete(model.fold(name));
    if (!model.channels.get(name)?.joined) model.removeChannel(name);
  }
}

/**
 * MODE queries in flight at once for channels a notice said were formed (beside a sync's own): as many as the
 * bot's requests may have unanswered at once (lib/irc/requests.ts, 8). The lane sends in order, so a refresh's
 * WHO masks take turns with them. The hub under churn answers in 0.2–0.4 s at 5,000 users and in up to seconds
 * at 100,000, while about ten channels form a second (and each public one is asked twice): with four, the queue
 * grew through the churn (at 50,000 users 102 channels formed were still unasked after 60 s, at 100,000 users
 * 290); with eight, 61 at 50,000 users in one run, so it still grows when answers take 0.4 s or more. With
 * two, a burst formed at one tick waited up to 0.7 s.
 */
export const FORMED_QUERIES_IN_FLIGHT = 8;

/** Channels formed whose modes wait to be asked, at most; more wait for the next LIST, as without the notices. */
const FORMED_WAITING = 1000;

/**
 * A channel formed is first asked this long after its notice: its creator's modes (`+s` right after the JOIN) or
 * the services' mode lock come just after it forms, and an answer before them would show a secret channel on the
 * public lists (the collector's integration test did). Nothing asks it sooner, and a LIST that shows modes
 * meanwhile does not make it public.
 */
export const FORMED_SETTLE_MS = 1000;

/** A channel the first answer showed public is asked again this long after it. */
export const FORMED_RECHECK_MS = 2000;

/**
 * Channels formed, as the server's notices say (InspIRCd's chancreate module, snomasks j and J: notices.ts): into
 * the model at once rather than at the next LIST, hidden until their modes are known, which are asked
 * {@link FORMED_SETTLE_MS} after the notice ({@link FORMED_QUERIES_IN_FLIGHT} at a time) and, for a channel that
 * answered public, once more {@link FORMED_RECHECK_MS} later. No notice tells of a channel that empties: LIST still finds those. At 5,000
 * users under the bench's churn the network's channel count rose by about 1 % at once, once a second, and sank
 * until the next rise; a model as old as its last LIST (250 ms) was up to 1 % short just after one.
 */
export class FormedChannels {
  private readonly waiting: { name: string; at: number; again: boolean }[] = [];
  private inFlight = 0;
  /**
   * Channels to ask later, in the order they are due, under one timer for the first (the host's `timers.after`
   * keeps each timer's cleanup until the plugin stops: one per channel formed would grow without end).
   */
  private readonly later: { name: string; at: number; again: boolean }[] = [];
  private laterTimer: NodeJS.Timeout | undefined;

  /**
   * `state` gives the connection's LIST bookkeeping (it is made anew at each connection); tests shorten the waits
   * and may set fewer queries in flight than the request lane allows, to see the limit.
   */
  constructor(
    private readonly context: SyncContext,
    private readonly state: () => ListState,
    private readonly waits: { settleMs: number; recheckMs: number; inFlight?: number } = {
      settleMs: FORMED_SETTLE_MS,
      recheckMs: FORMED_RECHECK_MS,
    },
  ) {}

  /** The server said `name` was formed. */
  note(name: string): void {
    const { irc, model } = this.context;
    if (irc.state.profile.isLocalChannel(name)) return;
    const key = model.fold(name);
    const state = this.state();
    // Between the latest LIST's number and the next: the LIST under way (asked before the channel formed) does
    // not take it as gone, yet still takes its row; the next LIST judges it.
    state.listedBy.set(key, state.lists + 0.5);
    const known = model.channels.byKey(key);
    if (known?.joined) return;
    // A channel the model still has is the one that emptied before: nothing of it holds for the new one.
    model.upsertChannel(name, { users: 1, hidden: true, modes: '', topic: '' }, key);
    state.modeChecks.delete(key);
    state.formedWaiting.set(key, this.askLater(name, this.waits.settleMs, false));
  }

  /** Forget what waits (the connection is gone). */
  clear(): void {
    this.waiting.length = 0;
    this.later.length = 0;
    clearTimeout(this.laterTimer);
    this.laterTimer = undefined;
  }

  private next(): void {
    const { model } = this.context;
    while (this.inFlight < (this.waits.inFlight ?? FORMED_QUERIES_IN_FLIGHT) && this.waiting.length > 0) {
      const { name, at, again } = this.waiting.shift()!;
      if (!again && !this.waitOver(model.fold(name), at)) continue;
      const channel = model.channels.get(name);
      if (!channel || channel.joined) continue;
      this.inFlight++;
      void checkModes(this.context, this.state(), name)
        .then(() => {
          if (!again && model.channels.get(name)?.hidden === false) this.askLater(name, this.waits.recheckMs, true);
        })
        .catch(() => undefined)
        .finally(() => {
          this.inFlight--;
          this.next();
        });
    }
  }

  /**
   * Whether the wait that ends `at` is the channel `key`'s latest: then it is no longer waiting, and a LIST may
   * ask it too. False when it formed again meanwhile: the later notice's entry asks it once its own wait is over.
   */
  private waitOver(key: string, at: number): boolean {
    const waiting = this.state().formedWaiting;
    const until = waiting.get(key);
    if (until !== undefined && until > at) return false;
    waiting.delete(key);
    return true;
  }

  /** Ask `name` in `ms`; returns when. */
  private askLater(name: string, ms: number, again: boolean): number {
    const at = Date.now() + ms;
    // Kept in order of `at`: the waits of a kind are equal, so only a settle after a recheck goes before others.
    let index = this.later.length;
    while (index > 0 && this.later[index - 1]!.at > at) index--;
    this.later.splice(index, 0, { name, at, again });
    if (index === 0) {
      clearTimeout(this.laterTimer);
      this.laterTimer = setTimeout(() => this.due(), ms).unref();
    }
    return at;
  }

  private due(): void {
    this.laterTimer = undefined;
    const now = Date.now();
    while (this.later.length > 0 && this.later[0]!.at <= now) {
      const { name, at, again } = this.later.shift()!;
      if (this.waiting.length < FORMED_WAITING) this.waiting.push({ name, at, again });
      // Too many: the next LIST asks it, as without the notices.
      else if (!again) this.waitOver(this.context.model.fold(name), at);
    }
    const first = this.later[0];
    if (first) this.laterTimer = setTimeout(() => this.due(), first.at - now).unref();
    this.next();
  }
}

/** Channels a band round missed that are asked again by name, at most; more are taken as gone. */
const MAX_LIST_BY_NAME = 2000;

/** Channel names per `LIST a,b,c` line: well inside a line's 512 bytes. */
const LIST_BY_NAME_CHARS = 400;

/** `LIST a,b,c` lines sent at once, as one request: at most about 1.2 KB. */
export const LIST_BY_NAME_LINES_AT_ONCE = 3;

/** `names` in groups whose comma-joined length fits one LIST line. */
export function namesInLines(names: readonly string[]): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let length = 0;
  for (const name of names) {
    if (group.length > 0 && length + 1 + name.length > LIST_BY_NAME_CHARS) {
      groups.push(group);
      group = [];
      length = 0;
    }
    length += (group.length > 0 ? 1 : 0) + name.length;
    group.push(name);
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * The rows of one or more LIST replies, taken into the model as they arrive: a LIST of 10,000 channels is never
 * held whole (its lines would outlive young-generation collections and be promoted, every 5 s).
 */
class ListTaker {
  /** This LIST's number: a channel it or a later LIST listed has at least this in {@link ListState.listedBy}. */
  readonly number: number;
  /** Channels listed whose modes LIST does not show, the bot is not in, and it never asked (not `&` ones). */
  readonly unchecked: string[] = [];
  /** What its LISTs cost the server so far: ms from each one's turn to its end. */
  costMs = 0;
  private rows = 0;
  private rowsWithModes = 0;
  /** Whether the rows may be secret or private channels: the bot is an operator, and its server lists those to one. */
  private readonly listsSecret: boolean;
  /** Whether the server shows modes in LIST, as its profile expects (null: the rows say). */
  private readonly modesShown: boolean | null;

  constructor(
    private readonly context: SyncContext,
    private readonly state: ListState,
  ) {
    this.listsSecret = listsSecretOf(context);
    this.modesShown = context.irc.state.profile.listShowsModes;
    this.number = ++state.lists;
  }

  /** Whether this LIST, or one asked after it, listed `channel`. */
  listed(channel: Channel): boolean {
    return (this.state.listedBy.get(this.context.model.fold(channel.name)) ?? 0) >= this.number;
  }

  /**
   * The server shows modes in LIST when every row starts with them. One topic that happens to start with `[+`
   * cannot fool this unless it is the only channel, and then it errs towards hidden.
   */
  get showsModes(): boolean {
    return this.rows > 0 && this.rowsWithModes === this.rows;
  }

  /** One RPL_LIST row. */
  take(line: IrcMessage): void {
    const entry = parseListEntry(line, this.modesShown);
    if (!entry) return;
    this.rows++;
    if (entry.modes !== null) this.rowsWithModes++;
    const { irc, model } = this.context;
    const key = model.fold(entry.name);
    if (this.state.listedBy.get(key) === this.number) return;
    this.state.listedBy.set(key, this.number);
    const channel = model.channels.get(entry.name);
    const joined = channel?.joined ?? false;
    if (irc.state.profile.isLocalChannel(entry.name)) {
      // A server-local channel (`&SERVER` on ngIRCd) is one server's, not the network's: never public.
      model.upsertChannel(entry.name, { topic: entry.topic, users: entry.users, hidden: true });
      return;
    }
    if (irc.state.profile.isModelessChannel(entry.name)) {
      // A channel without modes (`+name`) is never secret: public, nothing to ask.
      model.upsertChannel(entry.name, {
        topic: entry.topic,
        users: joined ? channel!.members.size : entry.users,
        modes: '',
        hidden: false,
      });
      return;
    }
    // Where the bot is a member, the live picture (NAMES, MODE, TOPIC) is exact; LIST only fills in the rest.
    if (joined) {
      model.upsertChannel(entry.name, { topic: entry.topic, users: channel!.members.size });
    } else if (entry.modes !== null) {
      model.upsertChannel(entry.name, {
        topic: entry.topic,
        users: entry.users,
        modes: entry.modes ? `+${entry.modes}` : '',
        // Formed a moment ago: its creator's modes may not have come yet; its own MODE query says.
        hidden: /[sp]/.test(entry.modes) || this.state.formedWaiting.has(key),
      });
    } else {
      // Without modes, LIST to a non-operator shows public channels only; an operator sees every channel (where
      // its server lists secret ones to an operator: its profile's `operatorListsSecret`).
      const checked = this.state.modeChecks.has(key);
      model.upsertChannel(entry.name, {
        topic: entry.topic,
        users: entry.users,
        hidden: this.listsSecret ? (checked && channel ? channel.hidden : true) : false,
      });
      if (!checked) this.unchecked.push(entry.name);
    }
  }

  /** LIST `queries`, one after the other in a single request, their rows taken as they come. */
  async list(...queries: string[][]): Promise<void> {
    let ended = 0;
    let turnAt = Date.now();
    try {
      await this.context.irc.request({
        send: queries[0]!,
        more: queries.slice(1),
        // Written again after a 263: its ends are counted again.
        onSent: () => (ended = 0),
        onTurn: () => (turnAt = Date.now()),
        serial: true,
        reply: (line) => line.command === '322',
        onReply: (line) => this.take(line),
        end: (line) => line.command === '323' && ++ended === queries.length,
        timeoutMs: 120000,
      });
    } finally {
      // A LIST that timed out cost the server at least the wait.
      this.costMs += Date.now() - turnAt;
    }
  }
}

/**
 * LIST: every channel the network lists, with its user count and topic. Returns the channels
 * whose modes the bot must still ask (an operator on a network that hides modes in LIST):
 * never-asked ones first, then the oldest answers.
 */
export function syncList(context: SyncContext, state: ListState): Promise<string[]> {
  const taken = state.wholeList.then(() => takeWholeList(context, state));
  state.wholeList = taken.catch(() => undefined);
  return taken;
}

async function takeWholeList(context: SyncContext, state: ListState): Promise<string[]> {
  state.listedAt = Date.now();
  state.newListedAt = state.listedAt;
  const taker = new ListTaker(context, state);
  try {
    return await listWhole(context, state, taker);
  } finally {
    state.wholeListCostMs = taker.costMs;
  }
}

async function listWhole(context: SyncContext, state: ListState, taker: ListTaker): Promise<string[]> {
  const { irc, model, config } = context;
  const { profile } = irc.state;
  const queries = listQueries(
    model.stats.channels,
    config.list_chunk_above,
    profile.listsByUsers,
    profile.listEveryChannel,
  );
  for (const send of queries) await taker.list(send);
  // The channels as the answer ended (one formed while this is sliced was not in it, yet not gone).
  const known = [...model.channels.all()];
  const slice = new TimeSlice();
  const unlisted: typeof known = [];
  for (const channel of known) {
    if (slice.spent()) await slice.pause();
    if (!channel.joined && !taker.listed(channel)) unlisted.push(channel);
  }
  // Bands are answered one after another: a channel whose count crossed into a band already answered (a
  // part, a quit) is in none of them, though it still exists. Those the round missed are asked by name.
  if (queries.length > 1 && unlisted.length > 0 && unlisted.length <= MAX_LIST_BY_NAME) {
    // A few lines at a time: each line alone would pay a round trip, a second or more on a server busy with
    // churn; a few stay inside any server's receive queue (ircd-hybrid's example class: 2,560 bytes).
    const lines = namesInLines(unlisted.map((channel) => channel.name)).map((names) => ['LIST', names.join(',')]);
    for (let index = 0; index < lines.length; index += LIST_BY_NAME_LINES_AT_ONCE) {
      await taker.list(...lines.slice(index, index + LIST_BY_NAME_LINES_AT_ONCE));
    }
  }
  for (const channel of unlisted) {
    if (slice.spent()) await slice.pause();
    // Listed by name, or formed again since it was found missing (a JOIN the bot saw, the new channels' LIST).
    if (model.channels.get(channel.name) !== channel || channel.joined || taker.listed(channel)) continue;
    model.removeChannel(channel.name);
    state.modeChecks.delete(model.fold(channel.name));
  }
  // What no LIST since this one's start listed is gone, or known otherwise (the bot sits in it).
  for (const [key, number] of state.listedBy) if (number < taker.number) state.listedBy.delete(key);
  if (taker.showsModes || !listsSecretOf(context)) return [];
  const unchecked: string[] = [];
  const rechecks: { name: string; at: number }[] = [];
  for (const channel of model.channels.all()) {
    if (channel.joined || profile.isLocalChannel(channel.name) || profile.isModelessChannel(channel.name)) continue;
    const at = state.modeChecks.get(model.fold(channel.name));
    if (at === undefined) unchecked.push(channel.name);
    else rechecks.push({ name: channel.name, at });
  }
  rechecks.sort((a, b) => a.at - b.at);
  return [...unchecked, ...rechecks.map((recheck) => recheck.name)];
}

/**
 * The LIST of the channels formed in the last minute (ELIST `C`: creation time, in minutes), where the server
 * lists them (its profile's `listsNewChannels`).
 */
export const NEW_CHANNELS_QUERY = ['LIST', 'C<1'];

/**
 * The channels formed in the last minute ({@link NEW_CHANNELS_QUERY}), into the model: between two whole
 * LISTs of a big network (every 5 s at 10,000 channels), the channels users form elsewhere are found within
 * a few seconds. Nothing is removed: only a whole LIST shows what is gone. Returns the channels whose modes the bot
 * must still ask, as {@link syncList} does.
 */
export async function syncNewChannels(context: SyncContext, state: ListState): Promise<string[]> {
  state.newListedAt = Date.now();
  const taker = new ListTaker(context, state);
  await taker.list(NEW_CHANNELS_QUERY);
  return taker.showsModes || !listsSecretOf(context) ? [] : taker.unchecked;
}

/**
 * Ask the modes of up to `budget` channels (MODE #channel). Until its first answer a channel
 * stays hidden, so a slow start only keeps channels off the public lists, never the reverse.
 */
export async function checkChannelModes(
  context: SyncContext,
  state: ListState,
  names: readonly string[],
  budget: number,
): Promise<void> {
  const chosen = names.slice(0, budget).filter((name) => !context.model.channels.get(name)?.joined);
  await inTurn(chosen, { limit: MODE_QUERIES_IN_FLIGHT }, (name) => checkModes(context, state, name));
}
