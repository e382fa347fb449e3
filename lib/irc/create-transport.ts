/** Builds the configured IRC adapter from the host config. */
import type { HostConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { IrcFrameworkTransport } from './irc-framework.js';
import { MatrixIrcTransport } from './matrix-org-irc.js';
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

export function createTransport(config: HostConfig, logger: Logger): IrcTransport {
  const options = transportOptions(config);
  switch (config.irc.client) {
    case 'irc-framework':
      return new IrcFrameworkTransport(options, logger);
    case 'matrix-org-irc':
      return new MatrixIrcTransport(options, logger);
  }
}
