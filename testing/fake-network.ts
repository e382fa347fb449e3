/**
 * A small IRC network as a fake server answers for it: its servers, users and channels, and the answers to what
 * the collector asks (LUSERS, LINKS, MAP, LIST, WHO and WHOX, STATS P, WHOIS, MODE of a channel, TIME and VERSION
 * of a server), worded as InspIRCd 3 words them on the test network. The network is plain data: a test changes
 * it (a server splits off, a user connects) and the next answers follow.
 *
 * ```ts
 * const network = fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] });
 * ```
 */
import { casefold } from '../lib/irc/casemapping.js';

export interface FakeServerEntry {
  name: string;
  /** The server it links to; none for the hub, the one the bot is on. */
  uplink?: string;
  description?: string;
  /** Its software and version, as VERSION and an operator's MAP give it; default `InspIRCd-3.15.0`. */
  software?: string;
  /** The latency probes it answers (services answer VERSION only); default both. */
  answers?: readonly ('TIME' | 'VERSION')[];
}

export interface FakeUser {
  nick: string;
  ident?: string;
  host?: string;
  ip?: string;
  server: string;
  realname?: string;
  /** The services account; none when absent. */
  account?: string;
  /** The host behind a cloak: what an operator's WHO with the real-host flag shows. */
  realHost?: string;
  away?: boolean;
  operator?: boolean;
  /** +i: a non-operator's WHO does not show them, nor LUSERS among the visible users. */
  invisible?: boolean;
}

export interface FakeChannel {
  name: string;
  users: number;
  topic?: string;
  /** As LIST shows them: `+nt`, or with parameters, `+knt key`. */
  modes?: string;
}

export interface FakeNetwork {
  /** The servers, the hub (the bot's server) first. */
  servers: FakeServerEntry[];
  users: FakeUser[];
  channels: FakeChannel[];
  /** Whether LIST rows start with the channel's modes (`[+nt] topic`), as InspIRCd's modesinlist shows them. */
  listModes: boolean;
  /** The most users LUSERS says the network had. */
  maxUsers: number;
}

/** What a network answer needs to know of the connection asking. */
export interface Asker {
  /** The bot's nick. */
  nick: string;
  isOperator: boolean;
}

/**
 * A network: the servers `hub.test.net` (the bot's), `leaf.test.net` and `services.test.net` unless given, no
 * users and no channels unless given, modes shown in LIST. The bot itself is a user like any other: list it.
 */
export function fakeNetwork(network: Partial<FakeNetwork> = {}): FakeNetwork {
  return {
    servers: network.servers ?? [
      { name: 'hub.test.net', description: 'TestNet hub' },
      { name: 'leaf.test.net', uplink: 'hub.test.net', description: 'TestNet leaf' },
      // It answers both latency probes, so that no probe waits for its timeout (Atheme answers VERSION alone).
      { name: 'services.test.net', uplink: 'hub.test.net', description: 'TestNet Services' },
    ],
    users: network.users ?? [],
    channels: network.channels ?? [],
    listModes: network.listModes ?? true,
    maxUsers: network.maxUsers ?? network.users?.length ?? 0,
  };
}

/** The name of the server the bot is on. */
export const hubOf = (network: FakeNetwork): string => network.servers[0]?.name ?? 'irc.test';

/** The lines the network answers `line` (a line the bot wrote) with; null when it does not answer it. */
export function networkAnswer(network: FakeNetwork, line: string, asker: Asker): string[] | null {
  const [command = '', ...params] = line.split(' ');
  const answer = ANSWERS[command.toUpperCase()];
  return answer ? answer(network, params, asker, `:${hubOf(network)}`) : null;
}

type Answer = (network: FakeNetwork, params: string[], asker: Asker, from: string) => string[] | null;

const ANSWERS: Record<string, Answer> = {
  LUSERS: lusers,
  LINKS: links,
  MAP: map,
  LIST: list,
  WHO: who,
  STATS: stats,
  WHOIS: whois,
  MODE: channelModes,
  TIME: (network, [server = ''], asker) => probe(network, server, 'TIME', asker),
  VERSION: (network, [server], asker) => (server ? probe(network, server, 'VERSION', asker) : null),
};

function lusers(network: FakeNetwork, _params: string[], { nick }: Asker, from: string): string[] {
  const total = network.users.length;
  const invisible = network.users.filter((user) => user.invisible).length;
  const servers = network.servers.length;
  const local = network.users.filter((user) => user.server === hubOf(network)).length;
  return [
    `${from} 251 ${nick} :There are ${total - invisible} users and ${invisible} invisible on ${servers} servers`,
    `${from} 252 ${nick} ${network.users.filter((user) => user.operator).length} :operator(s) online`,
    `${from} 254 ${nick} ${network.channels.length} :channels formed`,
    `${from} 255 ${nick} :I have ${local} clients and ${servers - 1} servers`,
    `${from} 265 ${nick} :Current local users: ${local}  Max: ${local}`,
    `${from} 266 ${nick} :Current global users: ${total}  Max: ${Math.max(total, network.maxUsers)}`,
  ];
}

/** The hops from the hub to `server`. */
function hopsOf(network: FakeNetwork, server: FakeServerEntry): number {
  let hops = 0;
  for (let at = server; at.uplink; hops++) {
    const uplink = network.servers.find((candidate) => candidate.name === at.uplink);
    if (!uplink) break;
    at = uplink;
  }
  return hops;
}

function links(network: FakeNetwork, _params: string[], { nick }: Asker, from: string): string[] {
  return [
    ...network.servers.map(
      (server) =>
        `${from} 364 ${nick} ${server.name} ${server.uplink ?? server.name} :${hopsOf(network, server)} ${server.description ?? ''}`,
    ),
    `${from} 365 ${nick} * :End of /LINKS list.`,
  ];
}

function map(network: FakeNetwork, _params: string[], { nick, isOperator }: Asker, from: string): string[] {
  const total = Math.max(1, network.users.length);
  const rows = network.servers.map((server, index) => {
    const users = network.users.filter((user) => user.server === server.name).length;
    const tree = hopsOf(network, server) === 0 ? '' : `${'  '.repeat(hopsOf(network, server) - 1)}|-`;
    const id = isOperator ? ` (${String(index + 1).padStart(3, '0')} ${server.software ?? 'InspIRCd-3.15.0'})` : '';
    return `${from} 015 ${nick} :${tree}${server.name}${id}    ${users} [${((100 * users) / total).toFixed(2)}%] [Up: 39s]`;
  });
  return [...rows, `${from} 017 ${nick} :End of /MAP`];
}

/** Whether `channel` passes a LIST's filter: channel names (`#a,#b`) or user counts (`<2`, `>1,<3`). */
function listed(channel: FakeChannel, filter: string | undefined): boolean {
  if (filter === undefined) return true;
  if (/^[#&]/.test(filter))
    return filter.split(',').some((name) => casefold(name, 'rfc1459') === casefold(channel.name, 'rfc1459'));
  return filter.split(',').every((condition) => {
    const bound = Number(condition.slice(1));
    if (condition.startsWith('<')) return channel.users < bound;
    if (condition.startsWith('>')) return channel.users > bound;
    return true;
  });
}

function list(network: FakeNetwork, [filter]: string[], { nick }: Asker, from: string): string[] | null {
  // Channels formed lately (ELIST C): the network does not know when its channels formed; a test says.
  if (filter?.startsWith('C')) return null;
  const rows = network.channels
    .filter((channel) => listed(channel, filter))
    .map((channel) => {
      const modes = network.listModes && channel.modes ? `[${channel.modes}] ` : '';
      return `${from} 322 ${nick} ${channel.name} ${channel.users} :${modes}${channel.topic ?? ''}`;
    });
  return [`${from} 321 ${nick} Channel :Users Name`, ...rows, `${from} 323 ${nick} :End of channel list.`];
}

/** The order servers send WHOX fields in, whatever order they were asked in. */
const WHOX_ORDER = 'tcuihsnfdlaor';

/** The users `mask` matches: every user (`*`), those whose nick starts so (`a*`), or with flag `s`, a server's. */
function matching(network: FakeNetwork, mask: string, flags: string): FakeUser[] {
  if (flags.includes('s')) return network.users.filter((user) => user.server.toLowerCase() === mask.toLowerCase());
  if (mask === '*') return network.users;
  const prefix = casefold(mask.replace(/\*$/, ''), 'rfc1459');
  return network.users.filter((user) => casefold(user.nick, 'rfc1459').startsWith(prefix));
}

function who(network: FakeNetwork, [mask = '*', options]: string[], asker: Asker, from: string): string[] {
  const [flags = '', fields = '', token = ''] =
    /^([a-z]*)(?:%([a-z]+)(?:,(\d+))?)?$/.exec(options ?? '')?.slice(1) ?? [];
  // A non-operator does not see invisible users (the bot sees itself).
  const users = matching(network, mask, flags).filter(
    (user) => asker.isOperator || !user.invisible || casefold(user.nick, 'rfc1459') === casefold(asker.nick, 'rfc1459'),
  );
  const end = `${from} 315 ${asker.nick} ${mask} :End of /WHO list.`;
  if (!options?.includes('%')) {
    const rows = users.map(
      (user) =>
        `${from} 352 ${asker.nick} * ${user.ident ?? user.nick} ${user.host ?? 'host.example'} ${user.server} ${user.nick} ${whoFlags(user)} :0 ${user.realname ?? user.nick}`,
    );
    return [...rows, end];
  }
  const realHosts = flags.includes('x');
  const rows = users.map((user) => {
    const values: Record<string, string> = {
      t: token,
      c: '*',
      u: user.ident ?? user.nick,
      i: asker.isOperator ? (user.ip ?? '127.0.0.1') : '255.255.255.255',
      h: realHosts ? (user.realHost ?? user.host ?? 'host.example') : (user.host ?? 'host.example'),
      s: user.server,
      n: user.nick,
      f: whoFlags(user),
      a: user.account ?? '0',
      r: user.realname ?? user.nick,
    };
    const asked = [...WHOX_ORDER].filter((field) => fields.includes(field)).map((field) => values[field] ?? '');
    return `${from} 354 ${asker.nick} ${asked.slice(0, -1).join(' ')} :${asked.at(-1) ?? ''}`;
  });
  return [...rows, end];
}

function whoFlags(user: FakeUser): string {
  return `${user.away ? 'G' : 'H'}${user.operator ? '*' : ''}`;
}

function stats(network: FakeNetwork, [letter]: string[], { nick }: Asker, from: string): string[] | null {
  if (letter !== 'P') return null;
  const operators = network.users.filter((user) => user.operator);
  return [
    ...operators.map(
      (user) =>
        `${from} 249 ${nick} :${user.nick} (${user.ident ?? user.nick}@${user.host ?? 'host.example'}) Idle: 5s`,
    ),
    `${from} 249 ${nick} :${operators.length} OPER(s)`,
    `${from} 219 ${nick} P :End of /STATS report`,
  ];
}

/** `WHOIS nick` or `WHOIS server nick`: who the user is, their server and account; 401 for a nick not there. */
function whois(network: FakeNetwork, params: string[], { nick }: Asker, from: string): string[] {
  const target = params.at(-1) ?? '';
  const user = network.users.find((candidate) => casefold(candidate.nick, 'rfc1459') === casefold(target, 'rfc1459'));
  if (!user)
    return [
      `${from} 401 ${nick} ${target} :No such nick/channel`,
      `${from} 318 ${nick} ${target} :End of /WHOIS list.`,
    ];
  const server = network.servers.find((candidate) => candidate.name === user.server);
  return [
    `${from} 311 ${nick} ${user.nick} ${user.ident ?? user.nick} ${user.host ?? 'host.example'} * :${user.realname ?? user.nick}`,
    `${from} 312 ${nick} ${user.nick} ${user.server} :${server?.description ?? ''}`,
    ...(user.account ? [`${from} 330 ${nick} ${user.nick} ${user.account} :is logged in as`] : []),
    `${from} 318 ${nick} ${user.nick} :End of /WHOIS list.`,
  ];
}

/** `MODE #channel`: its modes without their parameters; 403 for a channel not there. Nothing for a user's modes. */
function channelModes(
  network: FakeNetwork,
  [target = '', ...rest]: string[],
  { nick }: Asker,
  from: string,
): string[] | null {
  if (!/^[#&]/.test(target) || rest.length > 0) return null;
  const channel = network.channels.find(
    (candidate) => casefold(candidate.name, 'rfc1459') === casefold(target, 'rfc1459'),
  );
  if (!channel) return [`${from} 403 ${nick} ${target} :No such channel`];
  return [`${from} 324 ${nick} ${channel.name} ${(channel.modes ?? '+').split(' ')[0]}`];
}

/** A latency probe: the server answers it if it is linked and answers that probe. */
function probe(network: FakeNetwork, name: string, kind: 'TIME' | 'VERSION', { nick }: Asker): string[] | null {
  const server = network.servers.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
  if (!server) return [`:${hubOf(network)} 402 ${nick} ${name} :No such server`];
  if (!(server.answers ?? ['TIME', 'VERSION']).includes(kind)) return null;
  return kind === 'TIME'
    ? [`:${server.name} 391 ${nick} ${server.name} :Sat Nov 21 2026 15:55:12`]
    : [`:${server.name} 351 ${nick} ${server.software ?? 'InspIRCd-3.15.0'}. ${server.name} :`];
}
