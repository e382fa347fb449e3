/**
 * The full sync: the network's own numbers (LUSERS), its server tree (LINKS,
 * MAP), its channels (LIST), its users (WHO, WHOX when offered) and operators
 * (STATS P). Each query is one request through the paced queue and waits for
 * the one before, so the bot never floods and no reply outgrows the send queue
 * the server keeps for it (big networks are asked in chunks, see who.ts and list.ts).
 */
import { TimeSlice, type IrcMessage, type NetworkModel } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';
import { createJoinState, joinChannels, type JoinState } from './joins.js';
import {
  checkChannelModes,
  createListState,
  listsSecretOf,
  syncList,
  syncNewChannels,
  type ListState,
} from './list.js';
import { markServicesServers, syncLinks, syncServerUsers } from './servers.js';
import {
  createRealHostState,
  planWhoSlice,
  syncOperators,
  syncRealHosts,
  syncWho,
  whoChunkAbove,
  whoMaskSet,
  WHO_SLICE_ROWS,
  type RealHostState,
  type WhoResult,
} from './who.js';

export type { SyncContext } from './context.js';

/** What the collector remembers between the syncs of one connection. */
export interface SyncState {
  list: ListState;
  joins: JoinState;
  realHosts: RealHostState;
  /**
   * While a WHO round runs, the folded nicks it has seen: a user who connects or changes nick during the
   * round (an operator's notices tell) is seen too, or the round, whose mask for them was asked already,
   * would take them for gone.
   */
  whoRound: Set<string> | null;
  /** Where the next refresh's WHO masks start (see {@link WHO_SLICE_ROWS}). */
  whoNext: number;
  /** Syncs completed on this connection: the first asks every mask. */
  syncs: number;
  /**
   * The WHO rows per second the last round was answered at, of rounds of at least {@link WHO_RATE_MIN_ROWS} rows or
   * of their whole slice (null before one): a refresh's slice is sized by it ({@link whoSliceRows}).
   */
  whoRate: number | null;
}

export function createSyncState(): SyncState {
  return {
    list: createListState(),
    joins: createJoinState(),
    realHosts: createRealHostState(),
    whoRound: null,
    whoNext: 0,
    syncs: 0,
    whoRate: null,
  };
}

const isNumeric =
  (...codes: string[]) =>
  (message: IrcMessage): boolean =>
    codes.includes(message.command);

function numberFrom(text: string | undefined, pattern: RegExp): number | null {
  const match = text ? pattern.exec(text) : null;
  return match ? Number(match[1]) : null;
}

/** The network's own counts from the LUSERS numerics. Pure. */
export function parseLusers(lines: readonly IrcMessage[]): {
  users: number | null;
  invisible: number | null;
  servers: number | null;
  operators: number;
  channels: number;
  maxUsers: number | null;
} {
  const byCode = new Map(lines.map((line) => [line.command, line]));
  const text251 = byCode.get('251')?.params.at(-1);
  const global = byCode.get('266');
  // 266 is `266 me :Current global users: N  Max: M` (InspIRCd) or `266 me N M :Current global users N, max M`.
  const withNumbers = global !== undefined && global.params.length >= 4;
  const current = withNumbers ? Number(global.params[1]) : numberFrom(global?.params.at(-1), /global users:?\s*(\d+)/i);
  const max = withNumbers ? Number(global.params[2]) : numberFrom(global?.params.at(-1), /max:?\s*(\d+)/i);
  // 251 `There are <visible> users and <invisible> invisible on <n> servers`; ircd 2.11's counts every user and
  // no invisible one (`There are <users> users and <services> services on <n> servers`): how many are, it does not say.
  const visible = numberFrom(text251, /There are (\d+) users/i);
  const invisible = numberFrom(text251, /(\d+) invisible/i);
  return {
    users: current ?? (visible === null ? null : visible + (invisible ?? 0)),
    invisible,
    servers: numberFrom(text251, /on (\d+) servers?/i),
    operators: Number(byCode.get('252')?.params[1] ?? 0),
    channels: Number(byCode.get('254')?.params[1] ?? 0),
    maxUsers: max,
  };
}

/** LUSERS: users, invisible, channels, operators, servers, max users — as the network counts them. */
export async function syncLusers({ irc, model, urgent }: SyncContext): Promise<void> {
  const lines = await irc.request({
    urgent,
    send: ['LUSERS'],
    serial: true,
    reply: isNumeric('251', '252', '253', '254', '255', '265', '266'),
    // 266, or 255 where the server sends no 265/266 (its profile says).
    end: isNumeric(irc.state.profile.lusersEnd),
  });
  model.updateStats(parseLusers(lines));
}

/**
 * Forget users the network no longer shows, of those the round asked for (`covers`, every user by default). A
 * user who shares a channel with the bot stays: the bot sees them leave (QUIT, PART), and WHO as a
 * non-operator hides invisible users.
 */
export async function removeUnseenUsers(
  model: NetworkModel,
  seen: ReadonlySet<string>,
  covers: (key: string) => boolean = () => true,
): Promise<number> {
  let removed = 0;
  // By their keys: folding 50,000 nicks again held the event loop 15–25 ms. In slices of time: the whole pass
  // held it 30–90 ms at 50,000 users. A user seen meanwhile (a notice) joins `seen`. The map's own iterator walks
  // across the pauses (a copy of its 50,000 entries was promoted at every refresh): it skips users removed
  // meanwhile and visits those added, who are left alone (first seen after the pass began).
  const began = model.now().toISOString();
  const slice = new TimeSlice();
  for (const [key, user] of model.users.entries()) {
    if (slice.spent()) await slice.pause();
    if (user.channels.size > 0 || seen.has(key) || !covers(key) || model.users.byKey(key) !== user) continue;
    if (user.firstSeenAt > began) continue;
    model.removeUser(user.nick, key);
    removed++;
  }
  return removed;
}

/**
 * Set each user's operator flag from WHO's `*` flags and STATS P together. A user the round did not ask for
 * (`covers`) only gains the flag (STATS P lists them): whether they lost it waits for their mask's turn.
 */
export function applyOperators(
  model: NetworkModel,
  operators: ReadonlySet<string>,
  covers: (key: string) => boolean = () => true,
): void {
  for (const [key, user] of model.users.entries()) {
    const isOperator = operators.has(key);
    if (user.isOperator !== isOperator && (isOperator || covers(key))) model.upsertUser(user.nick, { isOperator }, key);
  }
}

/**
 * The whole sync, in order; marks the model synced when it completes, then asks the modes of channels
 * never asked, joins, asks for real hosts (as an operator where the server's profile has a WHO flag for
 * them) and asks the other missing modes.
 * WHO asks every mask when `whole` (by default the first sync of a connection), else the next slice of them.
 */
export async function fullSync(
  context: SyncContext,
  state: SyncState,
  whole: boolean = state.syncs === 0,
): Promise<void> {
  const { irc, model, logger, config } = context;
  const started = Date.now();
  // Each step's time, for the debug log: on a big network that moves, which step a slow sync waited on.
  const steps: Record<string, number> = {};
  let stepStarted = started;
  const step = (name: string): void => {
    const now = Date.now();
    steps[name] = now - stepStarted;
    stepStarted = now;
  };
  await syncLusers(context);
  step('lusers_ms');
  await syncLinks(context);
  step('links_ms');
  // A refresh whose LIST would only repeat the last whole LIST between syncs (not due again yet) is spared it,
  // where no modes are asked from it (listsSecretOf): a plain user on InspIRCd pays 5 s of penalty per LIST, and
  // a refresh at 50,000 users spent 106 s of its 210 on a LIST the counts had just taken.
  const { list } = state;
  const listFresh =
    !whole &&
    !listsSecretOf(context) &&
    !wholeListDue({
      now: Date.now(),
      listedAt: list.listedAt,
      channels: model.channels.size,
      costMs: list.wholeListCostMs,
      lagged: irc.state.lagged,
    });
  const modesToAsk = listFresh ? [] : await syncList(context, list);
  step('list_ms');
  const who: WhoResult = { seen: new Set(), operators: new Set() };
  const masks = whoMaskSet(model, whoChunkAbove(context));
  const sliceRows = whoSliceRows(state.whoRate, config.refresh_seconds);
  const slice = planWhoSlice(model, masks, state.whoNext, sliceRows, whole);
  state.whoRound = who.seen;
  let removed: number;
  try {
    await syncWho(context, who, { masks: slice.masks, rows: masks.rows });
    step('who_ms');
    // A round of its whole slice counts, however small, or a slow one would keep the slices small for good.
    if (who.seen.size >= Math.min(WHO_RATE_MIN_ROWS, sliceRows))
      state.whoRate = (who.seen.size * 1000) / Math.max(1, steps.who_ms!);
    const statsOperators = await syncOperators(context);
    step('operators_ms');
    for (const nick of statsOperators ?? []) who.operators.add(nick);
    for (const nick of who.operators) who.seen.add(nick);
    removed = await removeUnseenUsers(model, who.seen, slice.covers);
  } finally {
    state.whoRound = null;
  }
  state.whoNext = slice.next;
  applyOperators(model, who.operators, slice.covers);
  await syncServerUsers(context);
  step('server_users_ms');
  await markServicesServers(context);
  step('services_ms');
  logger.debug('sync steps', { ...steps, who_slice_rows: whole ? null : sliceRows });
  model.markSynced(irc.state.isOperator, Date.now() - started);
  state.syncs++;
  logger.info('synced', {
    users: model.users.size,
    removed_users: removed,
    who_masks: describeMasks(slice.masks, masks.masks.length),
    channels: model.channels.size,
    servers: model.servers.size,
    as_operator: irc.state.isOperator,
    ms: Date.now() - started,
  });
  // Where LIST shows no modes (ngircd; most servers to an operator), the channels never asked are asked
  // before the joins, so the public ones are joined in this sync rather than one refresh later.
  const fresh = modesToAsk.filter((name) => !state.list.modeChecks.has(model.fold(name)));
  const askedFirst = new Set(fresh.slice(0, NEW_CHANNEL_MODE_CHECKS));
  await checkChannelModes(context, state.list, [...askedFirst], NEW_CHANNEL_MODE_CHECKS);
  joinChannels(context, state.joins);
  await syncRealHosts(context, state.realHosts, masks);
  // The pacer sends about one line per refresh second at the default pace: spend at most that many.
  const rest = modesToAsk.filter((name) => !askedFirst.has(name));
  await checkChannelModes(context, state.list, rest, Math.max(10, config.refresh_seconds));
}

/**
 * A refresh's WHO slice takes at most about this share of the refresh interval at the rate the last round was
 * answered at: a server that penalises commands (InspIRCd's fake lag: a second per mask and 5 ms per row for a
 * plain user) answered a plain user's 20,000-row slice of a 50,000-user network in two minutes, longer than the
 * refresh interval, and every LIST and LUSERS waited behind it.
 */
const WHO_REFRESH_SHARE = 0.5;

/** A round of fewer rows says little of the server's rate (a small network, the first masks of a cycle). */
export const WHO_RATE_MIN_ROWS = 500;

/**
 * The rows a refresh's WHO slice asks for: {@link WHO_SLICE_ROWS}, or fewer where the last round's rate would take
 * longer than {@link WHO_REFRESH_SHARE} of the refresh interval (one mask at least, whatever its size).
 */
export function whoSliceRows(rowsPerSecond: number | null, refreshSeconds: number): number {
  if (rowsPerSecond === null) return WHO_SLICE_ROWS;
  return Math.max(1, Math.min(WHO_SLICE_ROWS, Math.floor(rowsPerSecond * refreshSeconds * WHO_REFRESH_SHARE)));
}

/** The masks a round asked, for the log: `all`, or the first and the last and how many of the cycle. */
function describeMasks(asked: readonly string[], of: number): string {
  if (asked.length === of) return 'all';
  return `${asked[0] ?? ''}..${asked.at(-1) ?? ''} (${asked.length} of ${of})`;
}

/** Modes asked per count refresh for channels formed since the last LIST. */
const NEW_CHANNEL_MODE_CHECKS = 100;

/**
 * Between full syncs, LUSERS and LIST are asked again once the last LIST is this many ms per channel old,
 * and no sooner than {@link COUNTS_REFRESH_MIN_MS}: channels form and empty all the time on a busy network,
 * and no notice tells of it. A LIST costs the server and the bot in proportion to the channels (10,000: about
 * 600 KB, a few ms of work), so a big network is asked less often; it also has more channels to drift by.
 * Below {@link COUNTS_REFRESH_FULL_RATE_CHANNELS} channels a LIST costs little, and a few channels formed in
 * one interval are already a large share, so the ms per channel shrink with the count (1,000 channels: 0.25).
 * What the model misses is about the channels formed (and emptied) in one interval: at 1,000 channels under
 * the bench's churn, a LIST every second left it 0.8–0.9 % from LUSERS at times, every half second 0.3–0.8 %,
 * every quarter second 0.1–0.3 % in runs checked every 30 s (up to 1.1 % in runs checked every 5 s, before the
 * channels formed came from notices: notices.ts).
 */
const COUNTS_REFRESH_MS_PER_CHANNEL = 0.5;
const COUNTS_REFRESH_FULL_RATE_CHANNELS = 2_000;
const COUNTS_REFRESH_MIN_MS = 250;

/**
 * How often the channels formed in the last minute are asked between two whole LISTs. ELIST counts in minutes,
 * so each new channel is listed again at every ask of its first minute: every 2 s rather than every second
 * halves that cost (at 50,000 users under churn a few hundred rows each time) for channels found 1 s later.
 */
export const NEW_CHANNELS_EVERY_MS = 2_000;

/**
 * While the server holds the bot's lines (`irc.state.lagged`), the whole LIST is asked again no sooner than this many
 * times what the last one cost the server (ms from its turn to its end), so that LISTs take at most about a quarter
 * of its reading. A plain user on InspIRCd pays 5 s of penalty per LIST, and a whole LIST every 5 s (with the new
 * channels' every 2 s) kept the server holding each of the bot's lines for seconds: LUSERS and WHO waited behind
 * them, past their timeouts. A server that reads every line at once is asked as often as ever.
 */
export const LIST_COST_SHARE = 4;

/** Whether the whole LIST (and LUSERS) is due: see {@link COUNTS_REFRESH_MS_PER_CHANNEL} and {@link LIST_COST_SHARE}. */
export function wholeListDue(at: {
  now: number;
  listedAt: number;
  channels: number;
  /** What the last whole LIST cost the server (ListState's `wholeListCostMs`). */
  costMs: number;
  /** Whether the server holds the bot's lines (`irc.state.lagged`). */
  lagged: boolean;
}): boolean {
  const every = wholeListEvery(at.channels);
  return at.now - at.listedAt >= (at.lagged ? Math.max(every, LIST_COST_SHARE * at.costMs) : every);
}

function wholeListEvery(channels: number): number {
  const share = Math.min(1, channels / COUNTS_REFRESH_FULL_RATE_CHANNELS);
  return Math.max(COUNTS_REFRESH_MIN_MS, channels * COUNTS_REFRESH_MS_PER_CHANNEL * share);
}

/**
 * Whether the LIST of the channels formed in the last minute is due: on a network big enough that the whole
 * LIST comes less often than {@link NEW_CHANNELS_EVERY_MS}, and a server that lists channels by creation
 * time (its profile's `listsNewChannels`), once that long has passed since the last LIST of either kind.
 */
export function newChannelsDue(at: {
  now: number;
  /** When the last LIST of either kind was asked. */
  newListedAt: number;
  channels: number;
  listsNewChannels: boolean;
  /**
   * Whether the server holds the bot's lines (`irc.state.lagged`): then never. A LIST costs a plain user on InspIRCd
   * 5 s of penalty whatever it lists, so the new channels' took as much of the server's reading as a whole one, and
   * at 50,000 users they took more of it than the whole LISTs did.
   */
  lagged: boolean;
}): boolean {
  return (
    wholeListEvery(at.channels) > NEW_CHANNELS_EVERY_MS &&
    at.listsNewChannels &&
    !at.lagged &&
    at.now - at.newListedAt >= NEW_CHANNELS_EVERY_MS
  );
}

/** Between two whole LISTs: the channels formed in the last minute, and the modes of those still unknown. */
export async function refreshNewChannels(context: SyncContext, state: SyncState): Promise<void> {
  const started = Date.now();
  const fresh = await syncNewChannels(context, state.list);
  await checkChannelModes(context, state.list, fresh, NEW_CHANNEL_MODE_CHECKS);
  context.logger.debug('new channels listed', {
    channels: context.model.channels.size,
    ms: Date.now() - started,
  });
}

/**
 * The network's counts and its channels (LUSERS and LIST) between two full syncs: channels are formed and
 * emptied all the time on a busy network, and no notice tells of it, so they are asked more often than
 * the users (whom an operator's notices follow). The full sync does the rest (modes, joins, WHO).
 */
export async function refreshCounts(context: SyncContext, state: SyncState): Promise<void> {
  const started = Date.now();
  await syncLusers(context);
  const modesToAsk = await syncList(context, state.list);
  // A channel formed since the last LIST stays off the public lists until its modes are known: ask those
  // now rather than at the next full sync (a channel whose modes were asked before waits for that).
  const fresh = modesToAsk.filter((name) => !state.list.modeChecks.has(context.model.fold(name)));
  await checkChannelModes(context, state.list, fresh, NEW_CHANNEL_MODE_CHECKS);
  context.logger.debug('counts refreshed', {
    users: context.model.stats.users,
    channels: context.model.channels.size,
    list_cost_ms: state.list.wholeListCostMs,
    ms: Date.now() - started,
  });
}
