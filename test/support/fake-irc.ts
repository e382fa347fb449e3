/**
 * A fake IRC connection for unit tests: the real transport logic (state,
 * pacing, requests) with the socket replaced by two arrays. Tests feed it
 * server lines and read what it sent.
 */
import IrcFramework from 'irc-framework';
import { toIrcMessage } from '../../lib/irc/irc-framework.js';
import { BaseTransport, type TransportOptions } from '../../lib/irc/transport.js';
import { createLogger, type Logger } from '../../lib/logger.js';

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

export class FakeTransport extends BaseTransport {
  /** Lines the bot wrote, in order. */
  readonly sent: string[] = [];
  opened = 0;

  constructor(options: Partial<TransportOptions> = {}, logger: Logger = createLogger({ sink: () => undefined })) {
    super({ ...fakeOptions, ...options }, logger);
  }

  protected openConnection(): void {
    this.opened++;
    this.handleConnected();
  }

  protected writeLine(line: string): void {
    this.sent.push(line);
  }

  protected async closeConnection(message: string): Promise<void> {
    this.sent.push(`QUIT :${message}`);
    this.handleDisconnected('quit');
  }

  /** Feed raw server lines, e.g. `:alice!a@h PRIVMSG DataBot :HELP`. */
  receive(...lines: string[]): void {
    for (const line of lines) this.handleMessage(toIrcMessage(IrcFramework.ircLineParser(line)));
  }

  /** Drop the connection as if the server closed it. */
  drop(reason = 'connection reset'): void {
    this.handleDisconnected(reason);
  }

  /** Registration as a server would do it: 001, ISUPPORT, end of MOTD. */
  register(
    nick = 'DataBot',
    isupport = 'CASEMAPPING=rfc1459 PREFIX=(qaohv)~&@%+ CHANMODES=beI,k,l,imnpst WHOX BOT=B',
  ): void {
    this.receive(
      `:irc.test 001 ${nick} :Welcome`,
      `:irc.test 005 ${nick} ${isupport} :are supported by this server`,
      `:irc.test 376 ${nick} :End of MOTD`,
    );
  }
}
