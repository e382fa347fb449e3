/**
 * The HTTP side of the scale bench, in a process of its own (forked), so its work does not show in
 * the bench's timings nor in the bot's: a probe of a trivial path at a steady rate until stopped (its latency shows how long the bot's event loop was held), and autocannon runs at a fixed
 * rate on the paths under test, at given offsets. The result comes once the probe is stopped and
 * every run has ended.
 */
import http from 'node:http';
import autocannon from 'autocannon';

export interface LoadRun {
  path: string;
  /** Requests per second (autocannon's overallRate). */
  rate: number;
  /** When it starts, from the start of the window. */
  startMs: number;
  seconds: number;
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
  rate: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
}

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

async function loadRun(url: string, run: LoadRun): Promise<LoadRunResult> {
  await new Promise((resolve) => setTimeout(resolve, run.startMs));
  const result = await autocannon({
    url: `${url}${run.path}`,
    connections: 10,
    overallRate: run.rate,
    duration: run.seconds,
  });
  return {
    path: run.path,
    rate: run.rate,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

let stop: () => void = () => undefined;
const stopped = new Promise<void>((resolve) => (stop = resolve));

process.on('message', (message: LoadMessage) => {
  if (message.kind === 'stop') return stop();
  void Promise.all([probe(message, stopped), Promise.all(message.runs.map((run) => loadRun(message.url, run)))]).then(
    ([probed, runs]) => {
      const result: LoadResult = { ...probed, runs };
      process.send!(result, () => process.exit(0));
    },
  );
});
// The bench is gone: so is the load.
process.on('disconnect', () => process.exit(0));
