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
 * The fake server (`bot.server`, fake-server.ts) answers what the bot asks: what a test tells it
 * (`bot.server.answer(/^TIME hub/, [...])`), else what its network says (`network`, fake-network.ts: the
 * servers, users and channels of a small network, answered as InspIRCd answers), else nothing. The collector
 * then syncs as it would on a real network, and its test reads as a conversation with one:
 *
 * ```ts
 * const bot = await startHarness(t, {
 *   registry: [stats],
 *   plugins: { stats: {} },
 *   network: fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] }),
 *   version: 'InspIRCd-3',
 *   operator: true,
 * });
 * await bot.synced();
 * t.ok(bot.host.model.users.get('alice'));
 * bot.server.network!.users.push({ nick: 'bob', server: 'leaf.test.net' });
 * await bot.clock.advance(60_000); // the next refresh
 * await bot.synced();
 * t.ok(bot.host.model.users.get('bob'));
 * ```
 *
 * A test waits for what it expects, never for a while: `synced()`, `settled()`, `next(pattern)`, `until(check)`.
 *
 * Time is the test's: the host's timers run on a manual clock (`bot.clock`, manual-clock.ts), so nothing a
 * plugin does every so often happens until the test moves the clock on, and `Date.now()` moves with it (the real
 * time plus what the test let pass; while the clock moves on, the real time stands still, so each timer sees the
 * time it fell due). Timeouts a plugin or the connection sets itself (`setTimeout`) and `new Date()` run on real
 * time. `timers: 'real'` keeps the runtime's timers and clock.
 *
 * The connection stands for the IRC client library `client` (default TEST_IRC_CLIENT, else irc-framework): it is
 * granted the capabilities that library asks for, and a line keeps only the tags those bring, as a server sends
 * them (on matrix-org-irc, none: a sender's account then comes from WHOIS, which `say` answers).
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
import { builtinPlugins } from '../app/builtin-plugins.js';
import type { HostConfig, IrcClientName } from '../lib/config.js';
import { Host } from '../lib/host.js';
import { transportOptions } from '../lib/irc/create-transport.js';
import type { TryAgainOptions } from '../lib/irc/requests.js';
import type { InjectResponse } from '../lib/http/inject.js';
import { createLogger } from '../lib/logger.js';
import type { ModelSlice } from '../lib/model/slice.js';
import type { PluginDefinition } from '../lib/plugin.js';
import { testIrcClient } from './client.js';
import { FakeTransport, fakeOptions } from './fake-irc.js';
import type { FakeNetwork } from './fake-network.js';
import { FakeServer, type Registration } from './fake-server.js';
import { testHostConfig } from './host-config.js';
import { ManualClock } from './manual-clock.js';

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
   * Whether the fake server registers the bot once the host started (the capabilities its client library asks
   * for, 001, RPL_MYINFO with a `version`, ISUPPORT, end of MOTD, then OPER for an `operator`), which makes the
   * connection `ready` (the collector then syncs); default true. False: the test registers it (`register()`) or
   * feeds every line itself.
   */
  register?: boolean;
  /** Where log lines go besides `logs` (e.g. nowhere at debug level for a quiet test). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The ISUPPORT tokens the fake server announces at registration; default fake-irc.ts's `DEFAULT_ISUPPORT`. */
  isupport?: string;
  /** The model's clock (timestamps such as `synced_at`), pinned so that answers can be compared whole. */
  clock?: () => Date;
  /** The server's software as RPL_MYINFO (004) names it at registration (`InspIRCd-3`, `ngircd-26.1`); default none. */
  version?: string;
  /** Whether the fake server knows CAP (default true); false: it grants no capability, as ircd 2.11. */
  cap?: boolean;
  /**
   * Whether the bot is an IRC operator: its config gets OPER credentials (unless `config.irc.oper` gives them) and
   * the fake server accepts them, before the connection is ready. Default false.
   */
  operator?: boolean;
  /** The network the fake server answers for (fake-network.ts); default none. */
  network?: FakeNetwork;
  /** The IRC client library the connection stands for; default TEST_IRC_CLIENT, else irc-framework. */
  client?: IrcClientName;
  /**
   * `'manual'` (the default): the host's timers and `Date.now()` move when the test advances `clock`. `'real'`: the
   * runtime's.
   */
  timers?: 'manual' | 'real';
  /** How the connection sends again a request the server refused with RPL_TRYAGAIN (263); default the transport's. */
  tryAgain?: TryAgainOptions;
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
  /** The connection: what the server says to the bot (`receive`), what the bot wrote (`sent`, `sentMatching`). */
  irc: FakeTransport;
  /** The other end of the connection: what it answers (`answer`) and the network it answers for (`network`). */
  server: FakeServer;
  /** The clock the host's timers run on; with `timers: 'real'`, one that nothing runs on. */
  clock: ManualClock;
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
  /**
   * Resolves once the model has been marked synced once more than when the last call resolved (the first call:
   * the first sync), and the bot has done what followed (the channels' modes, joins, real hosts).
   */
  synced(): Promise<void>;
  /**
   * Resolves once the server has said everything it will answer and the bot has written nothing more for a few
   * turns of the event loop: what the lines so far started is done, but what waits on a timer.
   */
  settled(): Promise<void>;
  /**
   * Resolves once `check` holds; it is asked again whenever something happens (a line either way, a model
   * change, a log line, the clock). Rejects, naming `what`, after `timeoutMs` (default 10 s) of real time.
   */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the next line the bot writes that matches `pattern` (one written already does not count). */
  next(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /**
   * The server registers the bot as it does at the start (for a test that started with `register: false`, once
   * it told the server what to answer); resolves when the connection is ready.
   */
  register(): Promise<void>;
  /**
   * The server drops the connection (unless it is gone already), and registers the bot again as at the start
   * once the bot has connected again; resolves when the new connection is ready.
   */
  reconnect(reason?: string): Promise<void>;
  stop(): Promise<void>;
}

/** Turns of the event loop without a line or an answer after which the bot is taken as settled. */
const QUIET_TURNS = 5;

/**
 * The test a harness belongs to: what it started is stopped and removed when the test ends. tap's `t` (its
 * `teardown`) and node:test's `t` (its `after`) are both one; with another runner, pass
 * `{ teardown: (fn) => afterEach(fn) }` or the like.
 */
export type HarnessTest = { teardown(fn: () => unknown): void } | { after(fn: () => unknown): void };

/** Run `fn` when `t` ends. */
function atEnd(t: HarnessTest, fn: () => unknown): void {
  if ('teardown' in t) t.teardown(fn);
  else t.after(fn);
}

/** Start the host with `options.plugins` on a fake IRC connection, registered unless `register` is false. */
export async function startHarness(t: HarnessTest, options: HarnessOptions): Promise<Harness> {
  const storeDir = harnessStore(t, options);
  const client = options.client ?? testIrcClient();
  const config = harnessConfig(options, storeDir, client);
  const { irc, server } = fakeConnection(config, options);
  const happenings = new Happenings();
  const clock = new ManualClock(() => {
    happenings.tell();
    return settle(irc, server);
  });
  if (options.timers !== 'real') dateNowFrom(t, clock);
  const logs: string[] = [];
  const host = new Host({
    config,
    logger: createLogger({
      level: options.logLevel ?? 'debug',
      sink: (line) => {
        logs.push(line);
        happenings.tell();
      },
    }),
    plugins: options.registry ?? builtinPlugins,
    transport: irc,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.timers === 'real' ? {} : { timers: clock }),
    storeInMemory: storeDir === undefined,
    listen: options.socket === true,
  });
  irc.watch(() => happenings.tell());
  host.model.on('change', () => happenings.tell());
  const durableWrites = controlDurableWrites(host);
  const waits = waitsOn(host, server, logs, happenings);
  await host.start();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await host.stop();
  };
  atEnd(t, stop);
  const connection = registration(
    server,
    { nick: config.irc.nick, isupport: options.isupport, version: options.version, client, cap: options.cap },
    waits.until,
  );
  if (options.register !== false) await connection.register();
  return {
    host,
    irc,
    server,
    clock,
    config,
    logs,
    storeDir,
    nick: config.irc.nick,
    durableWrites,
    ...conversation(host, server),
    ...waits,
    ...connection,
    stop,
  };
}

/**
 * The store's folder with `store: 'files'` (made here unless `storeDir` is given); undefined for the store in
 * memory.
 */
function harnessStore(t: HarnessTest, options: HarnessOptions): string | undefined {
  if (options.storeDir !== undefined) return options.storeDir;
  if (options.store !== 'files') return undefined;
  const storeDir = mkdtempSync(path.join(tmpdir(), 'harness-'));
  atEnd(t, () => rmSync(storeDir, { recursive: true, force: true }));
  return storeDir;
}

/** The fake connection the config describes, unpaced unless the test paces it, and the server at its other end. */
function fakeConnection(config: HostConfig, options: HarnessOptions): { irc: FakeTransport; server: FakeServer } {
  const connection = transportOptions(config);
  const paced = (options.config?.irc as { pacing?: unknown } | undefined)?.pacing !== undefined;
  const irc = new FakeTransport({
    ...connection,
    pacing: paced ? connection.pacing : fakeOptions.pacing,
    reconnect: fakeOptions.reconnect,
    ...(options.tryAgain ? { tryAgain: options.tryAgain } : {}),
  });
  irc.tagsFollowCaps = true;
  const server = new FakeServer(irc, { network: options.network ?? null, operator: options.operator === true });
  return { irc, server };
}

/**
 * `Date.now` gives the clock's time until the test ends. Before the host and its plugins are made: whatever keeps
 * the function (the send queue's pacing) keeps this one. Not tap's `capture`, which records every call.
 */
function dateNowFrom(t: HarnessTest, clock: ManualClock): void {
  const runtimeNow = Date.now;
  Date.now = () => clock.now();
  atEnd(t, () => {
    Date.now = runtimeNow;
  });
}

/** Whoever waits for something to happen, told of every line, model change, log line and clock move. */
class Happenings {
  private readonly listeners = new Set<() => void>();

  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  tell(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** {@link Harness.until}, `next`, `synced` and `settled`. */
function waitsOn(
  host: Host,
  server: FakeServer,
  logs: readonly string[],
  happenings: Happenings,
): Pick<Harness, 'until' | 'next' | 'synced' | 'settled'> {
  const irc = server.connection;
  const until = (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> =>
    waitUntil(check, what, timeoutMs, happenings, logs);
  const settled = (): Promise<void> => settle(irc, server);
  let syncs = 0;
  let syncsSeen = 0;
  host.model.on('change', (change) => {
    if (change.slice === 'network' && change.kind === 'synced') syncs++;
  });
  return {
    until,
    settled,
    async synced() {
      const wanted = syncsSeen + 1;
      await until(() => syncs >= wanted, `sync number ${wanted}`);
      syncsSeen = syncs;
      await settled();
    },
    async next(pattern, timeoutMs) {
      const from = irc.sent.length;
      let found: string | undefined;
      const match = (): boolean => (found = irc.sent.slice(from).find((line) => pattern.test(line))) !== undefined;
      await until(match, `a line matching ${pattern}`, timeoutMs);
      return found!;
    },
  };
}

/** {@link Harness.register} and `reconnect`. */
function registration(
  server: FakeServer,
  registered: Registration,
  until: Harness['until'],
): Pick<Harness, 'register' | 'reconnect'> {
  const irc = server.connection;
  const register = async (): Promise<void> => {
    const ready = new Promise<void>((resolve) => {
      const off = irc.on('ready', () => {
        off();
        resolve();
      });
    });
    server.register(registered);
    await ready;
  };
  return {
    register,
    async reconnect(reason) {
      const { opened } = irc;
      const wasConnected = irc.state.connected;
      if (wasConnected) irc.drop(reason);
      await until(() => irc.state.connected && (!wasConnected || irc.opened > opened), 'the bot to connect again');
      await register();
    },
  };
}

/** {@link Harness.say}, `inject`, `from` and `slice`. */
function conversation(host: Host, server: FakeServer): Pick<Harness, 'say' | 'inject' | 'from' | 'slice'> {
  const irc = server.connection;
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
  return {
    from,
    inject: from({}).inject,
    async say(nick, account, text) {
      const before = irc.sent.length;
      // Without the account tag, the bot asks WHOIS for the sender's account.
      if (!irc.state.caps.has('account-tag')) {
        server.answerOnce(new RegExp(`^WHOIS ${nick}$`), whoisOf(server, nick, account));
      }
      const tag = account === null ? '' : `@account=${account} `;
      irc.receive(`${tag}:${nick}!${nick.toLowerCase()}@users.test PRIVMSG ${irc.state.nick} :${text}`);
      await host.commands.settled();
      const prefix = `NOTICE ${nick} :`;
      return irc.sent
        .slice(before)
        .filter((line) => line.startsWith(prefix))
        .map((line) => line.slice(prefix.length));
    },
    slice<Slice extends ModelSlice>(name: string): Slice {
      const found = host.model.slices().find((candidate) => candidate.name === name);
      if (!found) throw new Error(`the model has no slice "${name}"; is the plugin that adds it enabled?`);
      return found as Slice;
    },
  };
}

/** The host's config: the test's, with the harness's defaults (no command pacing, OPER for an operator). */
function harnessConfig(options: HarnessOptions, storeDir: string | undefined, client: IrcClientName): HostConfig {
  const { irc: ircConfig = {}, ...otherConfig } = (options.config ?? {}) as { irc?: Record<string, unknown> };
  const oper = options.operator && !ircConfig.oper ? { oper: { name: 'bot', password: 'oper-secret' } } : {};
  // In memory, the path only names the store in log lines.
  return testHostConfig(storeDir === undefined ? 'store.json' : path.join(storeDir, 'store.json'), {
    admins: options.admins ?? [],
    plugins: options.plugins,
    // Tests send commands faster than people do.
    irc: { client, commands: { burst: 1000, interval_ms: 0 }, ...oper, ...ircConfig },
    ...otherConfig,
  });
}

/** The server's WHOIS of `nick`, logged in to `account` or not. */
function whoisOf(server: FakeServer, nick: string, account: string | null): string[] {
  const from = `:${server.name}`;
  return [
    `${from} 311 * ${nick} ${nick.toLowerCase()} users.test * :${nick}`,
    ...(account === null ? [] : [`${from} 330 * ${nick} ${account} :is logged in as`]),
    `${from} 318 * ${nick} :End of /WHOIS list.`,
  ];
}

/** See {@link Harness.settled}. */
async function settle(irc: FakeTransport, server: FakeServer): Promise<void> {
  let written = irc.sent.length;
  // What the bot starts, it starts at once or after a promise, which one turn lets through: a turn without a
  // line or an answer after it means nothing was started.
  let quietTurnsWanted = 1;
  for (let quiet = 0; quiet < quietTurnsWanted;) {
    await new Promise((resolve) => setImmediate(resolve));
    if (server.pending > 0 || irc.sent.length !== written) {
      written = irc.sent.length;
      quiet = 0;
      quietTurnsWanted = QUIET_TURNS;
    } else {
      quiet++;
    }
  }
}

/** See {@link Harness.until}. */
function waitUntil(
  check: () => boolean,
  what: string,
  timeoutMs: number,
  happenings: Happenings,
  logs: readonly string[],
): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (): void => {
      stopListening();
      clearTimeout(timer);
    };
    const stopListening = happenings.listen(() => {
      if (!check()) return;
      done();
      resolve();
    });
    const timer = setTimeout(() => {
      done();
      reject(new Error(`waited ${timeoutMs} ms for ${what}; the last log lines:\n${logs.slice(-10).join('\n')}`));
    }, timeoutMs);
  });
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
