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
 * The store is kept in memory (`store: 'files'`: in a private temporary folder, removed when the test ends;
 * pass its `storeDir` to a second harness to test a restart), and the HTTP server does not listen: `inject`
 * answers through the same routes, stages and answers without a socket (`socket: true` listens on a free
 * port too, for a test that needs a real connection: `host.url`).
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
import type { TransportOptions } from '../../lib/irc/transport.js';
import type { InjectResponse } from '../../lib/http/inject.js';
import { createLogger } from '../../lib/logger.js';
import type { ModelSlice } from '../../lib/model/slice.js';
import type { PluginDefinition } from '../../lib/plugin.js';
import { FakeTransport, fakeOptions } from './fake-irc.js';
import { testHostConfig } from './host-config.js';

export interface HarnessOptions {
  /** Each enabled plugin's settings, as under `plugins` in the config. */
  plugins: Record<string, Record<string, unknown>>;
  admins?: string[];
  /** The plugins the host knows; default the built-in ones. */
  registry?: readonly PluginDefinition<never>[];
  /**
   * `'memory'` (the default): the store writes its files in memory and starts empty. `'files'`: in a private
   * temporary folder (`storeDir`), for a test that reads the files or restarts on them.
   */
  store?: 'memory' | 'files';
  /**
   * The store folder of an earlier harness, to start on what it saved (implies `store: 'files'`; removed by
   * whoever made it).
   */
  storeDir?: string;
  /** Listen on a free port too (`host.url`), for a test that needs a real socket; default false (`inject` only). */
  socket?: boolean;
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
  /** The fake connection, made from the options the harness chose (default a {@link FakeTransport}). */
  transport?: (options: Partial<TransportOptions>) => FakeTransport;
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
  /** The store's folder with `store: 'files'`; undefined when the store is in memory. */
  storeDir: string | undefined;
  /** The bot's own nick. */
  nick: string;
  /** The store's writes that answers wait for, to hold or fail. */
  durableWrites: DurableWrites;
  /**
   * `nick`, logged in to `account` (or to none: null), sends `text` to the bot in private; resolves with
   * the bot's NOTICE answers to `nick` once the command has finished.
   */
  say(nick: string, account: string | null, text: string): Promise<string[]>;
  /** An HTTP request from 127.0.0.1, answered without a socket; an object body goes as JSON. */
  inject(
    method: string,
    path: string,
    headers?: Record<string, string>,
    body?: string | object,
  ): Promise<InjectResponse>;
  /** The same `inject` from another client: its address (default 127.0.0.1) and whether it came over TLS. */
  from(client: { ip?: string; secure?: boolean }): Pick<Harness, 'inject'>;
  /** The model slice named `name` (a plugin's own state, for the test to look into); throws when there is none. */
  slice<Slice extends ModelSlice>(name: string): Slice;
  stop(): Promise<void>;
}

/** Start the host with `options.plugins` on a fake IRC connection, registered and with the account tag. */
export async function startHarness(t: Test, options: HarnessOptions): Promise<Harness> {
  const inMemory = options.storeDir === undefined && options.store !== 'files';
  const storeDir = inMemory ? undefined : (options.storeDir ?? mkdtempSync(path.join(tmpdir(), 'harness-')));
  if (storeDir !== undefined && !options.storeDir) t.teardown(() => rmSync(storeDir, { recursive: true, force: true }));
  const { irc: ircConfig = {}, ...otherConfig } = (options.config ?? {}) as { irc?: Record<string, unknown> };
  // In memory, the path only names the store in log lines.
  const config = testHostConfig(storeDir === undefined ? 'store.json' : path.join(storeDir, 'store.json'), {
    admins: options.admins ?? [],
    plugins: options.plugins,
    // Tests send commands faster than people do.
    irc: { commands: { burst: 1000, interval_ms: 0 }, ...ircConfig },
    ...otherConfig,
  });
  const logs: string[] = [];
  const connection = transportOptions(config);
  const irc = (options.transport ?? ((transport) => new FakeTransport(transport)))({
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
    storeInMemory: inMemory,
    listen: options.socket === true,
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
  const from: Harness['from'] = (client) => ({
    inject: (method, requestPath, headers, body) =>
      host.http.inject({
        method,
        path: requestPath,
        ...(headers ? { headers } : {}),
        ...(body === undefined ? {} : { body }),
        ...client,
      }),
  });
  const slice = <Slice extends ModelSlice>(name: string): Slice => {
    const found = host.model.slices().find((candidate) => candidate.name === name);
    if (!found) throw new Error(`the model has no slice "${name}"; is the plugin that adds it enabled?`);
    return found as Slice;
  };
  const { inject } = from({});
  return { host, irc, config, logs, storeDir, nick: config.irc.nick, durableWrites, say, inject, from, slice, stop };
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
