/** TOKEN alone, or with a subcommand that does not exist: the list of subcommands. */
import { defineCommand, optional, rest, word } from '../../../lib/sdk.js';
import type { TokenCommandsOptions } from './options.js';

const SUBCOMMANDS =
  'CREATE, LIST, INFO, REVOKE (anyone logged in to NickServ); GRANT, DENY, STAFF, ENDPOINTS, AUDIT (administrators)';

export function tokenCommand(_options: TokenCommandsOptions) {
  return defineCommand({
    name: 'TOKEN',
    usage: '<subcommand> [arguments]',
    help: `Manages API tokens for the HTTP API. Subcommands: ${SUBCOMMANDS}. Send HELP TOKEN <subcommand> for one of them.`,
    args: [optional(word), optional(rest)],
    handle({ reply }, subcommand) {
      const prefix = subcommand === undefined ? '' : `There is no subcommand TOKEN ${subcommand.toUpperCase()}. `;
      reply(`${prefix}TOKEN subcommands: ${SUBCOMMANDS}. Send HELP TOKEN <subcommand> for details.`);
    },
  });
}
