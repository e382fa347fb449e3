/**
 * The front's thread: it owns the listening socket, so a request is read, and answered from the store,
 * while the bot's own thread is busy (IRC input, a sync, a garbage collection). It runs the same server
 * as the bot (lib/http/server.ts) for everything about the connection (timeouts, unreadable requests,
 * `Expect`, a missing `Host`), with {@link FrontDispatch} in place of the routes. It logs through the
 * bot's logger, by message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger, LogFields, LogLevel } from '../../logger.js';
import { errorMessage } from '../../logger.js';
import { HttpServer } from '../server.js';
import { FrontDispatch } from './dispatch.js';
import type { FrontMessage, FrontOrder, FrontStart } from './messages.js';

const port = parentPort!;
const start = workerData as FrontStart;
const post = (message: FrontMessage): void => port.postMessage(message);

/** A logger whose lines the bot's thread writes. */
class PortLogger implements Logger {
  constructor(readonly source: string) {}
  private log(level: LogLevel, message: string, fields?: LogFields): void {
    post({ type: 'log', level, source: this.source, message, fields });
  }
  debug(message: string, fields?: LogFields): void {
    this.log('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.log('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.log('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.log('error', message, fields);
  }
  child(source: string): Logger {
    return new PortLogger(source);
  }
  // The front never sees a secret the bot would mask: it logs no headers and no bodies.
  addSecret(): void {}
}

const dispatch = new FrontDispatch({ socketPath: start.socketPath });
const server = new HttpServer({
  host: start.host,
  port: start.port,
  logger: new PortLogger('front'),
  bodyLimit: start.bodyLimit,
  headersTimeout: start.headersTimeout,
  requestTimeout: start.requestTimeout,
  ...(start.keepAliveTimeout === undefined ? {} : { keepAliveTimeout: start.keepAliveTimeout }),
  ...(start.maxConnections === undefined ? {} : { maxConnections: start.maxConnections }),
  trustProxy: start.trustProxy,
  proxyHeader: start.proxyHeader,
  accessLog: start.accessLog,
  dispatch: (exchange, respond) => dispatch.dispatch(exchange, respond),
});

port.on('message', (order: FrontOrder) => {
  if (order.type !== 'close') return;
  dispatch.endStreams();
  void server.close().finally(() => {
    dispatch.close();
    post({ type: 'closed' });
  });
});

server.listen().then(
  (address) => post({ type: 'listening', ...address }),
  (error: unknown) => post({ type: 'failed', message: errorMessage(error) }),
);
