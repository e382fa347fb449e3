/**
 * The TOKEN commands, sent to the bot in private and answered by NOTICE: one file per command, each a
 * declared definition over the token rules. Everyone logged in to NickServ manages their own tokens;
 * administrators approve endpoints, mark staff tokens, and see and revoke every token. A token is always
 * written `#<id>`; commands take `<id>` or `#<id>`.
 *
 * An answer that reports a token's state after a change (or a change it did not need) is sent only
 * once the store has the tokens on disk, so a crash after it cannot undo what it said.
 */
import type { CommandDefinition } from '../../../lib/sdk.js';
import { auditCommand } from './audit.js';
import { createCommand } from './create.js';
import { denyCommand } from './deny.js';
import { endpointsCommand } from './endpoints.js';
import { grantCommand } from './grant.js';
import { infoCommand } from './info.js';
import { listCommand } from './list.js';
import type { TokenCommand, TokenCommandsOptions } from './options.js';
import { revokeCommand } from './revoke.js';
import { staffCommand } from './staff.js';
import { tokenCommand } from './token.js';

export type { TokenCommandsOptions } from './options.js';

/** The TOKEN commands, in the order HELP lists them. */
const COMMANDS: readonly TokenCommand[] = [
  tokenCommand,
  createCommand,
  listCommand,
  infoCommand,
  revokeCommand,
  grantCommand,
  denyCommand,
  staffCommand,
  endpointsCommand,
  auditCommand,
];

/** What a TOKEN command adds to its refusal where the IRC server knows no accounts (a network without services). */
const WITHOUT_ACCOUNTS =
  "API tokens are managed by the bot's operator instead, on its machine: irc-network-data token --help.";

export function tokenCommands(options: TokenCommandsOptions): CommandDefinition[] {
  return COMMANDS.map((command) => ({ ...command(options), withoutAccounts: WITHOUT_ACCOUNTS }));
}
