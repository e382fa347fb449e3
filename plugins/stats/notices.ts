/**
 * Server notices an operator asks for: every client that connects or exits, anywhere on the network,
 * and every link that splits or joins. With them the model follows users the bot shares no channel
 * with as they come and go, instead of at the next WHO; on a network of 50,000 users where fifty
 * connect and fifty quit every second, a minute between two WHO rounds would be thousands of users
 * wrong. Each server software words them its own way: the server profile's `serverNotices` says which
 * snomasks bring them and how they are worded (for clients, nick changes where the software's module for them
 * is loaded, channels formed, and links); where it knows none, none are asked for, and WHO rounds alone keep
 * users right (and LISTs the channels).
 */
import type { IrcMessage, IrcPort, NetworkModel, ServerNoticeWording } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import type { EventTap } from './events.js';
import { FormedChannels } from './list.js';
import type { CollectorUnit } from './unit.js';

/** Ask the server for client and link notices, where the bot is an operator on a server whose notices are known. */
export function requestNotices(irc: IrcPort): void {
  const notices = irc.state.isOperator ? irc.state.profile.serverNotices : null;
  if (notices) irc.send('MODE', irc.state.nick, '+s', notices.modes);
}

/** A client that connected (with what the notice tells of it) or exited, as a server notice says. */
export type ClientNotice =
  | {
      kind: 'connect';
      nick: string;
      ident: string;
      /** The host it connected from; a cloak or vhost comes later, so this is its real host. */
      host: string;
      ip: string | null;
      realname: string;
      server: string;
    }
  /** `reason`: the quit message, where the notice says it. */
  | { kind: 'exit'; nick: string; reason: string | null }
  | { kind: 'nick'; from: string; to: string }
  /** A channel formed by its first member's JOIN. */
  | { kind: 'channel'; name: string };

/**
 * The client notice `message` is, in the server software's `wording`, if it is one: a NOTICE from a server (no
 * ident, a dot in its name).
 */
export function parseClientNotice(message: IrcMessage, wording: ServerNoticeWording): ClientNotice | null {
  if (message.command !== 'NOTICE' || !message.source) return null;
  const { nick: from, ident } = message.source;
  if (ident !== '' || !from.includes('.')) return null;
  const text = message.params.at(-1) ?? '';
  if (!text.startsWith('*** ')) return null;
  const connect = wording.connect.exec(text)?.groups;
  if (connect) {
    const { server, nick, ident: user, host, ip, realname } = connect;
    return {
      kind: 'connect',
      nick: nick!,
      ident: user!,
      host: host!,
      ip: ip && ip !== '0.0.0.0' && ip !== '255.255.255.255' ? ip : null,
      realname: realname!,
      server: server ?? from,
    };
  }
  const exit = wording.exit.exec(text)?.groups;
  if (exit) return { kind: 'exit', nick: exit.nick!, reason: exit.reason ?? null };
  const nick = wording.nick.exec(text)?.groups;
  if (nick) return { kind: 'nick', from: nick.from!, to: nick.to! };
  const channel = wording.channel.exec(text)?.groups;
  return channel ? { kind: 'channel', name: channel.channel! } : null;
}

/**
 * Apply a client notice to the model; returns the notice, or null for any other line. A channel formed is left to
 * the caller (`FormedChannels` in list.ts), which knows the LISTs under way. A connect under a nick the model
 * still has means its previous holder is gone (the bot missed it leaving): the new client is a new user. The
 * host shown to others (a cloak) is not in the notice: WHO gives it at the next round.
 */
export function trackClientNotice(
  message: IrcMessage,
  model: NetworkModel,
  wording: ServerNoticeWording,
  events?: EventTap,
): ClientNotice | null {
  const notice = parseClientNotice(message, wording);
  if (!notice) return null;
  // The events are told of a user the model has (a QUIT the bot saw first told of it already).
  const tell = events?.listening ? events : undefined;
  if (notice.kind === 'exit') {
    const user = tell && model.users.get(notice.nick);
    // A server notice is for operators: its reason may be one the user's channels did not see.
    if (user) tell!.quit(user, notice.reason, false);
    model.removeUser(notice.nick);
    return notice;
  }
  if (notice.kind === 'nick') {
    const user = tell && model.users.get(notice.from);
    if (user) tell!.renamed(user, notice.to);
    model.renameUser(notice.from, notice.to);
    return notice;
  }
  if (notice.kind === 'channel') return notice;
  const key = model.fold(notice.nick);
  const previous = model.users.byKey(key);
  if (previous) {
    tell?.quit(previous, null, false);
    model.removeUser(notice.nick, key);
  }
  const user = model.upsertUser(
    notice.nick,
    { ident: notice.ident, realHost: notice.host, ip: notice.ip, realname: notice.realname, server: notice.server },
    key,
  );
  tell?.connected(user);
  return notice;
}

/**
 * Client notices as a unit of the collector: asked for at each connection, applied to the model as they come
 * (while connected and ready), the users they bring counted as seen by a WHO round under way, and the channels
 * they say were formed handed to {@link FormedChannels}.
 */
export function clientNoticesUnit(context: CollectorContext): CollectorUnit {
  const { irc, model, connection, events } = context;
  // The connection's LIST bookkeeping is made anew at each connection.
  const formed = new FormedChannels(context, () => connection.sync.list);
  return {
    name: 'client notices',
    lines: {
      NOTICE(message) {
        const wording = connection.ready ? irc.state.profile.serverNotices : null;
        const notice = wording ? trackClientNotice(message, model, wording, events) : null;
        if (notice === null || notice.kind === 'exit') return;
        if (notice.kind === 'channel') formed.note(notice.name);
        else connection.sync.whoRound?.add(model.fold(notice.kind === 'nick' ? notice.to : notice.nick));
      },
    },
    onReady: () => requestNotices(irc),
    onDisconnected: () => formed.clear(),
  };
}
