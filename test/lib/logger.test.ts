import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createLogger, type LogLevel } from '../../lib/logger.js';

function capture(level: LogLevel = 'debug') {
  const lines: string[] = [];
  const logger = createLogger({
    level,
    sink: (line) => lines.push(line),
    now: () => new Date('2026-11-21T12:00:00.000Z'),
  });
  return { logger, lines };
}

t.test('one line per event with time, level, source and fields', async (t) => {
  const { logger, lines } = capture();
  logger.child('stats').info('synced', { users: 12, note: 'two words' });
  t.same(lines, ['2026-11-21T12:00:00.000Z INFO  [stats] synced users=12 note="two words"']);
});

t.test('levels below the threshold are dropped', async (t) => {
  const { logger, lines } = capture('warn');
  logger.info('hidden');
  logger.debug('hidden');
  logger.warn('shown');
  logger.error('shown too');
  t.equal(lines.length, 2);
});

t.test('secrets and token-shaped strings are masked, newlines folded', async (t) => {
  const { logger, lines } = capture();
  const child = logger.child('irc');
  logger.addSecret('hunter2');
  child.info('login with hunter2\nnext line', { token: 'ntd_' + 'a'.repeat(43) });
  t.equal(lines.length, 1);
  t.notMatch(lines[0]!, /hunter2/);
  t.notMatch(lines[0]!, /ntd_a/);
  t.match(lines[0]!, /\[redacted\] next line/);
});

t.test('a secret in a field is masked before the field is quoted, whatever it holds', async (t) => {
  const { logger, lines } = capture();
  // Quoting would escape the quote and the line break, so the secret would no longer appear as it is.
  const secret = 'pa"ss\nword';
  logger.addSecret(secret);
  logger.info('refused', { password: secret, note: `before ${secret} after`, reason: 'a "quoted"\nvalue' });
  t.same(lines, [
    '2026-11-21T12:00:00.000Z INFO  [host] refused password=[redacted] note="before [redacted] after" ' +
      'reason="a \\"quoted\\"\\nvalue"',
  ]);
});

t.test('a number is searched for secrets too, when there are any', async (t) => {
  const { logger, lines } = capture();
  logger.info('plain', { port: 6667 });
  logger.addSecret('4242');
  logger.info('login', { pin: 4242, port: 6667, ok: true });
  t.same(lines, [
    '2026-11-21T12:00:00.000Z INFO  [host] plain port=6667',
    '2026-11-21T12:00:00.000Z INFO  [host] login pin=[redacted] port=6667 ok=true',
  ]);
  const json: string[] = [];
  const jsonLogger = createLogger({ format: 'json', sink: (line) => json.push(line) });
  jsonLogger.addSecret('4242');
  jsonLogger.info('login', { pin: 4242, port: 6667 });
  t.match(JSON.parse(json[0]!), { pin: '[redacted]', port: 6667 }, 'in JSON lines as well');
});

t.test('format json: one JSON object per line (pino), secrets masked in the message and the fields', async (t) => {
  const lines: [string, string][] = [];
  const logger = createLogger({
    format: 'json',
    level: 'info',
    now: () => new Date('2026-11-26T10:00:00.000Z'),
    sink: (line, level) => lines.push([line, level]),
  });
  logger.addSecret('hunter2');
  const http = logger.child('http');
  http.info('GET /api/hello/', { status: 200, ms: 1.5, ip: '192.0.2.1', route: 'hello', aborted: undefined });
  logger.warn('login refused for hunter2', {
    password: 'hunter2',
    token: `ntd_${'a'.repeat(43)}`,
    ok: false,
    none: null,
  });
  logger.debug('below the level');
  t.equal(lines.length, 2, 'debug is below the level');
  t.same(JSON.parse(lines[0]![0]), {
    level: 'info',
    time: '2026-11-26T10:00:00.000Z',
    source: 'http',
    status: 200,
    ms: 1.5,
    ip: '192.0.2.1',
    route: 'hello',
    msg: 'GET /api/hello/',
  });
  t.equal(lines[0]![1], 'info');
  t.same(JSON.parse(lines[1]![0]), {
    level: 'warn',
    time: '2026-11-26T10:00:00.000Z',
    source: 'host',
    password: '[redacted]',
    token: '[redacted]',
    ok: false,
    none: null,
    msg: 'login refused for [redacted]',
  });
  t.equal(lines[1]![1], 'warn');
  t.notOk(
    lines.some(([line]) => line.includes('\n')),
    'one line each',
  );
});

/** Run `code` in a process of its own with `log` an info logger; stdout and stderr through one pipe, in order. */
function runWithLogger(code: string) {
  const logger = fileURLToPath(new URL('../../lib/logger.js', import.meta.url));
  const script = `import { createLogger } from ${JSON.stringify(logger)};const log = createLogger({ level: 'info' });${code}`;
  return spawnSync('sh', ['-c', `${JSON.stringify(process.execPath)} --input-type=module -e "$SCRIPT" 2>&1`], {
    encoding: 'utf8',
    env: { ...process.env, SCRIPT: script },
  });
}

/** What follows the source on each line a run wrote. */
function messagesOf(run: { stdout: string }): string[] {
  return run.stdout
    .trim()
    .split('\n')
    .map((line) => line.slice(line.indexOf('] ') + 2));
}

t.test('stdout lines are written together, in order with stderr, and none is lost at exit', async (t) => {
  const run = runWithLogger(
    "log.info('one'); log.info('two'); log.warn('three'); log.info('four'); log.info('five'); process.exit(0);",
  );
  t.equal(run.status, 0);
  for (const line of run.stdout.trim().split('\n')) {
    t.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO |WARN ) \[host\] /, 'the time in UTC to the ms');
    const at = Date.parse(line.slice(0, 24));
    t.ok(Math.abs(Date.now() - at) < 60_000, 'and it is now');
  }
  t.same(
    messagesOf(run),
    ['one', 'two', 'three', 'four', 'five'],
    'a warning comes after the lines before it; exit writes the rest',
  );
});

t.test('a line for stdout is written within a moment, not held until exit', async (t) => {
  // The process stays alive 400 ms after its line; its marker on stderr goes out at once. Read through one pipe,
  // the line comes first only if it was written before the process was about to exit.
  const run = runWithLogger(
    "log.info('held for a moment');" + "setTimeout(() => process.stderr.write('marker\\n'), 400);",
  );
  t.equal(run.status, 0);
  const lines = run.stdout.trim().split('\n');
  t.equal(lines.length, 2);
  t.match(lines[0]!, /\[host\] held for a moment$/, 'the line went out before the marker');
  t.equal(lines[1], 'marker');
});

t.test('lines for stdout keep every character, and a line longer than what is held goes whole', async (t) => {
  const run = runWithLogger(
    "log.info('héllo ✓ 😀'); log.info('x'.repeat(30000)); log.info('after'); " +
      "for (let i = 0; i < 2000; i++) log.info('line ' + i + ' ' + 'é'.repeat(20));",
  );
  t.equal(run.status, 0);
  const messages = messagesOf(run);
  t.equal(messages[0], 'héllo ✓ 😀', 'UTF-8 as it was');
  t.equal(messages[1], 'x'.repeat(30000), 'a long line whole');
  t.equal(messages[2], 'after', 'and in its place');
  t.equal(messages.length, 2003, 'none lost across the chunks held');
  t.same(
    messages.slice(3).map((message) => Number(message.split(' ')[1])),
    Array.from({ length: 2000 }, (_, index) => index),
    'in order',
  );
});
