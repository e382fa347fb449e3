/**
 * Scale: the bot on a loopback network of tens of thousands of users that never stops moving
 * (bench/scale/, scripts/scale-crowd/, docs/scaling-network.md).
 *
 * As a benchmark (`npm run bench`, `--smoke`): 5,000 users in 1,000 channels, then 50,000 in 10,000
 * (and 100,000 in 20,000 with BENCH_SCALE_100K=1), each on a fresh network, with 60 s of churn.
 *
 * From the command line, one size, printing as it goes:
 *   node dist/bench/scale.js --users 50000 --channels 10000 --churn-seconds 60
 *     [--refresh-seconds N] [--check-seconds 30] [--sample 20] [--bot-sendq 8M] [--http-rate 200]
 *     [--churn-scale 1] [--no-restart] [--keep-run] [--bot-debug] [--front] [--no-oper] [--settle-seconds N]
 *   node dist/bench/scale.js --hold 60 --users 50000 --channels 10000 [--churn-seconds 600]
 *     keeps the network and the crowd up for 60 minutes (Ctrl-C ends it sooner), churning for the
 *     given seconds at the start, and prints how to point a bot started by hand at it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CHURN, startScaleCrowd, type ChurnRates } from '../scripts/scale-crowd/crowd.js';
import { freePorts } from '../test/support/testnet.js';
import { formatCount, isSmoke, median, report, runBench, type BenchResult, type Figure } from './common.js';
import { BOT_NODE_ENV_WORDS, BOT_NODE_FLAGS } from '../lib/node-flags.js';
import { FORMED_SETTLE_MS } from '../plugins/stats/list.js';
import { writeBotConfig } from './scale/bot-process.js';
import { networkNiceness } from './scale/proc.js';
import { startScaleNetwork } from './scale/network.js';
import { runScale, type Arrival, type ScaleOptions, type ScaleResult } from './scale/scenario.js';

const TITLE = 'Scale: a big network that never stops moving';
const MB = 1024 * 1024;

function mb(bytes: number): string {
  return `${formatCount(bytes / MB, bytes < 10 * MB ? 1 : 0)} MB`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function sizeLabel(users: number): string {
  return users >= 1000 ? `${formatCount(users / 1000)}k` : formatCount(users);
}

function arrivalValue(arrival: Arrival, from: 'connect' | 'spawn'): string {
  const ms = from === 'connect' ? arrival.connectMs : arrival.spawnMs;
  return ms === null ? `not within ${arrival.timeoutSeconds} s (${arrival.last})` : seconds(ms);
}

/**
 * What a hold of `totalMs` was made of: the garbage collector's pauses, the main thread's wait for a CPU (at most;
 * null where unknown) and the rest, the bot's own work.
 */
function splitOf(totalMs: number, gcMs: number, waitingMs: number | null): string {
  const own = Math.max(0, totalMs - gcMs - (waitingMs ?? 0));
  return (
    `GC ${gcMs.toFixed(1)} ms, ` +
    (waitingMs === null ? 'waiting for a CPU unknown, ' : `waiting for a CPU ≤ ${waitingMs.toFixed(1)} ms, `) +
    `the bot's own work ≥ ${own.toFixed(1)} ms`
  );
}

function percentOff(model: number, truth: number): number {
  return truth === 0 ? 0 : (100 * Math.abs(model - truth)) / truth;
}

function scaleRates(rates: ChurnRates, factor: number): ChurnRates {
  return Object.fromEntries(
    Object.entries(rates).map(([name, rate]) => [name, rate * factor]),
  ) as unknown as ChurnRates;
}

/** The figures of one size, each with its target where the issue gives one for that size. */
export function figuresOf(result: ScaleResult): Figure[] {
  const { users, channels } = result.options;
  const label = sizeLabel(users);
  const big = users > 50_000;
  const figures: Figure[] = [];
  const add = (name: string, value: string, target?: string, pass?: boolean): void => {
    figures.push({ name: `${label}: ${name}`, value, ...(target ? { target, pass } : {}) });
  };
  add(
    'network (LUSERS)',
    `${formatCount(result.truth.users)} users (+ ${result.truth.servicesUsers} services' clients), ` +
      `${formatCount(result.truth.channels)} channels, ` +
      `${result.truth.servers} servers; crowd of ${formatCount(users)} in ${result.workers} processes ` +
      `connected in ${seconds(result.crowdConnectMs)}`,
  );
  const coldLimit = big ? 30 : 15;
  add(
    'cold start: connect → model equals the truth',
    `${arrivalValue(result.cold, 'connect')} (from the process start ${arrivalValue(result.cold, 'spawn')})`,
    `≤ ${coldLimit} s`,
    result.cold.connectMs !== null && result.cold.connectMs <= coldLimit * 1000,
  );
  const { joins } = result;
  add(
    "the bot's channels: joined after the sync, JOINs the server refused",
    `${joins.joined} of the ${joins.wanted} biggest (plugins.stats.max_channels); refused ${joins.refused.length}` +
      (joins.refused[0] ? `, first: ${joins.refused[0]}` : ''),
    'all; 0 refused',
    joins.joined === joins.wanted && joins.refused.length === 0,
  );
  const floods = result.disconnects.filter((text) => /flood|sendq|recvq/i.test(text));
  add(
    'disconnects for flood or sendq',
    `${floods.length} (all disconnects: ${result.disconnects.length}${result.disconnects[0] ? `, first: ${result.disconnects[0]}` : ''})`,
    '0',
    floods.length === 0,
  );
  const memoryLimit = users <= 50_000 ? 150 : 250;
  add(
    'RSS after cold sync / after churn (peak)',
    `${mb(result.memory.coldRss)} / ${mb(result.memory.churnRss)} (${mb(result.memory.peakRss)})`,
    `≤ ${memoryLimit} MB`,
    Math.max(result.memory.coldRss, result.memory.churnRss) <= memoryLimit * MB,
  );
  add(
    'heap after GC, after cold sync / after churn',
    `${mb(result.memory.coldHeap)} / ${mb(result.memory.churnHeap)}; ` +
      `${(result.memory.coldHeap / result.truth.allUsers / 1024).toFixed(2)} KB per user`,
  );
  add(
    'store: 24 h of activity, 30 days of history',
    `${mb(result.store.bytes)}: ${formatCount(result.store.speakers)} speakers, ${formatCount(result.store.lines)} lines, ` +
      `${formatCount(result.store.historyPoints)} history points`,
  );
  add(
    'bot CPU during churn (with HTTP load)',
    `${result.cpu.churn.toFixed(1)} % of a core (${result.cpu.churnWithHttp.toFixed(1)} %)`,
    '≤ 30 %',
    result.cpu.churn <= 30,
  );
  add(
    'bot waiting for a CPU during churn (run queue)',
    `${result.cpu.runQueue.toFixed(1)} % of the time (the network's processes at nice ${result.cpu.niceness})`,
  );
  const measured = result.checks.filter((check) => check.model !== null);
  const worstUsers = Math.max(0, ...measured.map((check) => percentOff(check.model!.users, check.truth.allUsers)));
  const worstPublic = Math.max(0, ...measured.map((check) => percentOff(check.model!.channels, check.truth.channels)));
  // Every channel the model holds; the public list leaves out those whose modes it does not know yet.
  const withHeld = measured.filter((check) => check.model!.channelsHeld !== null);
  const worstChannels = Math.max(
    0,
    ...withHeld.map((check) => percentOff(check.model!.channelsHeld!, check.truth.channels)),
  );
  const checksValue = (worst: number, key: 'users' | 'channels' | 'channelsHeld'): string =>
    `worst ${worst.toFixed(2)} % over ${result.checks.length} checks (${result.checks
      .map((check) =>
        check.model
          ? `${check.model[key] ?? '?'}/${key === 'users' ? check.truth.allUsers : check.truth.channels}`
          : 'no model',
      )
      .join(', ')})`;
  const allMeasured = measured.length === result.checks.length;
  add(
    'model users vs LUSERS during churn',
    checksValue(worstUsers, 'users'),
    '≤ 0.5 %',
    allMeasured && worstUsers <= 0.5,
  );
  add(
    'model channels vs LUSERS during churn (all it holds, from its metrics)',
    checksValue(worstChannels, 'channelsHeld'),
    '≤ 0.5 %',
    allMeasured && withHeld.length === measured.length && worstChannels <= 0.5,
  );
  add(
    'public channel list vs LUSERS during churn',
    `${checksValue(worstPublic, 'channels')}; a channel formed is left out until its modes are asked, ` +
      `at least ${FORMED_SETTLE_MS / 1000} s after it formed (a secret one must not show)`,
  );
  // What the checks above are measured against: on a small network under this churn the truth moves by a
  // sizeable share within a second (a reconnect empties a one-member channel and forms it again).
  const moved = (key: 'users' | 'channels'): string => {
    const worst = Math.max(0, ...result.checks.map((check) => check.truthMoved[key]));
    const of = key === 'users' ? result.truth.users : result.truth.channels;
    return `${key} by up to ${formatCount(worst)} (${((worst / Math.max(1, of)) * 100).toFixed(2)} %)`;
  };
  const span = Math.max(0, ...result.checks.map((check) => check.truthMoved.ms)) / 1000;
  add(
    'LUSERS itself during churn: 5 answers asked 0.25 s apart per check',
    `${moved('users')}, ${moved('channels')}; first to last answer at most ${span.toFixed(1)} s`,
  );
  const compared = result.checks.reduce((sum, check) => sum + check.channelsCompared, 0);
  const equal = result.checks.reduce((sum, check) => sum + check.channelsEqual, 0);
  const firstMismatch = result.checks.flatMap((check) => check.mismatches)[0];
  add(
    "bot's channels vs NAMES during churn",
    `${equal} of ${compared} equal${firstMismatch ? ` (e.g. ${firstMismatch})` : ''}`,
    'equal',
    compared > 0 && equal === compared,
  );
  add(
    'after the churn: until everything equals the truth',
    arrivalValue(result.settle, 'connect'),
    `≤ ${result.refreshSeconds} s (one refresh)`,
    result.settle.connectMs !== null && result.settle.connectMs <= result.refreshSeconds * 1000,
  );
  add(
    'after the churn: until the model equals the network by name (users against WHO, public channels against LIST)',
    result.byName.ms === null ? `not within the settle time: ${result.byName.last}` : seconds(result.byName.ms),
    `≤ ${result.refreshSeconds} s (one refresh)`,
    result.byName.ms !== null && result.byName.ms <= result.refreshSeconds * 1000,
  );
  const durations = result.syncs.durations;
  add(
    'refreshes completed (`[stats] synced`)',
    `${durations.length} of ${result.syncs.expected} due in ${result.syncs.spanSeconds.toFixed(0)} s` +
      (durations.length
        ? `; ms=${durations.slice(0, 8).join(', ')}${durations.length > 8 ? ', …' : ''} (median ${formatCount(median(durations))})`
        : '') +
      `; failed ${result.syncs.failures}, interrupted ${result.syncs.interrupted}`,
    'every one',
    durations.length >= result.syncs.expected - 1 && result.syncs.failures === 0 && result.syncs.interrupted === 0,
  );
  const flush = result.flush;
  const held = (ms: number | null): string => (ms === null ? 'none' : ms < 20 ? '< 20 ms' : `${ms.toFixed(0)} ms`);
  add(
    'store write: its longest hold of the event loop',
    flush.storeBlockedMaxMs === null
      ? 'no write'
      : `${flush.storeBlockedMaxMs.toFixed(1)} ms over ${flush.storeWrites} writes (the store's own measure: its ` +
          'longest stretch of work between two awaits; of it ' +
          splitOf(flush.storeBlockedMaxMs, flush.storeBlockedGcMs, flush.storeBlockedWaitingMs) +
          ')',
    '≤ 20 ms',
    flush.storeBlockedMaxMs !== null && flush.storeBlockedMaxMs <= 20,
  );
  add(
    'event loop held while a store write was under way (anything that ran then)',
    (flush.quietWrites === 0
      ? 'no write outside the HTTP load'
      : `${held(flush.loopMaxInWrites)} over ${flush.quietWrites} writes (the 404 probe at 50 req/s waited up to ` +
        `${(flush.probeMaxInWrites ?? 0).toFixed(0)} ms)`) +
      (flush.writes > flush.quietWrites
        ? `; ${flush.writes - flush.quietWrites} more under HTTP load: ${held(flush.loopMaxInLoadedWrites)}`
        : '') +
      `; elsewhere ${held(flush.loopMaxOutside)} (probe ${flush.probeMaxOutside.toFixed(0)} ms); ` +
      `loop delay p99 ${flush.loopP99Ms.toFixed(0)} ms`,
  );
  const holds = flush.loadHolds;
  add(
    'event loop held 20 ms or more during the HTTP load (what can make its p99)',
    holds.count === 0
      ? 'never'
      : `${holds.count === 1 ? 'once' : `${holds.count} times`}, longest ${holds.longestMs.toFixed(0)} ms, ${holds.totalMs.toFixed(0)} ms in all; of it ` +
          splitOf(holds.totalMs, holds.gcMs, holds.waitingMs),
  );
  for (const run of result.http) {
    if (run.control) continue;
    const control = result.http.find((candidate) => candidate.control && candidate.path === run.path);
    const failed = run.errors + run.non2xx;
    add(
      `HTTP p99 ${run.path} at ${run.rate} req/s during churn`,
      `${run.p99} ms (p50 ${run.p50} ms, max ${run.max} ms, ${formatCount(run.requests)} requests${failed ? `, ${failed} failed` : ''}` +
        `${run.resent ? `, ${run.resent} sent again after a kept-alive connection was reset, as browsers do` : ''})` +
        (run.slow.length === 0
          ? ''
          : `; of the ${run.slow.length === run.slowCount ? '' : 'first '}${run.slow.length} ` +
            `${run.slow.length === 1 ? 'answer' : 'answers'} of 20 ms or ` +
            `more${run.slow.length === run.slowCount ? '' : ` (of ${run.slowCount})`}, ${run.slowCauses.bot} came during a hold of the ` +
            `bot's loop of 10 ms or more, ${run.slowCauses.self} during one of the load generator's own, ` +
            `${run.slowCauses.neither} during neither`) +
        (control
          ? `; raw node:http beside it, the same bytes at the same moments: p99 ${control.p99} ms, max ${control.max} ms` +
            (control.errors + control.non2xx ? `, ${control.errors + control.non2xx} failed` : '')
          : ''),
      '≤ 20 ms',
      run.p99 <= 20 && failed === 0,
    );
  }
  add('peak send queue of the bot on the hub (STATS L)', `${formatCount(result.sendqPeak / 1024, 1)} KB`);
  if (result.truthLosses.length > 0) {
    add(
      'connections of the truth lost (opened again)',
      `${result.truthLosses.length}: ${result.truthLosses.join('; ')}`,
    );
  }
  if (result.restart) {
    const restart = result.restart;
    add(
      'restart: store load + resync to the truth',
      `${arrivalValue(restart, 'spawn')} from the start (${arrivalValue(restart, 'connect')} from the connect); ` +
        `stop took ${seconds(restart.stopMs)}; ` +
        (restart.crowdBackMs === null
          ? 'the crowd was still coming back from the churn'
          : `stopped once the crowd was back from the churn (${seconds(restart.crowdBackMs)} after it)`),
      users <= 50_000 ? '≤ 20 s' : undefined,
      restart.spawnMs !== null && restart.spawnMs <= 20_000,
    );
    const kept = restart.oldestKept && restart.historyAfter >= restart.historyBefore;
    add(
      'restart: history kept',
      `${kept ? 'yes' : 'no'}: ${formatCount(restart.historyBefore)} points before, ${formatCount(restart.historyAfter)} after`,
      'kept',
      kept,
    );
  }
  const servers = result.costs.servers;
  add(
    'IRC servers: CPU during churn, CPU and RSS in all',
    `${servers.map((server) => `${server.key} ${server.churnPercent.toFixed(0)} %`).join(', ')}; ` +
      `${formatCount(servers.reduce((sum, server) => sum + server.cpuSeconds, 0))} CPU s, ` +
      `${mb(servers.reduce((sum, server) => sum + server.rss, 0))}`,
  );
  add(
    'crowd: CPU during churn, CPU and RSS in all',
    `${result.costs.crowd.churnPercent.toFixed(0)} % (${result.workers} processes); ` +
      `${formatCount(result.costs.crowd.cpuSeconds)} CPU s, ${mb(result.costs.crowd.rss)}`,
  );
  const dropped = Object.entries(result.crowdStatus.dropped);
  add(
    'crowd: churn done, users dropped by the servers',
    `${Object.entries(result.churned)
      .map(([name, count]) => `${formatCount(count)} ${name}`)
      .join(
        ', ',
      )}; dropped ${dropped.length ? dropped.map(([reason, count]) => `${count} (${reason})`).join(', ') : 'none'}`,
  );
  void channels;
  return figures;
}

function setupText(results: ScaleResult[], churnSeconds: number, rates: ChurnRates): string {
  const sizes = results.map(
    (result) => `${formatCount(result.options.users)} users in ${formatCount(result.options.channels)} channels`,
  );
  const churn = Object.entries(rates)
    .map(([name, rate]) => `${rate} ${name}/s`)
    .join(', ');
  return (
    `${sizes.join(', then ')}, each on a fresh loopback network (InspIRCd hub + one leaf per 12,500 users, Atheme; ` +
    'docs/scaling-network.md), a crowd of raw connections in worker processes (channel sizes by a power law: ' +
    'the biggest 3,000 per 50,000 users and at most 3,000, a tail of 1–3; 10 % +i, 5 % away), and the bot as its own process ' +
    `(dist/app/main.js run with ${BOT_NODE_ENV_WORDS.join(' ')} and ${BOT_NODE_FLAGS.join(' ')}, as its bin and npm start run it; stats, api, ` +
    'tokens and metrics with defaults, rate limits off, the metrics read from loopback; ' +
    (results.some((result) => result.options.oper === false)
      ? "no OPER: a plain user, under InspIRCd's fake lag) on a "
      : 'an oper of type DataBot on the hub) on a ') +
    `store holding 24 h of activity and 30 days of history. ${churnSeconds} s of churn: ${churn}; the chat goes to ` +
    "the 200 biggest channels (the bot's). Truth: an operator on the hub (LUSERS, NAMES, WHOIS, STATS L), LUSERS asked as the API is read (the model's own channel count, hidden ones too, from its metrics)" +
    (results.some((result) => result.options.oper === false)
      ? "; without OPER, less the users a plain user cannot see (+i and in none of the bot's channels: WHO +i m). "
      : '. ') +
    'CPU from /proc over the first half of the churn; HTTP by a load generator sending evenly spaced requests at a fixed rate from another process ' +
    'in the third and fourth quarter; the event loop by a 404 probe at 50 req/s and a loop-delay histogram in the bot. ' +
    `The IRC servers, services and crowd run at nice ${networkNiceness()} (they stand for other machines), the bot, ` +
    'the load generator and the truth at the normal priority.'
  );
}

/** The benchmark: every size in turn, then how the heap per user grows. */
async function benchmark(): Promise<BenchResult> {
  const smoke = isSmoke();
  const sizes: [number, number][] = smoke
    ? [[300, 60]]
    : [
        [5000, 1000],
        [50_000, 10_000],
        ...(process.env.BENCH_SCALE_100K === '1' ? ([[100_000, 20_000]] as [number, number][]) : []),
      ];
  const churnSeconds = smoke ? 5 : 60;
  // The smoke run checks that the harness works, quickly: a tenth of the churn, and shorter waits.
  const churnRates = smoke ? scaleRates(DEFAULT_CHURN, 0.1) : DEFAULT_CHURN;
  const results: ScaleResult[] = [];
  // A size that fails (the network itself gave way) is reported as such; the other sizes' figures stay.
  const failures: Figure[] = [];
  for (const [users, channels] of sizes) {
    try {
      results.push(
        await runScale({
          users,
          channels,
          churnSeconds,
          churnRates,
          // A sync takes a few seconds even on a small network (the paced queries, then up to 10 MODE checks).
          refreshSeconds: smoke ? 10 : undefined,
          coldTimeoutSeconds: smoke ? 40 : undefined,
          settleTimeoutSeconds: smoke ? 30 : undefined,
          checkSeconds: smoke ? 2 : 30,
          sampleChannels: 20,
          botChannels: 200,
          botSendq: '8M',
          httpRate: 200,
          restart: true,
          log: (line) => process.stderr.write(`${line}\n`),
        }),
      );
    } catch (error) {
      process.stderr.write(`scale: ${sizeLabel(users)} failed: ${String(error)}\n`);
      failures.push({
        name: `${sizeLabel(users)}: the run`,
        value: `failed: ${error instanceof Error ? error.message : String(error)}`,
        target: 'completes',
        pass: false,
      });
    }
  }
  const figures = [...results.flatMap(figuresOf), ...failures];
  if (results.length > 1) {
    const perUser = results.map((result) => result.memory.coldHeap / result.truth.allUsers);
    const first = perUser[0]!;
    const last = perUser.at(-1)!;
    figures.push({
      name: 'heap per user as the network grows',
      value: results
        .map((result, index) => `${sizeLabel(result.options.users)} ${(perUser[index]! / 1024).toFixed(2)} KB`)
        .join(' → '),
      target: 'linear or better',
      pass: last <= first * 1.1,
    });
  }
  return {
    title: TITLE,
    setup: setupText(results, churnSeconds, churnRates),
    figures,
    notes: [
      'Sizes of 100,000 users run with `BENCH_SCALE_100K=1 npm run bench -- --only scale`; one size from the command ' +
        'line: `node dist/bench/scale.js --users 50000 --channels 10000 --churn-seconds 60` (docs/scaling-network.md).',
    ],
  };
}

interface Arguments {
  values: Map<string, string>;
  flags: Set<string>;
}

function parseArguments(argv: string[]): Arguments {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (!argument.startsWith('--')) throw new Error(`unexpected argument ${argument} (options start with --)`);
    const next = argv[index + 1];
    if (next === undefined || next.startsWith('--')) flags.add(argument.slice(2));
    else {
      values.set(argument.slice(2), next);
      index++;
    }
  }
  return { values, flags };
}

function numberOption(args: Arguments, name: string, fallback: number): number {
  const text = args.values.get(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number >= 0, got ${text}`);
  return value;
}

/** The network and the crowd, kept up for a bot started by hand. */
async function hold(args: Arguments): Promise<void> {
  const users = numberOption(args, 'users', 5000);
  const channels = numberOption(args, 'channels', Math.max(1, Math.round(users / 5)));
  const minutes = numberOption(args, 'hold', 60);
  const network = await startScaleNetwork({
    users,
    botSendq: args.values.get('bot-sendq') ?? '8M',
    keepRun: args.flags.has('keep-run'),
  });
  const stopAll: (() => Promise<void>)[] = [() => network.stop()];
  const finish = async (): Promise<void> => {
    for (const stop of stopAll.reverse()) await stop().catch(() => undefined);
  };
  process.once('SIGINT', () => void finish().then(() => process.exit(130)));
  process.once('SIGTERM', () => void finish().then(() => process.exit(143)));
  try {
    let shown = 0;
    const crowd = await startScaleCrowd({
      host: network.host,
      ports: network.leaves.map((leaf) => leaf.clientPort),
      plan: { users, channels },
      onProgress: (ready) => {
        if (ready - shown >= Math.max(1000, users / 10)) {
          shown = ready;
          console.log(`crowd: ${ready} of ${users} ready`);
        }
      },
    });
    stopAll.push(() => crowd.stop());
    const [httpPort] = (await freePorts(1)) as [number];
    const configPath = path.join(network.runDir, 'bot-config.json');
    writeBotConfig(configPath, {
      network,
      nick: 'DataBot',
      httpPort,
      storePath: path.join(network.runDir, 'bot-store', 'store.json'),
    });
    console.log(
      [
        `The scale network is up: ${users} users in ${channels} channels, crowd connected in ${seconds(crowd.connectMs)}.`,
        `  hub (services, bot): 127.0.0.1:${network.hub.clientPort}; leaves: ${network.leaves.map((leaf) => leaf.clientPort).join(', ')}`,
        `  bot oper block: ${network.botOperName} / ${network.botOperPass} (type DataBot, hardsendq ${network.botSendq})`,
        `  truth oper block: ${network.operName} / ${network.operPass} (NetAdmin)`,
        `  configs and logs: ${network.runDir}`,
        'Start a bot against it (an empty store; its HTTP API on the port in the config):',
        `  node dist/app/main.js --config ${configPath}`,
        `Held for ${minutes} minutes; Ctrl-C stops everything sooner.`,
      ].join('\n'),
    );
    const churnSeconds = numberOption(args, 'churn-seconds', 0);
    if (churnSeconds > 0) {
      console.log(`churning for ${churnSeconds} s`);
      const counts = await crowd.churn(churnSeconds, DEFAULT_CHURN);
      console.log(`churn done: ${JSON.stringify(counts)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
  } finally {
    await finish();
  }
}

/** One size from the command line, printing as it goes, then its table. */
async function once(args: Arguments): Promise<void> {
  const users = numberOption(args, 'users', 5000);
  const options: ScaleOptions = {
    users,
    channels: numberOption(args, 'channels', Math.max(1, Math.round(users / 5))),
    churnSeconds: numberOption(args, 'churn-seconds', 60),
    churnRates: scaleRates(DEFAULT_CHURN, numberOption(args, 'churn-scale', 1)),
    refreshSeconds: args.values.has('refresh-seconds') ? numberOption(args, 'refresh-seconds', 60) : undefined,
    checkSeconds: numberOption(args, 'check-seconds', 30),
    sampleChannels: numberOption(args, 'sample', 20),
    botChannels: 200,
    botSendq: args.values.get('bot-sendq') ?? '8M',
    httpRate: numberOption(args, 'http-rate', 200),
    restart: !args.flags.has('no-restart'),
    botLogLevel: args.flags.has('bot-debug') ? 'debug' : undefined,
    front: args.flags.has('front'),
    oper: !args.flags.has('no-oper'),
    settleTimeoutSeconds: args.values.has('settle-seconds') ? numberOption(args, 'settle-seconds', 180) : undefined,
    keepRun: args.flags.has('keep-run'),
    log: (line) => console.log(line),
  };
  const result = await runScale(options);
  const figures = figuresOf(result);
  for (const figure of figures) {
    const verdict = figure.pass === undefined ? '' : figure.pass ? '  [met]' : `  [NOT MET: ${figure.target}]`;
    console.log(`${figure.name}: ${figure.value}${verdict}`);
  }
  report({ title: TITLE, setup: setupText([result], options.churnSeconds, options.churnRates), figures });
}

const entry = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (entry) {
  const args = parseArguments(process.argv.slice(2).filter((argument) => argument !== '--smoke'));
  if (!args.flags.has('hold') && !args.values.has('hold')) {
    // A Ctrl-C exits (Node skips 'exit' handlers when a signal kills it): the network's daemons are
    // killed on exit, and the crowd, the bot and the HTTP load follow their parent.
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
  }
  if (args.flags.has('hold') || args.values.has('hold')) {
    hold(args).catch((error: unknown) => {
      console.error(`scale: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
  } else if (args.values.has('users')) {
    once(args).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`scale: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        process.exit(1);
      },
    );
  } else {
    runBench(TITLE, benchmark);
  }
}
