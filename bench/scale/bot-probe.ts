/**
 * Loaded into the bot's process with `node --import` by the scale bench (the bot itself is
 * unchanged): answers the bench over the fork IPC channel with the event loop's delay (a
 * perf_hooks histogram, 10 ms resolution), when the loop was held for 10 ms or more (so the bench can
 * tell which holds fell in a store write), each store write's own longest hold (the store's diagnostics
 * channel), how much of each of those the garbage collector and the wait for a CPU took, and the heap (after a
 * full GC, when the process runs with --expose-gc). It costs two timers and a read of the thread's schedstat
 * every 10 ms, an entry per GC, and nothing per line. When the bench goes away, the
 * bot is stopped as by Ctrl-C.
 */
import { subscribe } from 'node:diagnostics_channel';
import fs from 'node:fs';
import { Session } from 'node:inspector';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { STORE_WRITE_CHANNEL, type WriteReport } from '../../lib/store/store.js';

export type ProbeRequest = { kind: 'memory'; collect: boolean } | { kind: 'loop'; reset: boolean };

export type ProbeAnswer =
  | { kind: 'memory'; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; rss: number }
  | {
      kind: 'loop';
      maxMs: number;
      p99Ms: number;
      meanMs: number;
      /**
       * Holds of 10 ms or more since the last reset: when each ended (epoch ms), how long it was, how much of it
       * the garbage collector paused the thread, and how long the main thread waited for a CPU in it (null where
       * Linux's schedstat is not there).
       */
      holds: [endedAt: number, ms: number, gcMs: number, waitingMs: number | null][];
      /**
       * The store's writes since the last reset: when each one's longest stretch began (epoch ms), its length, the
       * garbage collector's pauses in it, and at most how long the main thread waited for a CPU in it (the wait of the
       * loop turns that held the stretch: they may hold more than the stretch; null without schedstat).
       */
      storeWrites: [at: number, blockedMs: number, gcMs: number, waitingMs: number | null][];
    };

const TICK_MS = 10;
const delay = monitorEventLoopDelay({ resolution: TICK_MS });
delay.enable();
let holds: [endedAt: number, ms: number, waitingMs: number | null][] = [];
let storeWrites: [number, number][] = [];
// The store publishes each write's longest hold of the loop (lib/store/store.ts).
subscribe(STORE_WRITE_CHANNEL, (message) => {
  const report = message as WriteReport;
  if (storeWrites.length < 100_000) storeWrites.push([report.blockedAt, report.blockedSeconds * 1000]);
});
// Each pause of the garbage collector (start in epoch ms, length) and each 10 ms tick (its span in epoch ms and
// the main thread's wait for a CPU in it), so that a hold can be split into GC, waiting and the bot's own work.
let pauses: [number, number][] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (pauses.length < 200_000) pauses.push([performance.timeOrigin + entry.startTime, entry.duration]);
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
let ticks: [from: number, to: number, waitingMs: number][] = [];
let lastTick = performance.now();
let lastTimes = threadTimes();

/** Milliseconds of [from, to] that the garbage collector paused the thread. */
function gcWithin(from: number, to: number): number {
  let ms = 0;
  for (const [start, length] of pauses) ms += Math.max(0, Math.min(to, start + length) - Math.max(from, start));
  return ms;
}

/** The main thread's wait for a CPU in the ticks that overlap [from, to], at most to − from; null without schedstat. */
function waitingWithin(from: number, to: number): number | null {
  if (lastTimes === null) return null;
  let ms = 0;
  for (const [start, end, waiting] of ticks) if (end > from && start < to) ms += waiting;
  return Math.min(ms, to - from);
}
// SCALE_PROBE_HOLDS_MS=50 also writes each hold of 50 ms or more to the bot's log, with when it ended: to match
// it by hand with the bot's debug lines or a --trace-gc line.
// With it, each such hold also says how much of it the main thread spent running and how much waiting for a CPU
// (the thread's schedstat): a hold the thread spent waiting is the machine's load, not the bot's work.
const logHoldsMs = Number(process.env.SCALE_PROBE_HOLDS_MS ?? 0) || Infinity;
/** The main thread's CPU and run-queue time so far, in ms; null where Linux's schedstat is not there. */
function threadTimes(): [running: number, waiting: number] | null {
  try {
    const [running = '', waiting = ''] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
    return [Number(running) / 1e6, Number(waiting) / 1e6];
  } catch {
    return null;
  }
}
setInterval(() => {
  const now = performance.now();
  const late = now - lastTick - TICK_MS;
  const times = threadTimes();
  const before = lastTimes;
  lastTimes = times;
  const waited = times && before ? times[1] - before[1] : null;
  if (waited !== null && ticks.length < 200_000) {
    ticks.push([performance.timeOrigin + lastTick, performance.timeOrigin + now, waited]);
  }
  lastTick = now;
  // A hold is this tick's lateness; the main thread's wait for a CPU in it is this tick's (at most the hold).
  if (late >= 10 && holds.length < 100_000) {
    holds.push([performance.timeOrigin + now, late, waited === null ? null : Math.min(waited, late)]);
  }
  if (late >= logHoldsMs) {
    const split =
      times && before
        ? `, ${(times[0] - before[0]).toFixed(0)} ms running, ${(waited ?? 0).toFixed(0)} ms waiting for a CPU`
        : '';
    process.stderr.write(
      `${new Date().toISOString()} probe: loop held ${late.toFixed(0)} ms (${now.toFixed(0)} ms)${split}\n`,
    );
  }
}, TICK_MS).unref();

// SCALE_HEAP_SAMPLE=file samples what the bot allocates from one reset of the loop figures to the next (the churn)
// and writes it to that file (a .heapprofile for Chrome's DevTools): only what outlived its young-generation
// collections, that is what was promoted to the old generation, dead or alive.
const heapSampleFile = process.env.SCALE_HEAP_SAMPLE;
let heapSession: Session | null = null;
function toggleHeapSample(): void {
  if (!heapSampleFile) return;
  if (heapSession === null) {
    heapSession = new Session();
    heapSession.connect();
    heapSession.post('HeapProfiler.startSampling', {
      samplingInterval: 16_384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: false,
    });
    return;
  }
  const session = heapSession;
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (!error) fs.writeFileSync(heapSampleFile, JSON.stringify(result.profile));
    session.disconnect();
  });
}

process.on('message', (request: ProbeRequest) => {
  if (request.kind === 'memory') {
    const collect = (globalThis as { gc?: () => void }).gc;
    if (request.collect && collect) collect();
    const usage = process.memoryUsage();
    const answer: ProbeAnswer = {
      kind: 'memory',
      heapUsed: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      rss: usage.rss,
    };
    process.send?.(answer);
  } else if (request.kind === 'loop') {
    const answer: ProbeAnswer = {
      kind: 'loop',
      // How late the 10 ms timer fired: the longest the event loop was blocked.
      maxMs: delay.max / 1e6,
      p99Ms: delay.percentile(99) / 1e6,
      meanMs: delay.mean / 1e6,
      holds: holds.map(([endedAt, ms, waiting]) => [endedAt, ms, gcWithin(endedAt - ms, endedAt), waiting]),
      storeWrites: storeWrites.map(([at, ms]) => [at, ms, gcWithin(at, at + ms), waitingWithin(at, at + ms)]),
    };
    if (request.reset) {
      toggleHeapSample();
      delay.reset();
      holds = [];
      storeWrites = [];
      pauses = [];
      ticks = [];
    }
    process.send?.(answer);
  }
});
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
