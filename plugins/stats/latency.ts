/**
 * Latency: a query each linked server answers itself, and the round trip in ms.
 * Servers answer `TIME <server>` (391, the reply crosses every link on the
 * way); Atheme does not, but answers `VERSION <server>` (351). The server profile's
 * `latencyProbes` say which to try, in order; each server keeps the first probe that
 * worked, and one that answers none has `latency_ms: null`.
 */
import { performance } from 'node:perf_hooks';
import type { IrcMessage, LatencyProbe } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import type { SyncContext } from './context.js';
import type { CollectorUnit } from './unit.js';

/** The longest a latency probe waits for its answer. */
const MAX_PROBE_TIMEOUT_MS = 5000;

interface Probe {
  command: LatencyProbe;
  /** The reply that carries the answer of `server`. */
  answers(message: IrcMessage, server: string): boolean;
}

const sameServer = (name: string | undefined, server: string): boolean =>
  name !== undefined && name.toLowerCase() === server.toLowerCase();

export const PROBES: readonly Probe[] = [
  // RPL_TIME `391 me <server> :<time>`
  { command: 'TIME', answers: (message, server) => message.command === '391' && sameServer(message.params[1], server) },
  // RPL_VERSION `351 me <version> <server> :<comments>`; Atheme's version has a space in it ("atheme 7.2.12.").
  {
    command: 'VERSION',
    answers: (message, server) =>
      message.command === '351' && message.params.slice(2, -1).some((param) => sameServer(param, server)),
  },
];

/** Per server (lower-cased name), the index of the probe that last worked. */
export type ProbeChoice = Map<string, number>;

/** ERR_NOSUCHSERVER `402 me <server> :No such server`: the server split off meanwhile. */
const isNoSuchServer = (message: IrcMessage, server: string): boolean =>
  message.command === '402' && sameServer(message.params[1], server);

/**
 * The round trip of one probe in ms, or null when the server did not answer in time. The clock starts when
 * the line leaves the send queue: time spent queued behind a sync's lines is the bot's, not the network's.
 */
async function probeOnce(
  context: SyncContext,
  probe: Probe,
  server: string,
  timeoutMs: number,
): Promise<number | null> {
  let started = NaN;
  try {
    const lines = await context.irc.request({
      send: [probe.command, server],
      remote: true,
      reply: () => false,
      end: (message) => probe.answers(message, server) || isNoSuchServer(message, server),
      timeoutMs,
      onSent: () => (started = performance.now()),
    });
    if (!probe.answers(lines.at(-1)!, server)) return null;
    return Math.round((performance.now() - started) * 10) / 10;
  } catch {
    return null;
  }
}

/**
 * Measure every linked server once, one at a time so no probe waits behind another's reply.
 * A server tries its last good probe first, then the others.
 */
export async function measureLatency(context: SyncContext, choice: ProbeChoice, timeoutMs: number): Promise<void> {
  const { model, irc } = context;
  // The probes the server's profile names, as indexes of PROBES, in its order.
  const order = irc.state.profile.latencyProbes.map((command) =>
    PROBES.findIndex((probe) => probe.command === command),
  );
  for (const server of [...model.servers.all()]) {
    // While the server holds the bot's lines behind a penalty (a plain user under InspIRCd's fake lag), a probe's
    // time is mostly that hold (seconds, not the network's round trip): no probe, and what was measured stays.
    if (!irc.state.connected || irc.state.lagged) return;
    const key = server.name.toLowerCase();
    const first = choice.get(key);
    const tries = first === undefined ? order : [first, ...order.filter((index) => index !== first)];
    let latency: number | null = null;
    for (const index of tries) {
      latency = await probeOnce(context, PROBES[index]!, server.name, timeoutMs);
      if (latency === null) continue;
      choice.set(key, index);
      break;
    }
    // Held meanwhile: the answer came late for that.
    if (!irc.state.lagged) model.setServerLatency(server.name, latency);
  }
}

/** Latency as a unit of the collector; the sync asks {@link LatencyUnit.measure} after a connection's first sync. */
export interface LatencyUnit extends CollectorUnit {
  /** Measure every server, in the syncs' turn and in the LISTs' (a probe's answer queued behind a LIST's would measure the LIST). */
  measure(): Promise<void>;
}

/** The servers' latency every `latency_seconds` while synced; each connection learns anew which probe each answers. */
export function latencyUnit(context: CollectorContext): LatencyUnit {
  const { model, config, connection, queues } = context;
  let choice: ProbeChoice = new Map();
  const timeoutMs = Math.min(MAX_PROBE_TIMEOUT_MS, config.latency_seconds * 1000);
  const measure = (): Promise<void> =>
    connection.ready && model.ready
      ? queues.network.run('latency', () =>
          queues.lists.run('latency', () => measureLatency(context, choice, timeoutMs)),
        )
      : Promise.resolve();
  return {
    name: 'latency',
    measure,
    timers: [{ everyMs: config.latency_seconds * 1000, run: () => void measure() }],
    onReady: () => {
      choice = new Map();
    },
  };
}
