/**
 * The real test network for the benchmarks that need one: the crowd and the
 * bot each run in a process of their own (forked from this file), so neither
 * the load generator nor the crowd's clients compete with the bot's event loop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TokensSlice } from '../plugins/tokens/model.js';
import { startCrowd } from '../scripts/crowd.js';
import { startBot, synced } from '../test/support/bot.js';
import type { TestNetwork } from '../test/support/testnet.js';

type NetworkAddress = Pick<TestNetwork, 'host' | 'hubPort' | 'leafPort' | 'operName' | 'operPass'>;

interface CrowdRequest {
  role: 'crowd';
  network: NetworkAddress;
  clients: number;
  channels: number;
}

interface BotRequest {
  role: 'bot';
  network: NetworkAddress;
  /** Also the tokens plugin (rate limits off) and a token that may read the user listing ({@link BotReady.usersToken}). */
  usersToken?: boolean;
}

/** What the bot process reports once its first sync is complete. */
export interface BotReady {
  url: string;
  /** From host.start() (the connect) to the model being complete (the first sync's end). */
  syncMs: number;
  /**
   * From host.start() to every user having a real host too (asked after the sync is complete, see
   * plugins/stats/who.ts); null if that did not happen within 30 s.
   */
  realHostsMs: number | null;
  users: number;
  channels: number;
  /** A token approved for `irc.users`, when asked for. */
  usersToken?: string;
}

export interface Child<T> {
  ready: T;
  /** The child's process id (for its CPU time). */
  pid: number;
  stop(): Promise<void>;
}

function address(network: TestNetwork): NetworkAddress {
  const { host, hubPort, leafPort, operName, operPass } = network;
  return { host, hubPort, leafPort, operName, operPass };
}

function forkRole<T>(request: CrowdRequest | BotRequest, timeoutMs: number): Promise<Child<T>> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child', JSON.stringify(request)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.disconnect();
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${request.role} process was not ready within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('message', (ready) => {
      clearTimeout(timer);
      resolve({ ready: ready as T, pid: child.pid!, stop });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${request.role} process exited with ${code} before it was ready`));
    });
  });
}

/** A silent crowd (no chat, no WEBIRC) of `clients` spread over hub and leaf and `channels` channels. */
export function startCrowdProcess(
  network: TestNetwork,
  clients: number,
  channels: number,
): Promise<Child<{ ms: number }>> {
  return forkRole({ role: 'crowd', network: address(network), clients, channels }, 180_000);
}

/**
 * The real host (stats and api plugins, as an operator) against the hub, ready once its first sync is done;
 * with `usersToken`, the tokens plugin too and a token approved for the user listing.
 */
export function startBotProcess(
  network: TestNetwork,
  options: { usersToken?: boolean } = {},
): Promise<Child<BotReady>> {
  return forkRole({ role: 'bot', network: address(network), usersToken: options.usersToken }, 120_000);
}

async function child(request: CrowdRequest | BotRequest): Promise<void> {
  if (request.role === 'crowd') {
    const started = performance.now();
    const crowd = await startCrowd({
      host: request.network.host,
      ports: [request.network.hubPort, request.network.leafPort],
      clients: request.clients,
      channels: Array.from({ length: request.channels }, (_, index) => `#bench${index}`),
      perClient: 2,
      chatIntervalMs: 0,
      webircEvery: 0,
      nickPrefix: 'b',
      connectGapMs: 1,
    });
    process.send!({ ms: performance.now() - started });
    process.on('disconnect', () => void crowd.stop().finally(() => process.exit(0)));
    return;
  }
  const started = performance.now();
  const bot = await startBot(request.network as TestNetwork, {
    plugins: {
      stats: { refresh_seconds: 3600, version_requests_per_second: 0 },
      api: {},
      // Rate limits would answer 429 to a load test.
      ...(request.usersToken ? { tokens: { rate_limit: { enabled: false } } } : {}),
    },
  });
  await synced(bot);
  const syncMs = performance.now() - started;
  const { model } = bot.host;
  const allHaveRealHosts = (): boolean => [...model.users.all()].every((user) => user.realHost !== null);
  const deadline = performance.now() + 30_000;
  while (!allHaveRealHosts() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const ready: BotReady = {
    url: bot.url,
    syncMs,
    realHostsMs: allHaveRealHosts() ? performance.now() - started : null,
    users: bot.host.model.users.size,
    channels: bot.host.model.channels.size,
  };
  if (request.usersToken) {
    const tokens = model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
    const actor = { account: 'bench', via: 'irc' as const };
    const { token, secret } = tokens.create('bench', 'benchmark', actor);
    tokens.grant(token, ['irc.users'], actor);
    ready.usersToken = secret;
  }
  process.send!(ready);
  process.on('disconnect', () => void bot.stop().finally(() => process.exit(0)));
}

if (process.argv[2] === '--child') {
  child(JSON.parse(process.argv[3]!) as CrowdRequest | BotRequest).catch((error: unknown) => {
    process.stderr.write(`bench network child failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
