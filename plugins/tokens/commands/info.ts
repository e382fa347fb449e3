/** TOKEN INFO <id>: one token the sender may see, with its uses per endpoint. */
import { defineCommand } from '../../../lib/sdk.js';
import { describeToken } from './answers.js';
import { visibleToken } from './arguments.js';
import type { TokenCommandsOptions } from './options.js';

export function infoCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: 'TOKEN INFO',
    usage: '<id>',
    help: 'Shows one of your tokens: label, state, approved endpoints, staff flag, last use and uses per endpoint.',
    requiresAccount: true,
    args: [visibleToken(rules)],
    handle({ reply }, token) {
      reply(describeToken(token));
      reply(`  created ${token.createdAt}${token.revokedAt === null ? '' : `, revoked ${token.revokedAt}`}`);
      const uses = Object.entries(token.uses).map(([endpoint, count]) => `${endpoint} ${count}`);
      reply(`  uses: ${uses.length > 0 ? uses.join(', ') : 'none yet'}`);
      if (token.grants.length === 0 && token.revokedAt === null) {
        reply('  This token reaches no endpoint yet: an administrator must approve each one (TOKEN GRANT).');
      }
    },
  });
}
