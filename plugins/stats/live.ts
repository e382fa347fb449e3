/**
 * Live tracking: one handler per IRC event that changes what the model knows,
 * for the channels the bot is in (and, for QUIT/NICK/AWAY/ACCOUNT/CHGHOST,
 * every user it knows). Handlers read like the protocol they follow.
 */
import type { IrcMessage, IrcPort, NetworkModel, UserFields } from '../../lib/sdk.js';
import {
  RPL_CHANNELMODEIS,
  RPL_CREATIONTIME,
  RPL_ENDOFNAMES,
  RPL_NAMREPLY,
  RPL_TOPIC,
  RPL_TOPICWHOTIME,
} from './numerics.js';
import type { EventTap, ModeParameters } from './events.js';
import type { CollectorUnit, LineHandler } from './unit.js';

export interface LiveContext {
  irc: IrcPort;
  model: NetworkModel;
  /** Told of each change a line makes (events.ts), when anybody listens. */
  events?: EventTap;
}

type Handler = (message: IrcMessage, context: LiveContext) => void;

/** Channel modes that take a parameter, by ISUPPORT CHANMODES class (A, B always; C when setting). */
function modeTakesParameter(mode: string, adding: boolean, irc: IrcPort): 'list' | 'param' | 'prefix' | 'none' {
  if (irc.state.prefixes.some((prefix) => prefix.mode === mode)) return 'prefix';
  const [listModes = 'beI', alwaysModes = 'k', setModes = 'l'] = (irc.state.isupport.get('CHANMODES') ?? 'beI,k,l,')
    .split(',')
    .map((group) => group);
  if (listModes.includes(mode)) return 'list';
  if (alwaysModes.includes(mode)) return 'param';
  if (setModes.includes(mode) && adding) return 'param';
  return 'none';
}

/** Sort member prefix symbols by rank, as PREFIX lists them. */
function rankPrefixes(symbols: string, irc: IrcPort): string {
  const order = irc.state.prefixes.map((prefix) => prefix.symbol);
  return [...new Set(symbols)].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join('');
}

/** Split `@+nick` into its prefix symbols and the nick. */
export function splitMemberPrefix(entry: string, irc: IrcPort): { prefix: string; rest: string } {
  const symbols = new Set(irc.state.prefixes.map((prefix) => prefix.symbol));
  let index = 0;
  while (index < entry.length && symbols.has(entry[index]!)) index++;
  return { prefix: entry.slice(0, index), rest: entry.slice(index) };
}

/**
 * Whether `nick`, whose model key is `key`, is the bot. The model and the connection fold alike once the
 * model has the connection's casemapping, so the key is reused; before that, the connection folds the nick itself.
 */
export function isSelfKey(nick: string, key: string, irc: IrcPort, model: NetworkModel): boolean {
  const folded = irc.state.casemapping === model.casemapping ? key : irc.casefold(nick);
  return folded === irc.state.nickKey;
}

/** Apply a channel MODE change: member prefixes and the public mode string. */
export function applyChannelModes(
  channelName: string,
  modeText: string,
  parameters: string[],
  context: LiveContext,
): ModeParameters {
  const { irc, model } = context;
  const sorted: ModeParameters = { ranked: [], withoutMasks: [] };
  const channel = model.channels.get(channelName);
  if (!channel) return sorted;
  const modes = new Set(channel.modes.replace(/^\+/, ''));
  let adding = true;
  let next = 0;
  for (const mode of modeText) {
    if (mode === '+' || mode === '-') {
      adding = mode === '+';
      continue;
    }
    const kind = modeTakesParameter(mode, adding, irc);
    if (kind === 'prefix') {
      const nick = parameters[next++];
      if (!nick) continue;
      sorted.ranked.push(nick);
      sorted.withoutMasks.push(nick);
      const symbol = irc.state.prefixes.find((prefix) => prefix.mode === mode)!.symbol;
      const current = model.memberPrefix(channel.name, nick);
      if (current === undefined) continue;
      const updated = adding ? rankPrefixes(current + symbol, irc) : current.replace(symbol, '');
      model.setMemberPrefix(channelName, nick, updated);
    } else if (kind === 'list') {
      next++;
    } else {
      if (kind === 'param' && next < parameters.length) sorted.withoutMasks.push(parameters[next++]!);
      if (adding) modes.add(mode);
      else modes.delete(mode);
    }
  }
  const modeString = [...modes].sort().join('');
  model.upsertChannel(channel.name, {
    modes: modeString ? `+${modeString}` : '',
    hidden: modes.has('s') || modes.has('p'),
  });
  return sorted;
}

/**
 * The bot joined `channelName`. A channel LIST never showed may be secret: hidden until its modes (324) say otherwise,
 * asked now; a channel without modes (`+name`, the profile's `isModelessChannel`) is never secret, and has none to ask
 * (the server would answer 477).
 */
function joinedBySelf(channelName: string, channelKey: string, { irc, model }: LiveContext): void {
  if (irc.state.profile.isModelessChannel(channelName)) {
    model.upsertChannel(channelName, { joined: true, hidden: false, modes: '' }, channelKey);
    return;
  }
  const known = model.channels.byKey(channelKey);
  model.upsertChannel(channelName, { joined: true, hidden: known ? known.hidden : true }, channelKey);
  // A question, not paced output: the 324 answer is read by the handler below. Two hundred joins would
  // otherwise hold up the paced queue (HELP, CTCP) for minutes at the default pace.
  void irc
    .request({
      send: ['MODE', channelName],
      reply: () => false,
      end: (line) =>
        ['324', '403', '442', '477', '482'].includes(line.command) &&
        irc.casefold(line.params[1] ?? '') === irc.casefold(channelName),
      timeoutMs: 30000,
    })
    .catch(() => undefined);
}

// No PRIVMSG here: only activity counting reads one (activity.ts).
const handlers: Record<string, Handler> = {
  JOIN(message, { irc, model, events }) {
    const [channelName, account, realname] = message.params;
    const source = message.source;
    if (!channelName || !source) return;
    const { nick } = source;
    // Each name is folded once for the whole line.
    const userKey = model.fold(nick);
    const channelKey = model.fold(channelName);
    const self = isSelfKey(nick, userKey, irc, model);
    if (self) joinedBySelf(channelName, channelKey, { irc, model });
    const ident = source.ident || null;
    const host = source.host || null;
    // extended-join: JOIN #chan account :realname ("*" = not logged in)
    const fields: UserFields =
      account !== undefined
        ? { ident, host, account: account === '*' ? null : account, realname: realname ?? null }
        : { ident, host };
    model.upsertUser(nick, fields, userKey);
    model.addMember(channelName, nick, '', channelKey, userKey);
    if (events?.listening && !self) {
      const channel = model.channels.byKey(channelKey);
      const user = model.users.byKey(userKey);
      if (channel && user) events.joined(channel, user);
    }
  },

  PART(message, context) {
    const [channelName, reason] = message.params;
    const nick = message.source?.nick;
    if (channelName && nick) left(channelName, nick, reason ?? null, undefined, context);
  },

  KICK(message, context) {
    const [channelName, nick, reason] = message.params;
    if (channelName && nick) left(channelName, nick, reason ?? null, message.source?.nick ?? null, context);
  },

  QUIT(message, { irc, model, events }) {
    if (!message.source) return;
    const user = events?.listening ? model.users.get(message.source.nick) : undefined;
    // An operator may be shown another reason than the user's channels see.
    if (user) events!.quit(user, message.params[0] ?? null, !irc.state.isOperator);
    model.removeUser(message.source.nick);
  },

  KILL(message, { model, events }) {
    const [nick, reason] = message.params;
    if (!nick) return;
    const user = events?.listening ? model.users.get(nick) : undefined;
    if (user) events!.quit(user, reason ?? null, false, message.source?.nick ?? null);
    model.removeUser(nick);
  },

  NICK(message, { model, events }) {
    const [newNick] = message.params;
    if (!message.source || !newNick) return;
    const user = events?.listening ? model.users.get(message.source.nick) : undefined;
    if (user) events!.renamed(user, newNick);
    model.renameUser(message.source.nick, newNick);
  },

  MODE(message, context) {
    const [target, modeText = '', ...parameters] = message.params;
    if (!target || !/^[#&+!]/.test(target)) return;
    const sorted = applyChannelModes(target, modeText, parameters, context);
    const { events, model } = context;
    const channel = events?.listening ? model.channels.get(target) : undefined;
    if (channel) events!.modes(channel, message.source?.nick ?? null, modeText, parameters, sorted);
  },

  TOPIC(message, { model, events }) {
    const [channelName, topic = ''] = message.params;
    if (!channelName || !model.channels.get(channelName)) return;
    const by = message.source?.nick ?? null;
    const channel = model.upsertChannel(channelName, {
      topic,
      topicSetBy: by,
      topicSetAt: message.time.toISOString(),
    });
    if (events?.listening) events.topic(channel, topic, by);
  },

  AWAY(message, { model, events }) {
    const known = message.source ? model.users.get(message.source.nick) : undefined;
    if (!known) return;
    const text = message.params[0] ?? '';
    const away = text !== '';
    // away-notify repeats a user's AWAY when they join a channel: an event only when they go or come back.
    const changed = known.away !== away;
    const user = model.upsertUser(known.nick, { away });
    if (changed && events?.listening) events.away(user, away, away ? text : null);
  },

  ACCOUNT(message, { model, events }) {
    const [account] = message.params;
    if (message.source && model.users.get(message.source.nick)) {
      const name = !account || account === '*' ? null : account;
      const user = model.upsertUser(message.source.nick, { account: name });
      if (events?.listening) events.account(user, name);
    }
  },

  CHGHOST(message, { model }) {
    const [ident, host] = message.params;
    if (message.source && model.users.get(message.source.nick)) {
      model.upsertUser(message.source.nick, { ident: ident ?? null, host: host ?? null });
    }
  },

  /** `353 me = #chan :@alice +bob carol` (userhost-in-names gives nick!ident@host). */
  [RPL_NAMREPLY](message, context) {
    const { irc, model } = context;
    const channelName = message.params[2];
    const names = message.params[3] ?? '';
    if (!channelName) return;
    const channel = model.channels.get(channelName);
    if (!channel?.joined) return;
    for (const entry of names.split(' ').filter(Boolean)) {
      const { prefix, rest } = splitMemberPrefix(entry, irc);
      const bang = rest.indexOf('!');
      const at = rest.indexOf('@');
      const nick = bang > 0 ? rest.slice(0, bang) : rest;
      if (bang > 0 && at > bang) model.upsertUser(nick, { ident: rest.slice(bang + 1, at), host: rest.slice(at + 1) });
      model.addMember(channelName, nick, rankPrefixes(prefix, irc));
    }
  },

  /** The member count is now exact. */
  [RPL_ENDOFNAMES](message, { model }) {
    const channelName = message.params[1];
    const channel = channelName ? model.channels.get(channelName) : undefined;
    if (channel?.joined) model.upsertChannel(channel.name, { users: channel.members.size });
  },

  [RPL_TOPIC](message, { model }) {
    const [, channelName, topic = ''] = message.params;
    if (channelName && model.channels.get(channelName)) model.upsertChannel(channelName, { topic });
  },

  [RPL_TOPICWHOTIME](message, { model }) {
    const [, channelName, setter, time] = message.params;
    if (!channelName || !model.channels.get(channelName)) return;
    model.upsertChannel(channelName, {
      topicSetBy: setter ? setter.split('!')[0]! : null,
      topicSetAt: time ? new Date(Number(time) * 1000).toISOString() : null,
    });
  },

  /** The full mode string replaces what the model had. */
  [RPL_CHANNELMODEIS](message, context) {
    const [, channelName, modeText = '', ...parameters] = message.params;
    const channel = channelName ? context.model.channels.get(channelName) : undefined;
    if (!channel) return;
    context.model.upsertChannel(channel.name, { modes: '' });
    applyChannelModes(channel.name, modeText, parameters, context);
  },

  [RPL_CREATIONTIME](message, { model }) {
    const [, channelName, time] = message.params;
    if (channelName && time && model.channels.get(channelName)) {
      model.upsertChannel(channelName, { createdAt: new Date(Number(time) * 1000).toISOString() });
    }
  },
};

/**
 * `nick` parted `channelName`, or was kicked from it `by` someone: the bot itself leaves the channel's members
 * behind; anyone else leaves it, told to the events first (who may see it depends on the channel).
 */
function left(
  channelName: string,
  nick: string,
  reason: string | null,
  by: string | null | undefined,
  { irc, model, events }: LiveContext,
): void {
  const userKey = model.fold(nick);
  if (isSelfKey(nick, userKey, irc, model)) {
    leaveChannel(channelName, model);
    return;
  }
  const channelKey = model.fold(channelName);
  const channel = events?.listening ? model.channels.byKey(channelKey) : undefined;
  if (channel) events!.left(channel, nick, reason, by);
  model.removeMember(channelName, nick, channelKey, userKey);
}

/** The bot left: the members are no longer seen, but the others are still there until LIST says otherwise. */
function leaveChannel(channelName: string, model: NetworkModel): void {
  const channel = model.channels.get(channelName);
  if (!channel) return;
  model.clearMembers(channel.name, Math.max(0, channel.members.size - 1));
}

/** Feed one message to its handler, if it has one. */
export function track(message: IrcMessage, context: LiveContext): void {
  handlers[message.command]?.(message, context);
}

/** Live tracking as a unit of the collector: each handler of the table above, bound to the connection and model. */
export function liveUnit(context: LiveContext): CollectorUnit {
  // One context for every line: the handlers run for most lines the bot receives.
  const live: LiveContext = { irc: context.irc, model: context.model, events: context.events };
  const lines: Record<string, LineHandler> = {};
  for (const [command, handler] of Object.entries(handlers)) lines[command] = (message) => handler(message, live);
  return { name: 'live tracking', lines };
}
