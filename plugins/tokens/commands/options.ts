/**
 * What each TOKEN command is made with (one file per command, each exporting a function of these options
 * that returns its definition), and who it acts for in the token rules.
 */
import type { ArgumentContext, CommandDefinition, Logger } from '../../../lib/sdk.js';
import type { GrantableEndpoint } from '../endpoints.js';
import type { Caller, TokenRules } from '../rules.js';

export interface TokenCommandsOptions {
  rules: TokenRules;
  /** The grantable endpoints now (the route table changes as plugins start). */
  endpoints: () => GrantableEndpoint[];
  logger: Logger;
}

/** A TOKEN command: its definition, made with the plugin's options. */
export type TokenCommand = (options: TokenCommandsOptions) => CommandDefinition;

/**
 * The sender of `command` as the rules' caller. Every TOKEN command but the bare TOKEN declares
 * `requiresAccount` or `adminOnly`, so the host has the sender's account before the command runs.
 */
export function callerOf({ sender, isAdmin }: Pick<ArgumentContext, 'sender' | 'isAdmin'>, command: string): Caller {
  const { account } = sender;
  if (account === null) {
    throw new Error(`${command} ran for a sender without an account: it must declare requiresAccount or adminOnly`);
  }
  return { actor: { account, via: 'irc' }, isAdmin: async () => isAdmin, asked: { command } };
}
