/** TOKEN GRANT <id> <endpoint|irc.*|netstats.*>...: an administrator approves endpoints for a token. */
import { defineCommand, many } from '../../../lib/sdk.js';
import { answerSaved, refusalText } from './answers.js';
import { endpointName, liveToken } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

const NAME = 'TOKEN GRANT';

export function grantCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '<id> <endpoint|irc.*|netstats.*>...',
    help:
      'Approves endpoints for a token (TOKEN ENDPOINTS lists their names). A wildcard such as netstats.* ' +
      'covers every endpoint of that group, including ones added later.',
    adminOnly: true,
    args: [liveToken(rules), many(endpointName)],
    async handle(invocation, { id }, names) {
      const result = await rules.grant(callerOf(invocation, NAME), id, names);
      if (!result.ok) {
        invocation.reply(
          result.reason === 'unknown-endpoints'
            ? `Nothing granted: unknown endpoint ${result.unknown.join(', ')}. Valid names: ${result.valid.join(', ')}.`
            : refusalText(result, NAME),
        );
        return;
      }
      const { added, grants } = result;
      const text =
        added.length === 0
          ? `Token #${id} already had ${result.names.join(', ')}; its endpoints: ${grants.join(', ')}.`
          : `Token #${id} may now call ${added.join(', ')}; its endpoints: ${grants.join(', ')}.`;
      answerSaved(invocation, NAME, result.saved, text);
    },
  });
}
