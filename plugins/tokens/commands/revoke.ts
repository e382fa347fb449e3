/** TOKEN REVOKE <id>: the owner, or an administrator, revokes a token for good. */
import { defineCommand } from '../../../lib/sdk.js';
import { answerSaved, refusalText } from './answers.js';
import { visibleToken } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

const NAME = 'TOKEN REVOKE';

export function revokeCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '<id>',
    help: 'Revokes one of your tokens for good: every request with it gets 401 from then on. Administrators may revoke any token.',
    requiresAccount: true,
    args: [visibleToken(rules)],
    async handle(invocation, { id }) {
      const result = await rules.revoke(callerOf(invocation, NAME), id);
      if (!result.ok) {
        invocation.reply(refusalText(result, NAME));
        return;
      }
      const { token, revoked, saved } = result;
      const text = revoked
        ? `Token #${token.id} is revoked: every request with it now gets 401.`
        : `Token #${token.id} was already revoked at ${token.revokedAt}.`;
      answerSaved(invocation, NAME, saved, text);
    },
  });
}
