/**
 * The commands' administrator rule for an account rather than a client (the website knows an account):
 * listed in `admins`, or one of its clients online passes an admin check (`opers_are_admins`: a fresh WHOIS
 * of that nick shows the operator and the account). An account with no client online is judged by the
 * list alone.
 */
import type { PluginContext } from '../../lib/sdk.js';

export function accountAdminCheck({
  model,
  commands,
}: Pick<PluginContext, 'model' | 'commands'>): (account: string) => Promise<boolean> {
  return async (account) => {
    if (commands.isListedAdmin(account)) return true;
    const folded = model.fold(account);
    const clients = [...model.users.all()].filter(
      (user) => user.account !== null && model.fold(user.account) === folded,
    );
    for (const { nick } of clients) if (await commands.isAdmin({ nick, account })) return true;
    return false;
  };
}
