import t from 'tap';
import { casefold, searchFold, type Casemapping } from '../../../lib/irc/casemapping.js';

/** The folding rules written out character by character, to check the fast paths against. */
function slowFold(name: string, mapping: Casemapping): string {
  let folded = '';
  for (const character of name) {
    const code = character.charCodeAt(0);
    if (code >= 65 && code <= 90) folded += String.fromCharCode(code + 32);
    else if (mapping !== 'ascii' && code >= 91 && code <= 93) folded += String.fromCharCode(code + 32);
    else if (mapping === 'rfc1459' && code === 126) folded += '^';
    else folded += character;
  }
  return folded;
}

const MAPPINGS: Casemapping[] = ['rfc1459', 'strict-rfc1459', 'ascii'];

t.test('each mapping folds exactly its characters', async (t) => {
  t.equal(casefold('Nick[Away]\\~', 'rfc1459'), 'nick{away}|^');
  t.equal(casefold('Nick[Away]\\~', 'strict-rfc1459'), 'nick{away}|~');
  t.equal(casefold('Nick[Away]\\~', 'ascii'), 'nick[away]\\~');
  t.equal(casefold('#Chan'), '#chan', 'rfc1459 is the default');
});

t.test('a name that is folded already comes back as the same string', async (t) => {
  // Identity cannot be seen from JS for strings; an unchanged result is what the callers rely on.
  for (const mapping of MAPPINGS) t.equal(casefold('alice_{away}|^', mapping), 'alice_{away}|^', mapping);
  t.equal(casefold(''), '');
});

t.test('non-ASCII letters are never folded, before or after a character that folds', async (t) => {
  t.equal(casefold('Ärger[X]', 'rfc1459'), 'Ärger{x}');
  t.equal(casefold('[X]Ärger', 'rfc1459'), '{x}Ärger');
  t.equal(casefold('ÄRGER', 'ascii'), 'Ärger');
  t.equal(casefold('ärger', 'ascii'), 'ärger');
});

t.test('agrees with the rules on every mix of interesting characters', async (t) => {
  const alphabet = ['a', 'Z', 'A', 'z', '[', ']', '\\', '~', '{', '^', '_', '#', 'Ä', 'ß', 'é', '\u{1f600}', '0'];
  let state = 7;
  const random = (): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  let mismatches = 0;
  for (let sample = 0; sample < 5000; sample++) {
    let name = '';
    const length = Math.floor(random() * 20);
    for (let index = 0; index < length; index++) name += alphabet[Math.floor(random() * alphabet.length)];
    for (const mapping of MAPPINGS) {
      if (casefold(name, mapping) !== slowFold(name, mapping)) {
        mismatches++;
        t.equal(casefold(name, mapping), slowFold(name, mapping), `${JSON.stringify(name)} under ${mapping}`);
      }
    }
  }
  t.equal(mismatches, 0);
});

t.test('searchFold: lower case as any search, then the mapping', async (t) => {
  t.equal(searchFold('Nick[Away]~', 'rfc1459'), 'nick{away}^');
  t.equal(searchFold('Nick[Away]~', 'ascii'), 'nick[away]~');
  t.equal(searchFold('ÄRGER[X]', 'rfc1459'), 'ärger{x}', 'non-ASCII letters fold too: a search is not a key');
});
