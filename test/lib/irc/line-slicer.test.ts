import t from 'tap';
import { LineReader, LineSlicer } from '../../../lib/irc/line-slicer.js';

/** Real time passing, so that a timer comes due while lines are handled. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function flowRecorder() {
  const events: string[] = [];
  return { events, flow: { pause: () => events.push('pause'), resume: () => events.push('resume') } };
}

t.test('lines that take little time are all handed over at once, whole, in order', async (t) => {
  const { events, flow } = flowRecorder();
  const lines: string[] = [];
  const slicer = new LineSlicer((line) => lines.push(line), flow);
  slicer.push(Buffer.from(':a 001 me :hi\r\n:a 002 me :ho\r\n:a 00'));
  t.same(lines, [':a 001 me :hi', ':a 002 me :ho'], 'the partial line waits');
  slicer.push(Buffer.from('3 me :'));
  slicer.push(Buffer.from([0xc3]));
  slicer.push(Buffer.from([0xa9, 0x0a]));
  t.same(lines.at(-1), ':a 003 me :é', 'a character split across reads is kept whole');
  t.same(events, [], 'the socket was never paused');
  t.equal(slicer.waiting, false);
});

t.test('a burst is handled a slice at a time, with the event loop free in between', async (t) => {
  const { events, flow } = flowRecorder();
  const handled: number[] = [];
  // Each line takes 1 ms of a fake clock, so that a slice's size does not depend on the machine's load, and
  // a little real time, so that a timer comes due before the burst is done.
  let clock = 0;
  const slicer = new LineSlicer(
    (line) => {
      clock += 1;
      busy(0.2);
      handled.push(Number(line.split(' ')[1]));
    },
    flow,
    4,
    () => clock,
  );
  const burst = Array.from({ length: 40 }, (_, index) => `PING ${index}\r\n`).join('');
  slicer.push(Buffer.from(burst));
  const firstSlice = handled.length;
  t.equal(firstSlice, 4, 'the first slice handled 4 lines of 1 ms (4 ms allowed)');
  t.same(events, ['pause'], 'the socket is paused while lines wait');
  t.equal(slicer.waiting, true, 'the rest waits');

  // A timer due now (as an HTTP request would be) runs before the burst is done.
  let handledWhenTimerRan = -1;
  setTimeout(() => (handledWhenTimerRan = handled.length), 0);
  // Bytes read meanwhile (the socket is paused, but a read may be under way) go after the waiting lines.
  slicer.push(Buffer.from('PING 40\r\n'));
  let closedAfter = -1;
  slicer.end(() => (closedAfter = handled.length));
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.same(
    handled,
    Array.from({ length: 41 }, (_, index) => index),
    'every line, once, in order',
  );
  t.ok(handledWhenTimerRan > 0 && handledWhenTimerRan < 41, `the timer ran after ${handledWhenTimerRan} lines`);
  t.equal(closedAfter, 41, 'the close is passed on after the last line');
  t.same(events, ['pause', 'resume'], 'the socket is resumed once nothing waits');
});

t.test('a handler that throws loses its line only', async (t) => {
  const { flow } = flowRecorder();
  const handled: string[] = [];
  const slicer = new LineSlicer((line) => {
    if (line === 'BAD') throw new Error('bad line');
    handled.push(line);
  }, flow);
  t.throws(() => slicer.push(Buffer.from('ONE\r\nBAD\r\nTWO\r\n')), /bad line/);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(handled, ['ONE', 'TWO']);
});

t.test('clear drops what waits and passes the close on', async (t) => {
  const { flow } = flowRecorder();
  const handled: string[] = [];
  let clock = 0;
  const slicer = new LineSlicer(
    (line) => {
      clock += 3;
      handled.push(line);
    },
    flow,
    1,
    () => clock,
  );
  slicer.push(Buffer.from('A\r\nB\r\nC\r\n'));
  t.same(handled, ['A']);
  let closed = false;
  slicer.end(() => (closed = true));
  t.notOk(closed, 'the close waits for B and C');
  slicer.clear();
  t.ok(closed, 'until the connection is thrown away');
  slicer.push(Buffer.from('D\r\n'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(handled, ['A'], 'nothing more is handed over');
});

t.test('the reader ends lines at CR LF, LF or CR, across reads, and skips empty ones', async (t) => {
  const reader = new LineReader();
  const all = (): string[] => {
    const lines: string[] = [];
    for (let line = reader.next(); line !== null; line = reader.next()) lines.push(line);
    return lines;
  };
  t.same(all(), [], 'nothing read');
  reader.push(Buffer.from('one\r'));
  t.same(all(), ['one'], 'a CR ends a line');
  reader.push(Buffer.from('\ntwo\nthr'));
  t.same(all(), ['two'], 'the LF of a CR LF split across reads ends no empty line; a partial line waits');
  reader.push('ee\r\n\r\n');
  t.same(all(), ['three'], 'a line across reads (the second a string); an empty line is skipped');
  // é is C3 A9; € is E2 82 AC: split inside both.
  reader.push(Buffer.from([0x61, 0xc3]));
  reader.push(Buffer.from([0xa9, 0x20, 0xe2]));
  reader.push(Buffer.from([0x82]));
  t.same(all(), [], 'still no end of line');
  reader.push(Buffer.from([0xac, 0x0d, 0x0a, 0x62]));
  t.same(all(), ['aé €'], 'characters split across three reads are decoded whole');
  reader.push(Buffer.from([0xff, 0x0a]));
  t.same(all(), ['b\ufffd'], 'a byte that is not UTF-8 becomes the replacement character');
  reader.clear();
  reader.push(Buffer.from('x\n'));
  t.same(all(), ['x'], 'a cleared reader forgets the partial line');
});
