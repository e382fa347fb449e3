/**
 * The event streams over real HTTP, on the collector fed by the fake connection: filters, heartbeats, the
 * cut-off of a reader who stops reading, and the end event when the bot stops.
 */
import t from 'tap';
import type { PluginDefinition } from '../../../lib/sdk.js';
import events from '../../../plugins/events/index.js';
import stats from '../../../plugins/stats/index.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import { startHarness } from '../../../testing/harness.js';
import { joinAs } from '../stats/support.js';
import { openEventStream, type StreamEvent } from '../../support/event-stream.js';

async function start(
  t: Parameters<typeof startHarness>[0],
  config: Record<string, unknown> = {},
  hostConfig: Record<string, unknown> = {},
) {
  const bot = await startHarness(t, {
    config: hostConfig,
    registry: [stats as PluginDefinition<never>, events as PluginDefinition<never>],
    plugins: { stats: {}, events: config },
    isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst WHOX',
    network: fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] }),
    operator: true,
    version: 'InspIRCd-3',
    socket: true,
  });
  await bot.synced();
  return bot;
}

const is =
  (type: string) =>
  (event: StreamEvent): boolean =>
    event.event === type;

t.test('filters by type, channel (a quit by the channels it names) and server', async (t) => {
  const { irc, host } = await start(t);
  joinAs(irc, '#room', 'DataBot');
  joinAs(irc, '#other', 'DataBot');
  const url = `${host.url}/api/irc/events/`;
  const byChannel = await openEventStream(`${url}?channel=%23ROOM`);
  const byType = await openEventStream(`${url}?types=quit,topic`);
  const byServer = await openEventStream(`${url}?server=LEAF.test.net`);
  await Promise.all([byChannel, byType, byServer].map((reader) => reader.next(is('hello'), 'open')));
  irc.receive(
    ':bob!b@h JOIN #other',
    ':bob!b@h TOPIC #other :elsewhere',
    ':carol!c@h JOIN #room',
    ':carol!c@h QUIT :bye',
    ':hub.test.net NOTICE DataBot :*** REMOTECONNECT: Client connecting at leaf.test.net: dan!d@10.0.0.1 (10.0.0.1) [Dan]',
  );
  await byServer.next(is('connect'), 'connect on the leaf');
  await byType.next(is('quit'), 'quit');
  await byChannel.next(is('quit'), 'quit of a member of #room');
  const summary = (reader: typeof byChannel) =>
    reader.events.filter((event) => event.event !== 'hello').map((event) => event.event);
  t.same(summary(byChannel), ['join', 'quit'], 'only #room, whatever the case');
  t.same(summary(byType), ['topic', 'quit']);
  t.same(summary(byServer), ['connect']);
  for (const reader of [byChannel, byType, byServer]) reader.close();
  const { text } = await host.metrics.forPlugin('test', () => undefined).exposition();
  t.match(text, /^irc_bot_events_total\{type="quit"\} 1$/m, 'events counted by type when the metrics are read');
  t.match(text, /^irc_bot_events_total\{type="join"\} 2$/m);
});

t.test('heartbeats keep quiet streams alive; the bot stopping ends them with an end event', async (t) => {
  const bot = await start(t, { heartbeat_seconds: 5 });
  joinAs(bot.irc, '#room', 'DataBot');
  const reader = await openEventStream(`${bot.host.url}/api/irc/events/?types=quit`);
  await reader.next(is('hello'), 'open');
  t.same(reader.comments, []);
  bot.irc.receive(':bob!b@h JOIN #room');
  await bot.clock.advance(5_000);
  await bot.until(() => reader.comments.length === 1, 'a heartbeat');
  t.same(reader.comments, ['heartbeat']);
  // The heartbeat carries the latest public event's id: a filtered reader resumes from there.
  const id = /: heartbeat\nid: (\S+)\n\n$/.exec(reader.text())?.[1];
  t.ok(id, `the heartbeat has an id (${id})`);
  const resumed = await openEventStream(`${bot.host.url}/api/irc/events/`, { 'Last-Event-ID': id! });
  await resumed.next(is('hello'), 'open');
  bot.irc.receive(':carol!c@h JOIN #room');
  const join = await resumed.next(is('join'), 'the next join');
  t.equal(join.data.nick, 'carol', "nothing replayed: the heartbeat's id was the latest");
  t.notOk(resumed.events.some(is('gap')));
  resumed.close();
  await bot.host.stop('test over');
  const end = await reader.next(is('end'), 'end');
  t.equal(end.data.reason, 'shutting_down');
  await reader.ended;
});

t.test('a reader who stops reading is cut off once more than max_buffered_kb waits for it', async (t) => {
  const { irc, host } = await start(t, { max_buffered_kb: 16 });
  joinAs(irc, '#room', 'DataBot');
  const reader = await openEventStream(`${host.url}/api/irc/events/`);
  const fast = await openEventStream(`${host.url}/api/irc/events/`);
  await reader.next(is('hello'), 'open');
  reader.pause();
  const topic = 'x'.repeat(400);
  // Topic after topic, a turn of the event loop between batches, until the reader's socket and its buffers are
  // full and more than 16 KiB waits for it at the bot. The loopback's buffers hold a few MiB.
  let sent = 0;
  while (sent < 200_000) {
    const lines = Array.from({ length: 200 }, (_, index) => `:op!o@h TOPIC #room :${sent + index} ${topic}`);
    irc.receive(...lines);
    sent += lines.length;
    await new Promise((resolve) => setImmediate(resolve));
    if (sent % 2000 === 0 && /reason="slow_consumer"\} 1/.test(await metricsText(host))) break;
  }
  t.ok(sent < 200_000, `cut off after ${sent} events`);
  reader.resume();
  const end = await reader.next(is('end'), 'the end event, once the reader reads again', 20_000);
  t.equal(end.data.reason, 'slow_consumer');
  t.match(end.data.message, /Last-Event-ID/);
  await reader.ended;
  const last = reader.events.filter((event) => event.event === 'topic').at(-1)!;
  t.ok(Number(last.id!.split('-')[1]) < sent, 'the events after the cut-off were not sent');
  t.equal(fast.status, 200);
  t.notOk(fast.events.some(is('end')), 'a reader that reads is not cut off');
  t.ok(fast.events.filter(is('topic')).length > reader.events.filter(is('topic')).length, 'and it got more');
  fast.close();
});

t.test('write_interval_ms holds events that follow a write until the interval is over', async (t) => {
  const { irc, host } = await start(t, { write_interval_ms: 1500 });
  joinAs(irc, '#room', 'DataBot');
  const reader = await openEventStream(`${host.url}/api/irc/events/?types=topic`);
  await reader.next(is('hello'), 'open');
  const topicNumbered = (number: number) => (event: StreamEvent) =>
    event.event === 'topic' && String(event.data.topic) === String(number);
  // The channel's own events came before the stream opened, and went to no stream: the first topic goes at once.
  const sent = performance.now();
  irc.receive(':op!o@h TOPIC #room :1');
  await reader.next(topicNumbered(1), 'the first topic, at once');
  const after = performance.now();
  t.ok(after - sent < 1000, `the first came ${Math.round(after - sent)} ms after its line, within the interval`);
  irc.receive(':op!o@h TOPIC #room :2');
  await new Promise((resolve) => setImmediate(resolve));
  irc.receive(':op!o@h TOPIC #room :3');
  await reader.next(topicNumbered(3), 'the next two, after the interval', 10_000);
  const waited = performance.now() - after;
  t.ok(waited >= 1300, `they came ${Math.round(waited)} ms after the first write, not at once`);
  t.same(
    reader.events.filter(is('topic')).map((event) => event.data.topic),
    ['1', '2', '3'],
    'in order',
  );
  reader.close();
});

t.test('a long replay goes out a part at a time, in order, with the live events behind it', async (t) => {
  const { irc, host } = await start(t, { max_buffered_kb: 16 });
  joinAs(irc, '#room', 'DataBot');
  const first = await openEventStream(`${host.url}/api/irc/events/?types=topic`);
  await first.next(is('hello'), 'open');
  const topic = 'y'.repeat(300);
  irc.receive(':op!o@h TOPIC #room :0 start');
  const seen = await first.next(is('topic'), 'the first topic');
  first.close();
  // About 600 KB of events: far more than one part of 16 KiB.
  for (let batch = 0; batch < 20; batch++) {
    irc.receive(
      ...Array.from({ length: 100 }, (_, index) => `:op!o@h TOPIC #room :${batch * 100 + index + 1} ${topic}`),
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  const resumed = await openEventStream(`${host.url}/api/irc/events/?types=topic`, { 'Last-Event-ID': seen.id! });
  // Live events while the replay goes out: they come after it.
  irc.receive(':op!o@h TOPIC #room :2001 live');
  await resumed.next(
    (event) => event.event === 'topic' && /^2001 /.test(String(event.data.topic)),
    'the live one',
    20_000,
  );
  const numbers = resumed.events.filter(is('topic')).map((event) => Number(String(event.data.topic).split(' ')[0]));
  t.equal(numbers.length, 2001);
  t.same(
    numbers,
    Array.from({ length: 2001 }, (_, index) => index + 1),
    'every event after the last seen, in order, the live one last',
  );
  t.notOk(resumed.events.some(is('end')), 'a reader that reads is not cut off by its replay');
  resumed.close();
});

t.test("open streams are capped on the bot, with the contract's 429", async (t) => {
  const { host } = await start(t, { max_streams: 2 });
  const url = `${host.url}/api/irc/events/`;
  const open = [await openEventStream(url), await openEventStream(url)];
  const over = await openEventStream(url);
  t.equal(over.status, 429);
  t.match(over.refusal, { error: { status: 429, code: 'rate_limited', message: /on this bot \(at most 2\)/ } });
  t.equal(over.headers['retry-after'], '30');
  open[0]!.close();
  await open[0]!.ended;
  const again = await (async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const reader = await openEventStream(url);
      if (reader.status === 200) return reader;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return undefined;
  })();
  t.equal(again?.status, 200, 'a place again once one closed');
  again?.close();
  open[1]!.close();
});

/** The host's metrics exposition. */
function metricsText(host: { metrics: { registry: { metrics(): Promise<string> } } }): Promise<string> {
  return host.metrics.registry.metrics();
}

t.test('streams per address: an IPv6 client counts with its /64', async (t) => {
  // Behind a trusted proxy (loopback), the client is the address X-Forwarded-For names.
  const { host } = await start(t, { max_streams_per_address: 1 }, { http: { trust_proxy: 'loopback' } });
  const url = `${host.url}/api/irc/events/`;
  const from = (ip: string) => openEventStream(url, { 'X-Forwarded-For': ip });
  const first = await from('2001:db8:1:2::1');
  t.equal(first.status, 200);
  const sameNetwork = await from('2001:db8:1:2::abcd');
  t.equal(sameNetwork.status, 429, 'another address of the same /64');
  t.match(sameNetwork.refusal, { error: { code: 'rate_limited', message: /from this address \(at most 1\)/ } });
  const otherNetwork = await from('2001:db8:1:3::1');
  t.equal(otherNetwork.status, 200, 'another /64');
  const v4 = [await from('192.0.2.1'), await from('192.0.2.2')];
  t.same(
    v4.map((reader) => reader.status),
    [200, 200],
    'each IPv4 address counts alone',
  );
  for (const reader of [first, otherNetwork, ...v4]) reader.close();
});
