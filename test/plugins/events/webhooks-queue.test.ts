/**
 * The webhook queues as the store keeps them: one journal record per endpoint per write, which replayed over the
 * state before it gives the state after it, whatever came and went in between (events queued, dropped over the
 * bound, made into a batch, delivered); the same through the real store on disk, after a crash; and what a start
 * sets aside (another view, an endpoint gone) or leaves out (a type no longer wanted).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { createLogger } from '../../../lib/logger.js';
import { Store, type PersistedSlice } from '../../../lib/store/store.js';
import { WebhookQueues, type QueuedEndpoint } from '../../../plugins/events/webhooks-queue.js';

const ENDPOINTS: QueuedEndpoint[] = [
  { name: 'one', view: 'public', types: null, maxQueuedEvents: 8 },
  { name: 'two', view: 'full', types: null, maxQueuedEvents: 50 },
];

/** A pseudo-random sequence, the same at every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function state(queues: WebhookQueues): unknown {
  return [...queues.queues.values()].map((queue) => ({ ...queue.stored(), size: queue.size }));
}

function sliceOf(queues: WebhookQueues) {
  const { persistence } = queues;
  return { ...persistence, journal: persistence.journal! };
}

t.test('a record per endpoint per write, replayed over the state before it, gives the state after it', async (t) => {
  const next = random(7);
  const live = new WebhookQueues(ENDPOINTS);
  const journal = sliceOf(live);
  const records: unknown[] = [];
  /** A snapshot taken midway, and how many records came before it. */
  let midway: { snapshot: unknown; before: number; state: unknown } | undefined;
  let counter = 0;
  let dropped = 0;
  let sealed = 0;
  for (let step = 0; step < 400; step++) {
    for (const queue of live.queues.values()) {
      const roll = next();
      if (roll < 0.6) {
        const event = { id: `run-${++counter}`, type: 'join' as const, time: counter, data: { nick: `n${counter}` } };
        dropped += queue.push(event, counter);
      } else if (roll < 0.75 && !queue.batch && queue.waitingCount > 0) {
        queue.seal(`msg_${counter}`, counter, 3);
        sealed++;
      } else if (roll < 0.9 && queue.batch) {
        queue.delivered(queue.batch.id);
      }
    }
    if (next() < 0.3) records.push(...journal.journal.drain());
    if (step === 200) {
      // A snapshot is taken with a drain in the same turn: the drained records go before it, and are whole anyway.
      const snapshot = JSON.parse(JSON.stringify(journal.snapshot())) as unknown;
      records.push(...journal.journal.drain());
      midway = { snapshot, before: records.length, state: state(live) };
    }
  }
  records.push(...journal.journal.drain());
  t.ok(dropped > 0 && sealed > 0, `the steps dropped ${dropped} events over the bound and made ${sealed} batches`);
  t.ok(records.length < 400 * 2, `coalesced: ${records.length} records for 400 steps of two endpoints`);
  const stored = JSON.parse(JSON.stringify(records)) as unknown[];

  const fromScratch = new WebhookQueues(ENDPOINTS);
  for (const record of stored) sliceOf(fromScratch).journal.replay(record);
  t.same(state(fromScratch), state(live), 'every record from the start');

  const fromMidway = new WebhookQueues(ENDPOINTS);
  sliceOf(fromMidway).restore(midway!.snapshot);
  t.same(state(fromMidway), midway!.state, 'the snapshot holds the state it was taken in');
  for (const record of stored.slice(midway!.before)) sliceOf(fromMidway).journal.replay(record);
  t.same(state(fromMidway), state(live), 'a snapshot and the records after it');

  const twice = new WebhookQueues(ENDPOINTS);
  sliceOf(twice).restore(midway!.snapshot);
  for (const record of stored) sliceOf(twice).journal.replay(record);
  t.same(state(twice), state(live), 'records the snapshot already holds change nothing');
  t.ok([...live.queues.values()].every((queue) => queue.size <= queue.endpoint.maxQueuedEvents));
});

t.test('through the store on disk: what was written before a crash is back, the batch with its id', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhooks-queue-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'store.json');
  const logger = createLogger({ level: 'error', sink: () => undefined });
  const register = async (queues: WebhookQueues) => {
    const store = new Store({ path: file, logger, debounceMs: 60_000 });
    await store.load();
    const { persistence } = queues;
    store.register({ key: queues.name, ...persistence } as PersistedSlice);
    return store;
  };

  const before = new WebhookQueues(ENDPOINTS);
  const first = await register(before);
  const one = before.queues.get('one')!;
  for (let index = 1; index <= 5; index++) one.push({ id: `r-${index}`, type: 'join', time: index, data: {} }, index);
  one.seal('msg_first', 100, 2);
  await first.persisted();
  one.delivered('msg_first');
  one.seal('msg_second', 200, 2);
  await first.persisted();
  for (let index = 6; index <= 12; index++) one.push({ id: `r-${index}`, type: 'join', time: index, data: {} }, index);
  await first.persisted();
  const expected = state(before);
  one.push({ id: 'r-13', type: 'join', time: 13, data: {} }, 13);
  // A crash: the store is never closed, and the last event was never written.

  const after = new WebhookQueues(ENDPOINTS);
  const second = await register(after);
  t.same(state(after), expected, 'everything up to the last write');
  const restored = after.queues.get('one')!;
  t.equal(restored.batch?.id, 'msg_second');
  t.same(
    restored.batch?.events.map((event) => event.id),
    ['r-3', 'r-4'],
  );
  t.equal(restored.waitingCount, 6, 'the bound of 8 held: 2 in the batch, 6 behind it');
  t.equal(restored.dropped, 2, 'the 2 dropped for it, for the next batch to tell');
  t.equal(restored.waitingEvents()[0]!.id, 'r-7', 'r-5 and r-6 were the oldest waiting');
  t.equal(restored.nextSeq, 13, 'numbers go on from where they were');
  t.equal(restored.oldestQueuedAt, 0, 'restored events have waited long enough: they go at once');
  await second.close();

  const third = new WebhookQueues(ENDPOINTS);
  const reopened = await register(third);
  t.same(state(third), expected, 'and the same after a clean stop, from the file written whole');
  await reopened.close();
});

t.test(
  'a start sets aside what was queued for another view or an endpoint gone, and types no longer wanted',
  async (t) => {
    const before = new WebhookQueues(ENDPOINTS);
    const one = before.queues.get('one')!;
    const two = before.queues.get('two')!;
    one.push({ id: 'r-1', type: 'join', time: 1, data: {} }, 1);
    one.push({ id: 'r-2', type: 'quit', time: 2, data: {} }, 2);
    one.push({ id: 'r-3', type: 'join', time: 3, data: {} }, 3);
    two.push({ id: 'r-1', type: 'join', time: 1, data: { identity: {} } }, 1);
    const snapshot = JSON.parse(JSON.stringify(sliceOf(before).snapshot())) as unknown;

    const after = new WebhookQueues([
      { name: 'one', view: 'public', types: new Set(['join']), maxQueuedEvents: 1 },
      { name: 'two', view: 'public', types: null, maxQueuedEvents: 50 },
    ]);
    sliceOf(after).restore(snapshot);
    const restored = after.queues.get('one')!;
    t.same(
      restored.waitingEvents().map((event) => event.id),
      ['r-1', 'r-3'],
      'the quit is no longer wanted',
    );
    t.equal(restored.keepBound(), 1, 'a lowered bound drops the oldest');
    t.same(
      restored.waitingEvents().map((event) => event.id),
      ['r-3'],
    );
    t.equal(after.queues.get('two')!.size, 0, 'queued for the full view: not given to the public one');
    t.same(after.setAside, [
      {
        endpoint: 'two',
        events: 1,
        why: 'it was queued for the view "full", and the endpoint\'s view is "public" now',
      },
    ]);

    const gone = new WebhookQueues([ENDPOINTS[1]!]);
    sliceOf(gone).restore(snapshot);
    t.same(gone.setAside, [{ endpoint: 'one', events: 3, why: 'no endpoint of that name is configured any more' }]);
  },
);
