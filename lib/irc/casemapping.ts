/**
 * IRC case folding. Nick and channel comparisons follow the network's
 * CASEMAPPING (ISUPPORT); rfc1459 is the default, where `[]\~` fold to `{}|^`.
 */

export type Casemapping = 'ascii' | 'rfc1459' | 'strict-rfc1459';

export function parseCasemapping(value: string | undefined): Casemapping {
  if (value === 'ascii' || value === 'strict-rfc1459') return value;
  return 'rfc1459';
}

const RFC1459_EXTRA = /[[\]\\~]/g;
const STRICT_EXTRA = /[[\]\\]/g;
const EXTRA_FOLD: Record<string, string> = { '[': '{', ']': '}', '\\': '|', '~': '^' };

/** Whether the character `code` folds to another one under `mapping`. */
function folds(code: number, mapping: Casemapping): boolean {
  if (code >= 65 && code <= 90) return true;
  if (mapping === 'ascii') return false;
  return (code >= 91 && code <= 93) || (code === 126 && mapping === 'rfc1459');
}

/** Fold a nick or channel name for use as a map key or for comparison. */
export function casefold(name: string, mapping: Casemapping = 'rfc1459'): string {
  // Every line folds a few names, and most are folded already: those come back as they are, with no new string.
  let first = 0;
  let asciiOnly = true;
  for (; first < name.length; first++) {
    const code = name.charCodeAt(first);
    if (folds(code, mapping)) break;
    if (code > 127) asciiOnly = false;
  }
  if (first === name.length) return name;
  for (let index = first + 1; asciiOnly && index < name.length; index++) {
    if (name.charCodeAt(index) > 127) asciiOnly = false;
  }
  // For ASCII, toLowerCase folds exactly A-Z (it would also fold non-ASCII letters, which IRC does not).
  if (asciiOnly) {
    const lower = name.toLowerCase();
    if (mapping === 'ascii') return lower;
    return lower.replace(mapping === 'rfc1459' ? RFC1459_EXTRA : STRICT_EXTRA, (character) => EXTRA_FOLD[character]!);
  }
  let folded = name.slice(0, first);
  for (let index = first; index < name.length; index++) {
    const code = name.charCodeAt(index);
    folded += folds(code, mapping) ? String.fromCharCode(code === 126 ? 94 : code + 32) : name[index];
  }
  return folded;
}
