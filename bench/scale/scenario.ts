/**
 * One scale run: a network of `users` in `channels`, the bot started on a month's store, then timed
 * and compared with the truth from its connect, through the churn and after it, and across a
 * restart. Every figure is measured here; bench/scale.ts judges them against the targets.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { casefold } from '../../lib/irc/casemapping.js';
import {
  startScaleCrowd,
  type ChurnRates,
  type ScaleCrowd,
  type WorkerStatus,
} from '../../scripts/scale-crowd/crowd.js';
import { seededRandom } from '../../scripts/scale-crowd/plan.js';
import { freePorts } from '../../test/support/testnet.js';
import { BotApi, type ModelCounts } from './api.js';
import { startBotProcess, writeBotConfig, type BotProcess, type LogLine } from './bot-process.js';
import type { LoadMessage, LoadResult, LoadRunResult } from './http-load.js';
import type { RawServerMessage } from './raw-server.js';
import { startScaleNetwork } from './network.js';
import { Oracle, type Truth } from './oracle.js';
import { CpuMeter, cpuSeconds, networkNiceness, peakRssBytes, RunQueueMeter, rssBytes } from './proc.js';
import { writeStoreFixture, type StoreFixture } from './store-fixture.js';

export interface ScaleOptions {
  users: number;
  channels: number;
  churnSeconds: number;
  churnRates: ChurnRates;
  /**
   * How long to wait for the model to equal the truth: after the bot's start (and restart), and after
   * the churn. Default: the larger of 60 s (120 s after the churn), three refreshes and 1 s per 500 users.
   */
  coldTimeoutSeconds?: number;
  settleTimeoutSeconds?: number;
  /** The bot's refresh_seconds; undefined = its default (60). */
  refreshSeconds?: number;
  /** The bot's log level; undefined = its default (info). */
  botLogLevel?: 'debug' | 'info';
  /** The bot's HTTP front (`http.front.enabled`); default off, as in its config's default. */
  front?: boolean;
  /**
   * Whether the bot opers up (default true). Without it, as config.example.json runs it, it has no server
   * notices: a user who quits or changes nick outside its channels waits for the WHO slice of its initial.
   */
  oper?: boolean;
  /** A comparison with the truth every this many seconds of churn. */
  checkSeconds: number;
  /** Channels compared with NAMES at each check. */
  sampleChannels: number;
  /** The bot's channels (its max_channels): the chat goes to the crowd's biggest this many. */
  botChannels: number;
  botSendq: string;
  /** Requests per second of each HTTP load run. */
  httpRate: number;
  restart: boolean;
  /** Keep the run directory (configs, logs, store). */
  keepRun?: boolean;
  log: (line: string) => void;
}

export interface TruthCheck {
  atSeconds: number;
  truth: Truth;
  model: ModelCounts | null;
  channelsEqual: number;
  channelsCompared: number;
  mismatches: string[];
  /** How far LUSERS itself moved over {@link TRUTH_MOVE_SAMPLES} answers a quarter second apart, after the check. */
  truthMoved: { users: number; channels: number; ms: number };
}

/** LUSERS answers a quarter second apart per check, to measure how much the truth itself moves within about a second. */
const TRUTH_MOVE_SAMPLES = 5;

/**
 * The range (largest less smallest) of users and channels over a few LUSERS a quarter second apart, and the ms
 * from the first answer to the last (a busy hub answers slowly, so the span can be seconds).
 */
async function truthMovement(oracle: Oracle): Promise<{ users: number; channels: number; ms: number }> {
  const users: number[] = [];
  const channels: number[] = [];
  let first = 0;
  for (let sample = 0; sample < TRUTH_MOVE_SAMPLES; sample++) {
    if (sample > 0) await delay(250);
    const lusers = await oracle.lusers();
    if (sample === 0) first = performance.now();
    users.push(lusers.users);
    channels.push(lusers.channels);
  }
  const range = (values: number[]): number => Math.max(...values) - Math.min(...values);
  return { users: range(users), channels: range(channels), ms: performance.now() - first };
}

export interface ScaleResult {
  options: Omit<ScaleOptions, 'log'>;
  refreshSeconds: number;
  leaves: number;
  workers: number;
  truth: Truth;
  plannedMemberships: number;
  crowdConnectMs: number;
  store: StoreFixture & { bytes: number };
  cold: Arrival;
  memory: {
    coldRss: number;
    coldHeap: number;
    churnRss: number;
    churnHeap: number;
    peakRss: number;
  };
  cpu: { churn: number; churnWithHttp: number; runQueue: number; niceness: number };
  checks: TruthCheck[];
  settle: Arrival;
  byName: ByName;
  syncs: { durations: number[]; failures: number; interrupted: number; expected: number; spanSeconds: number };
  disconnects: string[];
  /** The bot's channels once it joined them after the cold sync, of those it should sit in; JOINs refused (log). */
  joins: { joined: number; wanted: number; refused: string[] };
  flush: {
    /** The store's own figure: the longest any write's stretch of work held the loop (null: no write). */
    storeBlockedMaxMs: number | null;
    /** Of that stretch: the garbage collector's pauses, and at most how long the bot waited for a CPU (null: unknown). */
    storeBlockedGcMs: number;
    storeBlockedWaitingMs: number | null;
    /** Writes the store reported. */
    storeWrites: number;
    writes: number;
    /** Writes while no HTTP load ran. */
    quietWrites: number;
    /** The longest the bot's event loop was held while a quiet write was under way (null: no such write). */
    loopMaxInWrites: number | null;
    /** The 404 probe's longest wait during those writes. */
    probeMaxInWrites: number | null;
    /** The same during writes under HTTP load (the loop also serves the load then). */
    loopMaxInLoadedWrites: number | null;
    /** The loop's longest hold and the probe's longest wait outside any write. */
    loopMaxOutside: number;
    probeMaxOutside: number;
    loopMaxMs: number;
    loopP99Ms: number;
    /** The loop's holds of 20 ms or more during the HTTP load: how many, their sum, and what of it was GC and waiting. */
    loadHolds: { count: number; longestMs: number; totalMs: number; gcMs: number; waitingMs: number | null };
  };
  probeFailures: number;
  /**
   * Each HTTP run, and what its answers of 20 ms or more came with: a hold of the bot's event loop of 10 ms or more,
   * else a hold of the load generator's own loop, else neither of these.
   */
  http: (LoadRunResult & { slowCauses: { bot: number; self: number; neither: number } })[];
  sendqPeak: number;
  /** Connections of the truth to the hub that the hub closed (each opened again), with its reasons. */
  truthLosses: string[];
  restart:
    | (Arrival & {
        stopMs: number;
        historyBefore: number;
        historyAfter: number;
        oldestKept: boolean;
        /** From the churn's end until every user of the crowd was connected again (null: not within 2 more minutes). */
        crowdBackMs: number | null;
      })
    | null;
  churned: Awaited<ReturnType<ScaleCrowd['churn']>>;
  crowdStatus: WorkerStatus;
  costs: {
    servers: { key: string; cpuSeconds: number; churnPercent: number; rss: number }[];
    crowd: { cpuSeconds: number; churnPercent: number; rss: number };
  };
}

/** When the model first equalled the truth, from the bot's connect (its log) and from its spawn. */
/** When the model first equalled the network by name after the churn (users, public channels' counts). */
export interface ByName {
  /** From the churn's end; null if not within the settle timeout. */
  ms: number | null;
  /** The last difference seen. */
  last: string;
}

export interface Arrival {
  connectMs: number | null;
  spawnMs: number | null;
  /** Why it never did, when it did not. */
  last: string;
  /** The last difference seen before it did ('' when equal at the first look). */
  lastDifference: string;
  timeoutSeconds: number;
}

const httpLoadFile = fileURLToPath(new URL('./http-load.js', import.meta.url));
const rawServerFile = fileURLToPath(new URL('./raw-server.js', import.meta.url));
const CHANNELS_PATH = '/api/irc/channels/?limit=100';
const STATUS_PATH = '/network/data/status/';
/** The event-loop probe: an unknown path, answered 404 by the router with nothing else to do. */
const PROBE_PATH = '/scale-bench-probe';
const PROBE_RATE = 50;
const BOT_NICK = 'DataBot';
const SERVICES_SERVER = 'services.test.net';

/**
 * What each slow answer of `run` came with: a hold of the bot's event loop (from the probe's `holds`, each ending at
 * its epoch ms) while it was on its way, else a hold of the load generator's own loop, else neither.
 */
function slowCauses(
  run: LoadRunResult,
  holds: readonly (readonly [endedAt: number, ms: number, ...unknown[]])[],
): { bot: number; self: number; neither: number } {
  const causes = { bot: 0, self: 0, neither: 0 };
  for (const answer of run.slow) {
    const end = answer.sentAt + answer.ms;
    // A hold is a 10 ms tick's lateness: the loop may have been held since the tick before it.
    if (holds.some(([endedAt, ms]) => endedAt >= answer.sentAt && endedAt - ms - 10 <= end)) causes.bot++;
    else if (answer.selfHeld) causes.self++;
    else causes.neither++;
  }
  return causes;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The channels LIST shows that the model's list has not, and the other way round (a few of each, with LIST's counts). */
async function channelsApart(oracle: Oracle, api: BotApi): Promise<string> {
  const [listed, names] = await Promise.all([oracle.listed(), api.channelNames()]);
  const truth = new Map([...listed].map(([name, users]) => [casefold(name), users]));
  const model = new Set(names);
  const onlyTruth = [...truth].filter(([name]) => !model.has(name));
  const onlyModel = names.filter((name) => !truth.has(name));
  const few = (entries: string[]): string => entries.slice(0, 6).join(' ') + (entries.length > 6 ? ' ...' : '');
  return (
    `; a moment later LIST had ${listed.size}, the model ${names.length}: only in LIST ${onlyTruth.length} ` +
    `(${few(onlyTruth.map(([name, users]) => `${name}:${users}`))}), only in the model ${onlyModel.length} (${few(onlyModel)})`
  );
}

/** Who NAMES has that the model has not, and the other way round (a few of each). */
function memberDifference(truth: string[], model: string[]): string {
  const folded = new Set(truth.map((nick) => casefold(nick)));
  const modelSet = new Set(model);
  const onlyTruth = [...folded].filter((nick) => !modelSet.has(nick)).slice(0, 3);
  const onlyModel = model.filter((nick) => !folded.has(nick)).slice(0, 3);
  return onlyTruth.length + onlyModel.length > 0
    ? `; only in NAMES: ${onlyTruth.join(' ') || 'none'}, only in the model: ${onlyModel.join(' ') || 'none'}`
    : '';
}

function sameMembers(truth: string[], model: string[]): boolean {
  if (truth.length !== model.length) return false;
  const folded = new Set(truth.map((nick) => casefold(nick)));
  return model.every((nick) => folded.has(nick));
}

/**
 * Compare channels with NAMES: their member counts, or (`members`, for the bot's own channels, where
 * the model knows who is in them) the members themselves. A channel that differs is read again
 * (`rereads` times, 250 ms apart): the two reads are not at the same instant, and a join in between is
 * no fault of the model.
 */
async function compareChannels(
  oracle: Oracle,
  api: BotApi,
  names: readonly string[],
  what: 'counts' | 'members',
  rereads: number,
): Promise<{ equal: number; mismatches: string[] }> {
  let equal = 0;
  const mismatches: string[] = [];
  for (const name of names) {
    let last = '';
    for (let attempt = 0; attempt <= rereads; attempt++) {
      const truth = await oracle.names(name);
      const model = await api.channel(name);
      const same =
        model !== null && model.users === truth.length && (what === 'counts' || sameMembers(truth, model.members));
      if (same) {
        last = '';
        break;
      }
      last =
        `${name}: NAMES ${truth.length}, model ` +
        (model ? `${model.users}${what === 'members' ? ` (${model.members.length} members)` : ''}` : 'none') +
        (model && what === 'members' ? memberDifference(truth, model.members) : '');
      if (attempt < rereads) await delay(250);
    }
    if (last) mismatches.push(last);
    else equal++;
  }
  return { equal, mismatches };
}

function countsEqual(truth: Truth, model: ModelCounts | null): boolean {
  return (
    model !== null &&
    model.users === truth.allUsers &&
    model.channels === truth.channels &&
    model.servers === truth.servers
  );
}

function describeCounts(truth: Truth, model: ModelCounts | null): string {
  if (!model) return 'no model yet (503)';
  return (
    `users ${model.users}/${truth.allUsers}, channels ${model.channels}/${truth.channels}` +
    (model.channelsHeld !== null && model.channelsHeld !== model.channels
      ? ` (${model.channelsHeld} held, hidden ones too)`
      : '') +
    ', ' +
    `servers ${model.servers}/${truth.servers} (model/truth)`
  );
}

/** The time of the first log line of `source` starting with `prefix`, at or after `since` (the log is shared by restarts). */
function logTime(lines: LogLine[], source: string, prefix: string, since = 0): number | null {
  return lines.find((line) => line.at >= since && line.source === source && line.text.startsWith(prefix))?.at ?? null;
}

/**
 * Until the model equals the truth: LUSERS users, channels and servers against the model's own
 * counts, and `sample` channels' member counts against NAMES. Polls every 250 ms.
 */
async function waitForTruth(
  oracle: Oracle,
  api: BotApi,
  bot: BotProcess,
  sample: () => Promise<string[]>,
  timeoutSeconds: number,
  /** The bot's nick where it has no OPER: the truth is what it can see (`Oracle.hiddenFrom`). */
  plainViewer?: string,
): Promise<Arrival> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let last = 'never asked';
  let lastDifference = '';
  while (Date.now() < deadline) {
    const at = Date.now();
    // Both at once, as during the churn (see check below).
    const [truth, model] = await Promise.all([oracle.truth(SERVICES_SERVER, plainViewer), api.counts()]);
    last = describeCounts(truth, model);
    if (countsEqual(truth, model)) {
      const channels = await sample();
      const { mismatches } = await compareChannels(oracle, api, channels, 'counts', 0);
      if (mismatches.length === 0) {
        // Log times have millisecond resolution, spawnedAt too: a line of this process is not before it.
        const connectedAt = logTime(bot.log(), 'irc', 'connecting', bot.spawnedAt - 1);
        return {
          connectMs: connectedAt === null ? null : at - connectedAt,
          spawnMs: at - bot.spawnedAt,
          last: '',
          lastDifference,
          timeoutSeconds,
        };
      }
      last = `counts equal; ${mismatches.length} of ${channels.length} channels differ (${mismatches[0]})`;
    }
    if (model !== null) lastDifference = last;
    await delay(250);
  }
  return { connectMs: null, spawnMs: null, last, lastDifference, timeoutSeconds };
}

/**
 * What still differs between the model and the network by name, once their counts agree: users the model has
 * that WHO does not list or the other way round, and public channels whose user count is not LIST's (or that
 * LIST does not show). Empty when the model is the network, user by user and channel by channel.
 */
async function exactDifference(oracle: Oracle, api: BotApi, plainViewer?: string): Promise<string> {
  const [truthNicks, modelNicks, listed, modelChannels] = await Promise.all([
    oracle.nicks(plainViewer),
    api.nicks(),
    oracle.listed(),
    api.channelCounts(),
  ]);
  const truth = new Set(truthNicks.map((nick) => casefold(nick)));
  const model = new Set(modelNicks);
  const stale = [...model].filter((nick) => !truth.has(nick));
  const missing = [...truth].filter((nick) => !model.has(nick));
  const folded = new Map([...listed].map(([name, users]) => [casefold(name), users]));
  const wrong = [...modelChannels]
    .filter(([name, users]) => folded.get(name) !== users)
    .map(([name, users]) => `${name} ${users}/${folded.get(name) ?? 'not listed'}`);
  const some = (items: string[]): string => (items.length ? ` (${items.slice(0, 5).join(', ')})` : '');
  const parts = [
    stale.length ? `${stale.length} users the network has not${some(stale)}` : '',
    missing.length ? `${missing.length} users missing${some(missing)}` : '',
    wrong.length ? `${wrong.length} channels whose count is not LIST's${some(wrong)}` : '',
  ].filter(Boolean);
  return parts.length ? `by name: ${parts.join('; ')}` : '';
}

/** The bot's store file being written: from its temp file appearing to its rename. */
class WriteWatch {
  readonly windows: [number, number][] = [];
  private openedAt: number | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(files: string[]) {
    const temps = files.map((file) => `${file}.tmp`);
    this.timer = setInterval(() => {
      const writing = temps.some((file) => fs.existsSync(file));
      if (writing && this.openedAt === null) this.openedAt = Date.now();
      if (!writing && this.openedAt !== null) {
        this.windows.push([this.openedAt, Date.now()]);
        this.openedAt = null;
      }
    }, 5);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

interface LoadHandle {
  stop(): Promise<LoadResult>;
}

function startLoad(
  url: string,
  runs: { path: string; startMs: number; seconds: number; url?: string; control?: boolean }[],
  rate: number,
): LoadHandle {
  const child = fork(httpLoadFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const result = new Promise<LoadResult>((resolve, reject) => {
    child.once('message', (message: LoadResult) => resolve(message));
    child.once('exit', (code) => reject(new Error(`the HTTP load process exited (${code}) without a result`)));
  });
  const start: LoadMessage = {
    kind: 'start',
    url,
    probePath: PROBE_PATH,
    probeRate: PROBE_RATE,
    runs: runs.map((run) => ({ ...run, rate })),
  };
  child.send(start);
  return {
    stop() {
      child.send({ kind: 'stop' } satisfies LoadMessage);
      return result;
    },
  };
}

interface RawControl {
  url: string;
  stop(): void;
}

/** The raw control (raw-server.ts) at the bot's priority, replaying `paths` as the bot answers them now. */
async function startRawControl(botUrl: string, paths: string[]): Promise<RawControl> {
  const child = fork(rawServerFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`the raw control exited (${code}) before it listened`)));
    child.send({ kind: 'answers', botUrl, paths } satisfies RawServerMessage);
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => void child.kill() };
}

function pick<T>(items: readonly T[], count: number, random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy.slice(0, count);
}

export async function runScale(options: ScaleOptions): Promise<ScaleResult> {
  const { log } = options;
  const random = seededRandom(5);
  const refreshSeconds = options.refreshSeconds ?? 60;
  // Without OPER the bot sees no invisible user outside its channels: the truth is what it can see.
  const plainViewer = options.oper === false ? BOT_NICK : undefined;
  log(`scale: starting the network for ${options.users} users`);
  const network = await startScaleNetwork({
    users: options.users,
    botSendq: options.botSendq,
    botMaxChannels: options.botChannels,
    keepRun: options.keepRun,
  });
  let oracle: Oracle | null = null;
  let crowd: ScaleCrowd | null = null;
  let bot: BotProcess | null = null;
  let rawControl: RawControl | null = null;
  try {
    log(`scale: network up in ${network.runDir}: hub + ${network.leaves.length} leaves + services`);
    oracle = await Oracle.onHub(network, 'Truth');
    let lastShown = 0;
    const serversBefore = Object.fromEntries(Object.entries(network.pids).map(([key, pid]) => [key, cpuSeconds(pid)]));
    crowd = await startScaleCrowd({
      host: network.host,
      ports: network.leaves.map((leaf) => leaf.clientPort),
      plan: { users: options.users, channels: options.channels },
      chatChannels: options.botChannels,
      niceness: networkNiceness(),
      onProgress: (ready) => {
        if (ready - lastShown >= Math.max(1000, options.users / 10)) {
          lastShown = ready;
          log(`scale: crowd ${ready} of ${options.users} ready`);
        }
      },
    });
    // Each user has had its own server's answer to every line; the hub may still be reading the leaves' news.
    const settleStarted = performance.now();
    let truth = await oracle.truth(SERVICES_SERVER);
    while (truth.users < options.users + 1 || truth.channels < options.channels) {
      if (performance.now() - settleStarted > 120_000) {
        throw new Error(
          `the hub saw ${truth.users} users in ${truth.channels} channels 120 s after the crowd connected, ` +
            `not ${options.users + 1} in ${options.channels}`,
        );
      }
      await delay(250);
      truth = await oracle.truth(SERVICES_SERVER);
    }
    log(
      `scale: crowd connected in ${(crowd.connectMs / 1000).toFixed(1)} s (${crowd.pids.length} workers), ` +
        `seen whole on the hub ${((performance.now() - settleStarted) / 1000).toFixed(1)} s later; ` +
        `LUSERS: ${truth.users} users (and ${truth.servicesUsers} services' clients), ${truth.channels} channels, ` +
        `${truth.servers} servers`,
    );

    const botDir = path.join(network.runDir, 'bot');
    fs.mkdirSync(botDir, { recursive: true });
    const storePath = path.join(botDir, 'store.json');
    const storeStarted = performance.now();
    const fixture = await writeStoreFixture({
      path: storePath,
      plan: crowd.plan,
      chatChannels: options.botChannels,
      network: truth,
    });
    const storeBytes = fs.statSync(storePath).size;
    log(
      `scale: store written in ${((performance.now() - storeStarted) / 1000).toFixed(1)} s: ` +
        `${(storeBytes / 1024 / 1024).toFixed(1)} MB, ${fixture.speakers} speakers, ${fixture.lines} lines today, ` +
        `${fixture.historyPoints} history points`,
    );

    const [httpPort] = (await freePorts(1)) as [number];
    const configPath = path.join(botDir, 'config.json');
    writeBotConfig(configPath, {
      network,
      nick: BOT_NICK,
      httpPort,
      storePath: storePath,
      refreshSeconds: options.refreshSeconds,
      logLevel: options.botLogLevel,
      front: options.front,
      oper: options.oper,
    });
    const logPath = path.join(botDir, 'bot.log');
    bot = startBotProcess(configPath, logPath, httpPort);
    const api = new BotApi(bot.url, fixture.token);
    // Half the sample among the bot's channels-to-be, half among the rest: both kinds of channel count.
    const coldSample = [
      ...pick(crowd.plan.channels.slice(0, options.botChannels), options.sampleChannels / 2, random),
      ...pick(crowd.plan.channels.slice(options.botChannels), options.sampleChannels / 2, random),
    ];
    const coldTimeout = options.coldTimeoutSeconds ?? Math.max(60, 3 * refreshSeconds, options.users / 500);
    const cold = await waitForTruth(oracle, api, bot, () => Promise.resolve(coldSample), coldTimeout, plainViewer);
    log(
      cold.connectMs !== null
        ? `scale: cold start: the model equals the truth ${(cold.connectMs / 1000).toFixed(2)} s after the connect`
        : `scale: cold start: the model did not equal the truth within ${coldTimeout} s: ${cold.last}`,
    );
    // The bot joins its channels after the sync: the churn starts once it sits in them (or a minute passed).
    const joinDeadline = Date.now() + 60_000;
    const wantedChannels = Math.min(options.botChannels, options.channels);
    let joinedChannels = (await oracle.channelsOf(BOT_NICK)).length;
    while (joinedChannels < wantedChannels && Date.now() < joinDeadline) {
      await delay(500);
      joinedChannels = (await oracle.channelsOf(BOT_NICK)).length;
    }
    log(`scale: the bot is in ${joinedChannels} channels`);
    const coldRss = bot.rssBytes();
    const coldMemory = await bot.memory(true);
    const coldHeap = coldMemory.heapUsed;
    const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0);
    log(
      `scale: RSS ${mb(coldRss)} MB, heap after GC ${mb(coldHeap)} MB ` +
        `(heap total ${mb(coldMemory.heapTotal)} MB, external ${mb(coldMemory.external)} MB, RSS then ${mb(coldMemory.rss)} MB)`,
    );

    // The churn, with the comparisons, the CPU windows, the HTTP load and the write watch beside it.
    const seconds = options.churnSeconds;
    const writes = new WriteWatch([storePath, storePath.replace(/\.json$/, '.durable.json')]);
    await bot.loopDelay(true);
    const botCpu = new CpuMeter(bot.pid);
    const botWait = new RunQueueMeter(bot.pid);
    const serverCpu = Object.entries(network.pids).map(([key, pid]) => ({ key, pid, meter: new CpuMeter(pid) }));
    const crowdCpu = crowd.pids.map((pid) => new CpuMeter(pid));
    const quarter = (seconds * 1000) / 4;
    const loadRuns = [
      { path: CHANNELS_PATH, startMs: 2 * quarter, seconds: Math.max(1, quarter / 1000) },
      { path: STATUS_PATH, startMs: 3 * quarter, seconds: Math.max(1, quarter / 1000) },
    ];
    // The same requests at the same moments to node:http alone, with the same bytes: the machine's share.
    rawControl = await startRawControl(bot.url, [CHANNELS_PATH, STATUS_PATH]);
    const controlRuns = loadRuns.map((run) => ({ ...run, url: rawControl!.url, control: true }));
    const loadStarted = Date.now();
    const load = startLoad(bot.url, [...loadRuns, ...controlRuns], options.httpRate);
    let sendqPeak = 0;
    let watching = true;
    // On a connection of its own, so the other questions never hold it up.
    const watcher = await Oracle.onHub(network, 'SendqWatch');
    // Caught here: a rejection would otherwise go unhandled until the watch is awaited.
    const sendqWatch = (async (): Promise<unknown> => {
      while (watching) {
        const rows = await watcher.localLinks().catch((error: unknown) => error);
        if (!Array.isArray(rows)) return rows;
        const row = rows.find((link) => link.nick === BOT_NICK);
        if (row) sendqPeak = Math.max(sendqPeak, row.sendq);
        // Four times a second: the hub has a handful of connections, so STATS L is a few lines.
        await delay(250);
      }
    })();
    // The counts on a connection of their own, on time: the NAMES of a check ask the hub for a while (at
    // 100,000 users under churn the hub took 2–10 s per answer, so one check's NAMES took over a minute), and on
    // one connection they held up the next check's counts until after the churn.
    const truthConnection = (nick: string): Promise<Oracle> => Oracle.onHub(network, nick);
    const counter = await truthConnection('TruthCount');
    // How far LUSERS moves, and which channels differ, on a third: five LUSERS took 56 s at 100,000 users.
    const mover = await truthConnection('TruthMove');
    const churnStarted = Date.now();
    log(`scale: churn for ${seconds} s`);
    const churning = crowd.churn(seconds, options.churnRates);
    const checks: TruthCheck[] = [];
    const check = async (): Promise<void> => {
      const atSeconds = (Date.now() - churnStarted) / 1000;
      // At the same moment: read one after the other (LUSERS, then WHO of the services' server, then the
      // API), the model was read up to a second after the hub counted, and at 5,000 users that second of
      // churn alone was up to 0.6 % of the users or channels.
      const counted = Promise.all([counter.truth(SERVICES_SERVER, plainViewer), api.counts()]).then(
        async ([truth, model]) => ({
          truth,
          model,
          moved: await truthMovement(mover),
          // Channels off by more than the target: which ones, as LIST and the API show them a moment later.
          apart:
            model && Math.abs(model.channels - truth.channels) > truth.channels * 0.005
              ? await channelsApart(mover, api)
              : '',
        }),
      );
      const namesCompared = (async () => {
        const joined = await oracle!.channelsOf(BOT_NICK);
        const sample = pick(joined, options.sampleChannels, random);
        return { joined, sample, compared: await compareChannels(oracle!, api, sample, 'members', 2) };
      })();
      const [{ truth: truthNow, model, moved: truthMoved, apart }, { joined, sample, compared }] = await Promise.all([
        counted,
        namesCompared,
      ]);
      checks.push({
        atSeconds,
        truth: truthNow,
        model,
        channelsEqual: compared.equal,
        channelsCompared: sample.length,
        mismatches: compared.mismatches,
        truthMoved,
      });
      log(
        `scale: t=${atSeconds.toFixed(0)} s: ${describeCounts(truthNow, model)}; ` +
          `${compared.equal} of ${sample.length} of the bot's ${joined.length} channels equal NAMES ` +
          `(${((Date.now() - churnStarted) / 1000 - atSeconds).toFixed(0)} s); LUSERS itself moved by ` +
          `${truthMoved.users} users, ${truthMoved.channels} channels over ${(truthMoved.ms / 1000).toFixed(1)} s` +
          apart,
      );
    };
    // Awaited after the churn: a failure is handled meanwhile (an unhandled one would end the run without its cleanup).
    const startCheck = (): Promise<void> => {
      const checked = check();
      checked.catch(() => undefined);
      return checked;
    };
    const firstCheck = startCheck();
    let cpuChurn = NaN;
    // From the churn's start: a check's NAMES can take most of the churn on a slow network (over a minute at
    // 100,000 users), and a half counted from its end left nothing of the churn for the second half.
    const halfway = delay(churnStarted + (seconds * 1000) / 2 - Date.now()).then(() => {
      cpuChurn = botCpu.percent();
      botCpu.restart();
    });
    // Each check's counts on time; their NAMES queue behind the last check's on the truth's connection.
    const pendingChecks = [firstCheck];
    for (let at = options.checkSeconds; at < seconds; at += options.checkSeconds) {
      await delay(churnStarted + at * 1000 - Date.now());
      pendingChecks.push(startCheck());
    }
    const churned = await churning;
    await halfway;
    // Read as the churn ends, not once the checks' NAMES are done (at 100,000 users a minute later).
    const cpuChurnWithHttp = botCpu.percent();
    const runQueueChurn = botWait.percent();
    const churnServers = serverCpu.map(({ key, pid, meter }) => ({ key, pid, percent: meter.percent() }));
    const crowdPercent = crowdCpu.reduce((sum, meter) => sum + meter.percent(), 0);
    await Promise.all(pendingChecks);
    checks.sort((a, b) => a.atSeconds - b.atSeconds);
    await check();
    log(
      `scale: churn done: ${Object.entries(churned)
        .map(([name, count]) => `${count} ${name}`)
        .join(', ')}; bot CPU ${cpuChurn.toFixed(1)} % (${cpuChurnWithHttp.toFixed(1)} % with HTTP load)`,
    );

    // After the churn: how long until the model equals the truth exactly (every one of the bot's channels).
    const churnEnded = Date.now();
    const settleTimeout = options.settleTimeoutSeconds ?? Math.max(120, 3 * refreshSeconds);
    let settle: Arrival = {
      connectMs: null,
      spawnMs: null,
      last: '',
      lastDifference: '',
      timeoutSeconds: settleTimeout,
    };
    while (Date.now() < churnEnded + settleTimeout * 1000) {
      const at = Date.now();
      const [truthNow, model] = await Promise.all([oracle.truth(SERVICES_SERVER, plainViewer), api.counts()]);
      settle.last = describeCounts(truthNow, model);
      if (countsEqual(truthNow, model)) {
        const joined = await oracle.channelsOf(BOT_NICK);
        const compared = await compareChannels(oracle, api, joined, 'members', 0);
        if (compared.mismatches.length === 0) {
          settle = {
            connectMs: at - churnEnded,
            spawnMs: null,
            last: '',
            lastDifference: settle.last,
            timeoutSeconds: settleTimeout,
          };
          break;
        }
        settle.last = `counts equal; ${compared.mismatches.length} of ${joined.length} channels differ (${compared.mismatches[0]})`;
      }
      await delay(1000);
    }
    if (settle.connectMs === null)
      settle.last += `; ${(await exactDifference(oracle, api, plainViewer)) || 'equal by name'}`;
    log(
      settle.connectMs !== null
        ? `scale: the model equals the truth exactly ${(settle.connectMs / 1000).toFixed(1)} s after the churn`
        : `scale: not equal to the truth within ${settleTimeout} s after the churn: ${settle.last}`,
    );
    watching = false;
    const watchFailure = await sendqWatch;
    await watcher.close();
    await counter.close();
    await mover.close();
    if (watchFailure) throw watchFailure;
    const loadResult = await load.stop();
    writes.stop();
    const loop = await bot.loopDelay(true);
    const churnRss = bot.rssBytes();
    const churnHeap = (await bot.memory(true)).heapUsed;
    const peakRss = peakRssBytes(bot.pid);
    // Counts can agree while a ghost and a missing user cancel out: by name too, users and every public channel's
    // count. After the memory is read: the whole user list this reads costs the bot memory of its own.
    const byName: ByName = { ms: null, last: '' };
    while (Date.now() < churnEnded + settleTimeout * 1000) {
      const difference = await exactDifference(oracle, api, plainViewer);
      if (!difference) {
        byName.ms = Date.now() - churnEnded;
        break;
      }
      byName.last = difference;
      await delay(1000);
    }
    log(
      byName.ms !== null
        ? `scale: the model equals the network by name ${(byName.ms / 1000).toFixed(1)} s after the churn`
        : `scale: not equal to the network by name within ${settleTimeout} s after the churn: ${byName.last}`,
    );

    // A hold overlaps a write when it ends after the write began and begins before it ended.
    const inWrite = (from: number, to: number): boolean =>
      writes.windows.some(([start, end]) => to >= start && from <= end + 20);
    const loaded = (at: number): boolean =>
      loadRuns.some(
        (run) => at >= loadStarted + run.startMs && at <= loadStarted + run.startMs + run.seconds * 1000 + 500,
      );
    const longestWrite = loop.storeWrites.reduce<(typeof loop.storeWrites)[number] | undefined>(
      (longest, write) => (longest === undefined || write[1] > longest[1] ? write : longest),
      undefined,
    );
    const loadHolds = loop.holds.filter(([endedAt, ms]) => ms >= 20 && loaded(endedAt - ms));
    const flush = {
      storeBlockedMaxMs: longestWrite ? longestWrite[1] : null,
      storeBlockedGcMs: longestWrite ? longestWrite[2] : 0,
      storeBlockedWaitingMs: longestWrite ? longestWrite[3] : null,
      storeWrites: loop.storeWrites.length,
      writes: writes.windows.length,
      quietWrites: writes.windows.filter(([from]) => !loaded(from)).length,
      loopMaxInWrites: null as number | null,
      probeMaxInWrites: null as number | null,
      loopMaxInLoadedWrites: null as number | null,
      loopMaxOutside: 0,
      probeMaxOutside: 0,
      loopMaxMs: loop.maxMs,
      loopP99Ms: loop.p99Ms,
      loadHolds: {
        count: loadHolds.length,
        longestMs: Math.max(0, ...loadHolds.map(([, ms]) => ms)),
        totalMs: loadHolds.reduce((sum, [, ms]) => sum + ms, 0),
        gcMs: loadHolds.reduce((sum, [, , gc]) => sum + gc, 0),
        waitingMs: loadHolds.some(([, , , waiting]) => waiting === null)
          ? null
          : loadHolds.reduce((sum, [, , , waiting]) => sum + (waiting ?? 0), 0),
      },
    };
    for (const [endedAt, ms] of loop.holds) {
      const from = endedAt - ms;
      if (!inWrite(from, endedAt)) flush.loopMaxOutside = Math.max(flush.loopMaxOutside, ms);
      else if (loaded(from)) flush.loopMaxInLoadedWrites = Math.max(flush.loopMaxInLoadedWrites ?? 0, ms);
      else flush.loopMaxInWrites = Math.max(flush.loopMaxInWrites ?? 0, ms);
    }
    // A quiet write with no hold of 20 ms or more held the loop less than that.
    if (flush.loopMaxInWrites === null && flush.quietWrites > 0) flush.loopMaxInWrites = 0;
    loadResult.probeSentAt.forEach((at, index) => {
      const latency = loadResult.probeLatencyMs[index]!;
      if (!inWrite(at, at + latency)) flush.probeMaxOutside = Math.max(flush.probeMaxOutside, latency);
      else if (!loaded(at)) flush.probeMaxInWrites = Math.max(flush.probeMaxInWrites ?? 0, latency);
    });

    const lines = bot.log();
    const started = logTime(lines, 'host', 'plugin started') ?? bot.spawnedAt;
    const syncLines = lines.filter((line) => line.source === 'stats' && line.text.startsWith('synced '));
    const spanSeconds = (Date.now() - started) / 1000;
    const syncs = {
      durations: syncLines.map((line) => Number(/ ms=(\d+)/.exec(line.text)?.[1] ?? NaN)),
      failures: lines.filter((line) => line.source === 'stats' && line.text.startsWith('sync failed')).length,
      interrupted: lines.filter((line) => line.source === 'stats' && line.text.startsWith('sync interrupted')).length,
      // The connect's sync, then one per refresh timer tick; the last one may still be running.
      expected: 1 + Math.floor(spanSeconds / refreshSeconds),
      spanSeconds,
    };
    const disconnects = lines
      .filter((line) => line.source === 'irc' && line.text.startsWith('disconnected'))
      .map((line) => line.text);
    const refusedJoins = lines
      .filter((line) => line.source === 'stats' && line.text.startsWith('join refused'))
      .map((line) => line.text);

    let restart: ScaleResult['restart'] = null;
    if (options.restart) {
      // Users who quit in the churn's last seconds come back after it, as fast as the servers' connect
      // limits let them: the restart is measured once the network has stopped moving.
      let crowdBackMs: number | null = null;
      const waitUntil = Date.now() + 120_000;
      do {
        const status = await crowd.status();
        if (status.ready === status.users) {
          crowdBackMs = Date.now() - churnEnded;
          break;
        }
        await delay(250);
      } while (Date.now() < waitUntil);
      log(
        crowdBackMs === null
          ? 'scale: the crowd was not back in full after 120 s more; restarting anyway'
          : `scale: the crowd was back in full ${(crowdBackMs / 1000).toFixed(1)} s after the churn`,
      );
      const before = await api.history();
      const stopStarted = performance.now();
      await bot.stop();
      const stopMs = performance.now() - stopStarted;
      log(`scale: bot stopped in ${(stopMs / 1000).toFixed(1)} s; starting it again on the same store`);
      bot = startBotProcess(configPath, logPath, httpPort);
      const arrival = await waitForTruth(oracle, api, bot, () => Promise.resolve(coldSample), coldTimeout, plainViewer);
      const after = await api.history();
      restart = {
        ...arrival,
        stopMs,
        historyBefore: before.count,
        historyAfter: after.count,
        oldestKept: before.oldest !== null && before.oldest === after.oldest,
        crowdBackMs,
      };
      log(
        arrival.spawnMs !== null
          ? `scale: restart: the model equals the truth ${(arrival.spawnMs / 1000).toFixed(2)} s after the start; ` +
              `history ${before.count} → ${after.count} points` +
              (arrival.lastDifference ? ` (last difference: ${arrival.lastDifference})` : '')
          : `scale: restart: not equal to the truth within ${coldTimeout} s: ${arrival.last}`,
      );
    }

    const crowdStatus = await crowd.status();
    return {
      options: { ...options, log: undefined } as Omit<ScaleOptions, 'log'>,
      refreshSeconds,
      leaves: network.leaves.length,
      workers: crowd.pids.length,
      truth,
      plannedMemberships: crowd.plan.memberships,
      crowdConnectMs: crowd.connectMs,
      store: { ...fixture, bytes: storeBytes },
      cold,
      memory: { coldRss, coldHeap, churnRss, churnHeap, peakRss },
      cpu: { churn: cpuChurn, churnWithHttp: cpuChurnWithHttp, runQueue: runQueueChurn, niceness: networkNiceness() },
      checks,
      settle,
      byName,
      syncs,
      disconnects,
      joins: { joined: joinedChannels, wanted: wantedChannels, refused: refusedJoins },
      flush,
      probeFailures: loadResult.probeFailures,
      http: loadResult.runs.map((run) => ({ ...run, slowCauses: slowCauses(run, loop.holds) })),
      sendqPeak,
      truthLosses: [...oracle.losses, ...watcher.losses],
      restart,
      churned,
      crowdStatus,
      costs: {
        servers: churnServers.map(({ key, pid, percent }) => ({
          key,
          cpuSeconds: cpuSeconds(pid) - serversBefore[key]!,
          churnPercent: percent,
          rss: rssBytes(pid),
        })),
        crowd: {
          cpuSeconds: crowd.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
          churnPercent: crowdPercent,
          rss: crowd.pids.reduce((sum, pid) => sum + rssBytes(pid), 0),
        },
      },
    };
  } finally {
    rawControl?.stop();
    await bot?.stop();
    await crowd?.stop();
    await oracle?.close().catch(() => undefined);
    await network.stop();
  }
}
