import t from 'tap';
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
