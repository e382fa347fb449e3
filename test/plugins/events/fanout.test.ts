/**
 * The fan-out's bounds, on a stream that stands for a client that does not read: what waits for it never grows
 * past `max_buffered_kb` and one part (a replay goes out a part at a time, as the client takes it), and a reader
 * whose backlog outgrows the journal is cut off. Then its timing: the write interval, and a flush written to many
 * readers a slice a turn, with events and readers that come meanwhile.
 */
import t, { type Test } from 'tap';
import type { OpenStream } from '../../../lib/http/stream-body.js';
import { Journal } from '../../../plugins/events/journal.js';
import { Fanout, Reader } from '../../../plugins/events/streams.js';
import type { NetworkEvent } from '../../../plugins/stats/contract.js';

/**
 * A stream whose client takes nothing until told to take everything; or, `eager`, one whose connection takes each
 * write at once (as a loopback socket takes a part smaller than its buffer), so no drain ever comes.
 */
class StalledStream implements OpenStream {
  buffered = 0;
  written = '';
  ended = false;
  writes = 0;
  private readonly drains: (() => void)[] = [];
  private readonly ends: (() => void)[] = [];
  constructor(private readonly eager = false) {}
  write(chunk: string | Buffer): boolean {
    if (this.ended) return false;
    this.written += chunk.toString();
    this.writes++;
    if (this.eager) return true;
    this.buffered += chunk.length;
    return false;
  }
  end(): void {
    this.ended = true;
    for (const listener of this.ends) listener();
  }
  abort(): void {
    this.end();
  }
  onEnd(listener: () => void): void {
    this.ends.push(listener);
  }
  onDrain(listener: () => void): void {
    this.drains.push(listener);
  }
  /** The client took everything. */
  drain(): void {
    this.buffered = 0;
    for (const listener of this.drains) listener();
  }
}

const topic = (index: number, channel = '#room'): NetworkEvent => ({
  type: 'topic',
  time: 1_700_000_000_000,
  data: { channel, topic: `${index} ${'z'.repeat(200)}` },
  publicData: { channel, topic: `${index} ${'z'.repeat(200)}` },
});

/** A journal and a fan-out; `writeIntervalMs` on a clock the test moves (`clock.now`). */
function setup(maxBacklog = 10_000, writeIntervalMs = 0, readersPerTurn?: number) {
  const journal = new Journal({ events: 10_000, seconds: 600 });
  const clock = { now: 10_000 };
  const fanout = new Fanout({
    journal,
    fold: (name) => name.toLowerCase(),
    maxBufferedBytes: 16 * 1024,
    maxBacklog,
    writeIntervalMs,
    now: () => clock.now,
    readersPerTurn,
  });
  const reader = (stream: StalledStream, channel: string | null = null) =>
    new Reader(
      stream,
      'public',
      { types: null, channel, server: null },
      '127.0.0.1',
      undefined,
      undefined,
      journal.nextNumber - 1,
    );
  return { journal, fanout, reader, clock };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test('a replay goes out a part at a time, each when the client took the last', async (t) => {
  const { journal, fanout, reader } = setup();
  const entries = Array.from({ length: 2000 }, (_, index) => journal.append(topic(index)));
  const stream = new StalledStream();
  fanout.add(reader(stream), 'retry: 3000\n\n', entries);
  t.ok(stream.buffered <= 16 * 1024 + 400, `one part waits (${stream.buffered} bytes), not the whole replay`);
  // Live events meanwhile wait behind the replay.
  fanout.publish(journal.append(topic(2000)));
  fanout.flush();
  t.ok(stream.buffered <= 16 * 1024 + 400, 'a live event waits behind it too');
  let parts = 1;
  while (!stream.written.includes('2000 z')) {
    stream.drain();
    parts++;
    t.ok(stream.buffered <= 16 * 1024 + 400, `part ${parts}: ${stream.buffered} bytes`);
    if (parts > 100) break;
  }
  t.ok(parts > 10, `in ${parts} parts`);
  const numbers = [...stream.written.matchAll(/"topic":"(\d+) /g)].map((match) => Number(match[1]));
  t.same(
    numbers,
    Array.from({ length: 2001 }, (_, index) => index),
    'in order, the live event last',
  );
});

t.test('a replay to a connection that takes each part at once goes on, a part a turn', async (t) => {
  const { journal, fanout, reader } = setup();
  const entries = Array.from({ length: 2000 }, (_, index) => journal.append(topic(index)));
  const stream = new StalledStream(true);
  fanout.add(reader(stream), 'retry: 3000\n\n', entries);
  t.equal(stream.writes, 2, 'the opening and one part in this turn');
  const deadline = Date.now() + 5000;
  while (!stream.written.includes('1999 z') && Date.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  const numbers = [...stream.written.matchAll(/"topic":"(\d+) /g)].map((match) => Number(match[1]));
  t.same(
    numbers,
    Array.from({ length: 2000 }, (_, index) => index),
    'all of it, in order, with no drain',
  );
  t.ok(stream.writes > 10, `in ${stream.writes - 1} parts`);
});

t.test('a reader whose backlog outgrows the journal is cut off', async (t) => {
  const { journal, fanout, reader } = setup(500);
  const entries = Array.from({ length: 400 }, (_, index) => journal.append(topic(index)));
  const stream = new StalledStream();
  fanout.add(reader(stream), '', entries);
  for (let index = 400; index < 1000 && !stream.ended; index++) {
    fanout.publish(journal.append(topic(index)));
    fanout.flush();
  }
  t.ok(stream.ended, 'ended');
  t.match(stream.written, /event: end\ndata: \{"reason":"slow_consumer"/);
  t.equal(fanout.size, 0, 'and no longer counted');
});

t.test('write_interval_ms: events within the interval wait for its end and go out in one write', async (t) => {
  const { journal, fanout, reader, clock } = setup(10_000, 1000);
  const stream = new StalledStream(true);
  fanout.add(reader(stream), '', []);
  const numbers = () => [...stream.written.matchAll(/"topic":"(\d+) /g)].map((match) => Number(match[1]));

  // After a quiet spell an event goes out on the next turn, as without the interval.
  fanout.publish(journal.append(topic(0)));
  await turn();
  t.same(numbers(), [0], 'the first event at once');
  t.equal(stream.writes, 2, 'the opening and one write');

  // 10 ms later, three more, each in a turn of its own: they wait for the rest of the interval (990 ms).
  clock.now += 10;
  const published = performance.now();
  for (const index of [1, 2, 3]) {
    fanout.publish(journal.append(topic(index)));
    await turn();
  }
  t.same(numbers(), [0], 'not yet: the interval is not over');
  while (numbers().length < 4 && performance.now() - published < 5000) await new Promise((r) => setTimeout(r, 20));
  const waited = performance.now() - published;
  t.same(numbers(), [0, 1, 2, 3], 'in order');
  t.equal(stream.writes, 3, 'the three in one write');
  t.ok(waited >= 950, `written at the interval's end (${Math.round(waited)} ms after they came)`);

  // Once an interval has passed since that write, the next goes out at once again.
  clock.now += 1000;
  fanout.publish(journal.append(topic(4)));
  await turn();
  t.same(numbers(), [0, 1, 2, 3, 4], 'after the interval, at once');

  // A flush (the plugin's stop, a heartbeat) writes what waits at once, and puts the interval's timer away: an event
  // that follows waits a whole interval from that write, not for the old timer (due 999 ms after event 5 came).
  clock.now += 1;
  fanout.publish(journal.append(topic(5)));
  await new Promise((resolve) => setTimeout(resolve, 500));
  fanout.flush();
  t.same(numbers(), [0, 1, 2, 3, 4, 5], 'flushed');
  clock.now += 1;
  fanout.publish(journal.append(topic(6)));
  await new Promise((resolve) => setTimeout(resolve, 700));
  t.same(numbers(), [0, 1, 2, 3, 4, 5], 'the next event waits for its own interval');
  fanout.flush();
  t.same(numbers(), [0, 1, 2, 3, 4, 5, 6]);
});

t.test('write_interval_ms runs from a write: events no stream took start no interval', async (t) => {
  const { journal, fanout, reader, clock } = setup(10_000, 60_000);
  // No stream open: an event is published and flushed, and written nowhere.
  fanout.publish(journal.append(topic(0)));
  await turn();
  const stream = new StalledStream(true);
  fanout.add(reader(stream), '', []);
  clock.now += 10;
  fanout.publish(journal.append(topic(1)));
  await turn();
  t.match(stream.written, /"topic":"1 /, 'the first write goes out at once, whatever came before it that no one took');
});

/** The topics' numbers in what `stream` was written, in order. */
const numbersIn = (stream: StalledStream) =>
  [...stream.written.matchAll(/"topic":"(\d+) /g)].map((match) => Number(match[1]));

/** Five readers, two written to a turn, and event 0 published a turn ago: its flush is still going out. */
async function midFlush() {
  const context = setup(10_000, 0, 2);
  const streams = Array.from({ length: 5 }, () => new StalledStream(true));
  for (const stream of streams) context.fanout.add(context.reader(stream), '', []);
  context.fanout.publish(context.journal.append(topic(0)));
  await turn();
  /** Every one of the five has events 0 and 1, in order, once. */
  const haveBoth = (t: Test, message: string) =>
    t.same(
      streams.map((stream) => numbersIn(stream)),
      streams.map(() => [0, 1]),
      message,
    );
  return { ...context, streams, haveBoth };
}

t.test('many readers are written to a slice a turn; events that come meanwhile follow, in order', async (t) => {
  const { journal, fanout, streams, haveBoth } = await midFlush();
  t.same(
    streams.map((stream) => numbersIn(stream)),
    [[0], [0], [], [], []],
    'the first turn writes to two readers',
  );
  // Published while the first is still going out to the other three: each reader still gets 0 before 1, once.
  fanout.publish(journal.append(topic(1)));
  for (let index = 0; index < 10; index++) await turn();
  haveBoth(t, 'every reader, both events, in order, once');
});

t.test('a flush while one is going out a slice a turn writes its rest, then what waits, at once', async (t) => {
  const { journal, fanout, streams, haveBoth } = await midFlush();
  fanout.publish(journal.append(topic(1)));
  fanout.flush();
  haveBoth(t, 'every reader has both, in order, before the flush returns');
  const writes = streams.map((stream) => stream.writes);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(
    streams.map((stream) => stream.writes),
    writes,
    'and nothing is written again afterwards',
  );
});

t.test('a reader opened while a flush goes out a slice a turn gets what comes after it, once', async (t) => {
  const { journal, fanout, reader, haveBoth } = await midFlush();
  // Opened now: it starts after event 0 (as a reader without Last-Event-ID does), and is not among its readers.
  const late = new StalledStream(true);
  fanout.add(reader(late), '', []);
  fanout.publish(journal.append(topic(1)));
  for (let index = 0; index < 10; index++) await turn();
  t.same(numbersIn(late), [1], 'only what came after it opened');
  haveBoth(t, 'the others, both');
});

t.test(
  'write_interval_ms holds for events that come while a flush goes out, even where its first slices wrote nothing',
  async (t) => {
    const { journal, fanout, reader } = setup(10_000, 1000, 2);
    // The first slices' readers want another channel: they take nothing of #b's events.
    const others = Array.from({ length: 4 }, () => new StalledStream(true));
    for (const stream of others) fanout.add(reader(stream, '#a'), '', []);
    const stream = new StalledStream(true);
    fanout.add(reader(stream, '#b'), '', []);

    fanout.publish(journal.append(topic(0, '#b')));
    await turn();
    t.same(numbersIn(stream), [], 'the first slice wrote to no one');
    fanout.publish(journal.append(topic(1, '#b')));
    for (let index = 0; index < 10; index++) await turn();
    t.same(numbersIn(stream), [0], 'event 0 came with the last slice');
    t.same(
      others.map((other) => other.writes),
      [1, 1, 1, 1],
      'the others were written only their opening',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.same(numbersIn(stream), [0], 'event 1 waits for the interval from that write');
    fanout.flush();
    t.same(numbersIn(stream), [0, 1]);
  },
);
