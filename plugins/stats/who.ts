/**
 * Who is online: WHO (with WHOX fields when the server offers them) for every
 * user the bot may see, and STATS P for the operators. As an operator the bot
 * sees every user, invisible ones included; without it, what the network shows.
 */
import type { IrcMessage, NetworkModel, User } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';

/** WHOX token that marks our own WHO replies. */
export const WHOX_TOKEN = '77';
/** WHOX token of the replies that carry real hosts (see {@link seesRealHosts}). */
export const REAL_HOST_TOKEN = '78';

/** The order servers send WHOX fields in, whatever order they were asked in (ircu's order). */
const WHOX_ORDER = 'tcuihsnfdlaor';

/**
 * The WHOX fields to ask for. Only an operator asks for the IP (`%i`): InspIRCd 3
 * answers a non-operator who asks for it with no line for anybody but themselves.
 */
export function whoxFields(asOperator: boolean): string {
  return asOperator ? 'tcuihsnfar' : 'tcuhsnfar';
}

/** Nicks start with a letter or one of `[]\`_^{|}` (RFC 2812); one WHO per first character. */
const NICK_INITIALS = [...'abcdefghijklmnopqrstuvwxyz', '[', ']', '\\', '`', '_', '^', '{', '|', '}'];

/**
 * The WHO masks of one sync: everything at once on a small network, else one mask per nick
 * initial, so that no reply is bigger than a small share of the server's send queue for the bot.
 */
export function whoMasks(networkUsers: number | null, chunkAbove: number): string[] {
  if (networkUsers !== null && networkUsers <= chunkAbove) return ['*'];
  return NICK_INITIALS.map((initial) => `${initial}*`);
}

/**
 * Whether the bot can ask for real hosts: InspIRCd answers WHO with flag `x` with the host behind any
 * cloak or vhost in the host field, to an operator. Other servers' flags differ (an unknown one may be
 * an error, or be taken for another filter), so they are not asked; a WHOIS still shows real hosts there.
 */
export function seesRealHosts(state: {
  isOperator: boolean;
  serverVersion: string;
  isupport: ReadonlyMap<string, string>;
}): boolean {
  return state.isOperator && state.isupport.has('WHOX') && /^InspIRCd-[34]\b/.test(state.serverVersion);
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
export function parseWhoxReply(message: IrcMessage, fields: string): WhoEntry | null {
  const asked = [...WHOX_ORDER].filter((field) => fields.includes(field));
  const values = new Map<string, string>();
  asked.forEach((field, index) => values.set(field, message.params[index + 1] ?? ''));
  if (values.has('t') && values.get('t') !== WHOX_TOKEN) return null;
  const nick = values.get('n');
  if (!nick) return null;
  const flags = values.get('f') ?? '';
  const account = values.get('a');
  return {
    nick,
    ident: values.get('u') || null,
    host: values.get('h') || null,
    ...(values.has('i') ? { ip: knownIp(values.get('i')) } : {}),
    server: values.get('s') || null,
    away: flags.startsWith('G'),
    isOperator: flags.includes('*'),
    ...(account === undefined ? {} : { account: account === '0' || account === '' ? null : account }),
    realname: values.get('r') ?? null,
  };
}

/** RPL_WHOREPLY `352 me <channel> <ident> <host> <server> <nick> <flags> :<hops> <realname>` */
export function parseWhoReply(message: IrcMessage): WhoEntry | null {
  const [, , ident, host, server, nick, flags = '', trailing = ''] = message.params;
  if (!nick) return null;
  return {
    nick,
    ident: ident || null,
    host: host || null,
    server: server || null,
    away: flags.startsWith('G'),
    isOperator: flags.includes('*'),
    realname: trailing.replace(/^\d+ ?/, ''),
  };
}

/** What one WHO round saw: every nick (folded) and the operators among them. */
export interface WhoResult {
  seen: Set<string>;
  operators: Set<string>;
}

/**
 * WHO for every mask of the round, one request at a time; the model takes each user as it comes. `result`
 * may be shared with whoever else sees users during the round (an operator's connect notices).
 */
export async function syncWho(
  context: SyncContext,
  result: WhoResult = { seen: new Set(), operators: new Set() },
): Promise<WhoResult> {
  const { irc, model, config } = context;
  const whox = irc.state.isupport.has('WHOX');
  for (const mask of whoMasks(model.stats.users, config.who_chunk_above)) {
    // With WHOX, `n` makes the mask match nicks only; plain WHO matches more, and duplicates are harmless.
    await whoOnce(context, mask, whox ? (mask === '*' ? '' : 'n') : null, result);
  }
  return result;
}

/**
 * WHO for the users of one server (a server that just linked), with WHOX's `s` flag, which matches the
 * server name; false, asking nothing, where the server has no WHOX (the next full sync finds them).
 */
export async function whoOnServer(context: SyncContext, server: string): Promise<boolean> {
  if (!context.irc.state.isupport.has('WHOX')) return false;
  await whoOnce(context, server, 's', { seen: new Set(), operators: new Set() });
  return true;
}

/**
 * One WHO request; the model takes each user it lists, into `result`.
 * @param flags WHOX matching flags before the field list, or null for a plain WHO
 */
async function whoOnce(context: SyncContext, mask: string, flags: string | null, result: WhoResult): Promise<void> {
  const { irc, model, urgent } = context;
  const fields = whoxFields(irc.state.isOperator);
  const whox = flags !== null;
  const send = whox ? ['WHO', mask, `${flags}%${fields},${WHOX_TOKEN}`] : ['WHO', mask];
  // For the debug log: how long the request waited for its turn, for its first row, and for its end.
  const asked = Date.now();
  let sentAt: number | null = null;
  let firstRowAt: number | null = null;
  let rows = 0;
  await irc.request({
    urgent,
    send,
    onSent: () => (sentAt = Date.now()),
    reply: (line) => (whox ? line.command === '354' && line.params[1] === WHOX_TOKEN : line.command === '352'),
    end: (line) => line.command === '315' && (line.params[1] ?? '').toLowerCase() === mask.toLowerCase(),
    // Each row is taken as it arrives, in order with the live lines around it: a QUIT or NICK right after
    // the row is applied after it, never before (which would bring the user back from a row already stale).
    onReply: (line) => {
      firstRowAt ??= Date.now();
      rows++;
      const entry = whox ? parseWhoxReply(line, fields) : parseWhoReply(line);
      if (entry) takeWhoEntry(model, entry, result);
    },
    timeoutMs: 120000,
  });
  const ended = Date.now();
  context.logger.debug('who', {
    mask,
    rows,
    wait_ms: sentAt === null ? null : sentAt - asked,
    first_row_ms: sentAt === null || firstRowAt === null ? null : firstRowAt - sentAt,
    ms: ended - asked,
  });
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
}

/**
 * The hosts behind cloaks and vhosts, where the bot can see them ({@link seesRealHosts}): the WHO masks of
 * the round again with flag `x`, asking only for IP, host and nick. A user's real host never changes while
 * they are online, so only the masks of users still without one are asked. Only users the model has take
 * one (someone who connected since is asked at the next sync). The sync asks after the model is complete:
 * a detail only the token tier shows need not hold up the first answer.
 */
export async function syncRealHosts(context: SyncContext, state: RealHostState): Promise<void> {
  const { irc, model, config } = context;
  if (state.refused || !seesRealHosts(irc.state)) return;
  // The folded first characters of the nicks still without a real host; a mask asks for its own.
  const missing = new Set<string>();
  for (const user of model.users.all()) if (user.realHost === null) missing.add(model.fold(user.nick.charAt(0)));
  for (const mask of whoMasks(model.stats.users, config.who_chunk_above)) {
    // Masks that fold alike (`[*` and `{*`) match the same nicks: the first one asks, and takes the initial off.
    if (mask === '*' ? missing.size > 0 : missing.delete(model.fold(mask.charAt(0)))) {
      if (!(await realHostsOf(context, mask))) {
        state.refused = true;
        context.logger.info('no real hosts: the server hides IPs from this operator (no users/auspex privilege)');
        return;
      }
    }
  }
}

/** WHOX's IP field for a user whose IP the asker may not see. */
const HIDDEN_IP = '255.255.255.255';

/** Real hosts of the users `mask` matches; false if the server hid them (see {@link RealHostState}). */
async function realHostsOf({ irc, model }: SyncContext, mask: string): Promise<boolean> {
  const lines = await irc.request({
    send: ['WHO', mask, `${mask === '*' ? '' : 'n'}x%tihn,${REAL_HOST_TOKEN}`],
    reply: (line) => line.command === '354' && line.params[1] === REAL_HOST_TOKEN,
    end: (line) => line.command === '315' && (line.params[1] ?? '').toLowerCase() === mask.toLowerCase(),
    timeoutMs: 120000,
  });
  // An operator without the users/auspex privilege gets the shown host for `x`, with the IP hidden: no
  // real host at all, then. (Services show 0.0.0.0 and their own host, which is their real one.)
  if (lines.some((line) => line.command === '354' && line.params[2] === HIDDEN_IP)) return false;
  for (const line of lines) {
    // 354 me 78 <ip> <host> <nick>: WHOX sends the fields in its own order.
    const [, , , host, nick] = line.params;
    if (line.command !== '354' || !host || !nick || !model.users.get(nick)) continue;
    model.upsertUser(nick, { realHost: host });
  }
  return true;
}

/** One line of RPL_STATS `249 me :nick (ident@host) Idle: 5s`; null for the closing count. */
export function parseStatsOperator(text: string): { nick: string; ident: string; host: string } | null {
  const match = /^(\S+) \(([^@)]+)@([^)]+)\)/.exec(text);
  return match ? { nick: match[1]!, ident: match[2]!, host: match[3]! } : null;
}

/**
 * STATS P: the operators online, network-wide (InspIRCd lets users ask; elsewhere it may be
 * refused, and WHO's `*` flag is all there is). Returns their folded nicks, or null if refused.
 */
export async function syncOperators({ irc, model }: SyncContext): Promise<Set<string> | null> {
  const lines = await irc.request({
    send: ['STATS', 'P'],
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
