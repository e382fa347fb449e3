/**
 * The session state: what the connection knows about itself, kept from the server's own lines (as
 * irc-framework's networkinfo.js does). It only records; what the transport does about a line (start
 * OPER after the MOTD, reset the backoff on 001) is told by what {@link SessionState.apply} returns.
 */
import { casefold, parseCasemapping, type Casemapping } from './casemapping.js';
import type { IrcMessage, IrcSessionState } from './port.js';
import { buildServerProfile, UNKNOWN_SERVER, type ServerProfile } from './server-profile.js';

/** A line that moved the session on, for the transport to act on. */
export type SessionStep = 'registered' | 'motd-ended' | 'logged-in' | 'sasl-failed';

const DEFAULT_PREFIXES = [
  { mode: 'o', symbol: '@' },
  { mode: 'v', symbol: '+' },
];

export class SessionState implements IrcSessionState {
  connected = false;
  registered = false;
  nick: string;
  account: string | null = null;
  isOperator = false;
  lagged = false;
  server = '';
  serverVersion = '';
  isupport = new Map<string, string>();
  caps = new Set<string>();
  /** Capabilities the server offered (CAP LS, CAP NEW), without their values. */
  private readonly offeredCaps = new Set<string>();
  casemapping: Casemapping = 'rfc1459';
  prefixes: { mode: string; symbol: string }[] = [...DEFAULT_PREFIXES];
  /** The last nick folded, and how: {@link nickKey} folds again only when either changed. */
  private folded = { nick: '', casemapping: 'rfc1459' as Casemapping, key: '' };
  /** The profile as last built; null once a line changed what it is built from, until it is asked for. */
  private builtProfile: ServerProfile | null = UNKNOWN_SERVER;

  constructor(nick: string) {
    this.nick = nick;
  }

  /** The bot's nick folded with the network's casemapping, which nearly every line compares with. */
  get nickKey(): string {
    const { folded } = this;
    if (folded.nick !== this.nick || folded.casemapping !== this.casemapping) {
      this.folded = { nick: this.nick, casemapping: this.casemapping, key: casefold(this.nick, this.casemapping) };
    }
    return this.folded.key;
  }

  /**
   * What the server can do and how it answers (server-profile.ts): built again, when next asked for, after
   * RPL_MYINFO, the server's own RPL_VERSION, ISUPPORT or a CAP line.
   */
  get profile(): ServerProfile {
    this.builtProfile ??= buildServerProfile({
      version: this.serverVersion,
      isupport: this.isupport,
      caps: this.caps,
      offeredCaps: this.offeredCaps,
    });
    return this.builtProfile;
  }

  /** Whether `nick` is the bot's own. */
  isSelf(nick: string | undefined): boolean {
    return nick !== undefined && casefold(nick, this.casemapping) === this.nickKey;
  }

  /** A new connection, or none: everything learnt from the last one is forgotten. */
  reset(nick: string): void {
    this.connected = false;
    this.registered = false;
    this.nick = nick;
    this.account = null;
    this.isOperator = false;
    this.lagged = false;
    this.server = '';
    this.serverVersion = '';
    this.isupport.clear();
    this.caps.clear();
    this.offeredCaps.clear();
    this.builtProfile = UNKNOWN_SERVER;
  }

  /** Learn from one line; says when the line moved the session on. */
  apply(message: IrcMessage): SessionStep | undefined {
    const { params } = message;
    switch (message.command) {
      case '001':
        this.registered = true;
        this.nick = params[0] ?? this.nick;
        this.server = message.source?.nick ?? '';
        return 'registered';
      case '004': // RPL_MYINFO: me server version usermodes chanmodes
        this.serverVersion = params[2] ?? '';
        this.builtProfile = null;
        return undefined;
      case '351': // RPL_VERSION: me version.debuglevel server :comments
        // An attached client's 004 went by before the transport saw it: the VERSION its resync asks answers
        // (before its WHOIS names the server). Else only our own server's answer: a latency probe asks services too.
        if (this.serverVersion === '' && (this.server === '' || message.source?.nick === this.server)) {
          this.serverVersion = (params[1] ?? '').replace(/\.$/, '');
          this.builtProfile = null;
        }
        return undefined;
      case '005':
        this.applyIsupport(params.slice(1, -1));
        this.builtProfile = null;
        return undefined;
      case '376': // RPL_ENDOFMOTD
      case '422': // ERR_NOMOTD
        return 'motd-ended';
      case '900': // RPL_LOGGEDIN
        this.account = params[2] ?? null;
        return 'logged-in';
      case '330': // RPL_WHOISACCOUNT: me nick account :is logged in as — the bot's own WHOIS confirms a login
        // A server without SASL (ircd-hybrid, ngircd) never sends 900: an IDENTIFY's login shows here.
        if (!this.isSelf(params[1]) || !params[2] || params[2] === this.account) return undefined;
        this.account = params[2];
        return 'logged-in';
      case '901': // RPL_LOGGEDOUT
        this.account = null;
        return undefined;
      case '904':
      case '905':
        return 'sasl-failed';
      case '381': // RPL_YOUREOPER
        this.isOperator = true;
        return undefined;
      case 'NICK':
        if (this.isSelf(message.source?.nick)) this.nick = params[0] ?? this.nick;
        return undefined;
      case 'MODE':
        if (this.isSelf(params[0])) this.applyUserModes(params[1] ?? '');
        return undefined;
      case 'CAP':
        this.applyCap(params[1] ?? '', params.at(-1) ?? '');
        this.builtProfile = null;
        return undefined;
      default:
        return undefined;
    }
  }

  private applyIsupport(tokens: string[]): void {
    for (const token of tokens) {
      if (token.startsWith('-')) {
        this.isupport.delete(token.slice(1));
        continue;
      }
      const equals = token.indexOf('=');
      const key = equals < 0 ? token : token.slice(0, equals);
      const value = equals < 0 ? '' : token.slice(equals + 1);
      this.isupport.set(key, value);
      if (key === 'CASEMAPPING') this.casemapping = parseCasemapping(value);
      if (key === 'PREFIX') {
        const match = /^\(([^)]*)\)(.*)$/.exec(value);
        if (match && match[1]!.length === match[2]!.length) {
          this.prefixes = [...match[1]!].map((mode, index) => ({ mode, symbol: match[2]![index]! }));
        }
      }
    }
  }

  private applyUserModes(modes: string): void {
    let adding = true;
    for (const mode of modes) {
      if (mode === '+' || mode === '-') adding = mode === '+';
      else if (mode === 'o') this.isOperator = adding;
    }
  }

  private applyCap(subcommand: string, list: string): void {
    const names = list.split(' ').filter(Boolean);
    // LIST answers CAP LIST, asked when a registered connection is adopted.
    if (subcommand === 'ACK' || subcommand === 'LIST') {
      for (const name of names) {
        if (name.startsWith('-')) this.caps.delete(name.slice(1));
        else this.caps.add(name);
      }
    } else if (subcommand === 'LS' || subcommand === 'NEW') {
      for (const name of names) this.offeredCaps.add(name.split('=')[0]!);
    } else if (subcommand === 'DEL') {
      for (const name of names) {
        this.caps.delete(name);
        this.offeredCaps.delete(name);
      }
    }
  }
}
