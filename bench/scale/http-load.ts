/**
 * The HTTP side of the scale bench, in a process of its own (forked), so its work does not show in
 * the bench's timings nor in the bot's: a probe of a trivial path at a steady rate until stopped (its latency shows how long the bot's event loop was held), and runs at a fixed,
 * evenly spaced rate on the paths under test, at given offsets. The result comes once the probe is stopped and
 * every run has ended.
 */
import http from 'node:http';

export interface LoadRun {
  path: string;
  /** Requests per second, evenly spaced. */
  rate: number;
  /** When it starts, from the start of the window. */
  startMs: number;
  seconds: number;
  /** Another server than the request's `url`: the raw control (raw-server.ts), loaded beside the bot. */
  url?: string;
  /** This run is the control's, not the bot's. */
  control?: boolean;
}

export interface LoadRequest {
  kind: 'start';
  url: string;
  /** The probe's path and rate; the probe runs until the `stop` message. */
  probePath: string;
  probeRate: number;
  runs: LoadRun[];
}

export type LoadMessage = LoadRequest | { kind: 'stop' };

export interface LoadRunResult {
  path: string;
  /** The raw control's run (raw-server.ts), not the bot's. */
  control: boolean;
  rate: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
  /**
   * Requests sent again once because the kept-alive connection they went out on was reset before any answer: an
   * HTTP client may retry an idempotent request then (RFC 9112, 9.3.1), and browsers and proxies do. Their time
   * counts from the first send.
   */
  resent: number;
  /** How many answers took {@link SLOW_MS} or more. */
  slowCount: number;
  /**
   * The first 1,000 of them: when each was sent (epoch ms), how long it took, and whether this process's own
   * event loop was held {@link SELF_HOLD_MS} or more meanwhile (then part of the time was the load generator's,
   * not the bot's).
   */
  slow: { sentAt: number; ms: number; selfHeld: boolean }[];
}

/** An answer this slow is the target's miss (the p99 ≤ 20 ms). */
export const SLOW_MS = 20;
/** A hold of this process's own event loop this long can make an answer look that much slower. */
export const SELF_HOLD_MS = 10;

export interface LoadResult {
  /** The probe: when each request was sent (epoch ms) and how long its answer took (ms). */
  probeSentAt: number[];
  probeLatencyMs: number[];
  probeFailures: number;
  runs: LoadRunResult[];
}

function probe(
  request: LoadRequest,
  stopped: Promise<void>,
): Promise<Pick<LoadResult, 'probeSentAt' | 'probeLatencyMs' | 'probeFailures'>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const sentAt: number[] = [];
  const latency: number[] = [];
  let failures = 0;
  let inFlight = 0;
  const gapMs = 1000 / request.probeRate;
  let ending = false;
  return new Promise((resolve) => {
    const finish = (): void => {
      agent.destroy();
      resolve({ probeSentAt: sentAt, probeLatencyMs: latency, probeFailures: failures });
    };
    void stopped.then(() => {
      ending = true;
      clearInterval(timer);
      if (inFlight === 0) finish();
    });
    const timer = setInterval(() => {
      const started = performance.now();
      const at = Date.now();
      inFlight++;
      const done = (ok: boolean): void => {
        inFlight--;
        if (ok) {
          sentAt.push(at);
          latency.push(performance.now() - started);
        } else failures++;
        if (inFlight === 0 && ending) finish();
      };
      http
        .get(`${request.url}${request.probePath}`, { agent }, (response) => {
          response.resume();
          response.on('end', () => done(true));
        })
        .on('error', () => done(false));
    }, gapMs);
  });
}

// This process's own event loop: when it was held SELF_HOLD_MS or more (from, to; epoch ms), by a 10 ms timer firing
// late. A held load generator reads answers late, and the time shows in their latency.
const selfHolds: [from: number, to: number][] = [];
let lastSelfTick = Date.now();
setInterval(() => {
  const now = Date.now();
  const late = now - lastSelfTick - 10;
  lastSelfTick = now;
  if (late >= SELF_HOLD_MS && selfHolds.length < 100_000) selfHolds.push([now - late, now]);
}, 10).unref();

/** Whether this process was held while an answer sent at `sentAt` was on its way for `ms`. */
function selfHeldDuring(sentAt: number, ms: number): boolean {
  return selfHolds.some(([from, to]) => to >= sentAt && from <= sentAt + ms);
}

// SCALE_SLOW_REQUESTS_MS=20 writes each request of a run that took 20 ms or more to the bench's output, with when
// it was sent: to match it with the bot's holds (SCALE_PROBE_HOLDS_MS) and --trace-gc lines.
const logSlowMs = Number(process.env.SCALE_SLOW_REQUESTS_MS ?? 0) || Infinity;

/** The value at `fraction` (0–1) of sorted `values`. */
function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/**
 * Requests at `run.rate` a second, evenly spaced (one every 1000 / rate ms, on keep-alive connections,
 * a new one whenever all are busy), each timed from its sending to the end of its answer. autocannon's
 * `overallRate`, used before, sends each connection's share of a second back to back at the second's
 * start: at 200 a second on 10 connections, bursts of 200 requests with 10 in flight, then nothing.
 */
async function loadRun(url: string, run: LoadRun): Promise<LoadRunResult> {
  await new Promise((resolve) => setTimeout(resolve, run.startMs));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const gapMs = 1000 / run.rate;
  const total = Math.max(1, Math.round(run.rate * run.seconds));
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let resent = 0;
  const slow: [sentAt: number, ms: number][] = [];
  let slowCount = 0;
  // Each failure's reason is written, the first few of a run: a refused connection would otherwise write 200 a second.
  let failuresWritten = 0;
  const writeFailure = (text: string): void => {
    if (++failuresWritten <= 20) process.stderr.write(`${new Date().toISOString()} load: ${run.path} ${text}\n`);
  };
  await new Promise<void>((resolve) => {
    const started = performance.now();
    let sent = 0;
    let done = 0;
    const finish = (): void => {
      if (++done === total) resolve();
    };
    const send = (sentAt = performance.now(), again = false): void => {
      const request = http.get(`${url}${run.path}`, { agent }, (response) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) {
          non2xx++;
          writeFailure(`answered ${status}`);
        }
        response.resume();
        response.on('end', () => {
          const took = performance.now() - sentAt;
          latencies.push(took);
          if (took >= SLOW_MS && ++slowCount <= 1000) slow.push([Date.now() - took, took]);
          if (took >= logSlowMs) {
            const at = new Date(Date.now() - took).toISOString();
            process.stderr.write(`${at} load: ${run.path} took ${took.toFixed(1)} ms\n`);
          }
          finish();
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code ?? error.message;
        if (!again && request.reusedSocket && error.code === 'ECONNRESET') {
          resent++;
          writeFailure(
            `reset after ${(performance.now() - sentAt).toFixed(1)} ms on a kept-alive connection: sent again`,
          );
          send(sentAt, true);
          return;
        }
        errors++;
        // Written (the first few): a failed request fails the figure, and its reason says whose it was.
        writeFailure(`failed after ${(performance.now() - sentAt).toFixed(1)} ms: ${reason}`);
        finish();
      });
    };
    const sendDue = (): void => {
      const due = Math.min(total, Math.floor((performance.now() - started) / gapMs) + 1);
      while (sent < due) {
        sent++;
        send();
      }
      if (sent < total) setTimeout(sendDue, Math.max(0, started + sent * gapMs - performance.now()));
    };
    sendDue();
  });
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    path: run.path,
    control: run.control ?? false,
    rate: run.rate,
    requests: latencies.length,
    p50: Math.round(percentile(latencies, 0.5) * 10) / 10,
    p99: Math.round(percentile(latencies, 0.99) * 10) / 10,
    max: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
    errors,
    non2xx,
    resent,
    slowCount,
    slow: slow.map(([sentAt, ms]) => ({ sentAt, ms, selfHeld: selfHeldDuring(sentAt, ms) })),
  };
}

let stop: () => void = () => undefined;
const stopped = new Promise<void>((resolve) => (stop = resolve));

process.on('message', (message: LoadMessage) => {
  if (message.kind === 'stop') return stop();
  void Promise.all([
    probe(message, stopped),
    Promise.all(message.runs.map((run) => loadRun(run.url ?? message.url, run))),
  ]).then(([probed, runs]) => {
    const result: LoadResult = { ...probed, runs };
    process.send!(result, () => process.exit(0));
  });
});
// The bench is gone: so is the load.
process.on('disconnect', () => process.exit(0));
