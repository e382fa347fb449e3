/**
 * A fake IRC connection for unit tests: the real transport logic (state,
 * pacing, requests) with the socket replaced by two arrays. Tests feed it
 * server lines and read what it sent; lines are parsed by the bot's own parser,
 * as both adapters parse them.
 */
import { parseLine } from '../lib/irc/line-parser.js';
import { BaseTransport, type TransportOptions } from '../lib/irc/transport.js';
import { createLogger, type Logger } from '../lib/logger.js';

export const fakeOptions: TransportOptions = {
  host: '127.0.0.1',
  port: 6667,
  tls: false,
  tlsVerify: true,
  nick: 'DataBot',
  username: 'databot',
  realname: 'test',
  pacing: { burst: 1000, intervalMs: 10 },
  reconnect: { minMs: 10, maxMs: 50 },
};

/** The ISUPPORT tokens a fake server announces unless told otherwise. */
export const DEFAULT_ISUPPORT = 'CASEMAPPING=rfc1459 PREFIX=(qaohv)~&@%+ CHANMODES=beI,k,l,imnpst WHOX BOT=B';

/** What happened on the connection: a line the bot wrote, a line it received, or the connection opened or closed. */
export type ConnectionEvent =
  { kind: 'written'; line: string } | { kind: 'received'; line: string } | { kind: 'opened' } | { kind: 'closed' };

/** Which capability a message tag comes with; a server sends a tag only to a client that was granted it. */
function capOfTag(tag: string): string {
  if (tag === 'account') return 'account-tag';
  if (tag === 'time') return 'server-time';
  if (tag === 'batch') return 'batch';
  return 'message-tags';
}

export class FakeTransport extends BaseTransport {
  /** Lines the bot wrote, in order. */
  readonly sent: string[] = [];
  opened = 0;
  /**
   * Whether the tags of a line received are kept only when the connection was granted the capability that
   * brings them (as a server sends them), rather than always; the plugin harness sets it.
   */
  tagsFollowCaps = false;
  private readonly watchers = new Set<(event: ConnectionEvent) => void>();

  constructor(options: Partial<TransportOptions> = {}, logger: Logger = createLogger({ sink: () => undefined })) {
    super({ ...fakeOptions, ...options }, logger);
  }

  /** Call `watcher` with everything that happens on the connection from now on; returns how to stop. */
  watch(watcher: (event: ConnectionEvent) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Lines the bot wrote that match `pattern`. */
  sentMatching(pattern: RegExp): string[] {
    return this.sent.filter((line) => pattern.test(line));
  }

  protected openConnection(): void {
    this.opened++;
    this.handleConnected();
    this.tell({ kind: 'opened' });
  }

  protected writeLine(line: string): void {
    this.sent.push(line);
    this.tell({ kind: 'written', line });
  }

  protected async closeConnection(message: string): Promise<void> {
    this.sent.push(`QUIT :${message}`);
    this.handleDisconnected('quit');
    this.tell({ kind: 'closed' });
  }

  /** Feed raw server lines, e.g. `:alice!a@h PRIVMSG DataBot :HELP`. */
  receive(...lines: string[]): void {
    for (const line of lines) {
      const message = parseLine(this.tagsFollowCaps ? this.withGrantedTags(line) : line);
      if (message) this.handleMessage(message);
      this.tell({ kind: 'received', line });
    }
  }

  /** Drop the connection as if the server closed it. */
  drop(reason = 'connection reset'): void {
    this.handleDisconnected(reason);
    this.tell({ kind: 'closed' });
  }

  /** Registration as a server would do it: 001, ISUPPORT, end of MOTD. */
  register(nick = 'DataBot', isupport = DEFAULT_ISUPPORT): void {
    this.receive(
      `:irc.test 001 ${nick} :Welcome`,
      `:irc.test 005 ${nick} ${isupport} :are supported by this server`,
      `:irc.test 376 ${nick} :End of MOTD`,
    );
  }

  /** `line` with only the tags the connection's capabilities bring. */
  private withGrantedTags(line: string): string {
    if (!line.startsWith('@')) return line;
    const space = line.indexOf(' ');
    const kept = line
      .slice(1, space)
      .split(';')
      .filter((tag) => this.state.caps.has(capOfTag(tag.split('=')[0]!)));
    const rest = line.slice(space + 1).trimStart();
    return kept.length > 0 ? `@${kept.join(';')} ${rest}` : rest;
  }

  private tell(event: ConnectionEvent): void {
    for (const watcher of this.watchers) watcher(event);
  }
}
