/** What the HTTP server's tests share: a logger whose lines can be awaited, and a route with defaults. */
import type { RouteDefinition } from '../../lib/http/types.js';
import { createLogger } from '../../lib/logger.js';

/** A logger whose lines can be awaited, so no test sleeps waiting for the access log. */
export function captureLog() {
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const logger = createLogger({
    level: 'debug',
    sink: (line) => {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.pattern.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    },
  });
  const waitForLine = (pattern: RegExp): Promise<string> => {
    const found = lines.find((line) => pattern.test(line));
    return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ pattern, resolve }));
  };
  return { logger, lines, waitForLine };
}

export function route(
  definition: Partial<RouteDefinition> & Pick<RouteDefinition, 'path' | 'handler'>,
): RouteDefinition {
  return { method: 'GET', name: 'test.route', summary: 'A test route', tier: 'public', ...definition };
}
