/**
 * The IRC transport port: the narrow, typed surface plugins use to talk to the
 * network. Each client library (irc-framework, matrix-org-irc) gets one adapter
 * implementing it; plugins never see the library.
 */
import type { Casemapping } from './casemapping.js';
import type { LineOptions } from './pacer.js';
import type { ServerProfile } from './server-profile.js';

/** Where a line came from: a user (`nick!ident@host`) or a server (`nick` is its name). */
export interface IrcSource {
  nick: string;
  ident: string;
  host: string;
}

/** One parsed line from the server. */
export interface IrcMessage {
  /** Upper-case command word, or the three-digit numeric (`001`, `354`). */
  command: string;
  params: string[];
  source: IrcSource | null;
  /** IRCv3 message tags (`account`, `time`, ...), unescaped. */
  tags: Readonly<Record<string, string>>;
  /** The `server-time` tag when present, else the time the line was received. */
  time: Date;
}

/** What the connection knows about itself, kept up to date from the server's lines. */
export interface IrcSessionState {
  readonly connected: boolean;
  readonly registered: boolean;
  /** The bot's current nick. */
  readonly nick: string;
  /** The bot's nick folded with the network's casemapping (folded again only when either changes). */
  readonly nickKey: string;
  /** Whether `nick` is the bot's own, folded with the network's casemapping. */
  isSelf(nick: string | undefined): boolean;
  /**
   * The account the bot is logged in to (RPL_LOGGEDIN 900, or RPL_WHOISACCOUNT 330 in a WHOIS of itself on a
   * server without SASL), null if none.
   */
  readonly account: string | null;
  readonly isOperator: boolean;
  /**
   * Whether the server holds the bot's lines: a reply came seconds after its request's turn, as InspIRCd's fake
   * lag holds a plain user's (the transport's read gauge, read-gauge.ts). Optional work that costs the server
   * (a LIST of the new channels) is then left out.
   */
  readonly lagged: boolean;
  /** The server the bot is connected to (from 001/004). */
  readonly server: string;
  /**
   * The server's software and version as RPL_MYINFO (004) names it (`InspIRCd-3`), or for an attached
   * client, whose 004 went by, its RPL_VERSION (351); empty until then.
   */
  readonly serverVersion: string;
  /** ISUPPORT tokens (`CASEMAPPING` → `rfc1459`, `WHOX` → ``). */
  readonly isupport: ReadonlyMap<string, string>;
  /** IRCv3 capabilities that were acknowledged. */
  readonly caps: ReadonlySet<string>;
  readonly casemapping: Casemapping;
  /** Member prefixes from ISUPPORT PREFIX, highest rank first: `[{mode: 'o', symbol: '@'}, ...]`. */
  readonly prefixes: readonly { mode: string; symbol: string }[];
  /**
   * What the server can do and how it answers, from its version, ISUPPORT and CAPs (server-profile.ts): every
   * question about what one server software does differently is asked of it.
   */
  readonly profile: ServerProfile;
}

export interface IrcEvents {
  /** Every line from the server, after the session state has been updated from it. */
  message: [message: IrcMessage];
  /** Registration finished, OPER and bot mode attempted: time to sync. Fires after every (re)connect. */
  ready: [];
  disconnected: [reason: string];
}

export type IrcEventName = keyof IrcEvents;
export type Unsubscribe = () => void;

export interface IrcRequest {
  /** The line to send, as command and parameters. */
  send: string[];
  /**
   * More lines of the same command sent right after {@link send}, as one request whose replies come back to
   * back (`LIST` by name, a few hundred channels in several lines): `end` must tell the last reply's end, and
   * count from nothing again each time the lines are written ({@link onSent}: a request the server refused
   * with 263 is written again).
   */
  more?: string[][];
  /** Lines that belong to the reply and are collected (or handed to {@link onReply}). */
  reply: (message: IrcMessage) => boolean;
  /**
   * Takes each reply line as it arrives, instead of collecting it: a big reply (WHO, LIST) is then
   * worked through as it comes, in the order of the lines around it, and never held whole.
   */
  onReply?: (message: IrcMessage) => void;
  /** The line that ends the reply (collected too). */
  end: (message: IrcMessage) => boolean;
  /**
   * How long the reply may take from the request's turn (default 15000 ms): when its line is written, or, if a
   * request written before it is unanswered then, when the one just before it is answered or given up on (a
   * server answers a client's lines in order, and may hold each behind the penalty of the one before: see
   * `RequestLane` in requests.ts).
   */
  timeoutMs?: number;
  /**
   * Runs when the line is written, which may be later than the request was made (requests take turns,
   * see `REQUESTS_IN_FLIGHT` in requests.ts): a round trip is timed from here.
   */
  onSent?: () => void;
  /**
   * Runs when the request's turn comes (see {@link timeoutMs}): the time from here to its end is what the
   * server spent on it, holding it behind its penalties included, without the replies written before it.
   */
  onTurn?: () => void;
  /** Goes before other requests, as an answer to a person does ({@link LineOptions.urgent}): a lookup a command waits for. */
  urgent?: boolean;
  /**
   * Answered by another server (`TIME <server>`, `WHOIS nick nick`): how long its answer takes says nothing of how
   * fast the bot's own server reads the bot's lines ({@link IrcSessionState.lagged}).
   */
  remote?: boolean;
  /**
   * Never in flight beside another serial request of the same command. For a command whose reply lines do
   * not say which request they answer (LIST, LUSERS, LINKS, STATS): two such requests out at once would each
   * take both replies' lines, and the first reply's end would end both. One that timed out keeps its turn
   * until its late end comes (or as long again), taking its lines unused.
   */
  serial?: boolean;
}

export interface IrcPort {
  readonly state: IrcSessionState;
  on<E extends IrcEventName>(event: E, listener: (...args: IrcEvents[E]) => void): Unsubscribe;
  /** Queue a line; the queue is paced so the bot is never disconnected for flooding. */
  send(command: string, ...params: string[]): void;
  /**
   * `PRIVMSG target :text`, split into lines that fit. `onSent` runs when the last of them leaves the paced
   * send queue (not at all if the connection drops first): a question whose answer is waited for is timed
   * from there, not from the queue.
   */
  privmsg(target: string, text: string, onSent?: () => void): void;
  /** `options` as {@link LineOptions}, for each line the text is split into. */
  notice(target: string, text: string, options?: LineOptions): void;
  /**
   * `PRIVMSG target :\x01TYPE text\x01`. `onSent` runs when the line leaves the paced send queue (not at all
   * if the connection drops first), for a caller that sends its next request only then.
   */
  ctcpRequest(target: string, type: string, text?: string, onSent?: () => void): void;
  /** `NOTICE target :\x01TYPE text\x01` */
  ctcpReply(target: string, type: string, text: string): void;
  /**
   * Send a line and collect its reply up to the end line; rejects on timeout or disconnect. Requests are
   * not paced as other lines are: they take turns, a few unanswered at a time.
   */
  request(request: IrcRequest): Promise<IrcMessage[]>;
  /** Fold a nick or channel with the network's CASEMAPPING. */
  casefold(name: string): string;
}

/** What the host needs beyond the plugins' view: lifecycle. */
export interface IrcTransport extends IrcPort {
  /** Whether the connection was handed over by another bot (attach), which owns it. */
  readonly attached: boolean;
  /** Queue one line as it is, never split (a CTCP answer must stay whole), with {@link LineOptions}. */
  sendLine(command: string, params: readonly string[], options?: LineOptions): void;
  connect(): void;
  /** Send QUIT (unpaced), close the connection and stop reconnecting. */
  quit(message: string): Promise<void>;
}
