/**
 * The host's configuration: one JSON file (`--config <path>` or
 * IRC_DATA_CONFIG), checked against {@link hostConfigSchema}, completed with
 * defaults, with secrets optionally taken from the environment.
 * docs/configuration.md describes every key.
 */
import { readFile } from 'node:fs/promises';
import { checkSchema, hostConfigSchema, type IRC_CLIENTS } from './config-schema.js';
import type { FromJsonSchema } from './schema-types.js';
import { errorMessage } from './logger.js';
import { compileTrustProxy } from './http/client-address.js';

export { checkSchema, hostConfigSchema } from './config-schema.js';

// Key names follow the JSON file (snake_case) so the file and the types read the same.

export type IrcClientName = (typeof IRC_CLIENTS)[number];

/**
 * The config file as its schema describes it, defaults filled in: every type below is read off it. Not
 * exported: the API docs show its keys in place (`@inline`), where {@link HostConfig} and {@link IrcConfig} use it.
 * @inline
 */
type SchemaConfig = FromJsonSchema<typeof hostConfigSchema>;
/** @inline */
type SchemaIrc = SchemaConfig['irc'];

/**
 * `irc.sasl` once completed: the account defaults to the nick, the password may come from the environment.
 * @useDeclaredType
 */
export type SaslConfig = Required<NonNullable<SchemaIrc['sasl']>>;

/**
 * `irc.oper` once completed (the name and the password may come from the environment).
 * @useDeclaredType
 */
export type OperConfig = Required<NonNullable<SchemaIrc['oper']>>;

/** `irc`, completed: `port` by `tls`, `username` from the nick, the SASL and OPER blocks whole. */
export type IrcConfig = Omit<SchemaIrc, 'port' | 'username' | 'sasl' | 'oper'> & {
  port: number;
  username: string;
  sasl?: SaslConfig;
  oper?: OperConfig;
};

/**
 * `http`, every default filled in.
 * @useDeclaredType
 */
export type HttpConfig = SchemaConfig['http'];

/**
 * `store`, every default filled in.
 * @useDeclaredType
 */
export type StoreConfig = SchemaConfig['store'];

/** The whole configuration, every default filled in. */
export type HostConfig = Omit<SchemaConfig, 'irc' | 'plugins'> & {
  irc: IrcConfig;
  /** Each plugin's slice, as written; the host checks it against that plugin's schema. */
  plugins: Record<string, Record<string, unknown>>;
};

/** The config cannot be used; `message` lists every problem, one per line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** The environment variables read here; empty ones count as unset. */
const ENV = {
  config: 'IRC_DATA_CONFIG',
  saslAccount: 'IRC_DATA_SASL_ACCOUNT',
  saslPassword: 'IRC_DATA_SASL_PASSWORD',
  operName: 'IRC_DATA_OPER_NAME',
  operPassword: 'IRC_DATA_OPER_PASSWORD',
} as const;

/**
 * The config file's path: `--config <path>` or `--config=<path>` in `argv`
 * (the last one wins), else IRC_DATA_CONFIG; null if neither is given.
 * Throws ConfigError for `--config` without a path.
 */
export function configPathFrom(argv: string[], env: NodeJS.ProcessEnv): string | null {
  let path: string | null = null;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    let value: string | undefined;
    if (arg === '--config') {
      value = argv[++index];
    } else if (arg.startsWith('--config=')) {
      value = arg.slice('--config='.length);
    } else {
      continue;
    }
    if (value === undefined || value === '' || value.startsWith('--')) {
      throw new ConfigError(['--config needs a path: --config <path> or --config=<path>']);
    }
    path = value;
  }
  return path ?? envValue(env, ENV.config) ?? null;
}

/** Read and parse the config file; an unreadable file is a ConfigError naming the path and the OS error. */
export async function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): Promise<HostConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`${path}: cannot read the config file: ${errorMessage(error)}`]);
  }
  return parseConfig(text, path, env);
}

/**
 * Parse, validate and complete a config: schema defaults, then the defaults that
 * depend on other keys, with the secrets from `env` laid over the file's values.
 * `source` (the file path) names the file in JSON syntax errors.
 * Throws ConfigError listing every problem found.
 */
export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): HostConfig {
  const data = parseJson(text.replace(/^\uFEFF/, ''), source);
  applyEnvironment(data, env);
  const problems = checkSchema(hostConfigSchema, data, 'config');
  if (problems.length > 0) throw new ConfigError(problems);
  // The schema has passed, so `data` has the HostConfig shape apart from the keys completed here.
  const config = data as HostConfig;
  const completionProblems = complete(config);
  if (completionProblems.length > 0) throw new ConfigError(completionProblems);
  return config;
}

function parseJson(text: string, source: string): unknown {
  if (text.trim() === '') throw new ConfigError([`${source}: the file is empty; expected a JSON object`]);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${source}: not valid JSON: ${jsonErrorText(error, text)}`]);
  }
}

/**
 * V8's message without its position and without the quoted excerpt of the
 * input it adds to some messages (the excerpt could hold a password), then the
 * line and column of the offending character.
 */
function jsonErrorText(error: unknown, text: string): string {
  let message = errorMessage(error)
    .replace(/, (\.\.\.)?"[\s\S]*is not valid JSON$/, '')
    .replace(/ (in JSON )?at position \d+[\s\S]*$/, '');
  if (message.includes('is not valid JSON')) message = 'unexpected input';
  const offset = /at position (\d+)/.exec(errorMessage(error))?.[1];
  const at = offset !== undefined ? Number(offset) : jsonErrorOffset(text);
  if (at === null) return message;
  const before = text.slice(0, at).split('\n');
  return `${message} (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/**
 * Where `text` stops being JSON: the offset of the first character that cannot
 * continue it, `text.length` if it ends too early, or null if it is valid. Only
 * used when V8's message does not say ("Unexpected token …").
 */
function jsonErrorOffset(text: string): number | null {
  let at = 0;
  const skipWhitespace = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const eat = (char: string): boolean => {
    if (text[at] !== char) return false;
    at++;
    return true;
  };
  const digits = (): boolean => {
    const start = at;
    while (at < text.length && text[at]! >= '0' && text[at]! <= '9') at++;
    return at > start;
  };
  const string = (): boolean => {
    if (!eat('"')) return false;
    while (at < text.length) {
      const char = text[at]!;
      if (char === '"') return eat('"');
      if (char < ' ') return false;
      at++;
      if (char !== '\\') continue;
      if (eat('u')) {
        for (let count = 0; count < 4; count++) {
          if (!/[0-9a-fA-F]/.test(text[at] ?? '')) return false;
          at++;
        }
      } else if (!'"\\/bfnrt'.includes(text[at] ?? 'x')) {
        return false;
      } else {
        at++;
      }
    }
    return false;
  };
  const number = (): boolean => {
    eat('-');
    if (!eat('0') && !digits()) return false;
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    return true;
  };
  const word = (expected: string): boolean => {
    for (const char of expected) if (!eat(char)) return false;
    return true;
  };
  const value = (): boolean => {
    skipWhitespace();
    const char = text[at];
    if (char === '{') return members('}', () => string() && (skipWhitespace(), eat(':')) && value());
    if (char === '[') return members(']', value);
    if (char === '"') return string();
    if (char === 't') return word('true');
    if (char === 'f') return word('false');
    if (char === 'n') return word('null');
    return number();
  };
  const members = (close: string, member: () => boolean): boolean => {
    at++;
    skipWhitespace();
    if (eat(close)) return true;
    for (;;) {
      skipWhitespace();
      if (!member()) return false;
      skipWhitespace();
      if (eat(close)) return true;
      if (!eat(',')) return false;
    }
  };
  if (value()) {
    skipWhitespace();
    if (at === text.length) return null;
  }
  return Math.min(at, text.length);
}

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Lay the environment's secrets over the parsed file, before validation so
 * the result is checked like the file. A block (sasl, oper) is created when a
 * variable for it is set and the file has none; a non-object block is left for
 * the schema to report.
 */
function applyEnvironment(data: unknown, env: NodeJS.ProcessEnv): void {
  if (!isRecord(data) || !isRecord(data['irc'])) return;
  const irc = data['irc'];
  const overlay = (block: string, values: Record<string, string | undefined>): void => {
    const given = Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined);
    if (given.length === 0) return;
    if (irc[block] === undefined) irc[block] = {};
    const target = irc[block];
    if (isRecord(target)) for (const [key, value] of given) target[key] = value;
  };
  overlay('sasl', { account: envValue(env, ENV.saslAccount), password: envValue(env, ENV.saslPassword) });
  overlay('oper', { name: envValue(env, ENV.operName), password: envValue(env, ENV.operPassword) });
}

/** Defaults that depend on other keys, and the checks the schema cannot express. */
function complete(config: HostConfig): string[] {
  const { irc } = config;
  irc.port ??= irc.tls ? 6697 : 6667;
  irc.username ??= irc.nick.toLowerCase();
  const problems: string[] = [];
  if (irc.sasl) {
    irc.sasl.account ??= irc.nick;
    if (irc.sasl.password === undefined) {
      problems.push(
        `config.irc.sasl.password is required (a string), got nothing; set it in the file or in ${ENV.saslPassword}`,
      );
    }
  }
  if (irc.oper) {
    if (irc.oper.name === undefined) {
      problems.push(
        `config.irc.oper.name is required (a string), got nothing; set it in the file or in ${ENV.operName}`,
      );
    }
    if (irc.oper.password === undefined) {
      problems.push(
        `config.irc.oper.password is required (a string), got nothing; set it in the file or in ${ENV.operPassword}`,
      );
    }
  }
  try {
    compileTrustProxy(config.http.trust_proxy);
  } catch (error) {
    problems.push(
      `config.http.trust_proxy must name addresses, CIDR ranges or loopback/linklocal/uniquelocal: ${errorMessage(error)}`,
    );
  }
  const { http } = config;
  if (http.headers_timeout_seconds > http.request_timeout_seconds) {
    problems.push(
      `config.http.headers_timeout_seconds must be at most config.http.request_timeout_seconds (${http.request_timeout_seconds}), got ${http.headers_timeout_seconds}`,
    );
  }
  if (irc.reconnect.min_ms > irc.reconnect.max_ms) {
    problems.push(
      `config.irc.reconnect.min_ms must be at most config.irc.reconnect.max_ms (${irc.reconnect.max_ms}), got ${irc.reconnect.min_ms}`,
    );
  }
  return problems;
}
