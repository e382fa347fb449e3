/**
 * IRC case folding. Nick and channel comparisons follow the network's
 * CASEMAPPING (ISUPPORT); rfc1459 is the default, where `[]\~` fold to `{}|^`.
 */

export type Casemapping = 'ascii' | 'rfc1459' | 'strict-rfc1459';

export function parseCasemapping(value: string | undefined): Casemapping {
  if (value === 'ascii' || value === 'strict-rfc1459') return value;
  return 'rfc1459';
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const RFC1459_EXTRA = /[[\]\\~]/g;
const STRICT_EXTRA = /[[\]\\]/g;
const EXTRA_FOLD: Record<string, string> = { '[': '{', ']': '}', '\\': '|', '~': '^' };

/** Fold a nick or channel name for use as a map key or for comparison. */
export function casefold(name: string, mapping: Casemapping = 'rfc1459'): string {
  // Fast path: for ASCII, toLowerCase folds exactly A-Z (it would also fold non-ASCII letters, which IRC does not).
  if (ASCII_ONLY.test(name)) {
    const lower = name.toLowerCase();
    if (mapping === 'ascii') return lower;
    return lower.replace(mapping === 'rfc1459' ? RFC1459_EXTRA : STRICT_EXTRA, (character) => EXTRA_FOLD[character]!);
  }
  let folded = '';
  for (let index = 0; index < name.length; index++) {
    const code = name.charCodeAt(index);
    if (code >= 65 && code <= 90) folded += String.fromCharCode(code + 32);
    else if (mapping !== 'ascii' && code >= 91 && code <= 93) folded += String.fromCharCode(code + 32);
    else if (mapping === 'rfc1459' && code === 126) folded += '^';
    else folded += name[index];
  }
  return folded;
}
