/**
 * The two entities of the network model that point at each other: a user knows the channels the bot saw
 * them in, and a channel its members. Their slices (users.ts, channels.ts) keep and index them.
 */

export interface User {
  nick: string;
  ident: string | null;
  /** The host the network shows (a cloak or vhost, where it sets one). */
  host: string | null;
  /**
   * The host the user connects from, behind any cloak: only an operator sees it (InspIRCd's WHO flag `x`,
   * WHOIS 378). Null while unknown.
   */
  realHost: string | null;
  /** Only known when the network shows it (as an oper: WHOX %i or WHOIS 378). */
  ip: string | null;
  realname: string | null;
  account: string | null;
  server: string | null;
  away: boolean;
  isOperator: boolean;
  /** The IRC client's name from its CTCP VERSION reply (`irssi`, `WeeChat`, ...); null until known. */
  client: string | null;
  /** The client's version from the same reply, when it names one. */
  clientVersion: string | null;
  /** ISO 3166-1 alpha-2 country from the IP or the host; null when unknown. */
  countryCode: string | null;
  /** ISO time the bot first saw the user (the network does not say when they connected). */
  firstSeenAt: string;
  /** The channels the bot saw the user in (the same objects as the channels slice's). */
  channels: Set<Channel>;
  /**
   * The bot left a secret or private channel the user was in, so it no longer sees whether they are still
   * there: public answers leave the user out unless the bot sees them in a public channel.
   */
  inUnwatchedHiddenChannel: boolean;
}

export interface Channel {
  name: string;
  /** User count as the network reports it (LIST), or the member count where the bot is in it. */
  users: number;
  topic: string;
  topicSetBy: string | null;
  topicSetAt: string | null;
  createdAt: string | null;
  /** Channel modes without parameters that carry secrets (no key). */
  modes: string;
  /** Secret (+s), private (+p), or only known to the bot as an operator: never public. */
  hidden: boolean;
  /** Whether the bot is in the channel (then members are live). */
  joined: boolean;
  /**
   * Member → their prefixes (`@`, `+`, `@+` with multi-prefix). Keyed by the user object, which a
   * nick change keeps: a rename changes nothing here, and a line finds a member without comparing names.
   */
  members: Map<User, string>;
}
