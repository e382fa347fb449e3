/**
 * `opers_are_admins`: an IRC operator logged in to an account counts as an
 * administrator. Both are read from a fresh WHOIS of the sender — 313 (is an
 * IRC operator) and 330 (logged in as the same account) — never from the nick,
 * and never from what the model last saw (an operator may have dropped +o since).
 */
import { errorMessage, type AdminCheck, type IrcPort, type Logger } from '../../lib/sdk.js';

export function operAdminCheck(irc: IrcPort, logger: Logger): AdminCheck {
  return async (sender) => {
    if (sender.account === null) return false;
    if (sender.isOperator === false) return false;
    const nick = irc.casefold(sender.nick);
    const about = (param: string | undefined): boolean => param !== undefined && irc.casefold(param) === nick;
    try {
      const lines = await irc.request({
        send: ['WHOIS', sender.nick],
        urgent: true,
        reply: (line) => (line.command === '313' || line.command === '330') && about(line.params[1]),
        end: (line) => (line.command === '318' || line.command === '401') && about(line.params[1]),
        timeoutMs: 10000,
      });
      const isOperator = lines.some((line) => line.command === '313');
      const account = lines.find((line) => line.command === '330')?.params[2];
      return isOperator && account !== undefined && irc.casefold(account) === irc.casefold(sender.account);
    } catch (error) {
      logger.warn('WHOIS for operator status failed', { nick: sender.nick, error: errorMessage(error) });
      return false;
    }
  };
}
