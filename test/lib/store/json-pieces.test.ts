import fs from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import {
  PiecewiseJson,
  WORK_SLICE_MS,
  jsonPieces,
  writePieces,
  type JsonPiece,
} from '../../../lib/store/json-pieces.js';
import { watchEventLoop } from './fixtures/event-loop.js';
import { makeTempDir } from './fixtures/temp-store.js';

function text(pieces: Iterable<JsonPiece>): string {
  return [...pieces].map((piece) => (typeof piece === 'string' ? piece : Buffer.from(piece).toString('utf8'))).join('');
}

t.test('jsonPieces writes what JSON.stringify writes', async (t) => {
  const values: unknown[] = [
    { a: 1, b: 'two', c: [1, 'x', null, true], d: { e: { f: [] } } },
    [undefined, () => 1, Symbol('s'), Number.NaN, Infinity, -0, 1e21, 'é ☃ 𝄞 \u0000 "q" \\'],
    {
      skipped: undefined,
      fn: () => 1,
      kept: null,
      date: new Date(0),
      nested: { toJSON: (key: string) => `key ${key}` },
    },
    {
      boxed: [new Number(3), new String('s'), new Boolean(false)],
      typed: new Uint32Array([1, 2]),
      map: new Map([[1, 2]]),
    },
    Array.from({ length: 20_000 }, (_, index) => ({ index, name: `row ${index} ${'x'.repeat(index % 40)}` })),
    { big: 'y'.repeat(200_000) },
  ];
  for (const value of values) t.equal(text(jsonPieces(value)), JSON.stringify(value));
  const many = [...jsonPieces(values[4])];
  t.ok(many.length > 10, `a big value comes in many pieces (${many.length})`);
  t.ok(
    many.every((piece) => typeof piece === 'string' && piece.length < 64 * 1024),
    'each piece is small',
  );
});

t.test('jsonPieces puts a PiecewiseJson in its place and refuses cycles', async (t) => {
  const inner = new PiecewiseJson(function* () {
    yield '{"from":';
    yield Buffer.from('"pieces"');
    yield '}';
  });
  t.equal(
    text(jsonPieces({ before: 1, inner, after: [inner] })),
    '{"before":1,"inner":{"from":"pieces"},"after":[{"from":"pieces"}]}',
  );
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = { cycle };
  t.throws(() => [...jsonPieces(cycle)], TypeError);
  const shared = { x: 1 };
  t.equal(text(jsonPieces([shared, shared])), '[{"x":1},{"x":1}]', 'a value seen twice is not a cycle');
  t.throws(() => [...jsonPieces(undefined)], /must be JSON/);
});

t.test('writePieces writes every byte in order, reused buffers and big pieces included', async (t) => {
  const file = path.join(makeTempDir(t), 'out.json');
  const reused = Buffer.alloc(4);
  const big = Buffer.alloc(3 * 1024 * 1024, 'b');
  const bigText = 'é'.repeat(600_000);
  const handle = await open(file, 'w');
  await writePieces(
    handle,
    (function* () {
      for (let index = 0; index < 1000; index++) {
        reused.write(String(index % 10).repeat(4));
        yield reused; // the same buffer with new contents each time
        yield ',';
      }
      yield big;
      yield bigText;
      yield 'end';
    })(),
  );
  await handle.close();
  let expected = '';
  for (let index = 0; index < 1000; index++) expected += String(index % 10).repeat(4) + ',';
  expected += big.toString('utf8') + bigText + 'end';
  t.equal(fs.readFileSync(file, 'utf8'), expected);
});

t.test('writePieces lets the event loop run while pieces take long to make', async (t) => {
  const file = path.join(makeTempDir(t), 'out.json');
  const handle = await open(file, 'w');
  const stopWatching = watchEventLoop();
  const started = performance.now();
  await writePieces(
    handle,
    (function* () {
      // 200 pieces of 1 ms of work each: 200 ms that must not run in one go.
      for (let index = 0; index < 200; index++) {
        const until = performance.now() + 1;
        while (performance.now() < until);
        yield `${index},`;
      }
    })(),
  );
  const took = performance.now() - started;
  const { ticks, longestGap } = stopWatching();
  await handle.close();
  t.ok(took >= 200, `the work took ${took.toFixed(0)} ms`);
  // Without yielding, the timer could not run at all until the write was over.
  t.ok(ticks >= 10, `a 1 ms timer ran ${ticks} times during it`);
  // Not asserted: on a busy machine the OS alone can hold a process for tens of ms.
  t.comment(`the longest the timer waited was ${longestGap.toFixed(1)} ms (work slice ${WORK_SLICE_MS} ms)`);
  t.equal(fs.readFileSync(file, 'utf8').split(',').length, 201);
});
