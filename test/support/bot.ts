/**
 * Runs the real host in-process against a test network, with its log captured,
 * for integration tests. Ports and the store live in private places.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type HostConfig, type IrcClientName } from '../../lib/config.js';
import { Host } from '../../lib/host.js';
import { createTransport } from '../../lib/irc/create-transport.js';
import type { IrcEventName } from '../../lib/irc/port.js';
import { createLogger } from '../../lib/logger.js';
import type { PluginDefinition } from '../../lib/plugin.js';
import { builtinPlugins } from '../../app/builtin-plugins.js';
import type { IrcClient } from './irc-client.js';
import { testIrcClient } from '../../testing/client.js';
import type { TestNetwork } from './testnet.js';

export { testIrcClient };

export interface TestBot {
  host: Host;
  config: HostConfig;
  /** Every log line so far. */
  logs: string[];
  /** Every line the bot wrote to the IRC server, in order (passwords included: never print them). */
  sent: string[];
  storeDir: string;
  url: string;
  /** Resolve on the next occurrence of an IRC event (after this call). */
  next(event: IrcEventName, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface TestBotOptions {
  nick?: string;
  sasl?: { account: string; password: string };
  oper?: boolean;
  admins?: string[];
  plugins?: Record<string, Record<string, unknown>>;
  /** More `http` settings (e.g. `trust_proxy`); it always listens on 127.0.0.1, on a free port. */
  http?: Record<string, unknown>;
  /** Use the leaf instead of the hub. */
  port?: number;
  storeDir?: string;
  /** Print log lines as they happen (debugging). */
  echo?: boolean;
  /** Test-only plugins added to the registry (enable them under `plugins`). */
  extraPlugins?: readonly PluginDefinition<never>[];
  /** The IRC client library; default {@link testIrcClient}. */
  client?: IrcClientName;
}

/** Start the host against `network`; resolves once it is ready (registered, opered, synced if stats runs). */
export async function startBot(network: TestNetwork, options: TestBotOptions = {}): Promise<TestBot> {
  const storeDir = options.storeDir ?? mkdtempSync(path.join(tmpdir(), 'bot-store-'));
  const ownsStore = options.storeDir === undefined;
  const file = {
    irc: {
      host: network.host,
      port: options.port ?? network.hubPort,
      nick: options.nick ?? `Bot${process.pid % 10000}`,
      client: options.client ?? testIrcClient(),
      ...(options.sasl ? { sasl: options.sasl } : {}),
      ...(options.oper === false ? {} : { oper: { name: network.operName, password: network.operPass } }),
      pacing: { burst: 10, interval_ms: 50 },
      // Tests send commands faster than people do (the limit itself is tested in test/lib/commands.test.ts).
      commands: { burst: 1000, interval_ms: 0 },
      reconnect: { min_ms: 200, max_ms: 2000 },
    },
    http: { ...options.http, host: '127.0.0.1', port: 0 },
    store: { path: path.join(storeDir, 'store.json') },
    admins: options.admins ?? [],
    log: { level: 'debug' },
    plugins: options.plugins ?? { stats: { refresh_seconds: 600 } },
  };
  const config = parseConfig(JSON.stringify(file), 'test config', {});
  const logs: string[] = [];
  const logger = createLogger({
    level: 'debug',
    sink: (line) => {
      logs.push(line);
      if (options.echo) process.stdout.write(`# ${line}\n`);
    },
  });
  const transport = await createTransport(config, logger.child('irc'));
  // The transports write through one protected method; the test reads what went out (e.g. IDENTIFYs counted).
  const sent: string[] = [];
  const writable = transport as unknown as { writeLine(line: string): void };
  const writeLine = writable.writeLine.bind(transport);
  writable.writeLine = (line: string) => {
    sent.push(line);
    writeLine(line);
  };
  const host = new Host({ config, logger, plugins: [...builtinPlugins, ...(options.extraPlugins ?? [])], transport });
  const next = (event: IrcEventName, timeoutMs = 20000): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no IRC ${event} within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = transport.on(event, () => {
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  const ready = next('ready', 30000);
  await host.start();
  await ready;
  const bot: TestBot = {
    host,
    config,
    logs,
    sent,
    storeDir,
    url: host.url!,
    next,
    async stop() {
      await host.stop('test over');
      if (ownsStore) rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return bot;
}

/**
 * Poll `check` until it returns true (for state that changes without an event we can hook). `what` names it in
 * the timeout's error; a function is asked only then (e.g. to quote the bot's log).
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 10000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Send the bot a private message and collect its NOTICE replies until one matches `last`. */
export async function askBot(irc: IrcClient, bot: TestBot, text: string, last: RegExp): Promise<string[]> {
  const replies: string[] = [];
  const done = irc.waitFor(
    (message) => {
      if (message.command !== 'NOTICE' || message.nick !== bot.host.irc.state.nick) return false;
      replies.push(message.params[1] ?? '');
      return last.test(message.params[1] ?? '');
    },
    { timeout: 15000, what: `reply to ${text}` },
  );
  irc.send(`PRIVMSG ${bot.host.irc.state.nick} :${text}`);
  await done;
  return replies;
}

/** Resolves when the model is ready: at once if it is, else at the next completed sync. */
export function synced(bot: TestBot): Promise<void> {
  return new Promise((resolve) => {
    if (bot.host.model.ready) return resolve();
    const off = bot.host.model.on('change', (change) => {
      if (change.kind === 'synced') {
        off();
        resolve();
      }
    });
  });
}
