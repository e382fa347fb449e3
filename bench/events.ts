/**
 * Event streams: a thousand public readers of `GET /api/irc/events/` on the scale bench's network of 5,000 users
 * under its churn (bench/scale/, scripts/scale-crowd/: the same network, crowd, churn and bot process).
 *
 * The churn runs in four phases, without streams, with them, without, with, each with the same marked events
 * beside it; the readers are a process of their own (bench/events/readers.ts). What it measures:
 * - the bot's CPU (its /proc) during each phase: what the streams add is the phases with them less those without;
 * - the bot's memory after a full GC before and after the streams open, the network quiet: per idle stream;
 * - the latency of marked events (a marker's PART with a numbered reason) from the moment the marker wrote the line
 *   to the moment each stream read its frame, and, beside it, to the moment a client on the bot's own server read
 *   the line (the network's own share).
 *
 *   node dist/bench/events.js [--smoke] [--write-interval-ms N] [--channel-filter]
 * `--write-interval-ms` sets the events plugin's `write_interval_ms` (else it has its default). `--channel-filter`
 * opens every stream with `?channel=` the markers' channel, as a channel page of the website does, instead of
 * unfiltered, as the Live page does.
 * The bot can be profiled as the scale bench's: SCALE_BOT_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof";
 * BENCH_EVENTS_KEEP_RUN=1 keeps the network's directory (the bot's config and log) after the run.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { casefold } from '../lib/irc/casemapping.js';
import { DEFAULT_CHURN, startScaleCrowd, type ChurnRates, type ScaleCrowd } from '../scripts/scale-crowd/crowd.js';
import { freePorts } from '../test/support/testnet.js';
import { formatBytes, formatCount, formatMs, isSmoke, runBench, type BenchResult, type Figure } from './common.js';
import { eventsConfigSchema } from '../plugins/events/schema.js';
import type { RawWriterAnswer, RawWriterRequest } from './events/raw-writer.js';
import type { ReadersAnswer, ReadersRequest, SessionResult, Spread } from './events/readers.js';
import { startBotProcess, writeBotConfig, type BotProcess } from './scale/bot-process.js';
import { startScaleNetwork, type ScaleNetwork } from './scale/network.js';
import { Oracle, type Truth } from './scale/oracle.js';
import { CpuMeter, MachineMeter, networkNiceness, RunQueueMeter } from './scale/proc.js';

const TITLE = 'Event streams: 1,000 readers on a network that never stops moving';
const BOT_NICK = 'DataBot';
const SERVICES_SERVER = 'services.test.net';
/** The bot's channels (its max_channels, as in the scale bench): the crowd's chat goes to them. */
const BOT_CHANNELS = 200;
const readersFile = fileURLToPath(new URL('./events/readers.js', import.meta.url));
const rawWriterFile = fileURLToPath(new URL('./events/raw-writer.js', import.meta.url));

interface Sizes {
  users: number;
  channels: number;
  streams: number;
  /** Seconds of churn per phase, and before the first (the markers take their places, the bot warms up). */
  phaseSeconds: number;
  warmSeconds: number;
  rates: ChurnRates;
  /** Marker clients, and marked events a second over all of them. */
  markers: number;
  markRate: number;
  /** The pause before each phase (the crowd's last reconnects come back), and after the streams opened. */
  settleMs: number;
  openedMs: number;
  /** Seconds the raw control writes. */
  controlSeconds: number;
  /** The events plugin's `write_interval_ms`. */
  writeIntervalMs: number;
  /** Whether each stream asks only for the markers' channel's events (`--channel-filter`). */
  channelFilter: boolean;
}

/** `--write-interval-ms N` from the command line, else the plugin's default. */
function writeIntervalArgument(): number {
  const at = process.argv.indexOf('--write-interval-ms');
  if (at === -1) return eventsConfigSchema.properties.write_interval_ms.default;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 0 || value > 10_000) {
    throw new Error(
      `--write-interval-ms takes a whole number of milliseconds from 0 to 10000, not ${process.argv[at + 1]}`,
    );
  }
  return value;
}

function sizes(smoke: boolean): Sizes {
  // The command line's, at either size.
  const options = {
    writeIntervalMs: writeIntervalArgument(),
    channelFilter: process.argv.includes('--channel-filter'),
  };
  return smoke
    ? {
        users: 300,
        channels: 60,
        streams: 20,
        phaseSeconds: 3,
        warmSeconds: 3,
        rates: Object.fromEntries(
          Object.entries(DEFAULT_CHURN).map(([name, rate]) => [name, rate / 10]),
        ) as unknown as ChurnRates,
        markers: 8,
        markRate: 2,
        settleMs: 1000,
        openedMs: 500,
        controlSeconds: 2,
        ...options,
      }
    : {
        users: 5000,
        channels: 1000,
        streams: 1000,
        phaseSeconds: 30,
        warmSeconds: 10,
        rates: DEFAULT_CHURN,
        markers: 40,
        markRate: 5,
        settleMs: 3000,
        openedMs: 2000,
        controlSeconds: 15,
        ...options,
      };
}

/** How the streams are filtered, for the page. */
function streamsFilter(size: Sizes): string {
  return size.channelFilter ? "each filtered to the markers' channel (channel=)" : 'unfiltered';
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The readers' process, asked one thing at a time. */
class Readers {
  readonly child: ChildProcess;
  private exited: Error | null = null;

  constructor() {
    this.child = fork(readersFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
    this.child.once('exit', (code) => (this.exited = new Error(`the readers' process exited (${code})`)));
  }

  ask<K extends ReadersAnswer['kind']>(request: ReadersRequest, kind: K): Promise<Extract<ReadersAnswer, { kind: K }>> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      const onExit = (): void => reject(this.exited ?? new Error("the readers' process exited"));
      const onMessage = (answer: ReadersAnswer): void => {
        if (answer.kind !== kind) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolve(answer as Extract<ReadersAnswer, { kind: K }>);
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(request);
    });
  }

  stop(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** Until the hub sees the whole crowd (each user had its own server's answers; the hub may still be reading). */
async function wholeCrowd(oracle: Oracle, users: number, channels: number): Promise<Truth> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const truth = await oracle.truth(SERVICES_SERVER);
    if (truth.users >= users + 1 && truth.channels >= channels) return truth;
    if (Date.now() > deadline) {
      throw new Error(
        `the hub saw ${truth.users} users in ${truth.channels} channels, not ${users + 1} in ${channels}`,
      );
    }
    await delay(250);
  }
}

/** Until the bot says it is ready (connected and synced), then until it sits in its channels. */
async function botReady(bot: BotProcess, oracle: Oracle, wanted: number): Promise<string[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = await fetch(`${bot.url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) throw new Error(`the bot was not ready within 120 s (/readyz ${status})`);
    await delay(250);
  }
  let joined = await oracle.channelsOf(BOT_NICK);
  while (joined.length < wanted && Date.now() < deadline) {
    await delay(500);
    joined = await oracle.channelsOf(BOT_NICK);
  }
  return joined;
}

/** What one phase of churn measured. */
interface Phase {
  streams: boolean;
  cpu: number;
  readersCpu: number;
  /** The machine's CPUs busy (percent of all of them), and the bot's main thread waiting for one (percent of the time). */
  machineBusy: number;
  botWaiting: number;
  rss: number;
  witness: Spread;
  /** The bot's event loop: how late its 10 ms timer fired at the 99th percentile, and at most (ms). */
  loop: { p99: number; max: number };
  session: SessionResult | null;
  /** Memory after a full GC, the network quiet, before the streams opened and after (the phases with streams). */
  idle: { before: { rss: number; heap: number }; after: { rss: number; heap: number }; open: number } | null;
  openMs: number;
}

/** The raw control: as many writes a second of the same size to as many streams, from node:http alone. */
interface Control {
  rate: number;
  bytes: number;
  writes: number;
  cpu: number;
}

interface Run {
  control: Control;
  sizes: Sizes;
  truth: Truth;
  crowd: ScaleCrowd;
  channel: string;
  phases: Phase[];
  summary: Extract<ReadersAnswer, { kind: 'summary' }>;
  disconnects: string[];
  loadBefore: number;
}

async function measure(size: Sizes, log: (line: string) => void): Promise<Run> {
  const loadBefore = os.loadavg()[0]!;
  const network: ScaleNetwork = await startScaleNetwork({
    users: size.users,
    botSendq: '8M',
    botMaxChannels: BOT_CHANNELS,
    // BENCH_EVENTS_KEEP_RUN=1 keeps the configs and logs (the bot's among them) for a look afterwards.
    keepRun: process.env.BENCH_EVENTS_KEEP_RUN === '1',
  });
  log(`events: the network runs in ${network.runDir}`);
  let oracle: Oracle | null = null;
  let crowd: ScaleCrowd | null = null;
  let bot: BotProcess | null = null;
  let readers: Readers | null = null;
  try {
    oracle = await Oracle.onHub(network, 'Truth');
    crowd = await startScaleCrowd({
      host: network.host,
      ports: network.leaves.map((leaf) => leaf.clientPort),
      plan: { users: size.users, channels: size.channels },
      chatChannels: BOT_CHANNELS,
      niceness: networkNiceness(),
    });
    const truth = await wholeCrowd(oracle, size.users, size.channels);
    log(`events: crowd of ${size.users} connected in ${(crowd.connectMs / 1000).toFixed(1)} s`);

    const botDir = path.join(network.runDir, 'bot');
    fs.mkdirSync(botDir, { recursive: true });
    const [httpPort] = (await freePorts(1)) as [number];
    const configPath = path.join(botDir, 'config.json');
    writeBotConfig(configPath, {
      network,
      nick: BOT_NICK,
      httpPort,
      storePath: path.join(botDir, 'store.json'),
      // Every reader comes from the one loopback address: the caps per address and in all let them in.
      plugins: {
        events: {
          max_streams: size.streams + 100,
          max_streams_per_address: size.streams + 100,
          write_interval_ms: size.writeIntervalMs,
        },
      },
    });
    bot = startBotProcess(configPath, path.join(botDir, 'bot.log'), httpPort);
    const joined = new Set(
      (await botReady(bot, oracle, Math.min(BOT_CHANNELS, size.channels))).map((name) => casefold(name)),
    );
    // A channel of the bot's of a few members (the 50th biggest planned: 9 at 5,000 users), so that the markers'
    // JOINs and PARTs cost the network little.
    const channel = crowd.plan.channels
      .slice(Math.min(49, size.channels - 1))
      .concat(crowd.plan.channels)
      .find((name) => joined.has(casefold(name)));
    if (!channel) throw new Error(`the bot sits in none of the crowd's channels (${joined.size} joined)`);
    log(`events: the bot is ready in ${joined.size} channels; the markers use ${channel}`);

    readers = new Readers();
    await readers.ask(
      {
        kind: 'setup',
        botUrl: bot.url,
        leafPorts: network.leaves.map((leaf) => leaf.clientPort),
        hubPort: network.hub.clientPort,
        channel,
        markers: size.markers,
        rate: size.markRate,
        query: size.channelFilter ? `channel=${encodeURIComponent(channel)}` : '',
      },
      'ready',
    );
    const churn = (seconds: number) =>
      Promise.all([crowd!.churn(seconds, size.rates), readers!.ask({ kind: 'mark', seconds }, 'marked')]);
    await churn(size.warmSeconds);

    const phases: Phase[] = [];
    for (const streams of [false, true, false, true]) {
      // The crowd's last reconnects come back, and the network is quiet for the memory figures.
      await delay(size.settleMs);
      let idle: Phase['idle'] = null;
      let openMs = 0;
      if (streams) {
        const before = await bot.memory(true);
        const opened = await readers.ask({ kind: 'open', count: size.streams }, 'opened');
        if (opened.open !== size.streams) {
          throw new Error(`${opened.open} of ${size.streams} streams opened (${opened.refused} refused or timed out)`);
        }
        openMs = opened.ms;
        await delay(size.openedMs);
        const after = await bot.memory(true);
        idle = {
          before: { rss: before.rss, heap: before.heapUsed },
          after: { rss: after.rss, heap: after.heapUsed },
          open: opened.open,
        };
      }
      await bot.loopDelay(true);
      const cpu = new CpuMeter(bot.pid);
      const readersCpu = new CpuMeter(readers.child.pid!);
      const machine = new MachineMeter();
      const waiting = new RunQueueMeter(bot.pid);
      const [, marked] = await churn(size.phaseSeconds);
      const percentOfCore = cpu.percent();
      const machineBusy = machine.percent();
      const botWaiting = waiting.percent();
      const loop = await bot.loopDelay(false);
      const phase: Phase = {
        streams,
        cpu: percentOfCore,
        readersCpu: readersCpu.percent(),
        machineBusy,
        botWaiting,
        rss: bot.rssBytes(),
        witness: marked.witness,
        loop: { p99: loop.p99Ms, max: loop.maxMs },
        session: streams ? await readers.ask({ kind: 'close' }, 'closed') : null,
        idle,
        openMs,
      };
      phases.push(phase);
      log(
        `events: phase ${phases.length} (${streams ? `${size.streams} streams` : 'no streams'}): bot CPU ` +
          `${phase.cpu.toFixed(1)} %, RSS ${formatBytes(phase.rss)}` +
          (phase.session
            ? `; latency ${spreadText(phase.session.latency)}, from the hub ${spreadText(phase.session.fromHub)}; ` +
              `${phase.session.delivered} of ${phase.session.expected} delivered` +
              (phase.session.missing.length > 0 ? ` (missed: ${JSON.stringify(phase.session.missing)})` : '') +
              '; per stream ' +
              `${formatCount(phase.session.readsPerStream)} reads, ${formatCount(phase.session.framesPerStream)} events`
            : '') +
          `; witness ${spreadText(marked.witness)}`,
      );
    }
    const summary = await readers.ask({ kind: 'summary' }, 'summary');
    const sessions = phases.flatMap((phase) => (phase.session ? [phase.session] : []));
    const control = await rawControl(readers, size, {
      rate: mean(sessions.map((one) => one.readsPerStream)) / size.phaseSeconds,
      bytes: mean(sessions.map((one) => one.bytesPerStream / Math.max(1, one.readsPerStream))),
    });
    log(`events: raw node:http control: ${control.cpu.toFixed(1)} % of a core for ${control.writes} writes`);
    const disconnects = bot
      .log()
      .filter((line) => line.source === 'irc' && line.text.startsWith('disconnected'))
      .map((line) => line.text);
    return { control, sizes: size, truth, crowd, channel, phases, summary, disconnects, loadBefore };
  } finally {
    readers?.stop();
    await bot?.stop();
    await crowd?.stop();
    await oracle?.close().catch(() => undefined);
    await network.stop();
  }
}

/** The raw control (events/raw-writer.ts) with as many streams open, written to at `rate` with `bytes` a write. */
async function rawControl(readers: Readers, size: Sizes, like: { rate: number; bytes: number }): Promise<Control> {
  const child = fork(rawWriterFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const next = (request: RawWriterRequest): Promise<RawWriterAnswer> =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the raw control exited (${code})`)));
      child.send(request);
    });
  try {
    const serving = await next({ kind: 'serve' });
    if (serving.kind !== 'serving') throw new Error('the raw control did not serve');
    const opened = await readers.ask({ kind: 'open', count: size.streams, url: serving.url }, 'opened');
    if (opened.open !== size.streams) throw new Error(`the raw control: ${opened.open} of ${size.streams} streams`);
    const cpu = new CpuMeter(child.pid!);
    const written = await next({ kind: 'write', rate: like.rate, bytes: like.bytes, seconds: size.controlSeconds });
    const percent = cpu.percent();
    await readers.ask({ kind: 'close' }, 'closed');
    return { ...like, writes: written.kind === 'written' ? written.writes : 0, cpu: percent };
  } finally {
    child.kill();
  }
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
}

function percent(value: number): string {
  return `${value.toFixed(1)} %`;
}

function spreadText(spread: Spread): string {
  return `p50 ${formatMs(spread.p50)}, p99 ${formatMs(spread.p99)}, max ${formatMs(spread.max)}`;
}

export function figuresOf(run: Run): Figure[] {
  const { sizes: size, phases, summary } = run;
  const without = phases.filter((phase) => !phase.streams);
  const withStreams = phases.filter((phase) => phase.streams);
  const sessions = withStreams.map((phase) => phase.session!);
  const streamsLabel = formatCount(size.streams);
  const figures: Figure[] = [];
  figures.push({
    name: 'network (LUSERS), streams',
    value:
      `${formatCount(run.truth.users)} users, ${formatCount(run.truth.channels)} channels; ${streamsLabel} public ` +
      `streams, ${streamsFilter(size)}, from one address, opened in ${withStreams.map((phase) => formatMs(phase.openMs)).join(' and ')}`,
  });
  figures.push({ name: 'machine load before the run (1-minute average)', value: run.loadBefore.toFixed(2) });
  const cpuWithout = mean(without.map((phase) => phase.cpu));
  const cpuWith = mean(withStreams.map((phase) => phase.cpu));
  figures.push({
    name: `bot CPU during the churn, without / with ${streamsLabel} streams`,
    value:
      `${percent(cpuWithout)} / ${percent(cpuWith)} of a core (phases in order: ` +
      `${phases.map((phase) => `${phase.cpu.toFixed(1)}${phase.streams ? ' with' : ''}`).join(', ')})`,
  });
  const busy = (phase: Phase) => `${phase.machineBusy.toFixed(0)} %`;
  const waits = (phase: Phase) => `${phase.botWaiting.toFixed(1)} %`;
  figures.push({
    name: "the machine's CPUs busy during the churn, and the bot waiting for one, without / with streams",
    value:
      `busy ${without.map(busy).join(', ')} / ${withStreams.map(busy).join(', ')} of all ${os.cpus().length}; ` +
      `the bot's main thread waiting ${without.map(waits).join(', ')} / ${withStreams.map(waits).join(', ')} of the time`,
  });
  const added = cpuWith - cpuWithout;
  figures.push({
    name: `bot CPU added by ${streamsLabel} streams`,
    value: `${percent(added)} of a core`,
    target: '≤ 10 % of a core',
    pass: added <= 10,
    measure: Math.round(added * 10) / 10,
  });
  const events = sessions.reduce((sum, session) => sum + session.marks, 0);
  figures.push({
    name: 'event latency, IRC line → stream reader',
    value:
      `${spreadText(summary.latency)} (${formatCount(summary.latency.count)} reads: ${events} marked events × ` +
      `${streamsLabel} streams)`,
    target: 'p99 ≤ 50 ms',
    pass: summary.latency.count > 0 && summary.latency.p99 <= 50,
    measure: summary.latency.p99,
  });
  figures.push({
    name: "the same events, the bot's server → stream reader (the bot's share: from a client on the bot's server reading the line)",
    value: spreadText(summary.fromHub),
  });
  figures.push({
    name: "the same events, IRC line → a client on the bot's server (the network's share)",
    value:
      `${spreadText(summary.witness)}; in the phases without streams ` +
      without.map((phase) => spreadText(phase.witness)).join(' and '),
  });
  const idle = withStreams.map((phase) => phase.idle!);
  const perStream = idle.map((one) => ({
    rss: (one.after.rss - one.before.rss) / one.open,
    heap: (one.after.heap - one.before.heap) / one.open,
  }));
  // The first opening's RSS: the second one's streams take memory the first one's left free when they closed.
  const first = perStream[0]!;
  const worst = Math.max(first.rss, ...perStream.map((one) => one.heap));
  figures.push({
    name: 'bot memory per idle stream (RSS after a full GC, the network quiet)',
    value:
      `${formatCount(first.rss / 1024, 1)} KB (heap ${perStream.map((one) => `${formatCount(one.heap / 1024, 1)} KB`).join(' and ')} ` +
      `at the two openings; at the second, RSS grew ${formatCount(perStream.at(-1)!.rss / 1024, 1)} KB a stream, into ` +
      "what the first one's streams left free)",
    target: '≤ 20 KB',
    pass: worst <= 20 * 1024,
    measure: Math.round((worst / 1024) * 10) / 10,
  });
  const loops = (phases: Phase[]): string =>
    phases.map((phase) => `${formatMs(phase.loop.p99)} (max ${formatMs(phase.loop.max)})`).join(', ');
  figures.push({
    name: "bot's event loop during the churn, p99 of its delay: without / with streams",
    value: `${loops(without)} / ${loops(withStreams)}`,
  });
  figures.push({
    name: 'bot RSS at the end of the churn, without / with streams',
    value: `${formatBytes(mean(without.map((phase) => phase.rss)))} / ${formatBytes(mean(withStreams.map((phase) => phase.rss)))}`,
  });
  const delivered = sessions.reduce((sum, session) => sum + session.delivered, 0);
  const expected = sessions.reduce((sum, session) => sum + session.expected, 0);
  const ended = sessions.reduce((sum, session) => sum + session.endedByBot + session.closedEarly, 0);
  const missing = sessions.flatMap((session) => session.missing);
  figures.push({
    name: 'marked events delivered to every stream',
    value:
      `${formatCount(delivered)} of ${formatCount(expected)}; streams ended before the bench closed them: ${ended}` +
      (missing.length === 0
        ? ''
        : `; not to every stream: ${missing
            .map(
              (one) =>
                `#${one.mark} (${one.streams} streams; the witness ${one.witnessMs === null ? 'never' : `after ${one.witnessMs} ms`})`,
            )
            .join(', ')}`),
    target: 'all',
    pass: expected > 0 && delivered === expected && ended === 0,
  });
  const seconds = size.phaseSeconds;
  figures.push({
    name: 'what a stream read during the churn',
    value: sessions
      .map(
        (session) =>
          `${formatCount(session.framesPerStream / seconds)} events/s in ${formatCount(session.readsPerStream / seconds)} ` +
          `reads/s, ${formatBytes(session.bytesPerStream / seconds)}/s`,
      )
      .join('; '),
  });
  figures.push({
    name: "the readers' process: CPU during the churn with streams",
    value: `${withStreams.map((phase) => percent(phase.readersCpu)).join(', ')} of a core`,
  });
  const { control } = run;
  figures.push({
    name: `raw node:http beside it: ${streamsLabel} streams written to as often, as much each time`,
    value:
      `${percent(control.cpu)} of a core (${formatCount(control.rate, 1)} writes/s of ${formatCount(control.bytes)} bytes ` +
      'to each, about what the bot wrote: one read of a stream per write)',
  });
  if (run.disconnects.length > 0) {
    figures.push({ name: 'bot disconnects', value: `${run.disconnects.length}: ${run.disconnects[0]}` });
  }
  return figures;
}

async function benchmark(): Promise<BenchResult> {
  const size = sizes(isSmoke());
  const run = await measure(size, (line) => process.stderr.write(`${line}\n`));
  const churn = Object.entries(size.rates)
    .map(([name, rate]) => `${rate} ${name}/s`)
    .join(', ');
  return {
    title: TITLE,
    setup:
      `The scale bench's network of ${formatCount(size.users)} users in ${formatCount(size.channels)} channels (bench/scale/: ` +
      'InspIRCd hub and leaves, Atheme, the crowd in worker processes at nice ' +
      `${networkNiceness()}, the bot as its own process as its bin runs it, with stats, api, tokens, metrics and events` +
      `, the events' write_interval_ms ${size.writeIntervalMs}` +
      (size.writeIntervalMs === eventsConfigSchema.properties.write_interval_ms.default ? ' (its default)' : '') +
      `) under its churn (${churn}), ` +
      `in four phases of ${size.phaseSeconds} s: without streams, with ${formatCount(size.streams)}, without, with; ` +
      `${size.warmSeconds} s of churn before them. The streams are public and ${streamsFilter(size)}, read from a process of ` +
      'their own (bench/events/readers.ts); they open before their phase, the network quiet, and close after it. Beside the ' +
      `churn, ${size.markers} clients on the leaves take turns to JOIN one of the bot's channels and PART it with a ` +
      `numbered reason, ${size.markRate} PARTs a second; a PART's latency is from its line written to each stream's read of ` +
      "its frame, and to a client on the bot's server (the network's share). CPU from /proc over each phase; memory per " +
      'stream from the bot after a full GC, before and after the streams open.',
    figures: figuresOf(run),
  };
}

const entry = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (entry) {
  // A Ctrl-C exits: the network's daemons are killed on exit, and the crowd, the bot and the readers follow.
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  runBench(TITLE, benchmark);
}
