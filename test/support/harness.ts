/**
 * The plugin test harness: the real host with its plugins on the fake IRC connection, so that a plugin's
 * tests read like a conversation.
 *
 * ```ts
 * const bot = await startHarness(t, { plugins: { tokens: {} }, admins: ['boss'] });
 * t.match(await bot.say('alice', 'alice', 'TOKEN CREATE laptop'), [/^Token #1 .* created: ntd_/]);
 * t.equal((await bot.inject('GET', '/api/staff/tokens/')).status, 401);
 * ```
 *
 * The store lives in a private temporary folder, removed when the test ends; pass `storeDir` to keep one
 * across two harnesses (a restart).
 *
 * The fake connection takes the config's IRC settings as the real one does (nick, OPER, SASL). Unless the
 * test's `config.irc` sets them, it sends the bot's lines at once (no `pacing`: a real server's flood
 * limit would hold them back), and clients may send commands as fast as the test does (no `commands`
 * pacing).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { builtinPlugins } from '../../app/builtin-plugins.js';
import type { HostConfig } from '../../lib/config.js';
import { Host } from '../../lib/host.js';
import { transportOptions } from '../../lib/irc/create-transport.js';
import type { InjectResponse } from '../../lib/http/inject.js';
import { createLogger } from '../../lib/logger.js';
import type { PluginDefinition } from '../../lib/plugin.js';
import { FakeTransport, fakeOptions } from './fake-irc.js';
import { testHostConfig } from './host-config.js';

export interface HarnessOptions {
  /** Each enabled plugin's settings, as under `plugins` in the config. */
  plugins: Record<string, Record<string, unknown>>;
  admins?: string[];
  /** The plugins the host knows; default the built-in ones. */
  registry?: readonly PluginDefinition<never>[];
  /** A store folder of an earlier harness, to start on what it saved (removed by whoever made it). */
  storeDir?: string;
  /** Other top-level config keys (e.g. `irc`). */
  config?: Record<string, unknown>;
  /**
   * Whether the fake connection registers (001, ISUPPORT, end of MOTD) once the host started, which makes
   * it `ready` (the collector then syncs); default true. False: the test feeds every line itself.
   */
  register?: boolean;
  /** Where log lines go besides `logs` (e.g. nowhere at debug level for a quiet test). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The ISUPPORT tokens the fake server announces at registration; default those of {@link FakeTransport.register}. */
  isupport?: string;
  /** The model's clock (timestamps such as `synced_at`), pinned so that answers can be compared whole. */
  clock?: () => Date;
}

/**
 * The store's writes that an answer waits for (a plugin's `store.persisted()`: a token created, granted,
 * revoked), held or failed on demand, to test what the bot says meanwhile or when the disk fails it.
 */
export interface DurableWrites {
  /** How many times a plugin has asked for its changes to be on disk. */
  readonly asked: number;
  /** Every write asked for from now on waits until `release()` is called; then it is done for real. */
  hold(): { release(): void };
  /** Every write asked for from now on fails with `error` (nothing is written), until `fail(null)`. */
  fail(error: Error | null): void;
}

export interface Harness {
  host: Host;
  irc: FakeTransport;
  config: HostConfig;
  /** Every log line so far. */
  logs: string[];
  storeDir: string;
  /** The bot's own nick. */
  nick: string;
  /** The store's writes that answers wait for, to hold or fail. */
  durableWrites: DurableWrites;
  /**
   * `nick`, logged in to `account` (or to none: null), sends `text` to the bot in private; resolves with
   * the bot's NOTICE answers to `nick` once the command has finished.
   */
  say(nick: string, account: string | null, text: string): Promise<string[]>;
  /** An HTTP request, answered without a socket; an object body goes as JSON. */
  inject(
    method: string,
    path: string,
    headers?: Record<string, string>,
    body?: string | object,
  ): Promise<InjectResponse>;
  stop(): Promise<void>;
}

/** Start the host with `options.plugins` on a fake IRC connection, registered and with the account tag. */
export async function startHarness(t: Test, options: HarnessOptions): Promise<Harness> {
  const storeDir = options.storeDir ?? mkdtempSync(path.join(tmpdir(), 'harness-'));
  if (!options.storeDir) t.teardown(() => rmSync(storeDir, { recursive: true, force: true }));
  const { irc: ircConfig = {}, ...otherConfig } = (options.config ?? {}) as { irc?: Record<string, unknown> };
  const config = testHostConfig(path.join(storeDir, 'store.json'), {
    admins: options.admins ?? [],
    plugins: options.plugins,
    // Tests send commands faster than people do.
    irc: { commands: { burst: 1000, interval_ms: 0 }, ...ircConfig },
    ...otherConfig,
  });
  const logs: string[] = [];
  const connection = transportOptions(config);
  const irc = new FakeTransport({
    ...connection,
    pacing: ircConfig.pacing ? connection.pacing : fakeOptions.pacing,
    reconnect: fakeOptions.reconnect,
  });
  const host = new Host({
    config,
    logger: createLogger({ level: options.logLevel ?? 'debug', sink: (line) => logs.push(line) }),
    plugins: options.registry ?? builtinPlugins,
    transport: irc,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const durableWrites = controlDurableWrites(host);
  await host.start();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await host.stop();
  };
  t.teardown(stop);
  if (options.register !== false) {
    irc.register(config.irc.nick, ...(options.isupport === undefined ? [] : [options.isupport]));
    irc.receive(`:irc.test CAP ${config.irc.nick} ACK :account-tag`);
  }

  const say = async (nick: string, account: string | null, text: string): Promise<string[]> => {
    const before = irc.sent.length;
    const tag = account === null ? '' : `@account=${account} `;
    irc.receive(`${tag}:${nick}!${nick.toLowerCase()}@users.test PRIVMSG ${irc.state.nick} :${text}`);
    await host.commands.settled();
    const prefix = `NOTICE ${nick} :`;
    return irc.sent
      .slice(before)
      .filter((line) => line.startsWith(prefix))
      .map((line) => line.slice(prefix.length));
  };
  const inject: Harness['inject'] = (method, requestPath, headers, body) =>
    host.http.inject({ method, path: requestPath, ...(headers ? { headers } : {}), ...(body ? { body } : {}) });
  return { host, irc, config, logs, storeDir, nick: config.irc.nick, durableWrites, say, inject, stop };
}

/** Puts {@link DurableWrites} between the plugins and the host's store. */
function controlDurableWrites(host: Host): DurableWrites {
  const { store } = host;
  const write = store.persisted.bind(store);
  let asked = 0;
  let gate: Promise<void> | null = null;
  let failure: Error | null = null;
  store.persisted = () => {
    asked++;
    if (!gate && !failure) return write();
    const held = gate;
    return (async () => {
      await held;
      if (failure) throw failure;
      return write();
    })();
  };
  return {
    get asked() {
      return asked;
    },
    hold() {
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      gate = held;
      return {
        release() {
          if (gate === held) gate = null;
          release();
        },
      };
    },
    fail(error) {
      failure = error;
    },
  };
}
