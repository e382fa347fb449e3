/**
 * The bot under test as its own process: the real program (dist/app/main.js) with a generated
 * config, so its CPU time and memory are its own. Its log goes to a file the bench reads.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BOT_NODE_ENV, BOT_NODE_FLAGS } from '../../lib/node-flags.js';
import type { ProbeAnswer, ProbeRequest } from './bot-probe.js';
import type { ScaleNetwork } from './network.js';
import { cpuSeconds, rssBytes } from './proc.js';

const mainFile = fileURLToPath(new URL('../../app/main.js', import.meta.url));
const probeUrl = new URL('./bot-probe.js', import.meta.url).href;

export interface BotConfigOptions {
  /** The scale network: the bot connects to its hub and OPERs with its bot oper block. */
  network: Pick<ScaleNetwork, 'host' | 'hub' | 'botOperName' | 'botOperPass'>;
  nick: string;
  httpPort: number;
  storePath: string;
  /** plugins.stats.refresh_seconds (default: the plugin's own, 60). */
  refreshSeconds?: number;
  /** log.level (default: the host's own, info). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** http.front.enabled (default off, as in the bot's own config). */
  front?: boolean;
  /** Whether the bot opers up (default true). */
  oper?: boolean;
  /** More plugins and their configs (e.g. `events`), beside the ones below. */
  plugins?: Record<string, Record<string, unknown>>;
}

/**
 * The config the bench runs the bot with: the defaults, apart from the addresses, the store's path,
 * OPER, and the tokens plugin without rate limits (it is there for the token the bench counts users
 * with; its default limits would answer the bench's 200 requests a second with 429).
 */
export function writeBotConfig(configPath: string, options: BotConfigOptions): void {
  const { network } = options;
  const config = {
    irc: {
      host: network.host,
      port: network.hub.clientPort,
      nick: options.nick,
      ...(options.oper === false ? {} : { oper: { name: network.botOperName, password: network.botOperPass } }),
    },
    http: { host: '127.0.0.1', port: options.httpPort, front: { enabled: options.front ?? false } },
    store: { path: options.storePath },
    ...(options.logLevel ? { log: { level: options.logLevel } } : {}),
    plugins: {
      stats: options.refreshSeconds === undefined ? {} : { refresh_seconds: options.refreshSeconds },
      api: {},
      tokens: { rate_limit: { enabled: false } },
      // As an operator would run it: the model's own counts come from its metrics.
      metrics: { allow: ['127.0.0.1'] },
      ...options.plugins,
    },
  };
  fs.writeFileSync(configPath, JSON.stringify(config, null, 2));
}

/** One line of the bot's log, split: `2026-11-22T10:00:00.000Z INFO  [stats] synced users=5 ms=12`. */
export interface LogLine {
  at: number;
  level: string;
  source: string;
  text: string;
}

export function parseLog(text: string): LogLine[] {
  return text.split('\n').flatMap((line) => {
    const match = /^(\S+) (\w+)\s+\[([^\]]+)\] (.*)$/.exec(line);
    return match ? [{ at: Date.parse(match[1]!), level: match[2]!, source: match[3]!, text: match[4]! }] : [];
  });
}

export interface BotProcess {
  pid: number;
  url: string;
  logPath: string;
  /** Date.now() when it was spawned. */
  spawnedAt: number;
  cpuSeconds(): number;
  rssBytes(): number;
  /** The heap, after a full GC when `collect`. */
  memory(collect: boolean): Promise<Extract<ProbeAnswer, { kind: 'memory' }>>;
  /** The event loop's delay since the last reset; `reset` starts a new window. */
  loopDelay(reset: boolean): Promise<Extract<ProbeAnswer, { kind: 'loop' }>>;
  log(): LogLine[];
  /** SIGTERM (the bot flushes its store and QUITs); resolves once it exited. */
  stop(): Promise<void>;
  /** Resolves when the process exits, with its code. */
  exited: Promise<number | null>;
}

/**
 * More node flags for the bot, from SCALE_BOT_NODE_FLAGS (space-separated): to profile a run by hand, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--trace-gc`. The page's figures are measured without any.
 */
function extraNodeFlags(): string[] {
  return (process.env.SCALE_BOT_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
}

export function startBotProcess(configPath: string, logPath: string, httpPort: number): BotProcess {
  const out = fs.openSync(logPath, 'a');
  const child: ChildProcess = fork(mainFile, ['--config', configPath], {
    execArgv: [...BOT_NODE_FLAGS, ...extraNodeFlags(), '--expose-gc', '--import', probeUrl],
    stdio: ['ignore', out, out, 'ipc'],
    env: { ...process.env, ...BOT_NODE_ENV },
  });
  fs.closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ask = <K extends ProbeAnswer['kind']>(request: ProbeRequest & { kind: K }) =>
    new Promise<Extract<ProbeAnswer, { kind: K }>>((resolve, reject) => {
      if (!child.connected) return reject(new Error('the bot process is gone'));
      const onMessage = (answer: ProbeAnswer): void => {
        if (answer.kind !== request.kind) return;
        child.off('message', onMessage);
        resolve(answer as Extract<ProbeAnswer, { kind: K }>);
      };
      child.on('message', onMessage);
      child.send(request);
    });
  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${httpPort}`,
    logPath,
    spawnedAt: Date.now(),
    cpuSeconds: () => cpuSeconds(child.pid!),
    rssBytes: () => rssBytes(child.pid!),
    memory: (collect) => ask({ kind: 'memory', collect }),
    loopDelay: (reset) => ask({ kind: 'loop', reset }),
    log: () => parseLog(fs.readFileSync(logPath, 'utf8')),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
    exited,
  };
}
