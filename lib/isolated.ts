/**
 * Error isolation for what the host calls on a plugin's behalf (IRC listeners, model change
 * listeners, timers): a throw or a rejection is logged under the plugin's name and goes no
 * further, so one plugin's bug never stops another plugin or the host.
 */
import { errorMessage, type Logger } from './logger.js';

/**
 * `handler`, wrapped so that what it throws (or its promise rejects with) is logged as
 * "`what` failed". Every event the host hands plugins has at most one argument, so the
 * wrapper passes one along: a rest parameter would make an array on every call, which for
 * the IRC message listener means on every line.
 */
export function isolated<Args extends [] | [unknown]>(
  logger: Logger,
  plugin: string,
  what: string,
  handler: (...args: Args) => unknown,
): (...args: Args) => void {
  const call = handler as (arg?: unknown) => unknown;
  const wrapped = (arg?: unknown): void => {
    try {
      const result = call(arg);
      if (result instanceof Promise) {
        result.catch((error: unknown) => logger.error(`${what} failed`, { plugin, error: errorMessage(error) }));
      }
    } catch (error) {
      logger.error(`${what} failed`, { plugin, error: errorMessage(error) });
    }
  };
  return wrapped as (...args: Args) => void;
}
