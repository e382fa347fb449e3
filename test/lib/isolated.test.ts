import t from 'tap';
import { isolated } from '../../lib/isolated.js';
import { createLogger } from '../../lib/logger.js';

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ sink: (line) => lines.push(line) }) };
}

t.test('a handler gets its one argument, or none', async (t) => {
  const { lines, logger } = capture();
  const seen: unknown[] = [];
  isolated(logger, 'stats', 'handler for IRC message', (message: string) => seen.push(message))('PING');
  isolated(logger, 'stats', 'handler for IRC ready', () => seen.push('ready'))();
  t.same(seen, ['PING', 'ready']);
  t.same(lines, [], 'nothing logged');
});

t.test('a throw is logged with the plugin, and goes no further', async (t) => {
  const { lines, logger } = capture();
  const wrapped = isolated(logger, 'stats', 'model change handler', () => {
    throw new Error('boom');
  });
  t.doesNotThrow(() => wrapped());
  t.equal(lines.length, 1);
  t.match(lines[0], /model change handler failed/);
  t.match(lines[0], /stats/);
  t.match(lines[0], /boom/);
});

t.test('a rejection is logged too', async (t) => {
  const { lines, logger } = capture();
  isolated(logger, 'api', 'timer', () => Promise.reject(new Error('late')))();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(lines.length, 1);
  t.match(lines[0], /timer failed/);
  t.match(lines[0], /late/);
});
