import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  checkSchema,
  configPathFrom,
  hostConfigSchema,
  loadConfig,
  parseConfig,
  type HostConfig,
} from '../../lib/config.js';

/** The repository root, found from this file whether it runs from test/ or dist/test/. */
function projectRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) directory = dirname(directory);
  return directory;
}

/** The problems parseConfig reports for `data` (which must have some). */
function problemsOf(data: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(JSON.stringify(data), 'test.json', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function parse(data: unknown, env: NodeJS.ProcessEnv = {}): HostConfig {
  return parseConfig(JSON.stringify(data), 'test.json', env);
}

const minimal = { irc: { host: 'irc.example.net', nick: 'DataBot' } };

t.test('a minimal file gets every default', async (t) => {
  t.same(parse(minimal), {
    irc: {
      host: 'irc.example.net',
      port: 6667,
      tls: false,
      tls_verify: true,
      nick: 'DataBot',
      username: 'databot',
      realname: 'IRC network data service',
      client: 'irc-framework',
      pacing: { burst: 4, interval_ms: 500 },
      commands: { burst: 5, interval_ms: 2000 },
      reconnect: { min_ms: 1000, max_ms: 60000 },
      quit_message: 'Shutting down',
    },
    http: {
      host: '127.0.0.1',
      port: 8080,
      body_limit: 16384,
      headers_timeout_seconds: 60,
      request_timeout_seconds: 300,
      keep_alive_timeout_seconds: 5,
      max_connections: 1000,
      trust_proxy: [],
      proxy_header: 'x-forwarded-for',
      access_log: true,
      front: { enabled: false, reuse_ms: 1000 },
    },
    store: { path: 'data/store.json' },
    admins: [],
    log: { level: 'info', format: 'text' },
    plugin_modules: [],
    plugins: {},
  });
});

t.test('the port defaults to 6697 with TLS, and a given port is kept', async (t) => {
  t.equal(parse({ irc: { ...minimal.irc, tls: true } }).irc.port, 6697);
  t.equal(parse({ irc: { ...minimal.irc, tls: false } }).irc.port, 6667);
  t.equal(parse({ irc: { ...minimal.irc, tls: true, port: 7000 } }).irc.port, 7000);
});

t.test('given values win over defaults', async (t) => {
  const config = parse({
    irc: { ...minimal.irc, username: 'ident', pacing: { burst: 10 }, client: 'matrix-org-irc' },
    http: { port: 0 },
    log: { level: 'debug', format: 'text' },
    admins: ['alice'],
  });
  t.equal(config.irc.username, 'ident');
  t.same(config.irc.pacing, { burst: 10, interval_ms: 500 });
  t.equal(config.irc.client, 'matrix-org-irc');
  t.same(config.http, {
    host: '127.0.0.1',
    port: 0,
    body_limit: 16384,
    headers_timeout_seconds: 60,
    request_timeout_seconds: 300,
    keep_alive_timeout_seconds: 5,
    max_connections: 1000,
    trust_proxy: [],
    proxy_header: 'x-forwarded-for',
    access_log: true,
    front: { enabled: false, reuse_ms: 1000 },
  });
  t.equal(config.log.level, 'debug');
  t.same(config.admins, ['alice']);
});

t.test('the four plugins are accepted as written', async (t) => {
  const plugins = { stats: {}, nickserv: {}, api: {}, tokens: {} };
  t.same(parse({ ...minimal, plugins }).plugins, plugins);
  t.same(problemsOf({ ...minimal, plugins: { stats: 5 } }), ['config.plugins.stats must be an object, got 5']);
});

t.test('messages name the key, what was expected and what was found', async (t) => {
  t.same(problemsOf({ irc: { ...minimal.irc, port: 0 } }), [
    'config.irc.port must be an integer from 1 to 65535, got 0',
  ]);
  t.same(problemsOf({ irc: { host: 'h' } }), ['config.irc.nick is required (a string), got nothing']);
  t.same(problemsOf({ ...minimal, http: { port: '80a' } }), [
    'config.http.port must be an integer from 0 to 65535, got "80a"',
  ]);
  t.same(problemsOf({ irc: { ...minimal.irc, tls: 'yes' } }), ['config.irc.tls must be a boolean, got "yes"']);
  t.same(problemsOf({ irc: { ...minimal.irc, client: 'irssi' } }), [
    'config.irc.client must be one of "irc-framework", "matrix-org-irc", got "irssi"',
  ]);
  t.same(problemsOf({ ...minimal, log: { level: 'verbose' } }), [
    'config.log.level must be one of "debug", "info", "warn", "error", got "verbose"',
  ]);
  t.same(problemsOf({ ...minimal, admins: ['alice', ''] }), ['config.admins[1] must be a non-empty string, got ""']);
  t.same(problemsOf([]), ['config must be an object, got []']);
  t.match(problemsOf({ irc: { ...minimal.irc, nick: '1Bot' } }), [
    /^config\.irc\.nick must be an IRC nickname \(.*\), got "1Bot"$/,
  ]);
});

t.test('an unknown key lists the allowed ones and suggests a close match', async (t) => {
  t.same(problemsOf({ irc: { ...minimal.irc, hots: 'x' } }), [
    'config.irc: unknown key "hots" (allowed: host, port, tls, tls_verify, nick, username, realname, client, sasl, oper, pacing, commands, reconnect, quit_message); did you mean "host"?',
  ]);
  t.same(problemsOf({ ...minimal, Plugins: {} }), [
    'config: unknown key "Plugins" (allowed: irc, http, store, admins, log, plugin_modules, plugins); did you mean "plugins"?',
  ]);
  t.same(problemsOf({ ...minimal, database: {} }), [
    'config: unknown key "database" (allowed: irc, http, store, admins, log, plugin_modules, plugins)',
  ]);
});

t.test('every problem is reported at once, one per line', async (t) => {
  const data = { irc: { host: 'h', nick: 'DataBot', port: 70000, tls: 1 }, http: { body_limit: 10 }, extra: true };
  const error = t.throws(() => parseConfig(JSON.stringify(data), 'test.json', {})) as ConfigError;
  t.ok(error instanceof ConfigError);
  t.equal(error.problems.length, 4);
  t.equal(error.message, error.problems.join('\n'));
  t.match(error.message, /config\.irc\.port must be an integer from 1 to 65535, got 70000/);
  t.match(error.message, /config\.irc\.tls must be a boolean, got 1/);
  t.match(error.message, /config\.http\.body_limit must be an integer from 1024 to 16777216, got 10/);
  t.match(error.message, /config: unknown key "extra"/);
});

t.test('found values are shortened to about 60 characters', async (t) => {
  const [problem] = problemsOf({ irc: { ...minimal.irc, port: 'x'.repeat(200) } });
  const found = problem!.split(', got ')[1]!;
  t.ok(found.length <= 60, `shown value has ${found.length} characters`);
  t.match(found, /^"xxxx.*…$/);
});

t.test('passwords are described, never shown', async (t) => {
  const secret = 'hunter2hunter2';
  const cases = [
    { irc: { ...minimal.irc, sasl: { account: 'DataBot', password: 12345678 } } },
    { irc: { ...minimal.irc, sasl: { password: ['hunter2hunter2'] } } },
    { irc: { ...minimal.irc, sasl: secret } },
    { irc: { ...minimal.irc, oper: [secret] } },
    { irc: [{ sasl: { password: secret } }] },
    { irc: { ...minimal.irc, oper: { name: 'botoper', password: { value: secret } } } },
  ];
  const problems = cases.flatMap((data) => problemsOf(data));
  t.equal(problems.length, cases.length);
  for (const problem of problems) {
    t.notMatch(problem, /hunter2|12345678/, problem);
  }
  t.same(problemsOf(cases[0]), ['config.irc.sasl.password must be a non-empty string, got a number']);
  t.same(problemsOf(cases[2]), ['config.irc.sasl must be an object, got a string of 14 characters']);
  t.same(problemsOf(cases[5]), ['config.irc.oper.password must be a non-empty string, got an object']);
});

t.test('invalid JSON names the file, the parser message and the position', async (t) => {
  const parseProblem = (text: string): string => {
    const error = t.throws(() => parseConfig(text, '/etc/irc-data.json', {})) as ConfigError;
    return error.problems.join('\n');
  };
  t.equal(
    parseProblem('{\n  "irc": {\n    "host": "h"\n    "nick": "n"\n  }\n}'),
    `/etc/irc-data.json: not valid JSON: Expected ',' or '}' after property value (line 4, column 5)`,
  );
  // V8 gives no position for an unexpected token, and quotes the input: both are handled here.
  const withToken = parseProblem('{\n  "irc": { "password": "hunter2" },\n  "http": }');
  t.match(withToken, /^\/etc\/irc-data\.json: not valid JSON: Unexpected token '\}'.* \(line 3, column 11\)$/);
  t.notMatch(withToken, /hunter2/);
  t.match(parseProblem('{"irc": {'), /: not valid JSON: .* \(line 1, column 10\)$/);
  t.equal(
    parseProblem('{"irc": {}}\n}'),
    '/etc/irc-data.json: not valid JSON: Unexpected non-whitespace character after JSON (line 2, column 1)',
  );
  t.equal(parseProblem('  \n'), '/etc/irc-data.json: the file is empty; expected a JSON object');
});

t.test('a byte order mark is ignored', async (t) => {
  t.equal(parseConfig('\uFEFF' + JSON.stringify(minimal), 'test.json', {}).irc.nick, 'DataBot');
});

t.test('reconnect.min_ms may not exceed max_ms', async (t) => {
  t.same(problemsOf({ irc: { ...minimal.irc, reconnect: { min_ms: 5000, max_ms: 2000 } } }), [
    'config.irc.reconnect.min_ms must be at most config.irc.reconnect.max_ms (2000), got 5000',
  ]);
});

t.test('SASL: account defaults to the nick, the password is required', async (t) => {
  t.same(parse({ irc: { ...minimal.irc, sasl: { password: 'pw' } } }).irc.sasl, { account: 'DataBot', password: 'pw' });
  t.same(problemsOf({ irc: { ...minimal.irc, sasl: { account: 'DataBot' } } }), [
    'config.irc.sasl.password is required (a string), got nothing; set it in the file or in IRC_DATA_SASL_PASSWORD',
  ]);
  t.equal(parse(minimal).irc.sasl, undefined);
  t.equal(parse(minimal).irc.oper, undefined);
});

t.test('secrets from the environment win over the file', async (t) => {
  const fileSasl = { irc: { ...minimal.irc, sasl: { account: 'FileAccount', password: 'from-file' } } };
  t.same(parse(fileSasl, { IRC_DATA_SASL_PASSWORD: 'from-env' }).irc.sasl, {
    account: 'FileAccount',
    password: 'from-env',
  });
  t.same(parse(fileSasl, { IRC_DATA_SASL_ACCOUNT: 'EnvAccount' }).irc.sasl, {
    account: 'EnvAccount',
    password: 'from-file',
  });
  t.same(parse(minimal, { IRC_DATA_SASL_PASSWORD: 'from-env' }).irc.sasl, { account: 'DataBot', password: 'from-env' });
  t.same(parse(minimal, { IRC_DATA_SASL_PASSWORD: 'pw', IRC_DATA_SASL_ACCOUNT: 'Acct' }).irc.sasl, {
    account: 'Acct',
    password: 'pw',
  });
  t.equal(
    parse(fileSasl, { IRC_DATA_SASL_PASSWORD: '' }).irc.sasl?.password,
    'from-file',
    'an empty variable counts as unset',
  );

  const fileOper = { irc: { ...minimal.irc, oper: { name: 'botoper', password: 'from-file' } } };
  t.same(parse(fileOper, { IRC_DATA_OPER_PASSWORD: 'from-env' }).irc.oper, { name: 'botoper', password: 'from-env' });
  t.same(parse(minimal, { IRC_DATA_OPER_PASSWORD: 'pw', IRC_DATA_OPER_NAME: 'envoper' }).irc.oper, {
    name: 'envoper',
    password: 'pw',
  });
  t.same(problemsOf(minimal, { IRC_DATA_OPER_PASSWORD: 'pw' }), [
    'config.irc.oper.name is required (a string), got nothing; set it in the file or in IRC_DATA_OPER_NAME',
  ]);
  t.same(problemsOf(minimal, { IRC_DATA_SASL_ACCOUNT: 'Acct' }), [
    'config.irc.sasl.password is required (a string), got nothing; set it in the file or in IRC_DATA_SASL_PASSWORD',
  ]);
});

t.test('secrets from the environment never appear in an error message', async (t) => {
  const env = { IRC_DATA_SASL_PASSWORD: 'sasl-secret-1', IRC_DATA_OPER_PASSWORD: 'oper-secret-2' };
  const broken = [
    { irc: { ...minimal.irc, port: 0 } },
    { irc: { ...minimal.irc, sasl: { password: 5, extra: 1 }, oper: { password: [] } } },
    { irc: { ...minimal.irc, sasl: 'text', oper: 'text' } },
    { irc: { ...minimal.irc, hots: 1 } },
    { irc: { host: 'h' } },
    minimal,
  ];
  const messages: string[] = [];
  for (const data of broken) {
    const error = t.throws(() => parseConfig(JSON.stringify(data), 'test.json', env)) as ConfigError;
    messages.push(error.message);
  }
  t.equal(messages.length, broken.length);
  for (const message of messages) {
    t.notMatch(message, /sasl-secret-1|oper-secret-2/, message);
  }
});

t.test('configPathFrom: --config, --config=, IRC_DATA_CONFIG', async (t) => {
  t.equal(configPathFrom(['--config', 'a.json'], {}), 'a.json');
  t.equal(configPathFrom(['--verbose', '--config=b.json'], {}), 'b.json');
  t.equal(configPathFrom([], { IRC_DATA_CONFIG: 'c.json' }), 'c.json');
  t.equal(configPathFrom(['--config', 'a.json'], { IRC_DATA_CONFIG: 'c.json' }), 'a.json', 'the command line wins');
  t.equal(configPathFrom(['--config', 'a.json', '--config=b.json'], {}), 'b.json', 'the last one wins');
  t.equal(configPathFrom(['other'], {}), null);
  t.equal(configPathFrom([], { IRC_DATA_CONFIG: '' }), null);
  t.throws(() => configPathFrom(['--config'], {}), ConfigError);
  t.throws(() => configPathFrom(['--config='], {}), ConfigError);
  t.throws(() => configPathFrom(['--config', '--verbose'], {}), /--config needs a path/);
});

t.test('loadConfig reads the file and names it when it cannot', async (t) => {
  const directory = t.testdir({ 'config.json': JSON.stringify(minimal), 'broken.json': '{' });
  t.equal((await loadConfig(join(directory, 'config.json'), {})).irc.nick, 'DataBot');
  const missing = join(directory, 'missing.json');
  await t.rejects(loadConfig(missing, {}), {
    name: 'ConfigError',
    message: new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read the config file: ENOENT`),
  });
  await t.rejects(loadConfig(join(directory, 'broken.json'), {}), { message: /broken\.json: not valid JSON/ });
});

t.test('checkSchema checks a plugin slice: defaults filled, messages prefixed', async (t) => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      interval_s: { type: 'integer', minimum: 10, default: 60 },
      channels: { type: 'array', items: { type: 'string', pattern: '^#' }, minItems: 1, default: ['#stats'] },
      api_token: { type: 'string', minLength: 20 },
      limit: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], default: null },
      nested: { type: 'object', default: {}, properties: { on: { type: 'boolean', default: true } } },
      prefix: { type: 'string', minLength: 2, pattern: '^!' },
    },
  };
  const filled: Record<string, unknown> = {};
  t.same(checkSchema(schema, filled, 'config.plugins.stats'), []);
  t.same(filled, { interval_s: 60, channels: ['#stats'], limit: null, nested: { on: true } });

  const broken = {
    intervall_s: 5,
    interval_s: 5,
    channels: ['stats'],
    api_token: 'short-token',
    limit: 0,
    nested: { on: 'yes' },
    prefix: '?',
  };
  t.same(checkSchema(schema, broken, 'config.plugins.stats'), [
    'config.plugins.stats: unknown key "intervall_s" (allowed: interval_s, channels, api_token, limit, nested, prefix); did you mean "interval_s"?',
    'config.plugins.stats.interval_s must be an integer of at least 10, got 5',
    'config.plugins.stats.channels[0] must be a string matching /^#/, got "stats"',
    'config.plugins.stats.api_token must be a string of at least 20 characters, got a string of 11 characters',
    'config.plugins.stats.limit must be an integer of at least 1 or null, got 0',
    'config.plugins.stats.nested.on must be a boolean, got "yes"',
    // Two keywords fail here (minLength, pattern); the value gets one message saying both.
    'config.plugins.stats.prefix must be a string of at least 2 characters matching /^!/, got "?"',
  ]);
  t.same(checkSchema(schema, { channels: [] }, 'config.plugins.stats'), [
    'config.plugins.stats.channels must be an array of strings with at least 1 item, got []',
  ]);
});

t.test('config.example.json is valid and shows the built-in plugins', async (t) => {
  const root = projectRoot();
  const config = parseConfig(readFileSync(join(root, 'config.example.json'), 'utf8'), 'config.example.json', {});
  t.equal(config.irc.host, '127.0.0.1');
  t.equal(config.irc.port, 6667);
  t.equal(config.irc.nick, 'DataBot');
  t.equal(config.irc.sasl?.account, 'DataBot');
  t.same(Object.keys(config.plugins), ['stats', 'nickserv', 'api', 'tokens', 'web', 'account', 'metrics', 'events']);
});

interface SchemaWalk {
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaWalk>;
}

/** Every key in the schema, by dotted path, with its schema. */
function schemaKeys(schema: SchemaWalk, path = ''): Array<[string, SchemaWalk]> {
  return Object.entries(schema.properties ?? {}).flatMap(([key, child]): Array<[string, SchemaWalk]> => {
    const childPath = path ? `${path}.${key}` : key;
    return [[childPath, child], ...schemaKeys(child, childPath)];
  });
}

t.test('every key has a description and a row in docs/configuration.md', async (t) => {
  const docs = readFileSync(join(projectRoot(), 'docs/configuration.md'), 'utf8').split('\n');
  const keys = schemaKeys(hostConfigSchema as SchemaWalk);
  t.ok(keys.length > 25, `${keys.length} keys`);
  for (const [path, schema] of keys) {
    t.ok(schema.description, `${path} has a description`);
    if (schema.properties) continue;
    const row = docs.find((line) => line.startsWith(`| \`${path}\` `));
    if (!t.ok(row, `${path} has a row in the docs`)) continue;
    if (schema.default !== undefined) {
      t.ok(
        row!.includes('`' + JSON.stringify(schema.default) + '`'),
        `${path}: the docs show the default ${JSON.stringify(schema.default)}`,
      );
    }
  }
});

t.test('a schema with an $id is checked again when a second host builds it anew', async (t) => {
  // Each host start builds a plugin's schema object again; the compiler must not remember the first.
  const build = () => ({
    $id: 'https://example.org/plugin-config',
    type: 'object',
    properties: { greeting: { type: 'string', default: 'hi' } },
  });
  const first: Record<string, unknown> = {};
  t.same(checkSchema(build(), first, 'config.plugins.x'), []);
  t.same(first, { greeting: 'hi' });
  const second: Record<string, unknown> = { greeting: 5 };
  t.match(checkSchema(build(), second, 'config.plugins.x'), [/config\.plugins\.x\.greeting must be a string/]);
});
