/**
 * Whether a nick is on the network, asked with WHOIS: `311 RPL_WHOISUSER` for a nick that is, `401
 * ERR_NOSUCHNICK` for one that is not. Not ISON: ngircd leaves services (`ServiceMask`) out of ISON
 * although WHOIS shows them (`310 is an IRC service`), and every IRC server answers WHOIS.
 */
import type { IrcPort } from './port.js';

/** The WHOIS of one nick answers this quickly or the nick counts as away. */
const WHOIS_TIMEOUT_MS = 10_000;

/** Whether `nick` is on the network now; false as well when the server does not answer in time. */
export async function isOnline(irc: Pick<IrcPort, 'request' | 'casefold'>, nick: string): Promise<boolean> {
  const key = irc.casefold(nick);
  const about = (target: string | undefined): boolean => target !== undefined && irc.casefold(target) === key;
  try {
    const lines = await irc.request({
      send: ['WHOIS', nick],
      reply: (message) => message.command === '311' && about(message.params[1]),
      // Some servers end a 401 with 318, some do not: 401 ends it either way.
      end: (message) => (message.command === '318' || message.command === '401') && about(message.params[1]),
      timeoutMs: WHOIS_TIMEOUT_MS,
    });
    return lines.some((message) => message.command === '311');
  } catch {
    return false;
  }
}

/** The nicks among `nicks` that are on the network now, in their order; asked one WHOIS at a time. */
export async function onlineNicks(
  irc: Pick<IrcPort, 'request' | 'casefold'>,
  nicks: readonly string[],
): Promise<string[]> {
  const online: string[] = [];
  for (const nick of nicks) if (await isOnline(irc, nick)) online.push(nick);
  return online;
}
