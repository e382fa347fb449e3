/** TOKEN STAFF <id> ON|OFF: an administrator marks a token as staff, or removes the mark. */
import { choice, defineCommand } from '../../../lib/sdk.js';
import { answerSaved, refusalText } from './answers.js';
import { liveToken } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

const NAME = 'TOKEN STAFF';

export function staffCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '<id> ON|OFF',
    help: 'Marks a token as staff (ON) or not (OFF). A staff token may manage tokens over HTTP under /api/staff/.',
    adminOnly: true,
    args: [liveToken(rules), choice('ON', 'OFF')],
    async handle(invocation, { id }, setting) {
      const result = await rules.setStaff(callerOf(invocation, NAME), id, setting === 'ON');
      if (!result.ok) {
        invocation.reply(refusalText(result, NAME));
        return;
      }
      const { staff, changed } = result;
      const text = changed
        ? `Token #${id} ${staff ? 'is now a staff token' : 'is no longer a staff token'}.`
        : `Token #${id} ${staff ? 'was already' : 'was not'} a staff token.`;
      answerSaved(invocation, NAME, result.saved, text);
    },
  });
}
