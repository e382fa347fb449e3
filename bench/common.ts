import { fork, type ChildProcess } from 'node:child_process';
import autocannon, { type Result } from 'autocannon';
/**
 * What every benchmark shares: the figures it reports, how it hands them to
 * the runner (one `BENCH_RESULT` line on stdout), the size knobs of the smoke
 * run, and small statistics.
 */

/** One row of a benchmark's table in docs/performance.md. */
export interface Figure {
  name: string;
  value: string;
  /** The target as the issue words it, when the figure has one. */
  target?: string;
  pass?: boolean;
  /** The number the target judges, where the value's wording does not show it first (bench/repeat.ts). */
  measure?: number;
}

/** What one benchmark reports. */
export interface BenchResult {
  title: string;
  /** What was measured and how, in a sentence or two. */
  setup: string;
  figures: Figure[];
  notes?: string[];
}

export const RESULT_PREFIX = 'BENCH_RESULT ';

/** Whether the runner asked for the small CI-sized run. */
export function isSmoke(argv: readonly string[] = process.argv): boolean {
  return argv.includes('--smoke');
}

/** Hand the result to the runner; a benchmark run by hand also prints it readably. */
export function report(result: BenchResult): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** `12,345` style, so big counts read at a glance. */
export function formatCount(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `312 KB` or `1.4 MB`. */
export function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${formatCount(bytes / 1024)} KB` : `${formatCount(bytes / 1024 / 1024, 1)} MB`;
}

export function formatMs(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
}

export function formatRatio(value: number): string {
  return `${value.toFixed(2)}×`;
}

/** A deterministic pseudo-random generator (mulberry32), so generated workloads are the same every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Run `main`, and on failure report the error as the benchmark's only note (the runner still writes the page). */
export function runBench(title: string, main: () => Promise<BenchResult>): void {
  main()
    .then((result) => {
      report(result);
      process.exit(0);
    })
    .catch((error: unknown) => {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      process.stderr.write(`${title} failed: ${message}\n`);
      report({ title, setup: '', figures: [], notes: [`The benchmark failed: ${message.split('\n')[0]}`] });
      process.exit(1);
    });
}

/**
 * One autocannon run; errors or non-2xx answers under load make the figure worthless, so they throw. With
 * `paths`, each connection asks them of `url` in turn.
 */
export async function load(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  connections: number,
  paths?: readonly string[],
): Promise<Result> {
  const requests = paths?.map((path) => ({ method: 'GET', path, headers }));
  const result = await autocannon({ url, headers, duration: seconds, connections, ...(requests ? { requests } : {}) });
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers under load`);
  }
  return result;
}

/**
 * A benchmark whose servers run in a child process of their own (this file again, with `--serve <users>
 * <channels>`), so that the load generator has a core of its own: the child serves and sends what it serves as
 * its first message, the parent measures.
 */
export function runBenchOrServe(
  title: string,
  main: () => Promise<BenchResult>,
  serve: (users: number, channels: number) => Promise<void>,
): void {
  if (process.argv[2] === '--serve') {
    serve(Number(process.argv[3]), Number(process.argv[4])).catch((error: unknown) => {
      process.stderr.write(`${title}: the servers' process failed: ${String(error)}\n`);
      process.exit(1);
    });
  } else {
    runBench(title, main);
  }
}

/** The servers' process of {@link runBenchOrServe} (`file`, this benchmark's own), and what it serves. */
export function forkServers<Served>(
  file: string,
  users: number,
  channels: number,
  options: { stdout?: 'inherit' | number; execArgv?: string[] } = {},
): Promise<{ child: ChildProcess; served: Served }> {
  const child = fork(file, ['--serve', String(users), String(channels)], {
    stdio: ['ignore', options.stdout ?? 'inherit', 'inherit', 'ipc'],
    execArgv: options.execArgv ?? [],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (served) => resolve({ child, served: served as Served }));
    child.once('exit', (code) => reject(new Error(`the HTTP server process exited with ${code} before serving`)));
  });
}

/** The model and the rounds of the HTTP benchmarks: 50,000 users in 5,000 channels, 5 rounds of 4 s (smoke: 2,000 in 200, one of 1 s). */
export function httpBenchSizes(smoke = isSmoke()): {
  users: number;
  channels: number;
  rounds: number;
  seconds: number;
} {
  return smoke
    ? { users: 2000, channels: 200, rounds: 1, seconds: 1 }
    : { users: 50_000, channels: 5000, rounds: 5, seconds: 4 };
}
