/**
 * The TOKEN commands' own argument converters: a token id, the token it names when the sender may see it
 * (or change it), an endpoint name, and whose tokens TOKEN LIST shows. Who may see or change what is the
 * rules' to say (`rules.ts`); these ask them, and word a refusal as the commands answer it.
 */
import { converted, invalid, refused, type ArgumentContext, type Converter, type Logger } from '../../../lib/sdk.js';
import { parseTokenId } from '../endpoints.js';
import type { ApiToken } from '../model.js';
import type { Changeable, Found, Listed, TokenRules } from '../rules.js';
import { refusalText } from './answers.js';
import { callerOf } from './options.js';

/** A token id: `12` or `#12`. */
export const tokenId: Converter<number> = {
  min: 1,
  max: 1,
  missing: 'Which token?',
  convert([text = '']) {
    const id = parseTokenId(text);
    if (id !== null) return converted(id);
    // Long text is not echoed: someone may have pasted a secret where the id belongs.
    return invalid(text.length <= 12 ? `"${text}" is not a token id.` : 'That is not a token id.');
  },
};

/** The token an id names, once `find` says the sender may have it. */
function tokenArgument(
  find: (context: ArgumentContext, id: number) => Promise<Found | Changeable>,
  missing?: string,
): Converter<ApiToken> {
  return {
    min: 1,
    max: 1,
    missing,
    async convert(words, context) {
      const id = await tokenId.convert(words, context);
      if (!id.ok) return id;
      const found = await find(context, id.value);
      return found.ok ? converted(found.token) : refused(refusalText(found, context.command));
    },
  };
}

/** A token the sender may see: their own, or any for an administrator. */
export function visibleToken(rules: TokenRules): Converter<ApiToken> {
  return tokenArgument((context, id) => rules.find(callerOf(context, context.command), id), tokenId.missing);
}

/**
 * A token the sender may change: as {@link visibleToken}, and not revoked. It has no missing text: the
 * commands that take it take more words after it, and a sender who gave none is shown the usage alone.
 */
export function liveToken(rules: TokenRules): Converter<ApiToken> {
  return tokenArgument((context, id) => rules.changeable(callerOf(context, context.command), id));
}

/** An endpoint name or wildcard, in any case, given in lower case; whether it is known is the rules' to say. */
export const endpointName: Converter<string> = {
  min: 1,
  max: 1,
  convert: ([name = '']) => converted(name.toLowerCase()),
};

/**
 * `ALL` or an account: every token, or that account's, for an administrator (anyone may name their own
 * account). A refusal is logged as the host logs a refused administrator command.
 */
export function listedTokens(rules: TokenRules, logger: Logger): Converter<Listed> {
  return {
    min: 1,
    max: 1,
    async convert([text = ''], context) {
      const all = text.toUpperCase() === 'ALL';
      const listed = await rules.list(callerOf(context, context.command), all ? { all: true } : { account: text });
      if (listed.ok) return converted(listed);
      // Not what was typed: anyone may send any text here, and it has no business in the log.
      const command = `${context.command} ${all ? 'ALL' : '<account>'}`;
      logger.warn('admin command refused', { command, account: listed.account });
      return refused(
        `Permission denied: ${command} is for administrators, and the account ${listed.account} is not one. ` +
          `${context.command} shows your own tokens.`,
      );
    },
  };
}
