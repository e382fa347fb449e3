/**
 * The other side of the events bench (bench/events.ts), in a process of its own (forked), so that what a thousand
 * sockets cost their reader is not counted as the bot's:
 *
 * - the streams: `GET /api/irc/events/` over raw HTTP/1.1 sockets, public, unfiltered or with the setup's query; each chunk that arrives is
 *   only searched (natively, on the Buffer) for the marks below, frame starts and an `end` event, never parsed;
 * - the markers: ordinary clients on the leaves, as the crowd is, that take turns to JOIN a channel the bot sits in
 *   and PART it with a marked reason (`evmark:<n>:`), at a steady rate over all of them (each one slowly: a
 *   crowd user may send a command a second before the server holds its lines back);
 * - the witness: a client on the hub, the bot's own server, in the same channel: when a PART reached it is when
 *   the line was there for the bot to read (the network's own share of the latency).
 *
 * A mark's latency is from the moment its marker wrote the PART to the moment a stream's chunk holding its frame
 * was read, on this process's one clock.
 */
import net from 'node:net';
import { IrcClient } from '../../test/support/irc-client.js';

export interface ReadersSetup {
  kind: 'setup';
  /** The bot's HTTP address, e.g. http://127.0.0.1:8080. */
  botUrl: string;
  /** The leaves' client ports (the markers are spread over them) and the hub's (the witness's). */
  leafPorts: number[];
  hubPort: number;
  /** The channel the markers JOIN and PART: one the bot sits in. */
  channel: string;
  /** Marker clients, and marked PARTs a second over all of them (as many JOINs go between). */
  markers: number;
  rate: number;
  /** The streams' query string without its `?` (`channel=%23x`), or empty for unfiltered streams. */
  query: string;
}

export type ReadersRequest =
  | ReadersSetup
  /** Open `count` streams (to `url`, else the bot's); answered once each has had its `hello` event. */
  | { kind: 'open'; count: number; url?: string }
  /** Run the markers for `seconds`, whether streams are open or not. */
  | { kind: 'mark'; seconds: number }
  /** Close the streams once every mark sent while they were open reached each (or 3 s passed). */
  | { kind: 'close' }
  | { kind: 'summary' };

export interface Spread {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** What the streams of one opening saw, from their opening to their close. */
export interface SessionResult {
  streams: number;
  /** Marks sent while they were open. */
  marks: number;
  /** Marks that reached a stream, over every stream (each mark counted once per stream), and the most possible. */
  delivered: number;
  expected: number;
  /** From a marker's PART to a stream's read of its frame, over every stream and mark. */
  latency: Spread;
  /** From a marker's PART to the witness's read of it, for the same marks. */
  witness: Spread;
  /**
   * From the witness's read of a mark to a stream's read of its frame, over every stream and mark: the bot's share
   * (the hub sends a PART to the bot and to the witness alike).
   */
  fromHub: Spread;
  /** Per stream: bytes, frames (events with an id) and reads (chunks: about one per write of the bot's) on average. */
  bytesPerStream: number;
  framesPerStream: number;
  readsPerStream: number;
  /** Streams the bot ended (an `end` event: it cut them off) or that closed by themselves. */
  endedByBot: number;
  closedEarly: number;
  /**
   * The marks that did not reach every stream (the first ten): how many streams read each, and when the witness read
   * it (ms after it was sent; null: never), which tells whether the network or the bot lost it.
   */
  missing: { mark: number; streams: number; witnessMs: number | null }[];
}

export type ReadersAnswer =
  | { kind: 'ready' }
  | { kind: 'opened'; open: number; refused: number; ms: number }
  | { kind: 'marked'; sent: number; witness: Spread }
  | ({ kind: 'closed' } & SessionResult)
  | { kind: 'summary'; latency: Spread; witness: Spread; fromHub: Spread; marks: number };

/** The most marks one run sends (ten a second for over ten minutes). */
const MAX_MARKS = 8192;
const MARK_PREFIX = Buffer.from('evmark:', 'latin1');
const FRAME_START = Buffer.from('\nid: ', 'latin1');
const END_EVENT = Buffer.from('\nevent: end\n', 'latin1');
const OPEN_EVENT = Buffer.from('event: hello\n', 'latin1');
const COLON = 58;
/** Bytes of a chunk kept for the next one: a mark (`evmark:8191:`) or a frame start split between two is found whole. */
const TAIL = 16;

/** Every stream reads into this one buffer, after the room for the last chunk's tail. */
const scratch = Buffer.alloc(TAIL + 64 * 1024);
const readArea = scratch.subarray(TAIL);

const sentAt = new Float64Array(MAX_MARKS);
/** The opening (session) each mark was sent in, or -1 when no stream was open. */
const sessionOf = new Int32Array(MAX_MARKS).fill(-1);
const witnessAt = new Float64Array(MAX_MARKS).fill(NaN);
let marks = 0;

interface Stream {
  socket: net.Socket;
  status: number;
  opened: boolean;
  ended: boolean;
  closed: boolean;
  bytes: number;
  frames: number;
  reads: number;
  seen: number;
  tail: Buffer;
  tailLength: number;
  onOpen: (() => void) | null;
}

let setup: ReadersSetup | null = null;
let streams: Stream[] = [];
/** The opening whose streams are open now (-1: none), and the next one's number. */
let session = -1;
let sessions = 0;
/** Each read of a mark by a stream of the open session: the mark, and when it was read. */
let sessionMarks: number[] = [];
let sessionReadAt: number[] = [];
const allLatencies: number[] = [];
const allWitness: number[] = [];
const allFromHub: number[] = [];

function spread(values: number[]): Spread {
  if (values.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(values).sort();
  const at = (fraction: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
  const round = (value: number): number => Math.round(value * 100) / 100;
  return { count: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1)!) };
}

/** Every index of `pattern` in `data` whose last byte is at or after `from` (so that nothing is found twice). */
function* occurrences(data: Buffer, pattern: Buffer, from: number): Generator<number> {
  const start = Math.max(0, from - pattern.length + 1);
  for (let at = data.indexOf(pattern, start); at !== -1; at = data.indexOf(pattern, at + 1)) yield at;
}

function onChunk(stream: Stream, length: number): void {
  const now = performance.now();
  // The previous chunk's tail goes just before this one, so the two read as one.
  const begin = TAIL - stream.tailLength;
  stream.tail.copy(scratch, begin, 0, stream.tailLength);
  const data = scratch.subarray(begin, TAIL + length);
  const fresh = stream.tailLength;
  if (stream.status === 0) {
    stream.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data.toString('latin1', 0, 16))?.[1] ?? -1);
    if (stream.status !== 200) {
      stream.socket.destroy();
      stream.onOpen?.();
      return;
    }
  }
  stream.bytes += length;
  stream.reads++;
  if (!stream.opened && data.indexOf(OPEN_EVENT) !== -1) {
    stream.opened = true;
    stream.onOpen?.();
    stream.onOpen = null;
  }
  for (const _ of occurrences(data, FRAME_START, fresh)) stream.frames++;
  if (!stream.ended && data.indexOf(END_EVENT, Math.max(0, fresh - END_EVENT.length + 1)) !== -1) stream.ended = true;
  // A mark counts once it is whole (its closing colon read), and only where that colon is new.
  for (let at = data.indexOf(MARK_PREFIX); at !== -1; at = data.indexOf(MARK_PREFIX, at + 1)) {
    const close = data.indexOf(COLON, at + MARK_PREFIX.length);
    if (close === -1 || close - at > TAIL) continue;
    if (close < fresh) continue;
    const mark = Number(data.toString('latin1', at + MARK_PREFIX.length, close));
    if (!Number.isInteger(mark) || mark < 0 || mark >= marks) continue;
    if (sessionOf[mark] !== session) continue;
    stream.seen++;
    sessionMarks.push(mark);
    sessionReadAt.push(now);
  }
  const keep = Math.min(TAIL, data.length);
  data.copy(stream.tail, 0, data.length - keep);
  stream.tailLength = keep;
}

function openStream(url: URL): Promise<Stream> {
  return new Promise((resolve) => {
    const stream: Stream = {
      socket: null as unknown as net.Socket,
      status: 0,
      opened: false,
      ended: false,
      closed: false,
      bytes: 0,
      frames: 0,
      reads: 0,
      seen: 0,
      tail: Buffer.alloc(TAIL),
      tailLength: 0,
      onOpen: () => resolve(stream),
    };
    stream.socket = net.connect({
      host: url.hostname,
      port: Number(url.port),
      onread: {
        buffer: () => readArea,
        callback: (length) => {
          onChunk(stream, length);
          return true;
        },
      },
    });
    stream.socket.setNoDelay(true);
    stream.socket.on('connect', () =>
      stream.socket.write(
        `GET /api/irc/events/${setup!.query ? `?${setup!.query}` : ''} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`,
      ),
    );
    stream.socket.on('error', () => undefined);
    stream.socket.on('close', () => {
      stream.closed = true;
      stream.onOpen?.();
      stream.onOpen = null;
    });
  });
}

async function open(count: number, to = setup!.botUrl): Promise<ReadersAnswer> {
  const started = performance.now();
  const url = new URL(to);
  session = sessions++;
  sessionMarks = [];
  sessionReadAt = [];
  // A hundred at a time: a thousand connections at once would overflow the bot's listen backlog.
  for (let first = 0; first < count; first += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - first) }, () => Promise.race([openStream(url), delay(30_000)])),
    );
    for (const stream of batch) if (stream) streams.push(stream);
  }
  const open = streams.filter((stream) => stream.opened && !stream.closed).length;
  return { kind: 'opened', open, refused: count - open, ms: performance.now() - started };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

function marksOf(which: number): number[] {
  const found: number[] = [];
  for (let mark = 0; mark < marks; mark++) if (sessionOf[mark] === which) found.push(mark);
  return found;
}

function witnessSpread(of: number[]): Spread {
  return spread(of.map((mark) => witnessAt[mark]! - sentAt[mark]!).filter((value) => !Number.isNaN(value)));
}

async function close(): Promise<ReadersAnswer> {
  const mine = marksOf(session);
  const live = streams.filter((stream) => stream.opened);
  const deadline = performance.now() + 3000;
  while (performance.now() < deadline && live.some((stream) => !stream.closed && stream.seen < mine.length)) {
    await delay(50);
  }
  const latencies = sessionMarks.map((mark, index) => sessionReadAt[index]! - sentAt[mark]!);
  const fromHub = sessionMarks
    .map((mark, index) => sessionReadAt[index]! - witnessAt[mark]!)
    .filter((value) => !Number.isNaN(value));
  const readsOf = new Map<number, number>();
  for (const mark of sessionMarks) readsOf.set(mark, (readsOf.get(mark) ?? 0) + 1);
  const missing = mine
    .filter((mark) => (readsOf.get(mark) ?? 0) < live.length)
    .slice(0, 10)
    .map((mark) => ({
      mark,
      streams: readsOf.get(mark) ?? 0,
      witnessMs: Number.isNaN(witnessAt[mark]!) ? null : Math.round(witnessAt[mark]! - sentAt[mark]!),
    }));
  const perStream = (count: (stream: Stream) => number): number =>
    live.reduce((sum, stream) => sum + count(stream), 0) / Math.max(1, live.length);
  const result: SessionResult = {
    streams: live.length,
    marks: mine.length,
    delivered: live.reduce((sum, stream) => sum + stream.seen, 0),
    expected: live.length * mine.length,
    latency: spread(latencies),
    witness: witnessSpread(mine),
    fromHub: spread(fromHub),
    bytesPerStream: perStream((stream) => stream.bytes),
    framesPerStream: perStream((stream) => stream.frames),
    readsPerStream: perStream((stream) => stream.reads),
    endedByBot: live.filter((stream) => stream.ended).length,
    closedEarly: live.filter((stream) => stream.closed && !stream.ended).length,
    missing,
  };
  for (const value of latencies) allLatencies.push(value);
  for (const value of fromHub) allFromHub.push(value);
  for (const mark of mine) if (!Number.isNaN(witnessAt[mark]!)) allWitness.push(witnessAt[mark]! - sentAt[mark]!);
  for (const stream of streams) stream.socket.destroy();
  streams = [];
  // Marks sent from now on belong to no opening.
  session = -1;
  sessionMarks = [];
  sessionReadAt = [];
  return { kind: 'closed', ...result };
}

interface Marker {
  client: IrcClient;
  inChannel: boolean;
}

let markers: Marker[] = [];
let witness: IrcClient | null = null;
let turn = 0;

async function connect(port: number, nick: string): Promise<IrcClient> {
  const client = new IrcClient({ port, nick, user: 'evmark', realname: 'events bench', keep: false, lite: true });
  await client.connect();
  const registered = await client.register();
  if (!registered.ok) throw new Error(`${nick} could not register: ${registered.last.raw}`);
  return client;
}

async function start(request: ReadersSetup): Promise<void> {
  setup = request;
  const tag = (process.pid % 10000).toString(36);
  witness = await connect(request.hubPort, `evwit${tag}`);
  await witness.request(`JOIN ${request.channel}`, '366', 30_000);
  witness.onRaw = (raw) => {
    const at = raw.indexOf(' :evmark:');
    if (at === -1 || !raw.includes(' PART ')) return;
    const mark = Number(raw.slice(at + 9, raw.indexOf(':', at + 9)));
    if (Number.isInteger(mark) && mark >= 0 && mark < marks && Number.isNaN(witnessAt[mark]!)) {
      witnessAt[mark] = performance.now();
    }
  };
  markers = await Promise.all(
    Array.from({ length: request.markers }, async (_, index) => ({
      client: await connect(request.leafPorts[index % request.leafPorts.length]!, `evm${tag}x${index}`),
      inChannel: false,
    })),
  );
}

/**
 * The markers for `seconds`: every 1 / (2 × rate) s a JOIN or a marked PART, each marker in its turn JOINing, then
 * PARTing at the next tick, so that the marks come evenly, one every 1 / rate s.
 */
async function mark(seconds: number): Promise<ReadersAnswer> {
  const { channel, rate } = setup!;
  const gapMs = 1000 / (2 * rate);
  const started = performance.now();
  const first = marks;
  const ticks = Math.floor((seconds * 1000) / gapMs);
  for (let tick = 0; tick < ticks; tick++) {
    await delay(started + tick * gapMs - performance.now());
    const marker = markers[Math.floor(turn++ / 2) % markers.length]!;
    if (!marker.inChannel) {
      marker.client.send(`JOIN ${channel}`);
      marker.inChannel = true;
    } else if (marks < MAX_MARKS) {
      const number = marks++;
      sessionOf[number] = session;
      sentAt[number] = performance.now();
      marker.client.send(`PART ${channel} :evmark:${number}:`);
      marker.inChannel = false;
    }
  }
  await delay(Math.max(0, started + seconds * 1000 - performance.now()));
  const sent = Array.from({ length: marks - first }, (_, index) => first + index);
  // The last marks' PARTs may still be on their way to the witness.
  await delay(500);
  return { kind: 'marked', sent: sent.length, witness: witnessSpread(sent) };
}

function answer(message: ReadersAnswer): void {
  process.send!(message);
}

process.on('message', (request: ReadersRequest) => {
  const handled = (async (): Promise<ReadersAnswer> => {
    switch (request.kind) {
      case 'setup':
        await start(request);
        return { kind: 'ready' };
      case 'open':
        return open(request.count, request.url);
      case 'mark':
        return mark(request.seconds);
      case 'close':
        return close();
      case 'summary':
        return {
          kind: 'summary',
          latency: spread(allLatencies),
          witness: spread(allWitness),
          fromHub: spread(allFromHub),
          marks,
        };
    }
  })();
  handled.then(answer, (error: unknown) => {
    process.stderr.write(
      `events readers: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
});
// The bench is gone: so are the readers.
process.on('disconnect', () => process.exit(0));
