/**
 * IRC case folding. Nick and channel comparisons follow the network's
 * CASEMAPPING (ISUPPORT); rfc1459 is the default, where `[]\~` fold to `{}|^`.
 */

export type Casemapping = 'ascii' | 'rfc1459' | 'strict-rfc1459';

export function parseCasemapping(value: string | undefined): Casemapping {
  if (value === 'ascii' || value === 'strict-rfc1459') return value;
  return 'rfc1459';
}

/** What each mapping folds: a name with none of these is folded already. */
const FOLDS: Record<Casemapping, RegExp> = {
  rfc1459: /[A-Z[\]\\~]/,
  'strict-rfc1459': /[A-Z[\]\\]/,
  ascii: /[A-Z]/,
};
/** The characters besides A-Z each mapping folds. */
const EXTRA: Record<Casemapping, RegExp | null> = {
  rfc1459: /[[\]\\~]/g,
  'strict-rfc1459': /[[\]\\]/g,
  ascii: null,
};
const EXTRA_FOLD: Record<string, string> = { '[': '{', ']': '}', '\\': '|', '~': '^' };
const NON_ASCII = /[^\x00-\x7f]/;

/** Whether the character `code` folds to another one under `mapping`. */
function folds(code: number, mapping: Casemapping): boolean {
  if (code >= 65 && code <= 90) return true;
  if (mapping === 'ascii') return false;
  return (code >= 91 && code <= 93) || (code === 126 && mapping === 'rfc1459');
}

/**
 * Fold a nick or channel name for use as a map key or for comparison.
 *
 * Every line folds a few names, so the checks are regular expressions: they read a name cut from a
 * line (a view into it, for 13 characters or more) about twice as fast as a loop of `charCodeAt`.
 */
export function casefold(name: string, mapping: Casemapping = 'rfc1459'): string {
  // Most names are folded already: those come back as they are, with no new string.
  if (!FOLDS[mapping].test(name)) return name;
  if (!NON_ASCII.test(name)) {
    // For ASCII, toLowerCase folds exactly A-Z (it would also fold non-ASCII letters, which IRC does not).
    const lower = name.toLowerCase();
    const extra = EXTRA[mapping];
    if (extra === null || !FOLDS[mapping].test(lower)) return lower;
    return lower.replace(extra, (character) => EXTRA_FOLD[character]!);
  }
  let folded = '';
  for (let index = 0; index < name.length; index++) {
    const code = name.charCodeAt(index);
    folded += folds(code, mapping) ? String.fromCharCode(code === 126 ? 94 : code + 32) : name[index];
  }
  return folded;
}

/**
 * Fold text for a case-insensitive search among IRC names (`?search=`): lower case, as any search
 * (non-ASCII letters too), then `mapping`'s own folds, so `[away]` finds `{away}` under rfc1459.
 */
export function searchFold(text: string, mapping: Casemapping = 'rfc1459'): string {
  return casefold(text.toLowerCase(), mapping);
}

/** {@link searchFold} with the casemapping `session` has at each call (the model's, which follows the network). */
export function searchFoldOf(session: { readonly casemapping: Casemapping }): (text: string) => string {
  return (text) => searchFold(text, session.casemapping);
}
