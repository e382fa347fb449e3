/**
 * The collector's units and the loop that registers them (plugins/stats/collector.ts): one table of line
 * handlers by command, one model listener for every unit's reactions, the connection's start and end, timers,
 * commands and the stop, in the units' order; and the stats plugin's own units, whose table must send a
 * PRIVMSG, two lines in three, straight to activity counting.
 */
import t from 'tap';
import type { IrcMessage } from '../../../lib/irc/port.js';
import { createLogger } from '../../../lib/logger.js';
import { NetworkModel } from '../../../lib/model/network.js';
import type { CommandDefinition } from '../../../lib/commands.js';
import type { PluginContext } from '../../../lib/plugin.js';
import { versionsUnit } from '../../../plugins/stats/clients.js';
import { createCollectorContext, lineTable, registerUnits } from '../../../plugins/stats/collector.js';
import { collectorUnits } from '../../../plugins/stats/index.js';
import { ActivitySlice } from '../../../plugins/stats/model/activity.js';
import { ChannelRecordsSlice } from '../../../plugins/stats/model/channel-records.js';
import { HistorySlice } from '../../../plugins/stats/model/history.js';
import { statsConfigSchema, type StatsConfig } from '../../../plugins/stats/schema.js';
import type { CollectorUnit } from '../../../plugins/stats/unit.js';
import { FakeTransport } from '../../../testing/fake-irc.js';

const defaults = Object.fromEntries(
  Object.entries(statsConfigSchema.properties).map(([key, schema]) => [key, schema.default]),
) as unknown as StatsConfig;

/** What registerUnits uses of a plugin's context, on a fake connection; timers and commands are recorded. */
function pluginContext() {
  const irc = new FakeTransport();
  const model = new NetworkModel();
  const timers: { ms: number; task: () => void }[] = [];
  const commands: CommandDefinition[] = [];
  const plugin = {
    irc,
    model,
    logger: createLogger({ sink: () => undefined }),
    config: defaults,
    timers: { every: (ms: number, task: () => void) => timers.push({ ms, task }), after: () => undefined },
    commands: { register: (command: CommandDefinition) => commands.push(command) },
    onModelChange: (listener: Parameters<NetworkModel['on']>[1]) => model.on('change', listener),
  } as unknown as PluginContext<StatsConfig>;
  return { plugin, irc, model, timers, commands };
}

const line = (command: string, ...params: string[]): IrcMessage => ({
  command,
  params,
  source: null,
  tags: {},
  time: new Date(),
});

t.test('the line table: one entry per command, its handlers in the units’ order', async (t) => {
  const calls: string[] = [];
  const record = (name: string) => (message: IrcMessage) => calls.push(`${name} ${message.command}`);
  const only = record('first');
  const table = lineTable([
    { name: 'first', lines: { PRIVMSG: only, NOTICE: record('first') } },
    { name: 'second' },
    { name: 'third', lines: { NOTICE: record('third'), '330': record('third') } },
  ]);
  t.same([...table.keys()], ['PRIVMSG', 'NOTICE', '330']);
  t.equal(table.get('PRIVMSG'), only, 'a command with one handler costs no more than that handler');
  table.get('NOTICE')!(line('NOTICE'));
  t.same(calls, ['first NOTICE', 'third NOTICE'], 'several run in turn, in the units’ order');
  t.notOk(table.has('JOIN'), 'a command no unit reads is not in it');
});

t.test('registerUnits wires lines, reactions, the connection, timers, commands and the stop', async (t) => {
  const { plugin, irc, model, timers, commands } = pluginContext();
  const context = createCollectorContext(plugin);
  const calls: string[] = [];
  const unit = (name: string, extra: Partial<CollectorUnit> = {}): CollectorUnit => ({
    name,
    lines: { JOIN: (message) => calls.push(`${name} line ${message.params[0]}`) },
    reactions: {
      userChanged: (user) => calls.push(`${name} user ${user.nick}`),
      channelCounted: (channel, key) => calls.push(`${name} channel ${channel.name} ${key}`),
      synced: () => calls.push(`${name} synced`),
    },
    onReady: () => calls.push(`${name} ready ${context.connection.ready} ${context.connection.sync.syncs}`),
    onDisconnected: () => calls.push(`${name} gone ${context.connection.ready}`),
    onStop: () => calls.push(`${name} stop`),
    ...extra,
  });
  const command: CommandDefinition = { name: 'PING', usage: '', help: 'pong', handle: () => undefined };
  const stop = registerUnits(plugin, context, [
    unit('a', { timers: [{ everyMs: 125, run: () => calls.push('a tick') }] }),
    unit('b', { commands: [command] }),
  ]);

  irc.receive(':alice!a@h JOIN #chat');
  t.same(calls, ['a line #chat', 'b line #chat'], 'lines, in the units’ order');
  calls.length = 0;
  model.connectionOpened('rfc1459');
  model.upsertUser('Alice', { ident: 'a' });
  t.same(calls, ['a user Alice', 'b user Alice'], 'a user, looked up once for both');
  calls.length = 0;
  model.upsertChannel('#Chat', { users: 3 });
  t.same(calls, ['a channel #Chat #chat', 'b channel #Chat #chat'], 'a channel counted, with its folded name');
  calls.length = 0;
  model.markSynced(false, 1);
  t.same(calls, ['a synced', 'b synced']);

  calls.length = 0;
  context.connection.sync.syncs = 3;
  irc.connect();
  irc.register();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(calls, ['a ready true 0', 'b ready true 0'], 'ready, with a new sync state, before the units');
  calls.length = 0;
  irc.drop();
  t.same(calls, ['a gone false', 'b gone false']);

  t.same(
    timers.map((timer) => timer.ms),
    [125],
  );
  timers[0]!.task();
  t.same(calls.at(-1), 'a tick');
  t.same(commands, [command]);
  calls.length = 0;
  stop();
  t.same(calls, ['a stop', 'b stop']);
});

t.test("the stats plugin's units: PRIVMSG straight to activity counting, every topic in its place", async (t) => {
  const { plugin, model } = pluginContext();
  const context = createCollectorContext(plugin);
  const fold = (name: string) => model.fold(name);
  const slices = {
    activity: new ActivitySlice({ timeZone: 'UTC', retentionDays: 30, fold }),
    history: new HistorySlice({ fullMs: 1, hourlyMs: 1, dailyMs: 1 }),
    records: new ChannelRecordsSlice(fold),
  };
  const units = collectorUnits(context, slices, versionsUnit(context));
  t.same(
    units.map((unit) => unit.name),
    [
      'topology',
      'client notices',
      'live tracking',
      'join refusals',
      'activity',
      'countries',
      'clients',
      'whois',
      'history',
      'latency',
      'service commands',
      'counts',
      'sync',
      'SYNC command',
    ],
  );
  const table = lineTable(units);
  const activity = units.find((unit) => unit.name === 'activity')!;
  t.equal(table.get('PRIVMSG'), activity.lines!.PRIVMSG, 'a PRIVMSG reaches activity counting and nothing else');
  const readers = (command: string) => units.filter((unit) => unit.lines?.[command]).map((unit) => unit.name);
  t.same(readers('NOTICE'), ['topology', 'client notices', 'activity', 'clients'], 'a NOTICE, in today’s order');
  t.same(readers('QUIT'), ['topology', 'live tracking'], 'a QUIT: a split first, then the user gone');
  t.same(readers('330'), ['whois']);
  t.same(readers('338'), ['countries']);
  t.same(readers('378'), ['countries']);
  t.same(readers('405'), ['join refusals']);
  t.same(readers('353'), ['live tracking']);
  const reacting = (reaction: 'userChanged' | 'channelCounted' | 'synced') =>
    units.filter((unit) => unit.reactions?.[reaction]).map((unit) => unit.name);
  t.same(reacting('userChanged'), ['countries', 'clients', 'whois'], 'a user located before the others see them');
  t.same(reacting('channelCounted'), ['activity']);
  t.same(reacting('synced'), ['clients']);
  t.same(
    units
      .flatMap((unit) => unit.commands ?? [])
      .map((command) => [command.name, command.args?.length, command.adminOnly]),
    [['SYNC', 0, true]],
  );
  t.same(units.at(-2)?.name, 'sync', 'the sync starts last, after the other units met the connection');
});
