/**
 * Builds the configured IRC adapter from the host config. Each adapter's module, and the client library it
 * wraps, is loaded only when the config selects it: importing the host loads neither library, and
 * matrix-org-irc need not be installed where it is not used.
 */
import type { HostConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { IrcTransport } from './port.js';
import type { TransportOptions } from './transport.js';

export function transportOptions(config: HostConfig): TransportOptions {
  const { irc } = config;
  return {
    host: irc.host,
    port: irc.port,
    tls: irc.tls,
    tlsVerify: irc.tls_verify,
    nick: irc.nick,
    username: irc.username,
    realname: irc.realname,
    sasl: irc.sasl,
    oper: irc.oper,
    pacing: { burst: irc.pacing.burst, intervalMs: irc.pacing.interval_ms },
    reconnect: { minMs: irc.reconnect.min_ms, maxMs: irc.reconnect.max_ms },
  };
}

/** The adapter `irc.client` names, its library loaded now; a library that is not installed is a clear error. */
export async function createTransport(config: HostConfig, logger: Logger): Promise<IrcTransport> {
  const options = transportOptions(config);
  const library = config.irc.client;
  try {
    switch (library) {
      case 'irc-framework': {
        const { IrcFrameworkTransport } = await import('./irc-framework.js');
        return new IrcFrameworkTransport(options, logger);
      }
      case 'matrix-org-irc': {
        const { MatrixIrcTransport } = await import('./matrix-org-irc.js');
        return new MatrixIrcTransport(options, logger);
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes(`'${library}'`)) {
      throw new Error(
        `irc.client is "${library}", but the package ${library} is not installed: npm install ${library}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}
