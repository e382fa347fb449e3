/**
 * The bot's side of the front: the private socket it listens on for what the front passes on, the
 * front's thread (started, logged through the bot's logger, started again if it dies), and the facts
 * the front writes on each request it passes on.
 */
import type http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../logger.js';
import {
  FRONT_CLIENT,
  FRONT_RENEW,
  FRONT_SECURE,
  FRONT_SERVED,
  type FrontMessage,
  type FrontOrder,
  type FrontStart,
} from './messages.js';

/** What the front says of a request it passed on. Only the front can write these: a client's own are dropped. */
export function frontFacts(headers: IncomingHttpHeaders): {
  ip: string;
  secure: boolean;
  served: number;
  renew: boolean;
} {
  const ip = headers[FRONT_CLIENT];
  const served = Number(headers[FRONT_SERVED]);
  return {
    ip: typeof ip === 'string' ? ip : '',
    secure: headers[FRONT_SECURE] === '1',
    served: Number.isInteger(served) && served > 0 ? served : 0,
    renew: headers[FRONT_RENEW] === '1',
  };
}

/** `server.listen` as a promise: on a port (and host) or on a socket path. */
export function listening(server: http.Server, port: number | string, host?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof port === 'string') server.listen(port, done);
    else server.listen(port, host, done);
  });
}

type Settings = Omit<FrontStart, 'socketPath'>;
type Address = { host: string; port: number; url: string };

const THREAD_URL = new URL('./thread.js', import.meta.url);
const CLOSE_WAIT_MS = 10_000;
const RESTART_MS = 1000;

export class FrontLink {
  private worker: Worker | undefined;
  /** The thread is gone (and a new one not started yet). */
  private exited = false;
  private closing = false;

  private constructor(
    private readonly logger: Logger,
    private readonly start: FrontStart,
    readonly address: Address,
    worker: Worker,
  ) {
    this.attach(worker);
  }

  /** Listen on a private socket with `server`, then start the front on the public address. */
  static async open(server: http.Server, logger: Logger, settings: Settings): Promise<FrontLink> {
    // A directory only this user can enter holds the socket: nobody else can pass requests on.
    const directory = await mkdtemp(path.join(tmpdir(), 'irc-network-data-front-'));
    const socketPath = path.join(directory, 'bot.sock');
    try {
      await listening(server, socketPath);
      const start: FrontStart = { ...settings, socketPath };
      const { worker, address } = await FrontLink.spawn(start, logger);
      return new FrontLink(logger, { ...start, port: address.port }, address, worker);
    } catch (error) {
      server.close();
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
  }

  private static spawn(start: FrontStart, logger: Logger): Promise<{ worker: Worker; address: Address }> {
    // No command-line options of the bot's own (a preloaded module would run again in the thread); the
    // young generation is kept small, as the bot's is.
    const worker = new Worker(THREAD_URL, {
      workerData: start,
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 },
    });
    return new Promise((resolve, reject) => {
      const onMessage = (message: FrontMessage) => {
        if (message.type === 'log') logger.child(message.source)[message.level](message.message, message.fields);
        else if (message.type === 'listening') {
          cleanup();
          resolve({ worker, address: { host: message.host, port: message.port, url: message.url } });
        } else if (message.type === 'failed') {
          cleanup();
          void worker.terminate();
          reject(new Error(message.message));
        }
      };
      const onError = (error: Error) => {
        cleanup();
        reject(new Error(`The HTTP front did not start: ${error.message}`, { cause: error }));
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`The HTTP front stopped as it started (exit code ${code})`));
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
    });
  }

  private attach(worker: Worker): void {
    this.worker = worker;
    this.exited = false;
    worker.on('message', (message: FrontMessage) => {
      if (message.type === 'log') this.logger.child(message.source)[message.level](message.message, message.fields);
    });
    worker.on('error', (error) => this.logger.error('the HTTP front failed', { error: error.message }));
    worker.once('exit', (code) => {
      this.exited = true;
      if (this.closing) return;
      this.logger.error('the HTTP front stopped; starting it again', { code });
      setTimeout(() => void this.restart(), RESTART_MS).unref();
    });
  }

  private async restart(): Promise<void> {
    if (this.closing) return;
    try {
      const { worker } = await FrontLink.spawn(this.start, this.logger);
      if (this.closing) {
        await worker.terminate();
        return;
      }
      this.attach(worker);
      this.logger.info('the HTTP front is listening again', { url: this.address.url });
    } catch (error) {
      this.logger.error('the HTTP front could not start again; trying again', {
        error: error instanceof Error ? error.message : String(error),
      });
      setTimeout(() => void this.restart(), RESTART_MS).unref();
    }
  }

  /** Stop the front: it stops listening and finishes the requests it has. */
  async close(): Promise<void> {
    this.closing = true;
    const worker = this.worker;
    if (!worker || this.exited) return;
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      worker.on('message', (message: FrontMessage) => {
        if (message.type === 'closed') {
          clearTimeout(timer);
          resolve();
        }
      });
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    worker.postMessage({ type: 'close' } satisfies FrontOrder);
    await closed;
    await worker.terminate();
  }

  /** The private socket the bot listens on for the front. */
  get socketPath(): string {
    return this.start.socketPath;
  }

  /** Remove the private socket's directory. */
  async removeSocket(): Promise<void> {
    await rm(path.dirname(this.start.socketPath), { recursive: true, force: true });
  }
}
