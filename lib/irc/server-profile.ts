/**
 * The server profile: what the IRC server the bot is connected to can do and how it words its answers, as
 * irc-framework's networkinfo.js knows its server. It is built from what the server says of itself: its
 * software and version (RPL_MYINFO 004, or RPL_VERSION 351 for an attached client whose 004 went by), its
 * ISUPPORT tokens (005) and its capabilities (CAP). Every "does this server …" question is asked of it, by
 * feature first (an ISUPPORT token or a CAP the server advertises), and by the software's family only where
 * the server does not advertise the feature.
 *
 * The families are one table, {@link SERVER_FAMILIES}: the only place in the code that names an IRC server's
 * software. Adding one is adding its entry (its version pattern and the answers where it differs from
 * {@link GENERIC_ANSWERS}), with a test fed by its real lines: see docs/adding-an-irc-server.md.
 */

/**
 * The server notices an operator can ask for, and how the software words them. Each pattern is matched
 * against the notice's text and names what it captures; `notices.ts` in the collector reads them.
 */
export interface ServerNoticeWording {
  /** The snomasks that bring them (`MODE <bot> +s <modes>`). */
  readonly modes: string;
  /**
   * A client connected: groups `nick`, `ident`, `host` (the host it connected from), `ip`, `realname`, and
   * `server` for a client of another server (none for one of the bot's server).
   */
  readonly connect: RegExp;
  /** A client exited: group `nick`, and `reason` where the wording carries it. */
  readonly exit: RegExp;
  /** A client changed nick: groups `from` and `to`. */
  readonly nick: RegExp;
  /** A channel was formed by its first member's JOIN: group `channel`. */
  readonly channel: RegExp;
}

/** A latency probe: a command each server answers itself (`TIME <server>`, `VERSION <server>`). */
export type LatencyProbe = 'TIME' | 'VERSION';

/** What a family of server software does that neither its ISUPPORT tokens nor its CAPs say. */
export interface FamilyAnswers {
  /**
   * The WHO flag with which a WHOX answer to an operator carries the host behind any cloak or vhost in the
   * host field; null where none is known (an unknown flag may be an error, or be taken for another filter).
   */
  readonly realHostWhoFlag: string | null;
  /**
   * Who may ask WHOX for IPs (`%i`): `operator` where a non-operator's question would cost the answer (InspIRCd
   * 3 then lists nobody but the asker), `anyone` where it only hides the IPs.
   */
  readonly whoxIp: 'operator' | 'anyone';
  /**
   * Whether an operator's WHO lists invisible (+i) users too. Where it does not, the users list misses those
   * who share no channel with the bot, and so does each server's count, which an operator's WHO makes where
   * MAP gives none (docs/compatibility.md); the collector counts what WHO shows all the same.
   */
  readonly operatorWhoSeesInvisible: boolean;
  /**
   * The WHOX flag with which an operator's WHO lists invisible users too, where a plain one does not (ircu's `x`,
   * which needs the `whox` and `show_all_invis` privileges, and which ircu logs); null where there is none.
   */
  readonly invisibleWhoFlag: string | null;
  /** The most rows one WHO answers (more: ask smaller masks); null where the server sends every match. */
  readonly whoReplyLimit: number | null;
  /**
   * Whether LIST rows start with the channel's modes (`[+nt] topic`): true always, false never (a topic that
   * starts with `[+` is then a topic), null where the server's configuration decides (read from the rows).
   */
  readonly listShowsModes: boolean | null;
  /**
   * What to add to LIST so that it lists every channel: none where a plain LIST does; `>0` where a plain LIST
   * hides small channels (Solanum and Charybdis hide those under `displayed_usercount`, 3 by default).
   */
  readonly listEveryChannel: readonly string[];
  /**
   * The WHO mask that asks for every user the asker may see: `*` on most servers; `0` where `WHO *` means the
   * asker's own channel (Solanum, Charybdis).
   */
  readonly whoEveryone: string;
  /**
   * Whether LIST shows an operator the secret (+s) and private (+p) channels it is not in. Where it does, a channel an
   * operator's LIST shows without its modes stays hidden until a MODE query says it is public; where it does not
   * (ircd 2.11), an operator's LIST shows what anyone's does, public channels only, and no MODE query is needed.
   */
  readonly operatorListsSecret: boolean;
  /** The STATS letter that lists the operators online as `nick (ident@host) Idle: …`; null where none does. */
  readonly operatorsStats: string | null;
  /**
   * Whether an operator's WHOIS shows the IP a user connects from (RPL_WHOISACTUALLY 338, RPL_WHOISHOST 378). Where
   * the server has no WHOX, the collector asks each user's WHOIS for it (and for the account, where there are
   * accounts); ircd 2.11's WHOIS shows an operator no more than the host of its 311.
   */
  readonly operatorWhoisIp: boolean;
  /**
   * The numeric that ends a LUSERS answer: RPL_GLOBALUSERS `266` on most servers; `255` (RPL_LUSERME) where the
   * server sends no 265/266 (ircu, whose answer ends with a NOTICE of its highest connection count).
   */
  readonly lusersEnd: '266' | '255';
  /**
   * How a MAP line gives a server's users, with groups `name` and `users`; null where the collector reads no
   * MAP from this software (it has none, or words it otherwise), so it does not ask.
   */
  readonly mapLine: RegExp | null;
  /**
   * How the last field of a WHO row (RPL_WHOREPLY 352, `:<hops> <realname>`) and of a LINKS row (RPL_LINKS 364,
   * `:<hops> <description>`) reads, with groups `hops` and `text` (the realname, the server's description). ircd
   * 2.11 puts the server's SID between them (`:1 002A bob test`), which is neither.
   */
  readonly hopsField: RegExp;
  /** The client, nick, channel and link notices an operator can ask for; null where their wording is not known. */
  readonly serverNotices: ServerNoticeWording | null;
  /** The latency probes to try, in order, for a server none has answered yet. */
  readonly latencyProbes: readonly LatencyProbe[];
  /**
   * Whether the software logs users in with SASL at all: true where it offers the `sasl` CAP while its services
   * are linked, false where it never does (then a bot logs in with IDENTIFY), null where that is not known.
   */
  readonly sasl: boolean | null;
  /**
   * Whether the software knows accounts at all: says who is logged in to which (RPL_WHOISACCOUNT 330, the
   * `account-tag` and `account-notify` CAPs, SASL). Where it does not (ircd 2.11), no services could tell the bot
   * who anyone is: nobody can log in, the bot included, and what needs an account cannot be had.
   */
  readonly accounts: boolean;
  /** What to do about a command the server refused with RPL_TRYAGAIN (263) too often; null: the generic advice. */
  readonly tryAgainAdvice: string | null;
}

/** One family of server software: how to know it, and its answers. */
export interface ServerFamily extends FamilyAnswers {
  /** Its name, as logs and error messages give it. */
  readonly name: string;
  /** Matches its version string as RPL_MYINFO (or RPL_VERSION, without the final dot) gives it. */
  readonly version: RegExp;
}

/**
 * A MAP line with the users and their share after the name (and, to an operator, `(SID version)`):
 * `` `-leaf.test.net (002 InspIRCd-3)  1 [12.50%] ``.
 */
const USERS_BEFORE_SHARE_MAP = /^[\s|`'\\-]*(?<name>[^\s(|`]+)(?:\s+\([^)]*\))?\s+(?<users>\d+)\s+\[/;

/** The last field of a WHO or LINKS row: the hop count, then the realname or description. */
const HOPS_THEN_TEXT = /^(?<hops>\d+)\s?(?<text>.*)$/s;

/** The answers for software no entry names, and for whatever an entry does not say. */
export const GENERIC_ANSWERS: FamilyAnswers = {
  realHostWhoFlag: null,
  whoxIp: 'operator',
  operatorWhoSeesInvisible: true,
  invisibleWhoFlag: null,
  whoReplyLimit: null,
  listShowsModes: null,
  listEveryChannel: [],
  whoEveryone: '*',
  operatorListsSecret: true,
  operatorsStats: 'P',
  operatorWhoisIp: true,
  lusersEnd: '266',
  mapLine: USERS_BEFORE_SHARE_MAP,
  hopsField: HOPS_THEN_TEXT,
  serverNotices: null,
  latencyProbes: ['TIME', 'VERSION'],
  sasl: null,
  accounts: true,
  tryAgainAdvice: null,
};

/**
 * InspIRCd 3's notices (core_user for snomasks c, C, q, Q; the seenicks module for n, N; the chancreate module
 * for j, J; l, L bring the link notices, which the collector reads in any server's words):
 *
 *     *** CONNECT: Client connecting on port 6667 (class main): nick!ident@host (ip) [realname]
 *     *** REMOTECONNECT: Client connecting at leaf.example: nick!ident@host (ip) [realname]
 *     *** QUIT: Client exiting: nick!ident@host (ip) [reason]
 *     *** REMOTEQUIT: Client exiting on server leaf.example: nick!ident@host (ip) [reason]
 *     *** NICK: User old changed their nickname to new          (REMOTENICK for another server's)
 *     *** NICK: User old!ident@host (ip) changed their nickname to new         (InspIRCd 4.7 and later)
 *     *** CHANCREATE: Channel #name created by nick!ident@host
 *     *** REMOTECHANCREATE: From leaf.example: Channel #name created by nick!ident@host
 *
 * A server without the seenicks or chancreate module answers their letters with 501, and applies the others.
 */
const INSPIRCD_NOTICES: ServerNoticeWording = {
  modes: '+cCqQnNlLjJ',
  connect:
    /^\*\*\* (?:CONNECT: Client connecting on port \d+(?: \(class [^)]*\))?|REMOTECONNECT: Client connecting at (?<server>\S+)): (?<nick>[^!\s]+)!(?<ident>[^@\s]+)@(?<host>\S+) \((?<ip>[^)]*)\) \[(?<realname>.*)\]$/,
  exit: /^\*\*\* (?:QUIT: Client exiting|REMOTEQUIT: Client exiting on server \S+): (?<nick>[^!\s]+)!(?:\S+ \([^)]*\) \[(?<reason>.*)\]$)?/,
  nick: /^\*\*\* (?:REMOTE)?NICK: User (?<from>[^!\s]+)(?:!\S+ \([^)]*\))? changed their nickname to (?<to>\S+)$/,
  channel: /^\*\*\* (?:CHANCREATE|REMOTECHANCREATE: From \S+): Channel (?<channel>\S+) created by /,
};

/**
 * The software the profile knows, first match wins. Each entry says only where it differs from
 * {@link GENERIC_ANSWERS}; an answer no test network's lines checked yet stays the generic one
 * (docs/adding-an-irc-server.md).
 */
export const SERVER_FAMILIES: readonly ServerFamily[] = [
  {
    ...GENERIC_ANSWERS,
    name: 'InspIRCd',
    // 3 and 4; InspIRCd 2 words its notices otherwise and has no real-host WHO flag.
    version: /^InspIRCd-[34]\b/,
    realHostWhoFlag: 'x',
    // `<options modesinlist>` decides.
    listShowsModes: null,
    mapLine: USERS_BEFORE_SHARE_MAP,
    serverNotices: INSPIRCD_NOTICES,
    sasl: true,
  },
  {
    ...GENERIC_ANSWERS,
    name: 'ircd-hybrid',
    // `ircd-hybrid-8.2.43`, or a distribution's `ircd-hybrid-1:8.2.43+dfsg.1-1`.
    version: /^ircd-hybrid-/i,
    // Only to someone who shares a channel with them, operators included.
    operatorWhoSeesInvisible: false,
    // ERR_WHOLIMEXCEED after that many (8.2's source).
    whoReplyLimit: 500,
    listShowsModes: true,
    // STATS P lists its ports; the operators online are under STATS p, with their flags before the nick.
    operatorsStats: null,
    // `hub.test.net[001] ---- | Users:     2 (18.18%)`, a form the collector does not read.
    mapLine: null,
    sasl: false,
    // It refuses anyone but an operator a LINKS, MAP, STATS, WHO of a mask… within `pace_wait` of anyone's last.
    tryAgainAdvice: 'oper the bot or set pace_wait and pace_wait_simple to 0',
  },
  {
    ...GENERIC_ANSWERS,
    name: 'ngIRCd',
    version: /^ngircd-/i,
    operatorWhoSeesInvisible: false,
    // `WHO list limit (25) reached!`, to operators too, for a mask (MAX_RPL_WHO in 26.1's source); a channel's has none.
    whoReplyLimit: 25,
    listShowsModes: false,
    // STATS P answers nothing; MAP is an unknown command.
    operatorsStats: null,
    mapLine: null,
    sasl: false,
  },
  {
    ...GENERIC_ANSWERS,
    name: 'UnrealIRCd',
    version: /^UnrealIRCd-/i,
    // STATS P lists its ports; MAP reads `name (SID) | Users: N (x%)`, a form the collector does not read.
    operatorsStats: null,
    mapLine: null,
    sasl: true,
  },
  {
    ...GENERIC_ANSWERS,
    name: 'Solanum',
    // Charybdis is its ancestor, and answers alike.
    version: /^(?:solanum|charybdis)-/i,
    // A plain LIST hides channels under `displayed_usercount` users (3 by default); `LIST >0` lists them all.
    listEveryChannel: ['>0'],
    // A LIST row is the topic alone, colours stripped (m_list.c's list_one_channel).
    listShowsModes: false,
    // `WHO *` answers the asker's first channel; `WHO 0` everyone it may see.
    whoEveryone: '0',
    // An operator's WHO shows only the invisible users who share a channel with them, as anyone's does; only
    // operspy (`WHO !*`) sees the others, and every operator is told of each such look.
    operatorWhoSeesInvisible: false,
    // STATS P lists its ports (the operators are under STATS p, `p :nick (user@host)`); MAP reads
    // `name[SID] ---- | Users: N (x%)`, a form the collector does not read.
    operatorsStats: null,
    mapLine: null,
    sasl: true,
  },
  {
    ...GENERIC_ANSWERS,
    name: 'ircu',
    // `u2.10.12.14`, and its kin: `u2.10.12.10+snircd(1.3.4a)`, `u2.10.12.14+Nefarious(2.0.0)`.
    version: /^u2\.\d/,
    // Its `x` flag (`WHO * x%…`, with the whox and show_all_invis privileges) lists invisible users to an operator,
    // and logs each use; without it, an operator's WHO shows only those who share a channel, as anyone's does. The
    // bot asks with it. The host field stays the shown host with `x` too (an operator's `%i` gives the real IP): no
    // real-host flag.
    operatorWhoSeesInvisible: true,
    invisibleWhoFlag: 'x',
    // To anyone but an operator with unlimit_query (a global operator's default), 2048 / (fields + 4) rows and one
    // more, then `416 me * :Too many lines in the output, restrict your query` and the 315: 147 rows with the ten
    // fields an operator asks, 158 with a user's nine.
    whoReplyLimit: 147,
    // `322 me #chan 2 :topic`: modes only with `LIST M` (operators with list_chan), in other columns.
    listShowsModes: false,
    // STATS P (and p) lists its ports, to operators only; no STATS lists the operators online.
    operatorsStats: null,
    // `251`, `252`, `254`, `255`, then a NOTICE `Highest connection count: 3 (1 clients)`: no 265/266.
    lusersEnd: '255',
    // `|-leaf.test.net (0s) [2 clients]`, to operators only: under HIS_MAP (the default) a user's MAP gets a NOTICE
    // and no RPL_MAPEND, which the collector would wait for in vain. Not asked: counted from WHO, as where MAP has
    // a form the collector does not read.
    mapLine: null,
  },
  {
    ...GENERIC_ANSWERS,
    name: 'ircd 2.11',
    // `2.11.2p3`: no CAP, so no SASL; no account in WHOIS or anywhere (IRCnet runs no services). What follows was
    // learnt from its lines (test/fixtures/networks/irc2/).
    version: /^2\.11\./,
    sasl: false,
    accounts: false,
    // `WHO *` answers the asker's last-joined channel; `WHO 0` everyone it may see.
    whoEveryone: '0',
    // Neither an operator's `WHO 0` nor its `WHO <mask>` lists an invisible user who shares no channel with it.
    operatorWhoSeesInvisible: false,
    // `322 me #chan 2 :topic`: never the modes.
    listShowsModes: false,
    // An operator's LIST leaves out the secret and private channels it is not in, as anyone's does.
    operatorListsSecret: false,
    // STATS P lists its ports (211), STATS p nothing; no STATS lists the operators online.
    operatorsStats: null,
    // `311 me nick ~ident host * :realname`, 319, 312, 313, 317: no IP nor real host, to an operator either.
    operatorWhoisIp: false,
    // `015 me :hub.test.net`, `` 015 me : `- leaf.test.net ``: the tree without user counts.
    mapLine: null,
    // `352 me #chan ~ident host server nick H :1 002A realname`, `364 me leaf hub :1 002A description`: a SID
    // (a digit and three of digits and capitals) after the hops.
    hopsField: /^(?<hops>\d+) (?:\d[0-9A-Z]{3}(?: |$))?(?<text>.*)$/s,
  },
];

/** The advice for RPL_TRYAGAIN where the family has none of its own. */
const GENERIC_TRY_AGAIN_ADVICE = "oper the bot, or have the server's limit on the command lifted";

/** What the server said of itself: the profile is built from these alone. */
export interface ServerSelfDescription {
  /** The version string (RPL_MYINFO's or RPL_VERSION's); empty while unknown. */
  version: string;
  /** ISUPPORT tokens (`WHOX` → ``, `ELIST` → `CMNTU`). */
  isupport: ReadonlyMap<string, string>;
  /** Capabilities the bot was granted (CAP ACK, CAP LIST). */
  caps: ReadonlySet<string>;
  /** Capabilities the server offered (CAP LS, CAP NEW), without their values (`sasl`, not `sasl=PLAIN`). */
  offeredCaps: ReadonlySet<string>;
}

/** What the bot knows of its server: one answer per question, by feature first, else by family. */
export interface ServerProfile extends FamilyAnswers {
  /** The version string the family was found from; empty while unknown. */
  readonly version: string;
  /**
   * The family's name; null for software the profile's table of families (`SERVER_FAMILIES`) does not name
   * (the generic answers apply).
   */
  readonly family: string | null;
  /** WHOX (ISUPPORT `WHOX`): WHO with fields, tokens and flags. */
  readonly whox: boolean;
  /** LIST can ask for the channels formed lately (ISUPPORT `ELIST` with `C`: creation time, in minutes). */
  readonly listsNewChannels: boolean;
  /** LIST can ask for channels by their user count (ISUPPORT `ELIST` with `U`). */
  readonly listsByUsers: boolean;
  /**
   * The most channels a user may be in: ISUPPORT `CHANLIMIT=#:100` (the lowest of its prefixes), or the older
   * `MAXCHANNELS=20` of servers that predate it; null where the server does not say.
   */
  readonly channelLimit: number | null;
  /** The user mode that marks a bot (ISUPPORT `BOT`); null where the server has none. */
  readonly botMode: string | null;
  /** The channel prefixes of channels local to one server (`&`, RFC 2811), of those ISUPPORT `CHANTYPES` lists. */
  readonly localChannelTypes: string;
  /**
   * The channel prefixes of channels without modes (`+`, RFC 2811), of those ISUPPORT `CHANTYPES` lists: never secret,
   * and a MODE query of one is answered ERR_NOCHANMODES (477).
   */
  readonly modelessChannelTypes: string;
  /**
   * Whether the server delays each command by a penalty (ISUPPORT `PENALTY`, ircd 2.11): past a few quick ones, it
   * reads the next only seconds later (2–3 s, 12 s after a WHO that matched nobody), so its requests go one at a time.
   */
  readonly commandPenalty: boolean;
  /**
   * How to learn a user's account: from the `account` tag of their lines (the `account-tag` CAP was granted: no
   * tag means not logged in), or from their WHOIS (RPL_WHOISACCOUNT 330).
   */
  readonly accountFrom: 'account-tag' | 'whois';
  /** The advice an error about RPL_TRYAGAIN (263) ends with. */
  readonly tryAgainText: string;
  /** Whether `name` is a channel local to one server ({@link localChannelTypes}). */
  isLocalChannel(name: string): boolean;
  /** Whether `name` is a channel without modes ({@link modelessChannelTypes}). */
  isModelessChannel(name: string): boolean;
}

/** The family whose pattern `version` matches, if any. */
export function serverFamilyOf(version: string): ServerFamily | null {
  if (version === '') return null;
  return SERVER_FAMILIES.find((family) => family.version.test(version)) ?? null;
}

/** The most channels ISUPPORT lets a user be in, if it says. */
function channelLimitOf(isupport: ReadonlyMap<string, string>): number | null {
  const chanlimit = isupport.get('CHANLIMIT');
  const limits =
    chanlimit === undefined
      ? [Number(isupport.get('MAXCHANNELS'))]
      : chanlimit.split(',').map((entry) => Number(entry.split(':')[1]));
  const known = limits.filter((limit) => Number.isInteger(limit) && limit > 0);
  return known.length > 0 ? Math.min(...known) : null;
}

/** The profile of a server that described itself so. Pure. */
export function buildServerProfile(server: ServerSelfDescription): ServerProfile {
  const { isupport } = server;
  const family = serverFamilyOf(server.version);
  const { name, version: _pattern, ...familyAnswers } = family ?? { ...GENERIC_ANSWERS, name: null, version: null };
  const whox = isupport.has('WHOX');
  const elist = isupport.get('ELIST')?.toUpperCase() ?? '';
  // RFC 2811's default where the server does not list its prefixes.
  const chantypes = isupport.get('CHANTYPES') ?? '#&';
  const localChannelTypes = chantypes.includes('&') ? '&' : '';
  const modelessChannelTypes = chantypes.includes('+') ? '+' : '';
  const sasl = server.offeredCaps.has('sasl') || server.caps.has('sasl') ? true : familyAnswers.sasl;
  return {
    ...familyAnswers,
    version: server.version,
    family: name,
    whox,
    // A real-host flag is a WHOX flag: without WHOX there is nothing to put it in.
    realHostWhoFlag: whox ? familyAnswers.realHostWhoFlag : null,
    listsNewChannels: elist.includes('C'),
    listsByUsers: elist.includes('U'),
    channelLimit: channelLimitOf(isupport),
    botMode: isupport.get('BOT') || null,
    localChannelTypes,
    modelessChannelTypes,
    commandPenalty: isupport.has('PENALTY'),
    accountFrom: server.caps.has('account-tag') ? 'account-tag' : 'whois',
    sasl,
    // A server that offers SASL or account tags knows accounts, whatever its family.
    accounts: familyAnswers.accounts || sasl === true || server.caps.has('account-tag'),
    tryAgainText:
      familyAnswers.tryAgainAdvice === null
        ? GENERIC_TRY_AGAIN_ADVICE
        : `on ${name ?? 'this server'}, ${familyAnswers.tryAgainAdvice}`,
    isLocalChannel: (channel) => localChannelTypes !== '' && localChannelTypes.includes(channel.charAt(0)),
    isModelessChannel: (channel) => modelessChannelTypes !== '' && modelessChannelTypes.includes(channel.charAt(0)),
  };
}

/** The profile of a server that has said nothing yet. */
export const UNKNOWN_SERVER: ServerProfile = buildServerProfile({
  version: '',
  isupport: new Map(),
  caps: new Set(),
  offeredCaps: new Set(),
});
