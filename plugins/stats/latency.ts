/**
 * Latency: a query each linked server answers itself, and the round trip in ms.
 * InspIRCd answers `TIME <server>` (391, the reply crosses every link on the
 * way); Atheme does not, but answers `VERSION <server>` (351). Each server keeps
 * the first probe that worked; one that answers none has `latency_ms: null`.
 */
import { performance } from 'node:perf_hooks';
import type { IrcMessage } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';

interface Probe {
  command: string;
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
  for (const server of [...model.servers.all()]) {
    if (!irc.state.connected) return;
    const key = server.name.toLowerCase();
    const first = choice.get(key) ?? 0;
    let latency: number | null = null;
    for (let attempt = 0; attempt < PROBES.length && latency === null; attempt++) {
      const index = (first + attempt) % PROBES.length;
      latency = await probeOnce(context, PROBES[index]!, server.name, timeoutMs);
      if (latency !== null) choice.set(key, index);
    }
    model.setServerLatency(server.name, latency);
  }
}
