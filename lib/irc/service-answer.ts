/**
 * Asking a service (NickServ, ChanServ, ...) something in private and collecting its answer. Services
 * answer in NOTICEs with no numeric to end them: an answer ends at a line the caller knows is the last
 * (Atheme's "End of Help", a 900 after IDENTIFY), after a quiet spell following the service's last
 * notice, or at the timeout.
 */
import type { IrcMessage, IrcPort } from './port.js';

export interface ServiceAnswerOptions {
  /** Silence after the service's last notice that ends the answer (default 1500 ms). */
  quietMs?: number;
  /**
   * The longest wait, from when the question left the paced send queue (JOINs and other lines may be
   * ahead of it), not from the call (default 15000 ms).
   */
  timeoutMs?: number;
  /**
   * Whether a line ends the answer at once: asked of every line, `fromService` telling whether it is one
   * of the service's notices to the bot (which is collected first).
   */
  ends?: (message: IrcMessage, fromService: boolean) => boolean;
}

/** Send `text` to `service`; resolves with the texts of its notices to the bot (possibly none). */
export function askService(
  irc: IrcPort,
  service: string,
  text: string,
  options: ServiceAnswerOptions = {},
): Promise<string[]> {
  const { quietMs = 1500, timeoutMs = 15000, ends } = options;
  return new Promise((resolve) => {
    const texts: string[] = [];
    let quiet: NodeJS.Timeout | undefined;
    let overall: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(quiet);
      clearTimeout(overall);
      stopListening();
      stopWatchingDisconnect();
      resolve(texts);
    };
    const isFromService = (message: IrcMessage): boolean =>
      message.command === 'NOTICE' &&
      message.source !== null &&
      irc.casefold(message.source.nick) === irc.casefold(service) &&
      irc.casefold(message.params[0] ?? '') === irc.casefold(irc.state.nick);
    const stopListening = irc.on('message', (message) => {
      const fromService = isFromService(message);
      if (fromService) texts.push(message.params.at(-1) ?? '');
      if (ends?.(message, fromService)) return finish();
      if (!fromService) return;
      clearTimeout(quiet);
      quiet = setTimeout(finish, quietMs);
    });
    const stopWatchingDisconnect = irc.on('disconnected', finish);
    // A service that says nothing at all ends the wait after the timeout alone. Unreferenced: a silent
    // service must not keep a stopping process alive.
    irc.privmsg(service, text, () => {
      overall ??= setTimeout(finish, timeoutMs).unref();
    });
  });
}
