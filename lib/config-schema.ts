/**
 * The JSON Schema of the host's config file, and {@link checkSchema}: the one
 * place that runs a JSON Schema (the host's or a plugin's) and turns ajv's
 * errors into sentences that name the key, what it must be and what it is.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LOG_LEVELS, errorMessage } from './logger.js';

/** The IRC client libraries an adapter exists for (lib/irc/). */
export const IRC_CLIENTS = ['irc-framework', 'matrix-org-irc'] as const;

/** Only the keywords this file reads; schemas are plain JSON Schema objects. */
interface SchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  required?: string[];
  items?: SchemaNode;
  enum?: unknown[];
  const?: unknown;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  /** Our annotation: what the value must be, in words, used in messages instead of a regex. */
  'x-expected'?: string;
}

const nonEmptyString = { type: 'string', minLength: 1 } as const;

/** One integer setting of {@link bucketSchema}. */
interface IntegerSetting {
  minimum: number;
  maximum: number;
  default: number;
  description: string;
}

/** A token bucket's settings: `burst` at once, then one every `interval_ms`. */
function bucketSchema<Burst extends IntegerSetting, Interval extends IntegerSetting>(
  description: string,
  burst: Burst,
  interval: Interval,
) {
  return {
    type: 'object',
    description,
    default: {},
    additionalProperties: false,
    properties: {
      burst: { type: 'integer', ...burst },
      interval_ms: { type: 'integer', ...interval },
    },
  } as const;
}

/**
 * The config file's JSON Schema. Every property has a `description`;
 * docs/configuration.md is written from it (and a test keeps the two in step).
 * Defaults that depend on other keys (irc.port, irc.username, irc.sasl.account)
 * are not in the schema: {@link parseConfig} fills them after validation.
 */
export const hostConfigSchema = {
  type: 'object',
  description: 'The IRC network data service configuration.',
  additionalProperties: false,
  required: ['irc'],
  properties: {
    irc: {
      type: 'object',
      description: 'The IRC connection.',
      additionalProperties: false,
      required: ['host', 'nick'],
      properties: {
        host: { ...nonEmptyString, description: 'Server host name or address.' },
        port: {
          type: 'integer',
          minimum: 1,
          maximum: 65535,
          description: 'Server port; defaults to 6667, or 6697 when irc.tls is true.',
        },
        tls: { type: 'boolean', default: false, description: 'Connect with TLS.' },
        tls_verify: {
          type: 'boolean',
          default: true,
          description:
            "Check the server's TLS certificate; turn off only for a test network with a self-signed certificate.",
        },
        nick: {
          type: 'string',
          pattern: '^[A-Za-z\\[\\]\\\\`_^{|}][A-Za-z0-9\\[\\]\\\\`_^{|}-]*$',
          'x-expected': 'an IRC nickname (letters, digits and [ ] \\ ` _ ^ { | } -, not starting with a digit or -)',
          description: "The bot's nickname.",
        },
        username: {
          type: 'string',
          pattern: '^[^\\s@]+$',
          'x-expected': 'a non-empty string without spaces or @',
          description: "The username (ident) part of the bot's hostmask; defaults to the nick in lower case.",
        },
        realname: {
          ...nonEmptyString,
          default: 'IRC network data service',
          description: 'The real name (gecos) shown in WHOIS.',
        },
        client: {
          type: 'string',
          enum: [...IRC_CLIENTS],
          default: 'irc-framework',
          description: 'Which IRC client library connects; docs/transports.md says what differs between them.',
        },
        sasl: {
          type: 'object',
          description:
            'Log in to services with SASL PLAIN. The password is required here or in IRC_DATA_SASL_PASSWORD.',
          additionalProperties: false,
          properties: {
            account: { ...nonEmptyString, description: 'Services account name; defaults to irc.nick.' },
            password: {
              ...nonEmptyString,
              description: 'Services password; IRC_DATA_SASL_PASSWORD overrides it.',
            },
          },
        },
        oper: {
          type: 'object',
          description: 'Become an IRC operator (OPER) after connecting, to see more of the network.',
          additionalProperties: false,
          properties: {
            name: { ...nonEmptyString, description: 'Oper name; IRC_DATA_OPER_NAME overrides it.' },
            password: { ...nonEmptyString, description: 'Oper password; IRC_DATA_OPER_PASSWORD overrides it.' },
          },
        },
        pacing: bucketSchema(
          'Outgoing line pacing, so the server does not disconnect the bot for flooding.',
          { minimum: 1, maximum: 100, default: 4, description: 'Lines that may be sent at once before pacing starts.' },
          { minimum: 10, maximum: 10000, default: 500, description: 'Then one line every this many milliseconds.' },
        ),
        commands: bucketSchema(
          "How many commands one client (ident@host) may send the bot: a flood would hold up everyone else's answers.",
          { minimum: 1, maximum: 1000, default: 5, description: 'Commands one client may send at once.' },
          {
            minimum: 0,
            maximum: 600000,
            default: 2000,
            description: 'Then one command every this many milliseconds; commands sent faster are ignored.',
          },
        ),
        reconnect: {
          type: 'object',
          description: 'Waiting between reconnection attempts (doubling from min_ms up to max_ms, with jitter).',
          default: {},
          additionalProperties: false,
          properties: {
            min_ms: {
              type: 'integer',
              minimum: 100,
              maximum: 3600000,
              default: 1000,
              description: 'First wait in milliseconds; at most max_ms.',
            },
            max_ms: {
              type: 'integer',
              minimum: 100,
              maximum: 3600000,
              default: 60000,
              description: 'Longest wait in milliseconds.',
            },
          },
        },
        quit_message: {
          type: 'string',
          default: 'Shutting down',
          description: 'QUIT message sent when the service stops.',
        },
      },
    },
    http: {
      type: 'object',
      description: 'The HTTP API server.',
      default: {},
      additionalProperties: false,
      properties: {
        host: { ...nonEmptyString, default: '127.0.0.1', description: 'Address to listen on.' },
        port: {
          type: 'integer',
          minimum: 0,
          maximum: 65535,
          default: 8080,
          description: 'Port to listen on; 0 picks a free port.',
        },
        body_limit: {
          type: 'integer',
          minimum: 1024,
          maximum: 16777216,
          default: 16384,
          description: 'Largest request body accepted, in bytes.',
        },
        headers_timeout_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 600,
          default: 60,
          description:
            "Seconds a client has to send a request's headers before it gets a 408 (a slow client holds a " +
            'connection no longer); at most request_timeout_seconds.',
        },
        request_timeout_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 3600,
          default: 300,
          description: 'Seconds a client has to send a whole request, body included, before it gets a 408.',
        },
        keep_alive_timeout_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: 600,
          default: 5,
          description: 'Seconds an idle kept-alive connection stays open for its next request.',
        },
        max_connections: {
          type: 'integer',
          minimum: 1,
          maximum: 1000000,
          default: 1000,
          description:
            'Open HTTP connections at most; a connection beyond it is closed at once, unanswered. Behind a proxy ' +
            'that keeps its connections alive (the shipped nginx site), a few are enough; keep it below the ' +
            "process's open-file limit, which the IRC connection and the store need too.",
        },
        trust_proxy: {
          anyOf: [{ type: 'string' }, { type: 'array', items: nonEmptyString }],
          default: [],
          description:
            'The reverse proxies (addresses, CIDR ranges, or loopback, linklocal, uniquelocal) whose notes of the ' +
            'client (in the header proxy_header names) are believed: the client they name is then the address ' +
            'rate limits, logs and the audit log use, and its scheme decides Secure cookies. Empty (the default): ' +
            "no proxy is trusted and the socket's peer is the client.",
        },
        proxy_header: {
          enum: ['x-forwarded-for', 'forwarded'],
          default: 'x-forwarded-for',
          description:
            'The one header the proxies in trust_proxy write the client into: "x-forwarded-for" (with ' +
            'X-Forwarded-Proto; nginx, Caddy, HAProxy with option forwardfor) or "forwarded" (RFC 7239; HAProxy with ' +
            'option forwarded). The other header is ignored, whoever sends it: a proxy that appends to one passes ' +
            'the other on as the client wrote it.',
        },
        access_log: {
          type: 'boolean',
          default: true,
          description:
            'Write one log line per HTTP request (method, path, route, status, duration, client address); never ' +
            'headers, query strings or bodies.',
        },
        front: {
          type: 'object',
          description:
            'The HTTP front: a thread of its own that owns the listening socket and answers public reads from ' +
            "the answers the bot gave last, so that a request never waits for the bot's own work.",
          default: {},
          additionalProperties: false,
          properties: {
            enabled: {
              type: 'boolean',
              default: false,
              description:
                "Serve HTTP through the front: public reads never wait for the bot's own work, for about 10 MB more " +
                "memory. Off, the bot's own thread serves every request.",
            },
            reuse_ms: {
              type: 'integer',
              minimum: 0,
              maximum: 60000,
              default: 1000,
              description:
                'The longest the front answers a public read with an answer it kept, in milliseconds (never longer ' +
                "than the answer's max-age); after that it asks the bot for a new one, serving the kept one until it " +
                'comes. 0: public reads are not kept.',
            },
          },
        },
      },
    },
    store: {
      type: 'object',
      description: 'Where the service keeps its data between runs.',
      default: {},
      additionalProperties: false,
      properties: {
        path: {
          ...nonEmptyString,
          default: 'data/store.json',
          description:
            'The JSON file the data is saved in; a relative path is taken from the working directory. The API tokens ' +
            'and sign-in sessions are saved beside it, in <name>.durable.json and its journal, ' +
            '<name>.durable.journal-<n>.jsonl.',
        },
        archive_dir: {
          ...nonEmptyString,
          description:
            'The folder where plugins append what their retention policy stops keeping (revoked tokens and old ' +
            'audit entries: tokens.jsonl), one JSON line per record; the bot never reads it back. Default: the ' +
            'folder "archive" beside the store file.',
        },
      },
    },
    admins: {
      type: 'array',
      items: nonEmptyString,
      default: [],
      description: 'Services account names allowed to use admin-only commands.',
    },
    log: {
      type: 'object',
      description: 'Logging.',
      default: {},
      additionalProperties: false,
      properties: {
        level: {
          type: 'string',
          enum: [...LOG_LEVELS],
          default: 'info',
          description: 'Least important level written.',
        },
        format: {
          type: 'string',
          enum: ['text', 'json'],
          default: 'text',
          description:
            'text: one readable line per event, for a terminal or the journal. json: one JSON object per line ' +
            '(pino), for log shippers.',
        },
      },
    },
    plugin_modules: {
      type: 'array',
      default: [],
      description:
        'Plugins from outside this package: paths (relative to this config file) of JavaScript modules whose ' +
        'default export is a plugin definition. Each one is then enabled and set under "plugins", as a built-in one.',
      items: { type: 'string', minLength: 1 },
    },
    plugins: {
      type: 'object',
      default: {},
      description:
        "The plugins to load, by name; each value is that plugin's settings, checked by the plugin's own schema.",
      additionalProperties: { type: 'object', description: "A plugin's settings." },
    },
  },
} as const;

// One compiler; it keeps nothing between compilations (each schema is removed from it once compiled), so
// hosts started one after another in a process share no schema: not an `$id`, not a cached validator.
const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, allowUnionTypes: true });
ajv.addKeyword('x-expected');
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * Validate `data` against a JSON Schema and return the problems, one sentence
 * each, naming the key path under `prefix` (e.g. `config.plugins.stats`), what
 * was expected and what was found. Missing keys that have a `default` are filled
 * in place, so a problem-free `data` is complete. Values under secret-looking
 * keys (password, token, …) are never shown. A schema may carry `x-expected`
 * ("an IRC nickname") to describe a `pattern` in words.
 *
 * An invalid schema is a programming error and throws a plain Error.
 */
export function checkSchema(schema: object, data: unknown, prefix: string): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      throw new Error(`invalid JSON Schema for ${prefix}: ${errorMessage(error)}`, { cause: error });
    } finally {
      ajv.removeSchema(schema);
    }
    compiled.set(schema, validate);
  }
  if (validate(data)) return [];
  return translateErrors(validate.errors ?? [], data, prefix);
}

/** Keywords whose failure means "the value is not what the schema describes". */
const VALUE_KEYWORDS = new Set([
  'type',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'anyOf',
  'oneOf',
]);

function translateErrors(errors: ErrorObject[], root: unknown, prefix: string): string[] {
  // anyOf/oneOf is described as a whole; the errors of its branches would only repeat it.
  const alternatives = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const problems = new Map<string, string>();
  for (const error of errors) {
    if (alternatives.some((other) => error.schemaPath.startsWith(other.schemaPath + '/'))) continue;
    const at = locate(root, error.instancePath, prefix);
    const schema = (error.parentSchema ?? {}) as SchemaNode;
    // A block that holds a secret (sasl) is hidden too: `"sasl": "hunter2"` is an easy mistake.
    const secret = at.secret || Object.keys(schema.properties ?? {}).some(isSecretKey);
    if (error.keyword === 'required') {
      const key = String(error.params['missingProperty']);
      const path = childPath(at.path, key);
      const child = schema.properties?.[key];
      const kind = child ? ` (${typeName(child)})` : '';
      problems.set(path, `${path} is required${kind}, got nothing`);
    } else if (error.keyword === 'additionalProperties') {
      const key = String(error.params['additionalProperty']);
      const allowed = Object.keys(schema.properties ?? {});
      const list = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'no keys allowed';
      const guess = closestKey(key, allowed);
      const hint = guess ? `; did you mean ${JSON.stringify(guess)}?` : '';
      problems.set(childPath(at.path, key), `${at.path}: unknown key ${JSON.stringify(key)} (${list})${hint}`);
    } else if (VALUE_KEYWORDS.has(error.keyword)) {
      // Keyed by path: a value failing two keywords (minLength, pattern) gets one message describing both.
      problems.set(at.path, `${at.path} must be ${describe(schema)}, got ${showValue(error.data, secret)}`);
    } else {
      problems.set(
        `${at.path} ${error.schemaPath}`,
        `${at.path} ${error.message ?? 'is not valid'}, got ${showValue(error.data, secret)}`,
      );
    }
  }
  return [...problems.values()];
}

/** A key path for messages (`config.irc.port`, `config.admins[2]`), and whether a secret lies on it. */
function locate(root: unknown, pointer: string, prefix: string): { path: string; secret: boolean } {
  let path = prefix;
  let secret = false;
  let current = root;
  if (pointer === '') return { path, secret };
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      path += `[${key}]`;
      current = current[Number(key)];
    } else {
      path = childPath(path, key);
      secret ||= isSecretKey(key);
      current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
    }
  }
  return { path, secret };
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** password, oper_password, api_key, clientSecret, token… but not "tokens" (a plugin's name). */
function isSecretKey(key: string): boolean {
  return (
    /(^|[_-])(password|passphrase|passwd|secret|token|key)$/i.test(key) ||
    /[a-z](Password|Passphrase|Secret|Token|Key)$/.test(key)
  );
}

const SHOWN_LENGTH = 60;

/** The found value as JSON, shortened; a secret is described, never shown. */
function showValue(value: unknown, secret: boolean): string {
  if (value === undefined) return 'nothing';
  if (secret) {
    if (typeof value === 'string') return value === '' ? 'an empty string' : `a string of ${value.length} characters`;
    if (value === null) return 'null';
    return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  }
  const text =
    JSON.stringify(value, (key, inner: unknown) => (key !== '' && isSecretKey(key) ? '(hidden)' : inner)) ??
    String(value);
  return text.length > SHOWN_LENGTH ? text.slice(0, SHOWN_LENGTH - 1) + '…' : text;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const TYPE_PLURALS: Record<string, string> = {
  string: 'strings',
  integer: 'integers',
  number: 'numbers',
  boolean: 'booleans',
  object: 'objects',
  array: 'arrays',
};

/** "a string", "an integer or null": the bare type, for "is required (…)". */
function typeName(schema: SchemaNode): string {
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length === 0)
    return schema.enum ? 'one of ' + schema.enum.map((value) => JSON.stringify(value)).join(', ') : 'a value';
  return types.map((type) => TYPE_NAMES[type] ?? type).join(' or ');
}

/** What a value must be, in words: "an integer from 1 to 65535", "one of "a", "b"". */
function describe(schema: SchemaNode): string {
  if (schema['x-expected']) return schema['x-expected'];
  if (schema.enum) return 'one of ' + schema.enum.map((value) => JSON.stringify(value)).join(', ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return branches.map(describe).join(' or ');
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length === 0) return 'valid';
  return types.map((type) => describeType(type, schema)).join(' or ');
}

function describeType(type: string, schema: SchemaNode): string {
  const name = TYPE_NAMES[type] ?? type;
  const limits: string[] = [];
  if (type === 'integer' || type === 'number') {
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
    if (minimum !== undefined && maximum !== undefined) limits.push(`from ${minimum} to ${maximum}`);
    else if (minimum !== undefined) limits.push(`of at least ${minimum}`);
    else if (maximum !== undefined) limits.push(`of at most ${maximum}`);
    if (exclusiveMinimum !== undefined) limits.push(`greater than ${exclusiveMinimum}`);
    if (exclusiveMaximum !== undefined) limits.push(`less than ${exclusiveMaximum}`);
    if (schema.multipleOf !== undefined) limits.push(`that is a multiple of ${schema.multipleOf}`);
  } else if (type === 'string') {
    const { minLength, maxLength } = schema;
    if (minLength === 1 && maxLength === undefined)
      return 'a non-empty string' + (schema.pattern ? ` matching /${schema.pattern}/` : '');
    if (minLength !== undefined && maxLength !== undefined) limits.push(`of ${minLength} to ${maxLength} characters`);
    else if (minLength !== undefined) limits.push(`of at least ${minLength} characters`);
    else if (maxLength !== undefined) limits.push(`of at most ${maxLength} characters`);
    if (schema.pattern) limits.push(`matching /${schema.pattern}/`);
  } else if (type === 'array') {
    const itemType = schema.items?.type;
    let phrase = typeof itemType === 'string' ? `an array of ${TYPE_PLURALS[itemType] ?? itemType}` : name;
    if (schema.uniqueItems) phrase += ' without duplicates';
    const { minItems, maxItems } = schema;
    if (minItems !== undefined && maxItems !== undefined) limits.push(`with ${minItems} to ${maxItems} items`);
    else if (minItems !== undefined) limits.push(`with at least ${minItems} ${minItems === 1 ? 'item' : 'items'}`);
    else if (maxItems !== undefined) limits.push(`with at most ${maxItems} items`);
    return [phrase, ...limits].join(' ');
  }
  return [name, ...limits].join(' ');
}

/** The allowed key a typo most likely meant, if one is close enough. */
function closestKey(key: string, allowed: string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(1, Math.floor(key.length / 3));
  return bestDistance <= tolerance ? best : null;
}

/** Edit distance counting a swap of two neighbouring letters as one edit ("hots" → "host"). */
function editDistance(from: string, to: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= from.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= to.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1]!;
      const cost = from[i - 1] === to[j - 1] ? 0 : 1;
      let value = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && from[i - 1] === to[j - 2] && from[i - 2] === to[j - 1]) {
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      }
      row.push(value);
    }
    rows.push(row);
  }
  return rows[from.length]![to.length]!;
}
