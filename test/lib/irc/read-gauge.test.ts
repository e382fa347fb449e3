/**
 * The read gauge: once a request is seen held behind the server's penalties (InspIRCd's fake lag for a plain
 * user), the paced lines wait while a few of the bot's lines are unread, and a PING tells when they are.
 */
import t from 'tap';
import { LAGGED_MS, ReadGauge, UNREAD_LINES } from '../../../lib/irc/read-gauge.js';
import { FakeTransport } from '../../../testing/fake-irc.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function gauge() {
  const marks: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const changes: boolean[] = [];
  let opened = 0;
  const lane = { busy: false };
  const readGauge = new ReadGauge({
    mark: () => new Promise<void>((resolve, reject) => marks.push({ resolve, reject })),
    busy: () => lane.busy,
    opened: () => opened++,
    changed: (lagged) => changes.push(lagged),
  });
  const write = (lines: number) => {
    for (let line = 0; line < lines; line++) readGauge.wrote();
  };
  return { readGauge, marks, changes, write, lane, opened: () => opened };
}

t.test('a server that answers at once: every line may go, and no marker is written', async (t) => {
  const { readGauge, marks, write } = gauge();
  write(3);
  readGauge.heard(3, 40);
  write(50);
  t.ok(readGauge.mayWrite(), 'fifty lines unread, and still');
  t.notOk(readGauge.lagged);
  t.equal(marks.length, 0);
});

t.test('held: paced lines wait while a few are unread, until the marker after them is answered', async (t) => {
  const { readGauge, marks, changes, write, opened } = gauge();
  write(2);
  readGauge.heard(2, LAGGED_MS);
  t.ok(readGauge.lagged, 'a request answered 2 s into its turn');
  t.same(changes, [true]);
  write(UNREAD_LINES - 1);
  t.ok(readGauge.mayWrite(), `${UNREAD_LINES - 1} unread: one more may go`);
  write(1);
  t.notOk(readGauge.mayWrite(), `${UNREAD_LINES} unread: the rest wait`);
  t.notOk(readGauge.mayWrite());
  t.equal(marks.length, 1, 'one marker, however often asked');
  write(1); // the marker itself
  const before = opened();
  readGauge.heard(8, 3000);
  t.ok(opened() > before, 'the gate is told it may have opened');
  marks[0]!.resolve();
  await wait(1);
  t.ok(readGauge.mayWrite(), 'every line read');
  t.ok(readGauge.lagged, 'still held (3 s)');
  readGauge.heard(8, null);
  t.ok(readGauge.lagged, 'a reply that came before its turn says nothing');
  readGauge.heard(8, 100);
  t.notOk(readGauge.lagged, 'a reply well under the mark: no longer held');
  t.same(changes, [true, false]);
  write(20);
  t.ok(readGauge.mayWrite());
});

t.test('no marker while a request is unanswered: its reply tells, or the lane going idle', async (t) => {
  const { readGauge, marks, write, lane, opened } = gauge();
  readGauge.heard(0, 5000);
  lane.busy = true;
  write(UNREAD_LINES);
  t.notOk(readGauge.mayWrite(), 'held');
  t.equal(marks.length, 0, 'no marker: a request is out');
  readGauge.heard(UNREAD_LINES, 4000);
  t.ok(readGauge.mayWrite(), "the request's reply said the lines were read");
  write(UNREAD_LINES);
  t.notOk(readGauge.mayWrite());
  lane.busy = false;
  const before = opened();
  readGauge.idle();
  t.ok(opened() > before, 'the lane going idle opens the gate to ask again');
  t.notOk(readGauge.mayWrite(), 'still unread');
  t.equal(marks.length, 1, 'now a marker');
});

t.test('a marker never answered is taken as read: the lines are not held for ever', async (t) => {
  const { readGauge, marks, write, opened } = gauge();
  readGauge.heard(0, 5000);
  write(UNREAD_LINES);
  t.notOk(readGauge.mayWrite());
  write(3);
  marks[0]!.reject(new Error('no complete reply to PING within 60000 ms'));
  await wait(1);
  t.ok(opened() > 0);
  t.ok(readGauge.mayWrite(), 'the lines up to the marker taken as read');
  write(2);
  t.notOk(readGauge.mayWrite(), 'the three written after it still count: five unread');
  t.equal(marks.length, 2, 'so another marker');
  readGauge.reset();
  t.ok(readGauge.mayWrite(), 'a new connection: nothing held');
  t.notOk(readGauge.lagged);
});

t.test('the transport: held paced lines, a PING after them, the rest once the PONG comes', async (t) => {
  const irc = new FakeTransport({ pacing: { burst: 100, intervalMs: 10 } });
  irc.connect();
  irc.register();
  // A LUSERS the server answers 2.1 s into its turn, as InspIRCd holds a plain user's lines behind its penalty.
  const lusers = irc.request({
    send: ['LUSERS'],
    reply: (message) => message.command === '251',
    end: (message) => message.command === '266',
  });
  await wait(LAGGED_MS + 100);
  irc.receive(':hub.test.net 251 DataBot :There are 5 users', ':hub.test.net 266 DataBot 5 5 :Current global users');
  await lusers;
  irc.sent.length = 0;
  for (let index = 0; index < 12; index++) irc.ctcpRequest(`user${index}`, 'VERSION');
  const versions = () => irc.sent.filter((line) => line.includes('VERSION')).length;
  t.equal(versions(), UNREAD_LINES, 'the first few go');
  const ping = irc.sent.at(-1)!;
  t.match(ping, /^PING read-\d+-\d+$/, 'then a PING after them');
  await wait(50);
  t.equal(versions(), UNREAD_LINES, 'the rest wait for its answer');
  irc.receive(`:hub.test.net PONG hub.test.net :${ping.split(' ')[1]!}`);
  await wait(50);
  t.equal(versions(), 12, 'answered 50 ms into its turn: the server no longer holds the lines, and the rest go');
  t.equal(irc.sent.filter((line) => line.startsWith('PING')).length, 1, 'with no other PING');
  irc.drop('done');
});
