/**
 * How the TOKEN commands word what they answer: a token, an audit entry, the refusals every command may
 * get, and a change's answer, which says first when the store could not write it.
 */
import type { CommandInvocation } from '../../../lib/sdk.js';
import type { ApiToken, AuditEntry } from '../model.js';
import type { Refusal } from '../rules.js';

export function describeToken(token: ApiToken): string {
  // Quoted as JSON, so a label cannot pass itself off as the rest of the line (`a" of admin: ...`).
  const label = token.label ? ` ${JSON.stringify(token.label)}` : '';
  const state = token.revokedAt === null ? 'active' : `revoked ${token.revokedAt}`;
  const endpoints = token.grants.length > 0 ? token.grants.join(', ') : 'none';
  return (
    `#${token.id}${label} of ${token.owner}: ${state}; endpoints: ${endpoints}` +
    `${token.staff ? '; staff' : ''}; last used ${token.lastUsedAt ?? 'never'}`
  );
}

export function describeAudit(entry: AuditEntry): string {
  const { actor } = entry;
  const by =
    actor.via === 'system'
      ? `system (${actor.reason})`
      : actor.via === 'http'
        ? `${actor.account} with staff token #${actor.tokenId ?? '?'}`
        : actor.via === 'web'
          ? `${actor.account} on the website`
          : actor.via === 'cli'
            ? `${actor.account} on the command line`
            : actor.account;
  const details = entry.details.length > 0 ? ` ${entry.details.join(', ')}` : '';
  return `${entry.at} #${entry.tokenId} ${entry.action}${details} by ${by}`;
}

/** The answer to a refusal that any command on a token may get. */
export function refusalText(refusal: Refusal<'not-admin' | 'no-such-token' | 'revoked'>, command: string): string {
  switch (refusal.reason) {
    case 'not-admin':
      return `Permission denied: ${command} is for administrators, and the account ${refusal.account} is not one.`;
    case 'no-such-token':
      return refusal.admin
        ? `There is no token #${refusal.id}.`
        : `The account ${refusal.account} has no token #${refusal.id}. TOKEN LIST shows yours.`;
    case 'revoked':
      return `Token #${refusal.token.id} was revoked at ${refusal.token.revokedAt}; a revoked token cannot be changed.`;
  }
}

/**
 * Answers `text` about a change that is on disk; when the store could not write it, the answer says first
 * that a restart may undo it (the change holds in memory until then), and that the same command sent
 * again asks for another write, and confirms once that succeeds.
 */
export function answerSaved(invocation: CommandInvocation, command: string, saved: boolean, text: string): void {
  invocation.reply(
    saved
      ? text
      : `NOT SAVED: the bot could not write this to its store, so a restart may undo it. ${text} ` +
          `Send ${command} again to save it; the bot's log says why it failed.`,
  );
}
