/** TOKEN AUDIT [id]: the newest entries of the token audit log, or those of one token. */
import { defineCommand, optional } from '../../../lib/sdk.js';
import { describeAudit, refusalText } from './answers.js';
import { visibleToken } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

/** Audit entries TOKEN AUDIT shows (the newest). */
export const AUDIT_LINES = 12;

const NAME = 'TOKEN AUDIT';

export function auditCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '[id]',
    help: `Shows the newest ${AUDIT_LINES} entries of the token audit log (creations, grants, denials, revocations, staff changes), or those of one token.`,
    adminOnly: true,
    args: [optional(visibleToken(rules))],
    async handle(invocation, token) {
      const { reply } = invocation;
      const read = await rules.audit(callerOf(invocation, NAME), token?.id);
      if (!read.ok) {
        reply(refusalText(read, NAME));
        return;
      }
      const { entries } = read;
      if (entries.length === 0) {
        reply(token === undefined ? 'The audit log is empty.' : `No audit entries for token #${token.id}.`);
        return;
      }
      const shown = entries.slice(-AUDIT_LINES);
      reply(
        `${entries.length} audit entr${entries.length === 1 ? 'y' : 'ies'}${token === undefined ? '' : ` for #${token.id}`}` +
          `${shown.length < entries.length ? `, the newest ${shown.length}` : ''}:`,
      );
      for (const entry of shown) reply(`  ${describeAudit(entry)}`);
    },
  });
}
