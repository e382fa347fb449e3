/**
 * Latency: after its first sync and every `latency_seconds`, the collector asks each linked server a probe it
 * answers itself (TIME, else VERSION) and keeps the round trip, or null when none is answered.
 */
import t from 'tap';
import { REQUESTS_IN_FLIGHT } from '../../../lib/irc/requests.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import { INSPIRCD_ISUPPORT, latencyRounds, startCollector } from './support.js';

/** The network's servers: a hub and a leaf that answer TIME, Atheme's services (VERSION only), and one silent. */
function network() {
  return fakeNetwork({
    servers: [
      { name: 'hub.test.net' },
      { name: 'leaf.test.net', uplink: 'hub.test.net' },
      { name: 'services.test.net', uplink: 'hub.test.net', answers: [] },
      { name: 'dead.test.net', uplink: 'hub.test.net', answers: [] },
    ],
    users: [{ nick: 'DataBot', server: 'hub.test.net' }],
  });
}

t.test('every server gets a round trip, or null when it answers no probe', async (t) => {
  const bot = await startCollector(t, {
    stats: { latency_seconds: 1 },
    network: network(),
    version: 'InspIRCd-3',
    isupport: INSPIRCD_ISUPPORT,
  });
  // Atheme ignores TIME; its VERSION reply has a space in the version and comes through the hub.
  bot.server.answer(/^VERSION services\.test\.net$/, [
    ':hub.test.net 351 DataBot atheme 7.2.12. services.test.net v7.2.12-0-g937b61ee1a3b6117dd44 :cljRn [InspIRCd]',
  ]);
  const rounds = latencyRounds(bot);
  await bot.synced();
  await bot.until(() => rounds.get('dead.test.net') === 1, 'the first round, after the first sync');
  const { model } = bot.host;
  for (const name of ['hub.test.net', 'leaf.test.net', 'services.test.net']) {
    const server = model.servers.get(name)!;
    t.type(server.latencyMs, 'number', `${name} answered`);
    t.ok(server.latencyMs! >= 0 && server.latencyMs! < 1000, 'within the probe’s wait (latency_seconds)');
    t.type(server.measuredAt, 'string');
  }
  t.match(model.servers.get('dead.test.net'), { latencyMs: null, measuredAt: String }, 'silence is null, not an error');
  t.same(
    bot.irc.sentMatching(/^(TIME|VERSION) (hub|services)/),
    ['TIME hub.test.net', 'TIME services.test.net', 'VERSION services.test.net'],
    'TIME first; VERSION where TIME is not answered',
  );

  bot.irc.sent.length = 0;
  await bot.clock.advance(1000);
  await bot.until(() => rounds.get('services.test.net') === 2, 'the next round, latency_seconds later');
  t.same(
    bot.irc.sentMatching(/^(TIME|VERSION) (hub|services)/),
    ['TIME hub.test.net', 'VERSION services.test.net'],
    'the probe that worked is tried first next time',
  );
});

t.test(
  'while the server holds the bot’s lines (fake lag), no probe goes out, and what was measured stays',
  async (t) => {
    const bot = await startCollector(t, {
      stats: { latency_seconds: 1 },
      network: network(),
      version: 'InspIRCd-3',
      isupport: INSPIRCD_ISUPPORT,
    });
    const rounds = latencyRounds(bot);
    await bot.synced();
    await bot.until(() => rounds.get('dead.test.net') === 1, 'the first round');
    const { model } = bot.host;
    const before = model.servers.get('hub.test.net')!.measuredAt;
    bot.irc.state.lagged = true;
    bot.irc.sent.length = 0;
    await bot.clock.advance(3000);
    await bot.settled();
    t.same(bot.irc.sentMatching(/^(TIME|VERSION) /), [], 'no probe');
    t.equal(model.servers.get('hub.test.net')!.measuredAt, before, 'the last measure stays, with its time');
    bot.irc.state.lagged = false;
    await bot.clock.advance(1000);
    await bot.until(() => rounds.get('hub.test.net') === 2, 'measured again once the server reads at once');
  },
);

t.test('a server that splits off meanwhile (402) is null at once', async (t) => {
  const bot = await startCollector(t, {
    network: fakeNetwork({
      servers: [{ name: 'hub.test.net' }, { name: 'leaf.test.net', uplink: 'hub.test.net' }],
      users: [{ nick: 'DataBot', server: 'hub.test.net' }],
    }),
    version: 'InspIRCd-3',
    isupport: INSPIRCD_ISUPPORT,
  });
  bot.server
    .answer(/^TIME leaf\.test\.net$/, [':hub.test.net 402 DataBot leaf.test.net :No such server'])
    .answer(/^VERSION leaf\.test\.net$/, [':hub.test.net 402 DataBot leaf.test.net :No such server']);
  const rounds = latencyRounds(bot);
  await bot.synced();
  const started = Date.now();
  await bot.until(() => rounds.get('leaf.test.net') === 1, 'the leaf measured');
  const { model } = bot.host;
  t.equal(model.servers.get('leaf.test.net')!.latencyMs, null);
  t.type(model.servers.get('hub.test.net')!.latencyMs, 'number');
  t.ok(Date.now() - started < 2000, 'no probe waited for its timeout (5 s at the default latency_seconds)');
});

t.test('time spent waiting for a turn is not latency: the clock starts when the probe is written', async (t) => {
  const bot = await startCollector(t, {
    stats: { latency_seconds: 1 },
    network: fakeNetwork({
      servers: [{ name: 'hub.test.net' }],
      users: [{ nick: 'DataBot', server: 'hub.test.net' }],
    }),
    version: 'InspIRCd-3',
    isupport: INSPIRCD_ISUPPORT,
  });
  const rounds = latencyRounds(bot);
  await bot.synced();
  await bot.until(() => rounds.get('hub.test.net') === 1, 'the first round');
  // Other requests hold every turn for 400 ms, as a sync's WHO would.
  bot.server.answer(/^WHO \d\*$/, []);
  const busy = Array.from({ length: REQUESTS_IN_FLIGHT }, (_, index) =>
    bot.irc.request({
      send: ['WHO', `${index}*`],
      reply: () => false,
      end: (line) => line.command === '315' && line.params[1] === `${index}*`,
    }),
  );
  // The order, not a stopwatch: the harness's Date.now() stands still while the clock moves on.
  let released = false;
  let releasedAtRound: boolean | undefined;
  bot.host.model.on('change', (change) => {
    if (change.slice === 'servers' && change.kind === 'latency' && change.name === 'hub.test.net') {
      releasedAtRound ??= released;
    }
  });
  setTimeout(() => {
    released = true;
    for (let index = 0; index < REQUESTS_IN_FLIGHT; index++) {
      bot.irc.receive(`:hub.test.net 315 DataBot ${index}* :End`);
    }
  }, 400);
  await bot.clock.advance(1000);
  await bot.until(() => rounds.get('hub.test.net') === 2, 'the round behind the busy requests');
  await Promise.all(busy);
  t.equal(releasedAtRound, true, 'the probe waited for its turn');
  const { latencyMs } = bot.host.model.servers.get('hub.test.net')!;
  t.type(latencyMs, 'number');
  t.ok(latencyMs! < 100, `the round trip is the answer's, not the wait's (${latencyMs} ms)`);
});
