import t from 'tap';
import { Pacer, PENALTY_INTERVAL_MS, penaltyIntervalFor, URGENT_RUN } from '../../../lib/irc/pacer.js';
import { buildServerProfile } from '../../../lib/irc/server-profile.js';

/** A pacer that lets one line go every 15 ms after the burst; `tick` waits until `lines` more went. */
function pacer(burst: number) {
  const written: string[] = [];
  const instance = new Pacer({ burst, intervalMs: 15, write: (line) => written.push(line) });
  // Its timer keeps no process alive (a socket does, in a bot).
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => {
    instance.clear();
    clearInterval(alive);
  });
  const tick = async (lines: number): Promise<void> => {
    const target = written.length + lines;
    for (let waited = 0; written.length < target && waited < 2000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  return { pacer: instance, written, tick };
}

t.test('urgent lines go ahead of the others, in their own order', async (t) => {
  const { pacer: queue, written, tick } = pacer(1);
  queue.enqueue('first');
  for (const line of ['later 1', 'later 2', 'later 3']) queue.enqueue(line);
  queue.enqueue('answer 1', undefined, { urgent: true, key: 'alice' });
  queue.enqueue('answer 2', undefined, { urgent: true, key: 'alice' });
  t.same(written, ['first']);
  t.equal(queue.pending, 5);
  await tick(5);
  t.same(written, ['first', 'answer 1', 'answer 2', 'later 1', 'later 2', 'later 3']);
  queue.enqueue('x');
  queue.enqueue('y', undefined, { urgent: true });
  queue.clear();
  t.equal(queue.pending, 0, 'clear drops both queues');
});

t.test('answers to different nicks take turns', async (t) => {
  const { pacer: queue, written, tick } = pacer(1);
  queue.enqueue('busy');
  for (let i = 1; i <= 4; i++) queue.enqueue(`flood ${i}`, undefined, { urgent: true, key: 'mallory' });
  queue.enqueue('victim 1', undefined, { urgent: true, key: 'victim' });
  queue.enqueue('victim 2', undefined, { urgent: true, key: 'victim' });
  await tick(6);
  t.same(written, ['busy', 'flood 1', 'victim 1', 'flood 2', 'victim 2', 'flood 3', 'flood 4']);
});

t.test(`answers never hold up the other lines for more than ${URGENT_RUN} in a row`, async (t) => {
  const { pacer: queue, written, tick } = pacer(1);
  queue.enqueue('busy');
  for (let i = 1; i <= 2; i++) queue.enqueue(`sync ${i}`);
  for (let i = 1; i <= 6; i++) queue.enqueue(`help ${i}`, undefined, { urgent: true, key: `user${i}` });
  await tick(8);
  t.same(written, ['busy', 'help 1', 'help 2', 'sync 1', 'help 3', 'help 4', 'sync 2', 'help 5', 'help 6']);
});

t.test('a line no longer wanted is dropped without using a token', async (t) => {
  const { pacer: queue, written } = pacer(2);
  let wanted = false;
  const wrote: string[] = [];
  queue.enqueue('dropped', () => wrote.push('dropped'), { urgent: true, stillWanted: () => wanted });
  queue.enqueue('kept 1');
  queue.enqueue('kept 2');
  t.same(written, ['kept 1', 'kept 2'], 'both tokens went to the lines still wanted');
  t.same(wrote, [], 'no write callback for a dropped line');
  wanted = true;
  queue.enqueue('sent', () => wrote.push('sent'), { stillWanted: () => wanted });
  t.equal(queue.pending, 1, 'no token left now');
});

t.test("the server's least interval wins over a shorter one configured (ircd 2.11's penalty)", async (t) => {
  const profile = (isupport: [string, string][]) =>
    buildServerProfile({ version: '', isupport: new Map(isupport), caps: new Set(), offeredCaps: new Set() });
  t.equal(penaltyIntervalFor({ profile: profile([['PENALTY', '']]) }), PENALTY_INTERVAL_MS);
  t.equal(penaltyIntervalFor({ profile: profile([]) }), 0);
  t.equal(
    penaltyIntervalFor({ profile: profile([]), lagged: true }),
    PENALTY_INTERVAL_MS,
    'a server seen holding the bot’s lines (fake lag) is paced as one that says it penalises commands',
  );
  t.equal(penaltyIntervalFor({ profile: profile([]), lagged: false }), 0);
  const written: number[] = [];
  const queue = new Pacer({ burst: 2, intervalMs: 1, minIntervalMs: () => 60, write: () => written.push(Date.now()) });
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => {
    queue.clear();
    clearInterval(alive);
  });
  const started = Date.now();
  for (let line = 0; line < 4; line++) queue.enqueue(`line ${line}`);
  t.equal(written.length, 2, 'the burst at once');
  for (let waited = 0; written.length < 4 && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
  t.ok(written[2]! - started >= 55, `the third after the least the server allows (${written[2]! - started} ms)`);
  t.ok(written[3]! - written[2]! >= 55, 'and the fourth as long after it, not 1 ms');
});
