/**
 * The argument converters and {@link convertArguments}, without a registry: each generic converter, how
 * the words are shared out, and the answers for too many, too few and refused words.
 */
import t from 'tap';
import {
  choice,
  convertArguments,
  converted,
  invalid,
  many,
  optional,
  refused,
  rest,
  wholeNumber,
  word,
  type ArgumentContext,
  type Converter,
} from '../../lib/command-arguments.js';

const context: ArgumentContext = { command: 'TEST', sender: { nick: 'alice', account: 'alice' }, isAdmin: false };
const usage = 'Usage: TEST <arguments>';

/** The values `converters` read from `text`, or the answer. */
function read(converters: readonly Converter<unknown>[], text: string) {
  return convertArguments(converters, text.split(' ').filter(Boolean), context, usage);
}

t.test('word, rest and a whole number', async (t) => {
  t.same(await word.convert(['Hello', 'there'], context), converted('Hello'), 'one word, as typed');
  t.same(await rest.convert(['my', 'old', 'laptop'], context), converted('my old laptop', 3), 'every word offered');
  t.same(await wholeNumber.convert(['42'], context), converted(42));
  t.same(await wholeNumber.convert(['4x'], context), invalid('"4x" is not a whole number.'));
  t.same(await wholeNumber.convert(['-1'], context), invalid('"-1" is not a whole number.'));
  t.same(
    await wholeNumber.convert(['x'.repeat(21)], context),
    invalid('That is not a whole number.'),
    'long text is not echoed',
  );
});

t.test('a choice takes one of its words in any case and gives it as declared', async (t) => {
  const setting = choice('ON', 'OFF');
  t.same(await setting.convert(['on'], context), converted('ON'));
  t.same(await setting.convert(['Off'], context), converted('OFF'));
  t.same(await setting.convert(['maybe'], context), invalid(), 'anything else: the usage line, which names them');
});

t.test('optional: left out only when nothing is left for it; a word given must convert', async (t) => {
  t.same(await optional(wholeNumber).convert([], context), converted(undefined, 0));
  t.same(await optional(rest, '').convert([], context), converted('', 0), 'with a fallback');
  t.same(await optional(wholeNumber).convert(['7'], context), converted(7));
  t.same(await optional(wholeNumber).convert(['x'], context), invalid('"x" is not a whole number.'));
  t.equal(optional(wholeNumber).min, 0);
  t.equal(optional(rest).max, Infinity);
});

t.test('many: each word converted in turn; the first refusal stops it', async (t) => {
  t.same(await many(wholeNumber).convert(['1', '2', '3'], context), converted([1, 2, 3], 3));
  t.same(await many(wholeNumber).convert(['1', 'b', 'c'], context), invalid('"b" is not a whole number.'));
  const none: Converter<string> = { min: 0, max: 1, convert: () => converted('nothing', 0) };
  t.same(await many(none).convert(['a'], context), converted([], 0), 'a converter that takes no word ends the list');
});

t.test('the words are shared out in order; later arguments keep the fewest they take', async (t) => {
  t.same(await read([wholeNumber, many(word)], '5 a b c'), { values: [5, ['a', 'b', 'c']] });
  t.same(await read([many(word), wholeNumber], 'a b 7'), { values: [['a', 'b'], 7] }, 'a list leaves the last word');
  t.same(await read([optional(wholeNumber)], ''), { values: [undefined] });
  t.same(await read([word, optional(rest)], 'TOKEN'), { values: ['TOKEN', undefined] });
  t.same(await read([word, optional(rest)], 'TOKEN a  b'), { values: ['TOKEN', 'a b'] });
  t.same(await read([], ''), { values: [] });
});

t.test('too many words, or too few: answered before any converter runs', async (t) => {
  const ran: string[] = [];
  const tracked = (name: string, missing?: string): Converter<string> => ({
    min: 1,
    max: 1,
    missing,
    convert: ([first = '']) => {
      ran.push(name);
      return converted(first);
    },
  });
  t.same(await read([], 'extra'), { answer: `Too many arguments. ${usage}` });
  t.same(await read([tracked('id'), tracked('name')], '1 2 3'), { answer: `Too many arguments. ${usage}` });
  t.same(
    await read([tracked('id', 'Which one?'), tracked('name')], ''),
    { answer: `Which one? ${usage}` },
    'the first argument without a word says so',
  );
  t.same(
    await read([tracked('id', 'Which one?'), tracked('name')], '1'),
    { answer: usage },
    'one without a missing text: the usage line alone',
  );
  t.same(ran, [], 'no converter ran');
});

t.test("a converter's refusal: with the usage line for a bad word, alone for a refusal", async (t) => {
  const secret: Converter<string> = {
    min: 1,
    max: 1,
    convert: ([first = ''], { isAdmin, sender }) =>
      isAdmin ? converted(first) : refused(`${sender.nick} may not see ${first}.`),
  };
  t.same(await read([wholeNumber, secret], 'x y'), { answer: `"x" is not a whole number. ${usage}` }, 'in order');
  t.same(await read([wholeNumber, secret], '1 y'), { answer: 'alice may not see y.' });
  t.same(await read([choice('ON', 'OFF')], 'maybe'), { answer: usage }, 'an empty message: the usage line alone');
  const admin = { ...context, isAdmin: true };
  t.same(await convertArguments([wholeNumber, secret], ['1', 'y'], admin, usage), { values: [1, 'y'] });
});

t.test('a converter that takes fewer words than it was offered leaves them: too many arguments', async (t) => {
  const lazy: Converter<string> = { min: 1, max: 3, convert: ([first = '']) => converted(first) };
  t.same(await read([lazy], 'a b'), { answer: `Too many arguments. ${usage}` });
});
