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
 */
import IrcFramework from 'irc-framework';
import { checkSchema } from '../lib/config.js';
import { toIrcMessage } from '../lib/irc/irc-framework.js';
import type { IrcMessage, IrcPort } from '../lib/irc/port.js';
import { isolated } from '../lib/isolated.js';
import { createLogger } from '../lib/logger.js';
import { NetworkModel } from '../lib/model/network.js';
import type { PluginDefinition } from '../lib/plugin.js';
import api from '../plugins/api/index.js';
import stats from '../plugins/stats/index.js';
import { FakeTransport } from '../test/support/fake-irc.js';
import { formatCount, formatRatio, isSmoke, median, runBench, seededRandom } from './common.js';
import { channelOf, nickOf, populate } from './model.js';

const INITIAL_USERS = 20_000;
const CHANNELS = 500;
const JOINED = 200;

/**
 * Lines a busy network sends a bot in 200 channels: mostly messages, then joins and parts,
 * quits (with a new user connecting and joining in their place) and nick changes.
 */
function generateLines(count: number): string[] {
  const random = seededRandom(7);
  const online: string[] = Array.from({ length: INITIAL_USERS }, (_, index) => nickOf(index));
  let nextUser = INITIAL_USERS;
  let nextNick = 0;
  const lines: string[] = [];
  const mask = (nick: string): string => `:${nick}!~${nick.slice(0, 8)}@host-${nick.length}.example.com`;
  while (lines.length < count) {
    const roll = random();
    const slot = Math.floor(random() * online.length);
    const nick = online[slot]!;
    const channel = channelOf(Math.floor(JOINED * random() ** 2));
    if (roll < 0.7) {
      lines.push(`${mask(nick)} PRIVMSG ${channel} :hello there, this is line ${lines.length} of the benchmark`);
    } else if (roll < 0.82) {
      lines.push(`${mask(nick)} JOIN ${channel} * :Real Name`);
    } else if (roll < 0.9) {
      lines.push(`${mask(nick)} PART ${channel} :bye`);
    } else if (roll < 0.95) {
      lines.push(`${mask(nick)} QUIT :Quit: leaving`);
      const fresh = nickOf(nextUser++);
      online[slot] = fresh;
      lines.push(`${mask(fresh)} JOIN ${channel} * :Real Name`);
    } else {
      const renamed = `renamed${(nextNick++).toString(36)}`;
      lines.push(`${mask(nick)} NICK :${renamed}`);
      online[slot] = renamed;
    }
  }
  return lines.slice(0, count);
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
    ctcpRequest: (target, type, text) => transport.ctcpRequest(target, type, text),
    ctcpReply: (target, type, text) => transport.ctcpReply(target, type, text),
    request: (request) => transport.request(request),
    casefold: (value) => transport.casefold(value),
  });
  const start = async <Config>(definition: PluginDefinition<Config>): Promise<void> => {
    await definition.start({
      name: definition.name,
      config: defaultConfig(definition),
      host: { admins: [], nick: 'DataBot', ircServer: { host: '127.0.0.1', port: 6667, tls: false, tlsVerify: true } },
      logger,
      model,
      irc: ircFor(definition.name),
      http: { route: () => undefined, setGuard: () => undefined, addHook: () => undefined, routes: () => [] },
      commands: {
        register: () => undefined,
        addAdminCheck: () => undefined,
        isAdmin: () => Promise.resolve(false),
        accountOf: () => Promise.resolve(null),
      },
      timers: { every: () => undefined, after: () => undefined },
      onModelChange: (listener) =>
        void model.on('change', isolated(logger, definition.name, 'model change handler', listener)),
    });
  };
  await start(stats);
  await start(api);
  const [handle] = handlers;
  if (!handle || handlers.length !== 1) throw new Error(`the plugins added ${handlers.length} message handlers, not 1`);
  return { model, handle };
}

function parseOnly(lines: readonly string[]): number {
  const started = process.hrtime.bigint();
  let commands = 0;
  for (const line of lines) commands += toIrcMessage(IrcFramework.ircLineParser(line)).params.length;
  if (commands === 0) throw new Error('the parser produced no parameters');
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function ingest(lines: readonly string[]): Promise<{ seconds: number; users: number }> {
  const { model, handle } = await freshCollector();
  const started = process.hrtime.bigint();
  for (const line of lines) handle(toIrcMessage(IrcFramework.ircLineParser(line)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, users: model.users.size };
}

async function main() {
  const smoke = isSmoke();
  const count = smoke ? 100_000 : 1_000_000;
  const rounds = smoke ? 1 : 5;
  const lines = generateLines(count);
  // Warm-up: the JIT sees both paths before anything counts.
  parseOnly(lines.slice(0, 50_000));
  await ingest(lines.slice(0, 50_000));
  const parseRates: number[] = [];
  const fullRates: number[] = [];
  const ratios: number[] = [];
  let users = 0;
  for (let round = 0; round < rounds; round++) {
    const parse = count / parseOnly(lines);
    const full = await ingest(lines);
    users = full.users;
    parseRates.push(parse);
    fullRates.push(count / full.seconds);
    ratios.push(count / full.seconds / parse);
  }
  const ratio = median(ratios);
  return {
    title: 'Collector ingest',
    setup:
      `${formatCount(count)} generated lines (70% PRIVMSG, 12% JOIN, 8% PART, 5% QUIT with a new user joining, ` +
      `5% NICK) over ${formatCount(INITIAL_USERS)} users in ${JOINED} joined channels; ${rounds} interleaved rounds, ` +
      "medians. Full = irc-framework parse + toIrcMessage + the stats plugin's message handler (live tracking, " +
      "activity counting, its model change listeners) with the API plugin's caches listening too.",
    figures: [
      { name: 'parse only', value: `${formatCount(median(parseRates))} lines/s` },
      { name: 'parse + model', value: `${formatCount(median(fullRates))} lines/s` },
      { name: 'users tracked at the end', value: formatCount(users) },
      { name: 'ratio full ÷ parse only', value: formatRatio(ratio), target: '≥ 0.5×', pass: ratio >= 0.5 },
    ],
  };
}

runBench('Collector ingest', main);
