import t from 'tap';
import { REQUESTS_IN_FLIGHT } from '../../../lib/irc/requests.js';
import { createLogger } from '../../../lib/logger.js';
import { NetworkModel } from '../../../lib/model/network.js';
import { measureLatency, PROBES, type ProbeChoice } from '../../../plugins/stats/latency.js';
import { statsConfigSchema, type StatsConfig } from '../../../plugins/stats/schema.js';
import type { SyncContext } from '../../../plugins/stats/sync.js';
import { ScriptedTransport } from './fixtures/scripted-irc.js';

function setup(pacing?: { burst: number; intervalMs: number }) {
  const irc = new ScriptedTransport(pacing ? { pacing } : {});
  irc.connect();
  irc.register('DataBot', 'CASEMAPPING=rfc1459');
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  for (const name of ['hub.test.net', 'leaf.test.net', 'services.test.net', 'dead.test.net']) model.upsertServer(name);
  irc
    .answer(/^TIME hub\.test\.net$/, [':hub.test.net 391 DataBot hub.test.net :Sat Nov 21 2026 15:55:12'])
    .answer(/^TIME leaf\.test\.net$/, [':leaf.test.net 391 DataBot leaf.test.net :Sat Nov 21 2026 15:55:12'])
    // Atheme ignores TIME; its VERSION reply has a space in the version and comes through the hub.
    .answer(/^VERSION services\.test\.net$/, [
      ':hub.test.net 351 DataBot atheme 7.2.12. services.test.net v7.2.12-0-g937b61ee1a3b6117dd44 :cljRn [InspIRCd]',
    ]);
  const defaults = Object.fromEntries(
    Object.entries(statsConfigSchema.properties).map(([key, schema]) => [key, schema.default]),
  ) as unknown as StatsConfig;
  const context: SyncContext = { irc, model, logger: createLogger({ sink: () => undefined }), config: defaults };
  return { irc, model, context };
}

t.test('every server gets a round trip, or null when it answers no probe', async (t) => {
  const { irc, model, context } = setup();
  const choice: ProbeChoice = new Map();
  await measureLatency(context, choice, 200);
  for (const name of ['hub.test.net', 'leaf.test.net', 'services.test.net']) {
    const server = model.servers.get(name)!;
    t.type(server.latencyMs, 'number', `${name} answered`);
    t.ok(server.latencyMs! >= 0 && server.latencyMs! < 200);
    t.type(server.measuredAt, 'string');
  }
  t.match(model.servers.get('dead.test.net'), { latencyMs: null, measuredAt: String }, 'silence is null, not an error');
  t.equal(
    choice.get('services.test.net'),
    PROBES.findIndex((probe) => probe.command === 'VERSION'),
  );
  t.equal(choice.get('hub.test.net'), 0);

  irc.sent.length = 0;
  await measureLatency(context, choice, 200);
  t.same(irc.sentMatching(/services/), ['VERSION services.test.net'], 'the probe that worked is tried first next time');
});

t.test('a server that splits off meanwhile (402) is null at once', async (t) => {
  const { irc, model, context } = setup();
  irc.answer(/^TIME leaf\.test\.net$/, [':hub.test.net 402 DataBot leaf.test.net :No such server']);
  irc.answer(/^VERSION leaf\.test\.net$/, [':hub.test.net 402 DataBot leaf.test.net :No such server']);
  model.removeServer('dead.test.net');
  model.removeServer('services.test.net');
  const started = Date.now();
  await measureLatency(context, new Map(), 5000);
  t.equal(model.servers.get('leaf.test.net')!.latencyMs, null);
  t.type(model.servers.get('hub.test.net')!.latencyMs, 'number');
  t.ok(Date.now() - started < 2000, 'no probe waited for its timeout');
});

t.test('time spent waiting for a turn is not latency: the clock starts when the probe is written', async (t) => {
  const { irc, model, context } = setup();
  model.removeServer('dead.test.net');
  model.removeServer('services.test.net');
  model.removeServer('leaf.test.net');
  // Other requests hold every turn for 400 ms, as a sync's WHO would.
  const busy = Array.from({ length: REQUESTS_IN_FLIGHT }, (_, index) =>
    irc.request({
      send: ['WHO', `${index}*`],
      reply: () => false,
      end: (line) => line.command === '315' && line.params[1] === `${index}*`,
    }),
  );
  setTimeout(() => {
    for (let index = 0; index < REQUESTS_IN_FLIGHT; index++) irc.receive(`:hub.test.net 315 DataBot ${index}* :End`);
  }, 400);
  const started = Date.now();
  await measureLatency(context, new Map(), 5000);
  await Promise.all(busy);
  const waited = Date.now() - started;
  t.ok(waited >= 400, `the probe waited for its turn (${waited} ms)`);
  const { latencyMs } = model.servers.get('hub.test.net')!;
  t.type(latencyMs, 'number');
  t.ok(latencyMs! < 100, `the round trip is the answer's, not the wait's (${latencyMs} ms)`);
});
