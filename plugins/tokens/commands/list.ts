/** TOKEN LIST [ALL|<account>]: the sender's tokens, or (for an administrator) every token or an account's. */
import { defineCommand, optional, type CommandInvocation } from '../../../lib/sdk.js';
import type { Listed } from '../rules.js';
import { describeToken } from './answers.js';
import { listedTokens } from './arguments.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

/**
 * Lines a list answers with before it says how many more there are: an answer has 10 s to leave the
 * bot, and at the default pacing (one line per 500 ms, answers two lines in three while a sync waits)
 * a longer one would be cut off.
 */
export const MAX_LIST_LINES = 12;

const NAME = 'TOKEN LIST';

function answerList({ reply }: CommandInvocation, { tokens, owner }: Listed): void {
  const whose = owner === null ? 'There are' : `The account ${owner} has`;
  if (tokens.length === 0) {
    reply(`${whose} no tokens.`);
    return;
  }
  // Live tokens first: they are the ones that matter.
  const ordered = [...tokens].sort(
    (a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || a.id - b.id,
  );
  const live = tokens.filter((token) => token.revokedAt === null).length;
  reply(`${whose} ${tokens.length} token${tokens.length === 1 ? '' : 's'} (${live} active):`);
  for (const token of ordered.slice(0, MAX_LIST_LINES)) reply(`  ${describeToken(token)}`);
  if (ordered.length > MAX_LIST_LINES) {
    reply(`  …and ${ordered.length - MAX_LIST_LINES} more; TOKEN INFO <id> shows any one of them.`);
  }
}

export function listCommand({ rules, logger }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '[ALL|<account>]',
    help:
      'Lists your tokens with their state and approved endpoints. Administrators may list every token (ALL) ' +
      "or an account's tokens.",
    requiresAccount: true,
    args: [optional(listedTokens(rules, logger))],
    handle(invocation, listed) {
      answerList(invocation, listed ?? rules.own(callerOf(invocation, NAME)));
    },
  });
}
