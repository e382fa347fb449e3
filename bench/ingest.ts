/**
 * Collector ingest: generated IRC lines (joins, parts, quits, nick changes,
 * messages) through irc-framework's line parser and the adapter's conversion
 * into the collector's own message handler, versus the parser and conversion
 * alone. Rounds alternate parse-only and full; each full round starts from the
 * same model.
 *
 * The full side runs the stats plugin as the host starts it, so it does per
 * line what the plugin does: live tracking, activity counting, the other
 * message handlers, and the model change listeners (peak member counts,
 * countries, CTCP VERSION queue); the API plugin runs too, so its caches
 * hear every change as they do in a real bot. Listeners are wrapped for error
 * isolation as the host wraps them.
 *
 * A third side, in the same rounds, runs the same parse into a minimal collector
 * (minimal-collector.ts) that must end each round in the same state as the full
 * one: a yardstick for what a leaner model of that kind could reach here.
 */
import IrcFramework from 'irc-framework';
import { checkSchema } from '../lib/config.js';
import { toIrcMessage } from '../lib/irc/irc-framework.js';
import type { IrcMessage, IrcPort } from '../lib/irc/port.js';
import { isolated } from '../lib/isolated.js';
import { HostMetrics } from '../lib/metrics.js';
import { createLogger } from '../lib/logger.js';
import { ActivitySlice } from '../plugins/stats/model/activity.js';
import { NetworkModel } from '../lib/model/network.js';
import type { PluginDefinition, ServiceName, Services } from '../lib/plugin.js';
import api from '../plugins/api/index.js';
import stats from '../plugins/stats/index.js';
import { FakeTransport } from '../testing/fake-irc.js';
import { formatCount, formatRatio, isSmoke, median, runBench, seededRandom } from './common.js';
import { MinimalCollector } from './minimal-collector.js';
import { channelOf, identityOf, nickOf, populate } from './model.js';

const INITIAL_USERS = 20_000;
const CHANNELS = 500;
const JOINED = 200;

/**
 * Lines a busy network sends a bot in 200 channels, as a server would send them: mostly messages,
 * each in a channel its sender is in (channels are +n); joins of channels the user is not in; parts
 * of channels they are in; quits (with a new user connecting and joining in their place); nick
 * changes. `channelsOf` holds each user's channels to start with, as {@link populate} made them.
 */
function generateLines(count: number, channelsOf: Map<string, string[]>): string[] {
  const random = seededRandom(7);
  /** Who is online: their nick now, and the index their ident, host, account and realname come from. */
  const online = Array.from({ length: INITIAL_USERS }, (_, index) => ({ nick: nickOf(index), index }));
  let nextUser = INITIAL_USERS;
  let nextNick = 0;
  const lines: string[] = [];
  // A user keeps their ident and host through nick changes, as on a server.
  const mask = (user: { nick: string; index: number }): string => {
    const { ident, host } = identityOf(user.index);
    return `:${user.nick}!${ident}@${host}`;
  };
  const pickChannel = () => channelOf(Math.floor(JOINED * random() ** 2));
  const join = (user: { nick: string; index: number }, channels: string[]) => {
    // The busier channels first, as users join them more; one the user is in already is not joined again.
    let channel = pickChannel();
    for (let tries = 0; tries < 8 && channels.includes(channel); tries++) channel = pickChannel();
    if (channels.includes(channel)) return;
    channels.push(channel);
    const { account, realname } = identityOf(user.index);
    lines.push(`${mask(user)} JOIN ${channel} ${account ?? '*'} :${realname}`);
  };
  while (lines.length < count) {
    const roll = random();
    const slot = Math.floor(random() * online.length);
    const user = online[slot]!;
    const channels = channelsOf.get(user.nick) ?? [];
    channelsOf.set(user.nick, channels);
    if (channels.length === 0) {
      // The bot sees nothing of a user who shares no channel with it, until they join one.
      join(user, channels);
    } else if (roll < 0.7 || (roll < 0.82 && channels.length >= JOINED / 2)) {
      const channel = channels[Math.floor(random() * channels.length)]!;
      lines.push(`${mask(user)} PRIVMSG ${channel} :hello there, this is line ${lines.length} of the benchmark`);
    } else if (roll < 0.82) {
      join(user, channels);
    } else if (roll < 0.9) {
      const [channel] = channels.splice(Math.floor(random() * channels.length), 1);
      lines.push(`${mask(user)} PART ${channel} :bye`);
    } else if (roll < 0.95) {
      lines.push(`${mask(user)} QUIT :Quit: leaving`);
      channelsOf.delete(user.nick);
      const fresh = { nick: nickOf(nextUser), index: nextUser++ };
      online[slot] = fresh;
      const freshChannels: string[] = [];
      channelsOf.set(fresh.nick, freshChannels);
      join(fresh, freshChannels);
    } else {
      const renamed = {
        nick: `${nextNick % 3 === 1 ? 'Renamed' : 'renamed'}${(nextNick++).toString(36)}`,
        index: user.index,
      };
      lines.push(`${mask(user)} NICK :${renamed.nick}`);
      channelsOf.delete(user.nick);
      channelsOf.set(renamed.nick, channels);
      online[slot] = renamed;
    }
  }
  return lines.slice(0, count);
}

/** The share of each command among `lines`, most first: "70% PRIVMSG, 16% JOIN, ...". */
function mix(lines: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const command = line.split(' ', 2)[1]!;
    counts.set(command, (counts.get(command) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([command, share]) => `${Math.round((100 * share) / lines.length)}% ${command}`)
    .join(', ');
}

/** Each user's channels in a freshly populated model, by nick. */
function startingChannels(): Map<string, string[]> {
  const model = new NetworkModel();
  populate(model, { users: INITIAL_USERS, channels: CHANNELS, joinedChannels: JOINED });
  const channelsOf = new Map<string, string[]>();
  for (const user of model.users.all()) {
    channelsOf.set(
      user.nick,
      [...user.channels].map((channel) => channel.name),
    );
  }
  return channelsOf;
}

/** A plugin's config with every default, as the host validates it. */
function defaultConfig<Config>(definition: PluginDefinition<Config>): Config {
  const config: Record<string, unknown> = {};
  const problems = checkSchema(definition.configSchema, config, `config.plugins.${definition.name}`);
  if (problems.length > 0)
    throw new Error(`the ${definition.name} plugin's defaults do not validate: ${problems.join('; ')}`);
  return config as Config;
}

/**
 * A populated model with the stats and API plugins started on it as the host starts them (timers, commands
 * and routes left out: they do nothing per line). Returns the stats plugin's message handler, which the full
 * side calls; the model change listeners of both plugins hear every change it makes.
 */
async function freshCollector(): Promise<{ model: NetworkModel; handle: (message: IrcMessage) => void }> {
  const transport = new FakeTransport();
  transport.connect();
  transport.register();
  const model = new NetworkModel();
  populate(model, { users: INITIAL_USERS, channels: CHANNELS, joinedChannels: JOINED });
  const handlers: ((message: IrcMessage) => void)[] = [];
  const logger = createLogger({ sink: () => undefined });
  // Listeners are wrapped as the host wraps them (lib/isolated.ts), so the full side pays for that too.
  const ircFor = (plugin: string): IrcPort => ({
    get state() {
      return transport.state;
    },
    on: (event, listener) => {
      if (event === 'message') {
        handlers.push(isolated(logger, plugin, 'handler for IRC message', listener as (message: IrcMessage) => void));
      }
      return () => undefined;
    },
    send: (command, ...params) => transport.send(command, ...params),
    privmsg: (target, text) => transport.privmsg(target, text),
    notice: (target, text) => transport.notice(target, text),
    ctcpRequest: (target, type, text, onSent) => transport.ctcpRequest(target, type, text, onSent),
    ctcpReply: (target, type, text) => transport.ctcpReply(target, type, text),
    request: (request) => transport.request(request),
    casefold: (value) => transport.casefold(value),
  });
  const services = new Map<string, unknown>();
  const metrics = new HostMetrics();
  const start = async <Config>(definition: PluginDefinition<Config>): Promise<void> => {
    await definition.start({
      name: definition.name,
      config: defaultConfig(definition),
      host: { admins: [], nick: 'DataBot', ircServer: { host: '127.0.0.1', port: 6667, tls: false, tlsVerify: true } },
      logger,
      model,
      irc: ircFor(definition.name),
      http: { route: () => undefined, addHook: () => undefined, routes: () => [] },
      commands: {
        register: () => undefined,
        addAdminCheck: () => undefined,
        isAdmin: () => Promise.resolve(false),
        isListedAdmin: () => false,
        accountOf: () => Promise.resolve(null),
      },
      timers: { every: () => undefined, after: () => undefined },
      store: { persisted: () => Promise.resolve(), archive: () => Promise.resolve('') },
      services: {
        provide: (name, value) => void services.set(name, value),
        get: <Name extends ServiceName>(name: Name) => services.get(name) as Services[Name],
      },
      onModelChange: (listener) =>
        void model.on('change', isolated(logger, definition.name, 'model change handler', listener)),
      metrics: metrics.forPlugin(definition.name, () => undefined),
      commandLine: { register: () => undefined },
    });
  };
  await start(stats);
  await start(api);
  const [handle] = handlers;
  if (!handle || handlers.length !== 1) throw new Error(`the plugins added ${handlers.length} message handlers, not 1`);
  return { model, handle };
}

/**
 * CPU seconds the process used: on a shared machine, time another tenant took the core is not
 * ours, and wall-clock time counted it against whichever side happened to be running.
 */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

function parseOnly(lines: readonly string[]): number {
  const started = cpuSeconds();
  let commands = 0;
  for (const line of lines) commands += toIrcMessage(IrcFramework.ircLineParser(line)).params.length;
  if (commands === 0) throw new Error('the parser produced no parameters');
  return cpuSeconds() - started;
}

/**
 * Nanoseconds one read of memory takes when it is not in the CPU's caches: a chain of dependent
 * reads, each at a random cache line of a `megabytes`-sized array (as big as the model's tables,
 * bigger than the per-core cache). Each line the collector handles makes a few such reads (the
 * nick's index slot and row, the nick-and-channel pair, the user, the membership), so this sets
 * how cheap a line beyond parsing can be on the machine.
 */
function memoryReadNs(megabytes: number): number {
  const random = seededRandom(11);
  const INTS_PER_LINE = 16;
  const cacheLines = (megabytes * 1024 * 1024) / 4 / INTS_PER_LINE;
  const order = Array.from({ length: cacheLines }, (_, index) => index);
  for (let index = cacheLines - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [order[other]!, order[index]!];
  }
  // One cycle through every cache line in random order: each read's address comes from the one before.
  const next = new Int32Array(cacheLines * INTS_PER_LINE);
  for (let index = 0; index < cacheLines; index++) {
    next[order[index]! * INTS_PER_LINE] = order[(index + 1) % cacheLines]! * INTS_PER_LINE;
  }
  const reads = 2_000_000;
  let at = 0;
  const started = process.hrtime.bigint();
  for (let read = 0; read < reads; read++) at = next[at]!;
  const ns = Number(process.hrtime.bigint() - started) / reads;
  if (at < 0) throw new Error('unreachable: the chain holds offsets only');
  return ns;
}

/** What a round ended with, for comparing the collectors; the full model itself is let go before the next side runs. */
interface Outcome {
  users: number;
  /** Members of each joined channel, by name. */
  members: Map<string, number>;
  /** Chat lines counted in each channel, by name, all days together. */
  channelLines: Map<string, number>;
  /** Chat lines counted, all days together (a round may cross midnight). */
  lines: number;
  /** Nicks and (nick, channel) pairs counted, all days together. */
  nicks: number;
  pairs: number;
}

function outcomeOf(model: NetworkModel): Outcome {
  const activity = model.slices().find((slice): slice is ActivitySlice => slice instanceof ActivitySlice);
  if (!activity) throw new Error('the stats plugin added no activity slice');
  const members = new Map<string, number>();
  for (const channel of model.channels.all()) if (channel.joined) members.set(channel.name, channel.members.size);
  const channelLines = new Map<string, number>();
  let lines = 0;
  let nicks = 0;
  let pairs = 0;
  for (const day of activity.days()) {
    lines += day.lines;
    nicks += day.nicks.size;
    pairs += day.speakers?.size ?? 0;
    for (const channel of day.channels.values()) {
      channelLines.set(channel.name, (channelLines.get(channel.name) ?? 0) + channel.lines);
    }
  }
  return { users: model.users.size, members, channelLines, lines, nicks, pairs };
}

/** CPU seconds to parse `lines` and hand each to `handle`. */
function feed(lines: readonly string[], handle: (message: IrcMessage) => void): number {
  const started = cpuSeconds();
  for (const line of lines) handle(toIrcMessage(IrcFramework.ircLineParser(line)));
  return cpuSeconds() - started;
}

async function ingest(lines: readonly string[]): Promise<{ seconds: number; outcome: Outcome }> {
  const { model, handle } = await freshCollector();
  const seconds = feed(lines, handle);
  return { seconds, outcome: outcomeOf(model) };
}

/**
 * Stops the bench unless the minimal collector ended where the full one did: the same users, members in
 * every joined channel, chat lines in every channel, nicks and (nick, channel) pairs counted, and chat
 * lines in total and over the hours. Totals, not every record: enough that it cannot have skipped the
 * membership or counting work of a line.
 */
function sameOutcome(full: Outcome, minimal: MinimalCollector): void {
  const differences: string[] = [];
  const compare = (what: string, ours: number, theirs: number) => {
    if (ours !== theirs) differences.push(`${what} ${ours} / ${theirs}`);
  };
  compare('users', minimal.users, full.users);
  for (const [name, members] of full.members) compare(`${name} members`, minimal.membersOf(name), members);
  for (const [name, lines] of full.channelLines) compare(`${name} lines`, minimal.linesIn(name), lines);
  compare('chat lines', minimal.linesCounted, full.lines);
  compare('chat lines over the hours', minimal.hourlyTotal(), full.lines);
  compare('nicks counted', minimal.nicksCounted, full.nicks);
  compare('nick and channel pairs', minimal.pairsCounted, full.pairs);
  if (differences.length > 0) {
    throw new Error(`the minimal collector and the full one disagree (minimal / full): ${differences.join('; ')}`);
  }
}

/** A minimal collector with the users and memberships the full side starts from. */
function seededMinimal(): MinimalCollector {
  const model = new NetworkModel();
  populate(model, { users: INITIAL_USERS, channels: CHANNELS, joinedChannels: JOINED });
  const minimal = new MinimalCollector();
  for (const user of model.users.all()) {
    const id = minimal.userId(user.nick, user.ident ?? '', user.host ?? '', user.account, user.realname ?? '');
    for (const channel of user.channels) minimal.addMember(id, minimal.channelId(channel.name));
  }
  return minimal;
}

/** The same lines into {@link MinimalCollector}, beside the same parser. */
function minimalIngest(lines: readonly string[]): { seconds: number; minimal: MinimalCollector } {
  const minimal = seededMinimal();
  const seconds = feed(lines, (message) => minimal.handle(message));
  return { seconds, minimal };
}

async function main() {
  const smoke = isSmoke();
  const count = smoke ? 100_000 : 1_000_000;
  const rounds = smoke ? 1 : 7;
  const lines = generateLines(count, startingChannels());
  // Warm-up: the JIT sees all three sides before anything counts.
  parseOnly(lines.slice(0, 50_000));
  await ingest(lines.slice(0, 50_000));
  minimalIngest(lines.slice(0, 50_000));
  const parseRates: number[] = [];
  const fullRates: number[] = [];
  const ratios: number[] = [];
  const minimalRates: number[] = [];
  const minimalRatios: number[] = [];
  let users = 0;
  for (let round = 0; round < rounds; round++) {
    const parse = count / parseOnly(lines);
    // The two collectors take turns going first, so neither always inherits the other's garbage.
    let minimal: { seconds: number; minimal: MinimalCollector };
    let full: { seconds: number; outcome: Outcome };
    if (round % 2 === 0) {
      full = await ingest(lines);
      minimal = minimalIngest(lines);
    } else {
      minimal = minimalIngest(lines);
      full = await ingest(lines);
    }
    sameOutcome(full.outcome, minimal.minimal);
    users = full.outcome.users;
    parseRates.push(parse);
    fullRates.push(count / full.seconds);
    ratios.push(count / full.seconds / parse);
    minimalRates.push(count / minimal.seconds);
    minimalRatios.push(count / minimal.seconds / parse);
  }
  const ratio = median(ratios);
  const readNs = median([16, 16, 16].map((megabytes) => memoryReadNs(megabytes)));
  return {
    title: 'Collector ingest',
    setup:
      `${formatCount(count)} generated lines (${mix(lines)}) over ${formatCount(INITIAL_USERS)} users in ` +
      `${JOINED} joined channels, as a server sends them: messages in channels the sender is in, joins of ` +
      `channels the user is not in, parts of channels they are in, a new user joining for each quit; ` +
      `${rounds} interleaved rounds, CPU time of the process, medians. Full = irc-framework parse + ` +
      "toIrcMessage + the stats plugin's message handler (live tracking, activity counting, its model change " +
      "listeners) with the API plugin's caches listening too, wrapped as the host wraps plugin listeners. " +
      'Minimal = the same parse into bench/minimal-collector.ts, which keeps only part of what the API is ' +
      "built from (users with their WHO fields, memberships, today's counts) in maps and typed arrays, one " +
      'line at a time, with no objects, events or listeners, and must end each round with the same users, ' +
      'members and counts as the full side: a yardstick for a leaner model of that kind, in the same rounds ' +
      '(the two collectors take turns going first).',
    figures: [
      { name: 'parse only', value: `${formatCount(median(parseRates))} lines/s` },
      { name: 'parse + model', value: `${formatCount(median(fullRates))} lines/s` },
      { name: 'users tracked at the end', value: formatCount(users) },
      {
        name: 'parse only, per line / one uncached memory read',
        value:
          `${formatCount(1e9 / median(parseRates))} ns / ${formatCount(readNs)} ns ` +
          '(dependent reads at random over 16 MB, wall-clock, TLB misses included)',
      },
      { name: 'ratio full ÷ parse only', value: formatRatio(ratio), target: '≥ 0.5×', pass: ratio >= 0.5 },
      { name: 'parse + minimal collector', value: `${formatCount(median(minimalRates))} lines/s` },
      { name: 'ratio minimal ÷ parse only', value: formatRatio(median(minimalRatios)) },
    ],
  };
}

runBench('Collector ingest', main);
