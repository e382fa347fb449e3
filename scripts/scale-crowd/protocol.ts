/** What the scale crowd's parent and its worker processes say to each other (over the fork IPC channel). */
import type { ScalePlanOptions } from './plan.js';

/** Churn rates, in operations per second, for the whole crowd (the parent divides them among workers). */
export interface ChurnRates {
  /** A user quits and a new one connects in its place (same channels and flags, a new nick). */
  reconnects: number;
  joins: number;
  parts: number;
  nicks: number;
  topics: number;
  /** PRIVMSGs to the chat channels, by members of them. */
  chat: number;
}

/** What each worker did during one churn, and what went wrong. */
export interface ChurnCounts extends Record<keyof ChurnRates, number> {
  /** Operations skipped because no ready user fitted (for example all in `maxChannelsPerUser` channels). */
  skipped: number;
}

export interface SetupRequest {
  kind: 'setup';
  host: string;
  /** Client ports of the servers; user i is on ports[floor(i / workers) % ports.length]. */
  ports: number[];
  plan: ScalePlanOptions;
  worker: number;
  workers: number;
  /** Connections registering at once per worker. */
  window: number;
  /** The first this many channels (by planned size) get the chat. */
  chatChannels: number;
  /** Users set +d (deaf: the server does not send them channel messages), to keep the crowd cheap. */
  deaf: boolean;
}

export interface ChurnRequest {
  kind: 'churn';
  seconds: number;
  /** This worker's share of the rates. */
  rates: ChurnRates;
}

export type ParentMessage = SetupRequest | ChurnRequest | { kind: 'status' } | { kind: 'stop' };

/** A worker's health: connections, and lines from the servers that mean something went wrong. */
export interface WorkerStatus {
  users: number;
  ready: number;
  /** Connections the server closed that the crowd did not ask for, by the ERROR text's reason. */
  dropped: Record<string, number>;
  /** Error numerics the servers answered (e.g. 405 too many channels), by numeric. */
  errors: Record<string, number>;
  /** Connections that had to be tried again during setup (refused, timed out). */
  retries: number;
}

export type WorkerMessage =
  | { kind: 'progress'; ready: number }
  | { kind: 'connected'; ms: number; status: WorkerStatus }
  | { kind: 'churned'; counts: ChurnCounts; status: WorkerStatus }
  | { kind: 'status'; status: WorkerStatus }
  | { kind: 'failed'; message: string };
