/**
 * Server notices an operator asks for: every client that connects or exits, anywhere on the network,
 * and every link that splits or joins. With them the model follows users the bot shares no channel
 * with as they come and go, instead of at the next WHO; on a network of 50,000 users where fifty
 * connect and fifty quit every second, a minute between two WHO rounds would be thousands of users
 * wrong. Each server words them its own way: only InspIRCd's are known (asked with snomasks c, C, q,
 * Q for clients, n, N for nick changes where the seenicks module is loaded, j, J for channels formed
 * where the chancreate module is, and l, L for links); elsewhere none are asked for, and WHO rounds
 * alone keep users right (and LISTs the channels).
 */
import type { IrcMessage, IrcPort, NetworkModel } from '../../lib/sdk.js';

/** The snomasks to ask for on a server whose software RPL_MYINFO names; null where its letters are not known. */
export function noticeModes(serverVersion: string): string | null {
  return /^InspIRCd-[34]\b/.test(serverVersion) ? '+cCqQnNlLjJ' : null;
}

/** Ask the server for client and link notices, where the bot is an operator on a server whose letters are known. */
export function requestNotices(irc: IrcPort): void {
  const modes = irc.state.isOperator ? noticeModes(irc.state.serverVersion) : null;
  if (modes) irc.send('MODE', irc.state.nick, '+s', modes);
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
  | { kind: 'exit'; nick: string }
  | { kind: 'nick'; from: string; to: string }
  /** A channel formed by its first member's JOIN. */
  | { kind: 'channel'; name: string };

// InspIRCd 3 (core_user, snomasks c, C, q, Q):
//   *** CONNECT: Client connecting on port 6667 (class main): nick!ident@host (ip) [realname]
//   *** REMOTECONNECT: Client connecting at leaf.example: nick!ident@host (ip) [realname]
//   *** QUIT: Client exiting: nick!ident@host (ip) [reason]
//   *** REMOTEQUIT: Client exiting on server leaf.example: nick!ident@host (ip) [reason]
// A server without the seenicks or chancreate module answers their letters with 501, and applies the others.
const CONNECT =
  /^\*\*\* (?:CONNECT: Client connecting on port \d+(?: \(class [^)]*\))?|REMOTECONNECT: Client connecting at (\S+)): ([^!\s]+)!([^@\s]+)@(\S+) \(([^)]*)\) \[(.*)\]$/;
const EXIT = /^\*\*\* (?:QUIT: Client exiting|REMOTEQUIT: Client exiting on server \S+): ([^!\s]+)!/;
// m_seenicks (snomasks n, N): *** NICK: User old changed their nickname to new (REMOTENICK for another server's)
const NICK = /^\*\*\* (?:REMOTE)?NICK: User (\S+) changed their nickname to (\S+)$/;
// m_chancreate (snomasks j, J), as InspIRCd 3 words them:
//   *** CHANCREATE: Channel #name created by nick!ident@host
//   *** REMOTECHANCREATE: From leaf.example: Channel #name created by nick!ident@host
const CHANNEL = /^\*\*\* (?:CHANCREATE|REMOTECHANCREATE: From \S+): Channel (\S+) created by /;

/** The client notice `message` is, if it is one: a NOTICE from a server (no ident, a dot in its name). */
export function parseClientNotice(message: IrcMessage): ClientNotice | null {
  if (message.command !== 'NOTICE' || !message.source) return null;
  const { nick: from, ident } = message.source;
  if (ident !== '' || !from.includes('.')) return null;
  const text = message.params.at(-1) ?? '';
  if (!text.startsWith('*** ')) return null;
  const connect = CONNECT.exec(text);
  if (connect) {
    const [, remoteServer, nick, user, host, ip, realname] = connect;
    return {
      kind: 'connect',
      nick: nick!,
      ident: user!,
      host: host!,
      ip: ip && ip !== '0.0.0.0' && ip !== '255.255.255.255' ? ip : null,
      realname: realname!,
      server: remoteServer ?? from,
    };
  }
  const exit = EXIT.exec(text);
  if (exit) return { kind: 'exit', nick: exit[1]! };
  const nick = NICK.exec(text);
  if (nick) return { kind: 'nick', from: nick[1]!, to: nick[2]! };
  const channel = CHANNEL.exec(text);
  return channel ? { kind: 'channel', name: channel[1]! } : null;
}

/**
 * Apply a client notice to the model; returns the notice, or null for any other line. A channel formed is left to
 * the caller (`FormedChannels` in list.ts), which knows the LISTs under way. A connect under a nick the model
 * still has means its previous holder is gone (the bot missed it leaving): the new client is a new user. The
 * host shown to others (a cloak) is not in the notice: WHO gives it at the next round.
 */
export function trackClientNotice(message: IrcMessage, model: NetworkModel): ClientNotice | null {
  const notice = parseClientNotice(message);
  if (!notice) return null;
  if (notice.kind === 'exit') {
    model.removeUser(notice.nick);
    return notice;
  }
  if (notice.kind === 'nick') {
    model.renameUser(notice.from, notice.to);
    return notice;
  }
  if (notice.kind === 'channel') return notice;
  const key = model.fold(notice.nick);
  if (model.users.byKey(key)) model.removeUser(notice.nick, key);
  model.upsertUser(
    notice.nick,
    { ident: notice.ident, realHost: notice.host, ip: notice.ip, realname: notice.realname, server: notice.server },
    key,
  );
  return notice;
}
