/**
 * Who is online: WHO (with WHOX fields when the server offers them) for every
 * user the bot may see, and STATS P for the operators. As an operator the bot
 * sees every user, invisible ones included; without it, what the network shows.
 */
import type { IrcMessage, NetworkModel, ServerProfile, User } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';
import { inTurn } from './in-turn.js';

/** Nicks start with a letter or one of `[]\`_^{|}` (RFC 2812); one WHO per first character. */
export const NICK_INITIALS = [...'abcdefghijklmnopqrstuvwxyz', '[', ']', '\\', '`', '_', '^', '{', '|', '}'];

/** WHOX token that marks our own WHO replies to `WHO *` (a small network) and to a server's users. */
export const WHOX_TOKEN = '77';
/** WHOX token of the replies to `WHO * x` that carry real hosts (see {@link seesRealHosts}). */
export const REAL_HOST_TOKEN = '78';

/**
 * The WHOX token of one mask of a round: several masks are asked at once, and the request lane hands a line to
 * every request whose reply it matches, so each needs its own. Users' masks are 100 and up, real hosts' 200
 * and up, in the order of {@link whoMasks}; `*` keeps {@link WHOX_TOKEN} or {@link REAL_HOST_TOKEN}.
 */
export function whoxToken(mask: string, realHosts = false): string {
  if (mask === '*') return realHosts ? REAL_HOST_TOKEN : WHOX_TOKEN;
  const index = NICK_INITIALS.indexOf(mask.charAt(0));
  return String((realHosts ? 200 : 100) + Math.max(0, index));
}

/**
 * At most this many WHO masks are asked at once, and at most {@link WHO_ROWS_IN_FLIGHT} rows expected from those
 * unanswered (one mask is always asked, whatever its size). One at a time, a round paid the server's delay per
 * mask: under churn a busy server took 400 ms per round trip, even for an empty mask, 36 times a round. A few
 * thousand rows keep the server busy with the next mask while one is answered; more only made a LIST asked
 * meanwhile wait behind them (20,000 rows: 15 s under churn at 50,000 users, the channels drifting meanwhile).
 */
export const WHO_MASKS_IN_FLIGHT = 8;
export const WHO_ROWS_IN_FLIGHT = 5_000;

/**
 * A refresh asks WHO for the next masks of the cycle up to about this many expected rows (users the model has
 * under their initials), not for all of them: a whole round of a 100,000-user network under churn took the
 * server minutes to answer, and the next refreshes waited behind it. The first sync of a connection and the
 * `SYNC` command ask every mask; users who connect and quit in between are followed by an operator's notices.
 */
export const WHO_SLICE_ROWS = 20_000;

/** The order servers send WHOX fields in, whatever order they were asked in (ircu's order). */
const WHOX_ORDER = 'tcuihsnfdlaor';

/**
 * The WHOX fields to ask for. The IP (`%i`) only where the server's profile lets the asker have it
 * (`whoxIp`): most answer a non-operator's question with hidden IPs, and some with nobody but the asker.
 */
export function whoxFields(asOperator: boolean, whoxIp: ServerProfile['whoxIp'] = 'operator'): string {
  return asOperator || whoxIp === 'anyone' ? 'tcuihsnfar' : 'tcuhsnfar';
}

/**
 * The WHO masks of one sync: everything at once on a small network, else one mask per nick
 * initial, so that no reply is bigger than a small share of the server's send queue for the bot.
 */
export function whoMasks(networkUsers: number | null, chunkAbove: number): string[] {
  if (networkUsers !== null && networkUsers <= chunkAbove) return ['*'];
  return NICK_INITIALS.map((initial) => `${initial}*`);
}

/**
 * Above how many users WHO is asked per nick initial: `who_chunk_above`, or fewer where the server answers a
 * WHO with at most so many rows (its profile's `whoReplyLimit`).
 */
export function whoChunkAbove({ irc, config }: Pick<SyncContext, 'irc' | 'config'>): number {
  return Math.min(config.who_chunk_above, irc.state.profile.whoReplyLimit ?? Number.POSITIVE_INFINITY);
}

/**
 * Whether the bot can ask for real hosts: where the server's profile names a WHO flag for them
 * (`realHostWhoFlag`, with WHOX), an operator's WHO with it carries the host behind any cloak or vhost in
 * the host field. Elsewhere no flag is asked (an unknown one may be an error, or be taken for another
 * filter); a WHOIS still shows real hosts there.
 */
export function seesRealHosts(state: { isOperator: boolean; profile: ServerProfile }): boolean {
  return state.isOperator && state.profile.realHostWhoFlag !== null;
}

/** One user as WHO describes them. */
export interface WhoEntry {
  nick: string;
  ident: string | null;
  host: string | null;
  /**
   * Only when asked as an operator; `255.255.255.255` and `0.0.0.0` (services) mean unknown. undefined when
   * the reply does not say (plain WHO, WHOX without `%i`): an IP a WHOIS gave stays.
   */
  ip?: string | null;
  server: string | null;
  away: boolean;
  isOperator: boolean;
  /** undefined when the reply does not say (plain WHO). */
  account?: string | null;
  realname: string | null;
}

function knownIp(ip: string | undefined): string | null {
  return ip && ip !== '255.255.255.255' && ip !== '0.0.0.0' ? ip : null;
}

/** RPL_WHOSPCRPL `354 me <fields in WHOX order>` for the fields asked; null when it is not ours. */
export function parseWhoxReply(message: IrcMessage, fields: string, token = WHOX_TOKEN): WhoEntry | null {
  return whoxParser(fields, token)(message);
}

/**
 * A parser of the 354 rows of one request: where each field sits is worked out once, not per row (a sync takes
 * tens of thousands of rows, and what each row allocates is what the garbage collector pays for).
 */
export function whoxParser(fields: string, token = WHOX_TOKEN): (message: IrcMessage) => WhoEntry | null {
  // params[0] is the bot's nick; the fields follow in WHOX order, whatever order they were asked in.
  const at: Record<string, number> = {};
  let next = 1;
  for (const field of WHOX_ORDER) if (fields.includes(field)) at[field] = next++;
  const [t = -1, u = -1, i = -1, h = -1, s = -1, n = -1, f = -1, a = -1, r = -1] = [...'tuihsnfar'].map(
    (field) => at[field],
  );
  return (message) => {
    const params = message.params;
    if (t >= 0 && fieldAt(params, t) !== token) return null;
    const nick = fieldAt(params, n);
    if (!nick) return null;
    const flags = fieldAt(params, f) ?? '';
    const entry: WhoEntry = {
      nick,
      ident: fieldAt(params, u) || null,
      host: fieldAt(params, h) || null,
      server: fieldAt(params, s) || null,
      away: flags.startsWith('G'),
      isOperator: flags.includes('*'),
      realname: fieldAt(params, r) ?? null,
    };
    if (i >= 0) entry.ip = knownIp(fieldAt(params, i));
    const account = fieldAt(params, a);
    if (account !== undefined) entry.account = account === '0' || account === '' ? null : account;
    return entry;
  };
}

/** A WHOX field's value: undefined when it was not asked (index -1), '' when the row lacks it. */
function fieldAt(params: readonly string[], index: number): string | undefined {
  return index < 0 ? undefined : (params[index] ?? '');
}

/**
 * RPL_WHOREPLY `352 me <channel> <ident> <host> <server> <nick> <flags> :<hops> <realname>`, the last field read as
 * the server's profile says (`hopsField`: ircd 2.11 puts the server's SID before the realname).
 */
export function parseWhoReply(message: IrcMessage, hopsField: RegExp): WhoEntry | null {
  const [, , ident, host, server, nick, flags = '', trailing = ''] = message.params;
  if (!nick) return null;
  const groups = hopsField.exec(trailing)?.groups;
  return {
    nick,
    ident: ident || null,
    host: host || null,
    server: server || null,
    away: flags.startsWith('G'),
    isOperator: flags.includes('*'),
    realname: groups ? (groups.text ?? '') : trailing,
  };
}

/** What one WHO round saw: every nick (folded) and the operators among them. */
export interface WhoResult {
  seen: Set<string>;
  operators: Set<string>;
}

/**
 * The masks of one network, each folded initial once (`[*` and `{*` list the same nicks where the casemapping
 * folds them alike), and how many of the model's users each would list.
 */
export interface WhoMaskSet {
  masks: string[];
  /** Users the model has per folded initial: the rows a mask is expected to bring. */
  rows: (mask: string) => number;
}

/** The masks of a round for the model as it is now; one pass over the users. */
export function whoMaskSet(model: NetworkModel, chunkAbove: number): WhoMaskSet {
  const counts = new Map<string, number>();
  let total = 0;
  // A casemapping folds character by character: the key's first character is the folded initial.
  for (const [key] of model.users.entries()) {
    const initial = key.charAt(0);
    counts.set(initial, (counts.get(initial) ?? 0) + 1);
    total++;
  }
  const folded = new Set<string>();
  const masks = whoMasks(model.stats.users, chunkAbove).filter((mask) => {
    if (mask === '*') return true;
    const initial = model.fold(mask.charAt(0));
    if (folded.has(initial)) return false;
    folded.add(initial);
    return true;
  });
  return { masks, rows: (mask) => (mask === '*' ? total : (counts.get(model.fold(mask.charAt(0))) ?? 0)) };
}

/** The masks one refresh asks: a stretch of the cycle, and what it stands for. */
export interface WhoSlice {
  masks: string[];
  /** Where the next slice starts (0 once this one reached the end of the cycle). */
  next: number;
  /** Whether this slice ends the cycle: nicks no mask lists (InspIRCd's UIDs after a collision) are judged with it. */
  endsCycle: boolean;
  /** Whether a user (by folded nick) is one this slice lists, or one it judges at the end of the cycle. */
  covers: (key: string) => boolean;
}

/**
 * The masks from `start` on, until they are expected to bring `budget` rows or the cycle ends; every mask when
 * `whole`. Pure but for the model's casemapping.
 */
export function planWhoSlice(
  model: NetworkModel,
  set: WhoMaskSet,
  start: number,
  budget: number,
  whole: boolean,
): WhoSlice {
  const from = whole || start >= set.masks.length ? 0 : start;
  let end = from;
  let rows = 0;
  while (end < set.masks.length && (whole || end === from || rows < budget)) rows += set.rows(set.masks[end++]!);
  const masks = set.masks.slice(from, end);
  const endsCycle = end === set.masks.length;
  if (masks.includes('*') || (from === 0 && endsCycle)) {
    return { masks, next: 0, endsCycle: true, covers: () => true };
  }
  const asked = new Set(masks.map((mask) => model.fold(mask.charAt(0))));
  const listed = new Set(set.masks.map((mask) => model.fold(mask.charAt(0))));
  return {
    masks,
    next: endsCycle ? 0 : end,
    endsCycle,
    covers: (key) => {
      const initial = key.charAt(0);
      return asked.has(initial) || (endsCycle && !listed.has(initial));
    },
  };
}

/**
 * WHO for the masks of `slice`, a few at once; the model takes each user as it comes. `result` may be shared
 * with whoever else sees users during the round (an operator's connect notices).
 */
export async function syncWho(
  context: SyncContext,
  result: WhoResult = { seen: new Set(), operators: new Set() },
  slice?: { masks: readonly string[]; rows: (mask: string) => number },
): Promise<WhoResult> {
  const { irc, model } = context;
  const whox = irc.state.profile.whox;
  const plan = slice ?? whoMaskSet(model, whoChunkAbove(context));
  // Plain WHO rows carry no token to tell whose they are: one mask at a time there.
  const limits = { limit: whox ? WHO_MASKS_IN_FLIGHT : 1, weight: plan.rows, maxWeight: WHO_ROWS_IN_FLIGHT };
  await inTurn(plan.masks, limits, (mask) =>
    // With WHOX, `n` makes the mask match nicks only; plain WHO matches more, and duplicates are harmless.
    whoOnce(context, mask, whox ? (mask === '*' ? '' : 'n') : null, result, whoxToken(mask)),
  );
  return result;
}

/**
 * WHO for the users of one server (a server that just linked), with WHOX's `s` flag, which matches the
 * server name; false, asking nothing, where the server has no WHOX (the next full sync finds them).
 */
export async function whoOnServer(context: SyncContext, server: string): Promise<boolean> {
  if (!context.irc.state.profile.whox) return false;
  await whoOnce(context, server, 's', { seen: new Set(), operators: new Set() }, WHOX_TOKEN);
  return true;
}

/**
 * One WHO request; the model takes each user it lists, into `result`.
 * @param flags WHOX matching flags before the field list, or null for a plain WHO
 */
async function whoOnce(
  context: SyncContext,
  mask: string,
  flags: string | null,
  result: WhoResult,
  token: string,
): Promise<void> {
  const { irc, model, urgent } = context;
  const fields = whoxFields(irc.state.isOperator, irc.state.profile.whoxIp);
  const whox = flags !== null;
  const parseWhox = whoxParser(fields, token);
  const { profile } = irc.state;
  // `*` (every user) is asked in the server's own words.
  const asked = mask === '*' ? profile.whoEveryone : mask;
  // An operator asks for invisible users too, where the server wants a flag for it (ircu's `x`).
  const invisible = irc.state.isOperator && profile.invisibleWhoFlag !== null ? profile.invisibleWhoFlag : '';
  const send = whox ? ['WHO', asked, `${flags}${invisible}%${fields},${token}`] : ['WHO', asked];
  // For the debug log: how long the request waited for its turn, for its first row, and for its end.
  const queued = Date.now();
  let sentAt: number | null = null;
  let firstRowAt: number | null = null;
  let rows = 0;
  await irc.request({
    urgent,
    send,
    onSent: () => (sentAt = Date.now()),
    reply: (line) => (whox ? line.command === '354' && line.params[1] === token : line.command === '352'),
    end: (line) => endsWho(line, asked),
    // Each row is taken as it arrives, in order with the live lines around it: a QUIT or NICK right after
    // the row is applied after it, never before (which would bring the user back from a row already stale).
    onReply: (line) => {
      firstRowAt ??= Date.now();
      rows++;
      const entry = whox ? parseWhox(line) : parseWhoReply(line, profile.hopsField);
      if (entry) takeWhoEntry(model, entry, result);
    },
    timeoutMs: 120000,
  });
  const ended = Date.now();
  context.logger.debug('who', {
    mask,
    rows,
    wait_ms: sentAt === null ? null : sentAt - queued,
    first_row_ms: sentAt === null || firstRowAt === null ? null : firstRowAt - sentAt,
    ms: ended - queued,
  });
}

/**
 * Whether `line` ends the answer to `WHO <asked>`: RPL_ENDOFWHO `315 me <mask> :End of WHO list.` naming the mask, or
 * `*` for `WHO 0` (ircd 2.11 names `*` for everyone: the profile's `whoEveryone`).
 */
function endsWho(line: IrcMessage, asked: string): boolean {
  if (line.command !== '315') return false;
  const mask = (line.params[1] ?? '').toLowerCase();
  return mask === asked.toLowerCase() || (asked === '0' && mask === '*');
}

/** One user as WHO listed them, into the model and `result`. */
function takeWhoEntry(model: NetworkModel, entry: WhoEntry, result: WhoResult): void {
  const { nick, ...fieldsOfUser } = entry;
  const key = model.fold(nick);
  const known = model.users.byKey(key);
  // Someone else behind a known nick: the bot shared no channel with either, so it saw neither the quit
  // nor the new connection. They are a new user, whose client, country, real host and first-seen time
  // are their own, not the previous person's.
  if (known && known.channels.size === 0 && isSomeoneElse(known, entry)) model.removeUser(known.nick, key);
  model.upsertUser(nick, fieldsOfUser, key);
  result.seen.add(key);
  if (entry.isOperator) result.operators.add(key);
}

/** Whether WHO shows another connection than the model's `known` under its nick: another IP or ident. */
function isSomeoneElse(known: User, entry: WhoEntry): boolean {
  const differs = (now: string | null, before: string | null) => now !== null && before !== null && now !== before;
  return differs(entry.ip ?? null, known.ip) || differs(entry.ident, known.ident);
}

/** What the bot learnt about real hosts on this connection. */
export interface RealHostState {
  /** The server hid other users' IPs in an `x` answer: the bot's operator class lacks users/auspex. */
  refused: boolean;
  /** Where the next sync's masks start, in the masks of the initials still missing one. */
  next: number;
}

export function createRealHostState(): RealHostState {
  return { refused: false, next: 0 };
}

/**
 * The hosts behind cloaks and vhosts, where the bot can see them ({@link seesRealHosts}): the WHO masks again
 * with flag `x`, asking only for IP, host and nick. A user's real host never changes while they are online,
 * so only the masks of users still without one are asked (`set`: the sync's masks, counted before its WHO
 * round, which is close enough for a budget), and at most {@link WHO_SLICE_ROWS} expected rows of
 * them per sync, from where the last sync stopped (on a big network the first sync alone would otherwise ask
 * for every user again). Only users the model has take one (someone who connected since is asked at a later
 * sync). The sync asks after the model is complete: a detail only the token tier shows need not hold up the
 * first answer.
 */
export async function syncRealHosts(
  context: SyncContext,
  state: RealHostState,
  set: WhoMaskSet = whoMaskSet(context.model, whoChunkAbove(context)),
): Promise<void> {
  const { irc, model } = context;
  if (state.refused || !seesRealHosts(irc.state)) return;
  // The folded first characters of the nicks still without a real host; a mask asks for its own.
  const missing = new Set<string>();
  for (const [key, user] of model.users.entries()) if (user.realHost === null) missing.add(key.charAt(0));
  if (missing.size === 0) return;
  const wanted = set.masks.filter((mask) => mask === '*' || missing.has(model.fold(mask.charAt(0))));
  // `next` is a place in all the masks (which of them are wanted changes from one sync to the next).
  const start = Math.max(
    0,
    wanted.findIndex((mask) => set.masks.indexOf(mask) >= state.next),
  );
  const slice = planWhoSlice(model, { masks: wanted, rows: set.rows }, start, WHO_SLICE_ROWS, false);
  const last = slice.masks.at(-1);
  state.next = slice.endsCycle || last === undefined ? 0 : set.masks.indexOf(last) + 1;
  const proof: RealHostProof = { proven: false, held: [] };
  try {
    const limits = { limit: WHO_MASKS_IN_FLIGHT, weight: set.rows, maxWeight: WHO_ROWS_IN_FLIGHT };
    await inTurn(slice.masks, limits, (mask) => realHostsOf(context, mask, proof));
  } catch (error) {
    if (!(error instanceof HiddenHostsError)) throw error;
    state.refused = true;
    context.logger.info('no real hosts: the server hides IPs from this operator (no users/auspex privilege)');
  }
}

/** WHOX's IP field for a user whose IP the asker may not see. */
const HIDDEN_IP = '255.255.255.255';

/** The server hid other users' IPs in an `x` answer (see {@link RealHostState}). */
class HiddenHostsError extends Error {}

/**
 * Whether the answers so far proved that `x` shows real hosts: another user's IP was shown. Until then the
 * rows that prove nothing (the bot's own, whose IP it always sees; services' 0.0.0.0) wait in `held`.
 */
interface RealHostProof {
  proven: boolean;
  held: { nick: string; host: string }[];
}

/** Real hosts of the users `mask` matches, taken as the rows arrive; rejects with {@link HiddenHostsError}. */
async function realHostsOf({ irc, model }: SyncContext, mask: string, proof: RealHostProof): Promise<void> {
  const token = whoxToken(mask, true);
  const own = irc.state.nick;
  const flag = irc.state.profile.realHostWhoFlag ?? '';
  let hidden = false;
  const take = (nick: string, host: string): void => {
    if (model.users.get(nick)) model.upsertUser(nick, { realHost: host });
  };
  const asked = mask === '*' ? irc.state.profile.whoEveryone : mask;
  await irc.request({
    send: ['WHO', asked, `${mask === '*' ? '' : 'n'}${flag}%tihn,${token}`],
    reply: (line) => line.command === '354' && line.params[1] === token,
    end: (line) => endsWho(line, asked),
    // 354 me <token> <ip> <host> <nick>: WHOX sends the fields in its own order.
    onReply: (line) => {
      const [, , ip, host, nick] = line.params;
      if (hidden || !ip || !host || !nick) return;
      // An operator without the users/auspex privilege gets the shown host for `x`, with the IP hidden: no
      // real host at all, then. (Services show 0.0.0.0 and their own host, which is their real one.)
      if (ip === HIDDEN_IP) {
        hidden = true;
        return;
      }
      if (proof.proven) take(nick, host);
      else if (ip === '0.0.0.0' || irc.casefold(nick) === irc.casefold(own)) proof.held.push({ nick, host });
      else {
        proof.proven = true;
        take(nick, host);
        for (const row of proof.held.splice(0)) take(row.nick, row.host);
      }
    },
    timeoutMs: 120000,
  });
  if (hidden) throw new HiddenHostsError('hidden');
}

/** One line of RPL_STATS `249 me :nick (ident@host) Idle: 5s`; null for the closing count. */
export function parseStatsOperator(text: string): { nick: string; ident: string; host: string } | null {
  const match = /^(\S+) \(([^@)]+)@([^)]+)\)/.exec(text);
  return match ? { nick: match[1]!, ident: match[2]!, host: match[3]! } : null;
}

/**
 * STATS P (the letter is the server profile's `operatorsStats`): the operators online, network-wide (InspIRCd
 * lets users ask; elsewhere it may be refused, and WHO's `*` flag is all there is). Returns their folded nicks,
 * or null if refused, or where the server has no such STATS.
 */
export async function syncOperators({ irc, model }: SyncContext): Promise<Set<string> | null> {
  const letter = irc.state.profile.operatorsStats;
  if (letter === null) return null;
  const lines = await irc.request({
    send: ['STATS', letter],
    serial: true,
    reply: (line) => line.command === '249',
    end: (line) => ['219', '481', '421'].includes(line.command),
    timeoutMs: 30000,
  });
  if (lines.at(-1)?.command !== '219') return null;
  const operators = new Set<string>();
  for (const line of lines) {
    if (line.command !== '249') continue;
    const operator = parseStatsOperator(line.params.at(-1) ?? '');
    if (!operator) continue;
    const known = model.users.get(operator.nick);
    model.upsertUser(operator.nick, known?.ident ? {} : { ident: operator.ident, host: operator.host });
    operators.add(model.fold(operator.nick));
  }
  return operators;
}
