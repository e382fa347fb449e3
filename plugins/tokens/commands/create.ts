/** TOKEN CREATE [label]: a new token of the sender's account, its secret shown once. */
import { defineCommand, optional, rest } from '../../../lib/sdk.js';
import type { Created } from '../rules.js';
import { callerOf, type TokenCommandsOptions } from './options.js';

const NAME = 'TOKEN CREATE';

/** Why no token was made, as the sender is told (`usage`: the command's usage line). */
function refusalText(refusal: Exclude<Created, { ok: true }>, usage: string): string {
  switch (refusal.reason) {
    case 'label-too-long':
      return `A label has at most ${refusal.limit} characters; this one has ${refusal.length}. ${usage}`;
    case 'too-many-tokens':
      return (
        `The account ${refusal.account} already holds ${refusal.live} active tokens, the most allowed. ` +
        'Revoke one first (TOKEN LIST, then TOKEN REVOKE <id>).'
      );
    case 'too-many-today':
      return (
        `The account ${refusal.account} made ${refusal.limit} tokens in the last 24 hours, the most a day ` +
        `allows; the next can be made at ${refusal.nextAt}.`
      );
    case 'not-saved':
      return (
        `Your new token #${refusal.token.id} could not be saved (the bot could not write its store), so it was ` +
        "revoked at once and its secret is not shown. Try again later; the bot's log says why."
      );
  }
}

export function createCommand({ rules }: TokenCommandsOptions) {
  return defineCommand({
    name: NAME,
    usage: '[label]',
    help:
      'Creates an API token for your account and shows it once: copy it then, it cannot be shown again. ' +
      'A new token reaches no endpoint until an administrator approves each endpoint for it.',
    requiresAccount: true,
    args: [optional(rest, '')],
    async handle(invocation, label) {
      const { reply } = invocation;
      const created = await rules.create(callerOf(invocation, NAME), label);
      if (!created.ok) {
        reply(refusalText(created, invocation.usage));
        return;
      }
      const { token, secret } = created;
      // The answer goes only to the nick that asked; if it is dropped instead, the rules revoke the token.
      reply(`Token #${token.id}${token.label ? ` ${JSON.stringify(token.label)}` : ''} created: ${secret}`, {
        onDropped: () => rules.secretNotDelivered(token),
      });
      reply(
        'Copy it now: it is shown only this once (only its hash is kept). It reaches no endpoint until an administrator ' +
          `approves it (TOKEN GRANT #${token.id} <endpoint>). Send it as the header "Authorization: Token <token>".`,
      );
    },
  });
}
