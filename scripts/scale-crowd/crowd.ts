/**
 * The scale crowd: tens of thousands of simulated users of known behaviour, spread over several
 * worker processes (worker.ts), for measuring the bot on a big network that never stops moving.
 * The parent plans (plan.ts), hands each worker its share, and asks for churn; every worker plans
 * the same way from the same options, so only the options cross the IPC channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { planScaleCrowd, type ScalePlan, type ScalePlanOptions } from './plan.js';
import type { ChurnCounts, ChurnRates, ParentMessage, SetupRequest, WorkerMessage, WorkerStatus } from './protocol.js';

export type { ChurnCounts, ChurnRates, WorkerStatus } from './protocol.js';

/** Connections one worker holds at most by default: well under the 20,000 descriptors a process may have. */
export const USERS_PER_WORKER = 12_500;

/** The churn the issue describes for a big network: per second, for the whole crowd. */
export const DEFAULT_CHURN: ChurnRates = { reconnects: 50, joins: 50, parts: 50, nicks: 10, topics: 2, chat: 1000 };

export interface ScaleCrowdOptions {
  host: string;
  /** Client ports of the servers the crowd is spread over. */
  ports: number[];
  plan: ScalePlanOptions;
  /** Worker processes; default one per {@link USERS_PER_WORKER} users. */
  workers?: number;
  /** Registrations in flight per worker; default 1,000. */
  window?: number;
  /** The chat goes to the first this many channels (the bot's, by default its `max_channels`); default 200. */
  chatChannels?: number;
  /** Users set +d, so the servers do not send them channel messages (default true). */
  deaf?: boolean;
  /** The niceness of the worker processes (default 0: the parent's). */
  niceness?: number;
  /** Called about once a second while connecting, with the users ready so far. */
  onProgress?: (ready: number) => void;
  /** How long connecting may take in all (default 10 minutes). */
  timeoutMs?: number;
}

export interface ScaleCrowd {
  plan: ScalePlan;
  /** From the first connection to every user having joined its channels. */
  connectMs: number;
  /** The worker processes' PIDs (for their CPU time and memory). */
  pids: number[];
  /** Churn at `rates` (for the whole crowd) for `seconds`; resolves with what was done. */
  churn(seconds: number, rates?: ChurnRates): Promise<ChurnCounts>;
  /** Every worker's status, summed. */
  status(): Promise<WorkerStatus>;
  /** Stops every worker (their connections close with them). Idempotent. */
  stop(): Promise<void>;
}

const workerFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'worker.js');

interface WorkerHandle {
  process: ChildProcess;
  /** Resolves the next message of a kind. */
  next<K extends WorkerMessage['kind']>(kind: K): Promise<Extract<WorkerMessage, { kind: K }>>;
  send(message: ParentMessage): void;
}

function startWorker(niceness: number, onProgress: (ready: number) => void): WorkerHandle {
  const child = fork(workerFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  // The crowd stands for people on other machines: the process under test gets the CPU first.
  if (child.pid !== undefined && niceness > 0) os.setPriority(child.pid, niceness);
  const waiting = new Map<string, { resolve: (message: WorkerMessage) => void; reject: (error: Error) => void }>();
  let exited: Error | null = null;
  child.on('message', (message: WorkerMessage) => {
    if (message.kind === 'progress') return onProgress(message.ready);
    if (message.kind === 'failed') {
      for (const waiter of waiting.values()) waiter.reject(new Error(`scale crowd worker: ${message.message}`));
      waiting.clear();
      return;
    }
    const waiter = waiting.get(message.kind);
    waiting.delete(message.kind);
    waiter?.resolve(message);
  });
  child.on('exit', (code, signal) => {
    exited = new Error(`a scale crowd worker (pid ${child.pid}) exited (${signal ?? code})`);
    for (const waiter of waiting.values()) waiter.reject(exited);
    waiting.clear();
  });
  return {
    process: child,
    next(kind) {
      if (exited) return Promise.reject(exited);
      return new Promise((resolve, reject) => {
        waiting.set(kind, { resolve: resolve as (message: WorkerMessage) => void, reject });
      });
    },
    send(message) {
      if (child.connected) child.send(message);
    },
  };
}

function sumStatus(statuses: WorkerStatus[]): WorkerStatus {
  const total: WorkerStatus = { users: 0, ready: 0, dropped: {}, errors: {}, retries: 0 };
  for (const status of statuses) {
    total.users += status.users;
    total.ready += status.ready;
    total.retries += status.retries;
    for (const [reason, count] of Object.entries(status.dropped))
      total.dropped[reason] = (total.dropped[reason] ?? 0) + count;
    for (const [code, count] of Object.entries(status.errors)) total.errors[code] = (total.errors[code] ?? 0) + count;
  }
  return total;
}

/** Plans the crowd, forks its workers, connects every user; resolves once all have joined their channels. */
export async function startScaleCrowd(options: ScaleCrowdOptions): Promise<ScaleCrowd> {
  const plan = planScaleCrowd(options.plan);
  const workerCount = options.workers ?? Math.max(1, Math.ceil(options.plan.users / USERS_PER_WORKER));
  const readyByWorker = new Array<number>(workerCount).fill(0);
  const workers = Array.from({ length: workerCount }, (_, index) =>
    startWorker(options.niceness ?? 0, (ready) => {
      readyByWorker[index] = ready;
      options.onProgress?.(readyByWorker.reduce((sum, value) => sum + value, 0));
    }),
  );
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopped ??= Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.process.exitCode !== null || worker.process.signalCode !== null) return resolve();
            const timer = setTimeout(() => worker.process.kill('SIGKILL'), 10_000);
            worker.process.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            worker.send({ kind: 'stop' });
          }),
      ),
    ).then(() => undefined));

  const started = performance.now();
  try {
    const connected = Promise.all(workers.map((worker) => worker.next('connected')));
    workers.forEach((worker, index) => {
      const setup: SetupRequest = {
        kind: 'setup',
        host: options.host,
        ports: options.ports,
        plan: options.plan,
        worker: index,
        workers: workerCount,
        window: options.window ?? 1000,
        chatChannels: options.chatChannels ?? 200,
        deaf: options.deaf ?? true,
      };
      worker.send(setup);
    });
    const timeoutMs = options.timeoutMs ?? 600_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the scale crowd did not connect within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
    });
    await Promise.race([connected, timeout]).finally(() => clearTimeout(timer));
  } catch (error) {
    await stop();
    throw error;
  }
  const connectMs = performance.now() - started;

  const status = async (): Promise<WorkerStatus> => {
    const answers = Promise.all(workers.map((worker) => worker.next('status')));
    for (const worker of workers) worker.send({ kind: 'status' });
    return sumStatus((await answers).map((answer) => answer.status));
  };

  return {
    plan,
    connectMs,
    pids: workers.map((worker) => worker.process.pid!),
    async churn(seconds, rates = DEFAULT_CHURN) {
      const share = Object.fromEntries(
        Object.entries(rates).map(([name, rate]) => [name, rate / workerCount]),
      ) as unknown as ChurnRates;
      const answers = Promise.all(workers.map((worker) => worker.next('churned')));
      for (const worker of workers) worker.send({ kind: 'churn', seconds, rates: share });
      const counts: ChurnCounts = { reconnects: 0, joins: 0, parts: 0, nicks: 0, topics: 0, chat: 0, skipped: 0 };
      for (const answer of await answers) {
        for (const name of Object.keys(counts) as (keyof ChurnCounts)[]) counts[name] += answer.counts[name];
      }
      return counts;
    },
    status,
    stop,
  };
}
