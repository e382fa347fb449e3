/** TOKEN DENY <id> <endpoint|irc.*|netstats.*>...: an administrator withdraws endpoints from a token. */
import { defineCommand, many } from '../../../lib/sdk.js';
import { answerSaved, refusalText } from './answers.js';
import { endpointName, liveToken } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

const NAME = 'TOKEN DENY';

export function denyCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '<id> <endpoint|irc.*|netstats.*>...',
    help: 'Withdraws endpoints from a token. Denying one endpoint that a wildcard covers replaces the wildcard by the other endpoints it covers now.',
    adminOnly: true,
    args: [liveToken(rules), many(endpointName)],
    async handle(invocation, { id }, names) {
      const result = await rules.deny(callerOf(invocation, NAME), id, names);
      if (!result.ok) {
        invocation.reply(
          result.reason === 'unknown-endpoints'
            ? `Nothing denied: unknown endpoint ${result.unknown.join(', ')}. Valid names: ${result.valid.join(', ')}.`
            : refusalText(result, NAME),
        );
        return;
      }
      const { denied, expanded } = result;
      const now = result.grants.length > 0 ? result.grants.join(', ') : 'none';
      const note =
        expanded.length > 0
          ? ` (${expanded.join(', ')} was replaced by the endpoints it covers now, so it no longer reaches new ones)`
          : '';
      const text =
        denied.length === 0
          ? `Token #${id} had none of ${result.names.join(', ')}; its endpoints: ${now}.`
          : `Token #${id} may no longer call ${denied.join(', ')}${note}; its endpoints: ${now}.`;
      answerSaved(invocation, NAME, result.saved, text);
    },
  });
}
