/**
 * A command's arguments, declared (Limnoria's `wrap`): a command names one converter per argument; each
 * takes the next word or words, converts them, or says why they will not do, and the handler gets the
 * converted values, typed by the declaration. The registry (`commands.ts`) runs them with
 * `convertArguments` and answers the errors; a plugin writes its own converters with
 * {@link converted}, {@link invalid} and {@link refused}.
 */

/** Who sent a command over IRC. */
export interface CommandSender {
  nick: string;
  /** The NickServ account the sender is logged in to, null if none. */
  account: string | null;
  /** Whether the server marks the sender as an IRC operator (only looked up when a check needs it). */
  isOperator?: boolean;
}

/**
 * What a converter knows of the command it reads for: its name, who sent it, and with what rights. The
 * sender's account, and so `isAdmin`, are looked up only for a command that declares `requiresAccount` or
 * `adminOnly`: a converter that depends on them belongs to such a command.
 */
export interface ArgumentContext {
  /** The command's name as declared, e.g. `TOKEN GRANT`. */
  command: string;
  sender: CommandSender;
  isAdmin: boolean;
}

/**
 * How a converter read its words: the value and how many words it used, or why they will not do. A
 * refusal's `usage` says whether the answer ends with the command's usage line (a word of the wrong
 * form) or not (a well-formed word that names something the sender may not have or see).
 */
export type Conversion<Value> =
  { ok: true; value: Value; used: number } | { ok: false; message: string; usage: boolean };

/** Reads one argument of a command: a word, several, or none (an optional one left out). */
export interface Converter<Value> {
  /** The fewest words it takes: 0 when it may be left out. */
  readonly min: number;
  /** The most words it takes: `Infinity` for a list, or the rest of the line. */
  readonly max: number;
  /** Said before the usage line when the sender gave no word for it; unset, the usage line alone is. */
  readonly missing?: string;
  /**
   * Reads from the first of `words` on: the words not taken yet, less the fewest that the arguments after
   * it take, so at least {@link min} of them.
   */
  convert(words: readonly string[], context: ArgumentContext): Conversion<Value> | Promise<Conversion<Value>>;
}

/** The values a handler gets for the converters `Args`, in their order. */
export type ArgumentValues<Args extends readonly Converter<unknown>[]> = {
  -readonly [Index in keyof Args]: Args[Index] extends Converter<infer Value> ? Value : never;
};

/** The value read from the first `used` words. */
export function converted<Value>(value: Value, used = 1): Conversion<Value> {
  return { ok: true, value, used };
}

/** A word of the wrong form: the answer is `message` and the command's usage line (the line alone for ''). */
export function invalid(message = ''): Conversion<never> {
  return { ok: false, message, usage: true };
}

/** A well-formed word that names what the sender may not have or see: the answer is `message` alone. */
export function refused(message: string): Conversion<never> {
  return { ok: false, message, usage: false };
}

/** One word, as it was typed. */
export const word: Converter<string> = {
  min: 1,
  max: 1,
  convert: ([first = '']) => converted(first),
};

/** The rest of the line as one string, its words joined by single spaces (a label, free text). */
export const rest: Converter<string> = {
  min: 1,
  max: Infinity,
  convert: (words) => converted(words.join(' '), words.length),
};

/** A whole number written in digits (0 or more, at most 15 digits). */
export const wholeNumber: Converter<number> = {
  min: 1,
  max: 1,
  convert([first = '']) {
    if (/^\d{1,15}$/.test(first)) return converted(Number(first));
    return invalid(first.length <= 20 ? `"${first}" is not a whole number.` : 'That is not a whole number.');
  },
};

/**
 * One of `choices` (`ON`, `OFF`), in any case; the value is the choice as declared. Any other word is
 * answered with the usage line, which names them.
 */
export function choice<const Choice extends string>(...choices: readonly Choice[]): Converter<Choice> {
  return {
    min: 1,
    max: 1,
    convert([first = '']) {
      const chosen = choices.find((candidate) => candidate.toUpperCase() === first.toUpperCase());
      return chosen === undefined ? invalid() : converted(chosen);
    },
  };
}

/**
 * `converter`'s argument, which the sender may leave out when nothing follows it: the value is then
 * `fallback` (undefined without one). A word given for it must convert.
 */
export function optional<Value>(converter: Converter<Value>): Converter<Value | undefined>;
export function optional<Value>(converter: Converter<Value>, fallback: Value): Converter<Value>;
export function optional<Value>(converter: Converter<Value>, fallback?: Value): Converter<Value | undefined> {
  return {
    min: 0,
    max: converter.max,
    convert: (words, context) => (words.length === 0 ? converted(fallback, 0) : converter.convert(words, context)),
  };
}

/** One or more of `converter`'s arguments, each converted in turn (a list of names). */
export function many<Value>(converter: Converter<Value>): Converter<Value[]> {
  return {
    min: Math.max(1, converter.min),
    max: Infinity,
    missing: converter.missing,
    async convert(words, context) {
      const values: Value[] = [];
      let used = 0;
      while (used < words.length) {
        const conversion = await converter.convert(words.slice(used), context);
        if (!conversion.ok) return conversion;
        // A converter that takes no word would loop for ever: what is left is then too many arguments.
        if (conversion.used === 0) break;
        values.push(conversion.value);
        used += conversion.used;
      }
      return converted(values, used);
    },
  };
}

/**
 * The values of `converters` read from `words`, or the answer that says why they will not do: too many
 * words (`Too many arguments. Usage: …`); too few (the first argument left without a word says so with
 * its {@link Converter.missing} text, then the usage line); or the first refusal of a converter, in
 * their order. No converter runs unless the number of words fits them all.
 */
export async function convertArguments(
  converters: readonly Converter<unknown>[],
  words: readonly string[],
  context: ArgumentContext,
  usageLine: string,
): Promise<{ values: unknown[] } | { answer: string }> {
  const tooMany = { answer: `Too many arguments. ${usageLine}` };
  if (words.length > converters.reduce((sum, converter) => sum + converter.max, 0)) return tooMany;
  let fewest = 0;
  for (const converter of converters) {
    fewest += converter.min;
    if (words.length < fewest) {
      return { answer: converter.missing ? `${converter.missing} ${usageLine}` : usageLine };
    }
  }
  const values: unknown[] = [];
  let left = words;
  for (const [index, converter] of converters.entries()) {
    const reserved = converters.slice(index + 1).reduce((sum, later) => sum + later.min, 0);
    const conversion = await converter.convert(left.slice(0, left.length - reserved), context);
    if (!conversion.ok) {
      const answer = conversion.usage ? [conversion.message, usageLine].filter(Boolean).join(' ') : conversion.message;
      return { answer };
    }
    values.push(conversion.value);
    left = left.slice(conversion.used);
  }
  return left.length > 0 ? tooMany : { values };
}
