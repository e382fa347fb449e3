/**
 * The config of a host under test: the bot's nick, HTTP on port 0, the store in `storePath`, and
 * whatever the test adds (plugins, admins, a different IRC server), checked as the real config is.
 */
import { parseConfig, type HostConfig } from '../lib/config.js';

export function testHostConfig(storePath: string, extra: Record<string, unknown> = {}): HostConfig {
  const { irc, ...rest } = extra;
  return parseConfig(
    JSON.stringify({
      irc: { host: '127.0.0.1', nick: 'DataBot', ...(irc as Record<string, unknown> | undefined) },
      http: { host: '127.0.0.1', port: 0 },
      store: { path: storePath },
      ...rest,
    }),
    'test',
    {},
  );
}
