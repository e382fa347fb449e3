/**
 * A scale crowd worker: one process holding up to ~15,000 raw IRC connections, forked by
 * crowd.ts. It must be cheap, as it shares two cores with the servers and the bot under test:
 * lines are parsed only while a connection registers; after that, each chunk the server sends is
 * only searched (natively, on the Buffer) for a PING to answer, an ERROR and the server's error
 * numerics. Everything else the server says is dropped unread.
 */
import net from 'node:net';
import { planScaleCrowd, seededRandom, type PlannedUser } from './plan.js';
import type { ChurnCounts, ChurnRates, ParentMessage, SetupRequest, WorkerMessage, WorkerStatus } from './protocol.js';

type State = 'idle' | 'registering' | 'joining' | 'ready' | 'quitting';

/** One simulated user: a connection slot that keeps its channels and flags across reconnects. */
interface Slot {
  index: number;
  port: number;
  planned: PlannedUser;
  nick: string;
  channels: Set<number>;
  state: State;
  socket: net.Socket | null;
  /** Bytes after the last complete line of the previous chunk. */
  tail: Buffer | null;
  /** `:server.name 4` of the server this connection is on, once known: the start of its error numerics. */
  errorMarker: Buffer | null;
  /** The reason in the server's last ERROR line. */
  lastError: string | null;
  reconnects: number;
  nickChanges: number;
  /** When the current registration started (for the timeout). */
  startedAt: number;
}

const REGISTRATION_TIMEOUT_MS = 120_000;
const RETRY_PAUSE_MS = 1000;
const PHRASES = [
  'good morning everyone',
  'anyone tried the new release?',
  'brb, coffee',
  'that build is green again',
  'lol',
  'works for me',
  'which client are you on?',
  'the docs say otherwise',
  'ping me when it is merged',
  'nice',
  'is the server slow for you too?',
  'thanks!',
];
const NEWLINE = 10;
/** Shared by every socket of the worker: each chunk is handled before the next read. */
const readBuffer = Buffer.alloc(64 * 1024);

function send(message: WorkerMessage): void {
  process.send?.(message);
}

class Worker {
  private readonly slots: Slot[] = [];
  private readonly queue: Slot[] = [];
  private registering = 0;
  private readonly status: WorkerStatus = { users: 0, ready: 0, dropped: {}, errors: {}, retries: 0 };
  private readonly random: () => number;
  private readonly channelNames: string[];
  /**
   * Cumulative square roots of the planned sizes: joins and parts pick a channel with a chance in
   * proportion to the square root of its size. Bigger channels see more comings and goings, though less
   * than in proportion to their size: at 50,000 users each join or part is then seen by 35 members on
   * average, not 359, and the 200 biggest channels get 11 % of them, not 48 % (each member told of it
   * costs the servers and the crowd a line, and the two cores cannot pay for 359).
   */
  private readonly cumulativeWeights: Float64Array;
  /** This worker's users in each channel (also while one reconnects: it joins them again). */
  private readonly members = new Map<number, Set<Slot>>();
  private stopping = false;
  private onAllReady: (() => void) | null = null;

  constructor(private readonly setup: SetupRequest) {
    const plan = planScaleCrowd(setup.plan);
    this.random = seededRandom((setup.plan.seed ?? 1) * 7919 + setup.worker + 1);
    this.channelNames = plan.channels;
    this.cumulativeWeights = new Float64Array(plan.sizes.length);
    let total = 0;
    plan.sizes.forEach((size, index) => (this.cumulativeWeights[index] = total += Math.sqrt(size)));
    for (let index = setup.worker; index < plan.users.length; index += setup.workers) {
      const planned = plan.users[index]!;
      const slot: Slot = {
        index,
        port: setup.ports[Math.floor(index / setup.workers) % setup.ports.length]!,
        planned,
        nick: planned.nick,
        channels: new Set(),
        state: 'idle',
        socket: null,
        tail: null,
        errorMarker: null,
        lastError: null,
        reconnects: 0,
        nickChanges: 0,
        startedAt: 0,
      };
      this.slots.push(slot);
      for (const channel of planned.channels) this.noteJoin(slot, channel);
    }
    this.status.users = this.slots.length;
  }

  /** Connects every slot, `window` registrations at a time; resolves when all have joined their channels. */
  connectAll(): Promise<void> {
    this.queue.push(...this.slots);
    const done = new Promise<void>((resolve) => (this.onAllReady = resolve));
    const timer = setInterval(() => {
      send({ kind: 'progress', ready: this.status.ready });
      this.expireRegistrations();
    }, 1000);
    this.pump();
    return done.finally(() => clearInterval(timer));
  }

  private pump(): void {
    while (this.registering < this.setup.window && this.queue.length > 0 && !this.stopping) {
      this.open(this.queue.shift()!);
    }
  }

  private open(slot: Slot): void {
    this.registering++;
    slot.state = 'registering';
    slot.tail = null;
    slot.lastError = null;
    slot.startedAt = Date.now();
    // Every socket reads into one buffer (read() then callback, no Buffer or 'data' event per read):
    // the chunk is searched at once, and only its unfinished last line is copied out.
    const socket = net.connect({
      host: this.setup.host,
      port: slot.port,
      onread: {
        buffer: readBuffer,
        callback: (bytes) => {
          this.onData(slot, readBuffer.subarray(0, bytes));
          return true;
        },
      },
    });
    slot.socket = socket;
    socket.setNoDelay(true);
    socket.on('connect', () => socket.write(`NICK ${slot.nick}\r\nUSER ${slot.planned.ident} 0 * :scale crowd\r\n`));
    socket.on('error', (error: NodeJS.ErrnoException) => (slot.lastError ??= error.code ?? error.message));
    socket.on('close', () => this.onClose(slot, socket));
  }

  /** A registration that never finished (the server never answered) is dropped and tried again. */
  private expireRegistrations(): void {
    const now = Date.now();
    for (const slot of this.slots) {
      if (slot.state === 'registering' && now - slot.startedAt > REGISTRATION_TIMEOUT_MS) {
        slot.lastError = 'registration timed out';
        slot.socket?.destroy();
      }
    }
  }

  private onData(slot: Slot, chunk: Buffer): void {
    let data = chunk;
    if (slot.tail) {
      data = Buffer.concat([slot.tail, chunk]);
      slot.tail = null;
    }
    const end = data.lastIndexOf(NEWLINE);
    if (end < data.length - 1) slot.tail = Buffer.from(data.subarray(end + 1));
    if (end === -1) return;
    if (slot.state === 'registering') this.registrationLines(slot, data.toString('latin1', 0, end));
    else this.scan(slot, data, end);
  }

  /** Registration: the only time lines are read one by one (a dozen lines per connection). */
  private registrationLines(slot: Slot, text: string): void {
    for (const raw of text.split('\n')) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (slot.state !== 'registering') {
        // The rest of the chunk after 001 (ISUPPORT, MOTD) needs no reading, only the server's PINGs.
        if (line.startsWith('PING ')) slot.socket?.write(`PONG ${line.slice(5)}\r\n`);
        continue;
      }
      const prefixEnd = line.startsWith(':') ? line.indexOf(' ') : -1;
      const commandEnd = line.indexOf(' ', prefixEnd + 1);
      const command = line.slice(prefixEnd + 1, commandEnd === -1 ? undefined : commandEnd);
      if (command === 'PING') slot.socket?.write(`PONG ${line.slice(5)}\r\n`);
      else if (command === 'ERROR') slot.lastError = errorReason(line);
      else if (command === '433') {
        // Taken: only after a reconnect whose old connection the server has not dropped yet.
        slot.nick = `${slot.nick}_`;
        slot.socket?.write(`NICK ${slot.nick}\r\n`);
      } else if (command === '001') this.registered(slot, line.slice(0, prefixEnd));
    }
  }

  private registered(slot: Slot, serverPrefix: string): void {
    slot.state = 'joining';
    slot.errorMarker = Buffer.from(`${serverPrefix} 4`, 'latin1');
    const modes = `${slot.planned.invisible ? 'i' : ''}${this.setup.deaf ? 'd' : ''}`;
    let lines = modes ? `MODE ${slot.nick} +${modes}\r\n` : '';
    if (slot.planned.away) lines += 'AWAY :away from keyboard\r\n';
    for (const batch of joinBatches([...slot.channels].map((channel) => this.channelNames[channel]!))) {
      lines += `JOIN ${batch}\r\n`;
    }
    // The server answers in order: its PONG says every line above was handled.
    slot.socket?.write(`${lines}PING :ready\r\n`);
  }

  /** After registration: search the chunk for what needs an answer or a count, without splitting it. */
  private scan(slot: Slot, data: Buffer, end: number): void {
    for (let at = lineStart(data, 'PING ', 0, end); at !== -1; at = lineStart(data, 'PING ', at + 1, end)) {
      const lineEnd = data.indexOf(NEWLINE, at);
      slot.socket?.write(`PONG ${data.toString('latin1', at + 5, lineEnd).trimEnd()}\r\n`);
    }
    const error = lineStart(data, 'ERROR ', 0, end);
    if (error !== -1) slot.lastError = errorReason(data.toString('latin1', error, data.indexOf(NEWLINE, error)));
    if (slot.errorMarker) {
      const marker = slot.errorMarker;
      for (let at = data.indexOf(marker); at !== -1 && at < end; at = data.indexOf(marker, at + 1)) {
        const numeric = data.toString('latin1', at + marker.length - 1, at + marker.length + 2);
        this.status.errors[numeric] = (this.status.errors[numeric] ?? 0) + 1;
      }
    }
    if (slot.state === 'joining' && data.indexOf(' PONG ') !== -1) {
      slot.state = 'ready';
      this.status.ready++;
      this.registering--;
      this.pump();
      if (this.status.ready === this.slots.length && this.onAllReady) {
        this.onAllReady();
        this.onAllReady = null;
      }
    }
  }

  private onClose(slot: Slot, socket: net.Socket): void {
    if (slot.socket !== socket) return;
    slot.socket = null;
    const state = slot.state;
    slot.state = 'idle';
    if (state === 'ready') this.status.ready--;
    else if (state === 'registering' || state === 'joining') this.registering--;
    if (this.stopping) return;
    if (state === 'quitting') {
      slot.reconnects++;
      slot.nick = `${slot.planned.nick}r${slot.reconnects}`;
    } else if (state === 'ready') {
      const reason = slot.lastError ?? 'closed without ERROR';
      this.status.dropped[reason] = (this.status.dropped[reason] ?? 0) + 1;
    } else {
      // Refused or timed out while registering: tried again after a pause, not in a tight loop.
      this.status.retries++;
      setTimeout(() => {
        this.queue.push(slot);
        this.pump();
      }, RETRY_PAUSE_MS);
      return;
    }
    // Quit or dropped, the user comes back (after a quit under a new nick), so the crowd keeps its size.
    this.queue.push(slot);
    this.pump();
  }

  /**
   * Runs the churn for `seconds`. Joins and parts go in pairs where their rates allow (see
   * {@link swapOne}); the rest of either are single joins or parts.
   */
  churn(seconds: number, rates: ChurnRates): Promise<ChurnCounts> {
    const counts: ChurnCounts = { reconnects: 0, joins: 0, parts: 0, nicks: 0, topics: 0, chat: 0, skipped: 0 };
    const swaps = Math.min(rates.joins, rates.parts);
    const operations: { rate: number; run: () => boolean; counts: (keyof ChurnRates)[]; due: number }[] = [
      { rate: rates.reconnects, run: () => this.reconnectOne(), counts: ['reconnects'], due: 0 },
      { rate: swaps, run: () => this.swapOne(), counts: ['joins', 'parts'], due: 0 },
      { rate: rates.joins - swaps, run: () => this.joinOne(), counts: ['joins'], due: 0 },
      { rate: rates.parts - swaps, run: () => this.partOne(), counts: ['parts'], due: 0 },
      { rate: rates.nicks, run: () => this.nickOne(), counts: ['nicks'], due: 0 },
      { rate: rates.topics, run: () => this.topicOne(), counts: ['topics'], due: 0 },
      { rate: rates.chat, run: () => this.chatOne(), counts: ['chat'], due: 0 },
    ];
    const started = Date.now();
    let last = started;
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        const now = Math.min(Date.now(), started + seconds * 1000);
        const elapsed = (now - last) / 1000;
        last = now;
        for (const operation of operations) {
          operation.due += operation.rate * elapsed;
          for (; operation.due >= 1; operation.due--) {
            if (operation.run()) for (const name of operation.counts) counts[name]++;
            else counts.skipped++;
          }
        }
        if (now >= started + seconds * 1000) {
          clearInterval(timer);
          resolve(counts);
        }
      }, 100);
    });
  }

  private pickReady(test?: (slot: Slot) => boolean): Slot | null {
    for (let attempt = 0; attempt < 20; attempt++) {
      const slot = this.slots[Math.floor(this.random() * this.slots.length)]!;
      if (slot.state === 'ready' && (!test || test(slot))) return slot;
    }
    return null;
  }

  private write(slot: Slot, line: string): void {
    slot.socket!.write(`${line}\r\n`);
  }

  private reconnectOne(): boolean {
    const slot = this.pickReady();
    if (!slot) return false;
    slot.state = 'quitting';
    this.status.ready--;
    this.write(slot, 'QUIT :churn');
    return true;
  }

  /**
   * One user joins a channel and another member then parts it: the channel keeps its size while its
   * members change (see {@link cumulativeWeights} for which channel). Independent joins and parts would
   * let sizes drift: a channel of one that loses its member is gone, and a join is far more likely to
   * land in a channel that exists.
   */
  private swapOne(): boolean {
    for (let attempt = 0; attempt < 20; attempt++) {
      const channel = this.weightedChannel();
      const leaving = this.readyMemberOf(channel);
      if (!leaving) continue;
      const joining = this.pickReady(
        (candidate) =>
          !candidate.channels.has(channel) && candidate.channels.size < (this.setup.plan.maxChannelsPerUser ?? 20),
      );
      if (!joining) return false;
      this.noteJoin(joining, channel);
      this.write(joining, `JOIN ${this.channelNames[channel]}`);
      this.notePart(leaving, channel);
      this.write(leaving, `PART ${this.channelNames[channel]}`);
      return true;
    }
    return false;
  }

  /** A join on its own, in a channel drawn as for {@link swapOne}. */
  private joinOne(): boolean {
    const slot = this.pickReady((candidate) => candidate.channels.size < (this.setup.plan.maxChannelsPerUser ?? 20));
    if (!slot) return false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const channel = this.weightedChannel();
      if (slot.channels.has(channel)) continue;
      this.noteJoin(slot, channel);
      this.write(slot, `JOIN ${this.channelNames[channel]}`);
      return true;
    }
    return false;
  }

  /** A part on its own, from a channel drawn as for {@link swapOne}, by one of its members here. */
  private partOne(): boolean {
    for (let attempt = 0; attempt < 20; attempt++) {
      const channel = this.weightedChannel();
      const slot = this.readyMemberOf(channel);
      if (!slot) continue;
      this.notePart(slot, channel);
      this.write(slot, `PART ${this.channelNames[channel]}`);
      return true;
    }
    return false;
  }

  /** One of this worker's users in `channel` who is connected, or null. */
  private readyMemberOf(channel: number): Slot | null {
    const here = this.members.get(channel);
    if (!here || here.size === 0) return null;
    const candidates = [...here];
    for (let attempt = 0; attempt < 5; attempt++) {
      const slot = candidates[Math.floor(this.random() * candidates.length)]!;
      if (slot.state === 'ready') return slot;
    }
    return null;
  }

  private notePart(slot: Slot, channel: number): void {
    slot.channels.delete(channel);
    this.members.get(channel)?.delete(slot);
  }

  private noteJoin(slot: Slot, channel: number): void {
    slot.channels.add(channel);
    let here = this.members.get(channel);
    if (!here) this.members.set(channel, (here = new Set()));
    here.add(slot);
  }

  private nickOne(): boolean {
    const slot = this.pickReady();
    if (!slot) return false;
    slot.nickChanges++;
    slot.nick = `${slot.planned.nick}n${slot.nickChanges}${slot.reconnects ? `r${slot.reconnects}` : ''}`;
    this.write(slot, `NICK ${slot.nick}`);
    return true;
  }

  private topicOne(): boolean {
    const slot = this.pickReady((candidate) => candidate.channels.size > 0);
    if (!slot) return false;
    const channels = [...slot.channels];
    const channel = channels[Math.floor(this.random() * channels.length)]!;
    const phrase = PHRASES[Math.floor(this.random() * PHRASES.length)]!;
    this.write(slot, `TOPIC ${this.channelNames[channel]} :${phrase} (${slot.nick})`);
    return true;
  }

  /**
   * A line in one of the chat channels, drawn alike (the chat is spread over the bot's channels, not
   * in proportion to their size), from one of its members here. Every server a line passes looks at
   * each member of its channel (for +d), so lines weighted by size would cost the servers about eight
   * times as much at 50,000 users, more than the two cores can give.
   */
  private chatOne(): boolean {
    for (let attempt = 0; attempt < 20; attempt++) {
      const channel = Math.floor(this.random() * Math.min(this.setup.chatChannels, this.channelNames.length));
      const slot = this.readyMemberOf(channel);
      if (!slot) continue;
      this.write(slot, `PRIVMSG ${this.channelNames[channel]} :${PHRASES[Math.floor(this.random() * PHRASES.length)]}`);
      return true;
    }
    return false;
  }

  private weightedChannel(): number {
    const total = this.cumulativeWeights[this.cumulativeWeights.length - 1]!;
    const target = this.random() * total;
    let low = 0;
    let high = this.cumulativeWeights.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.cumulativeWeights[middle]! > target) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  currentStatus(): WorkerStatus {
    return structuredClone(this.status);
  }

  stop(): void {
    this.stopping = true;
    for (const slot of this.slots) slot.socket?.destroy();
  }
}

/** The reason of `ERROR :Closing link: (nick@host) [Excess Flood]`: the bracketed part, or the whole text. */
function errorReason(line: string): string {
  const text = line.slice(line.indexOf(':') + 1).trim();
  return /\[([^\]]+)\]\s*$/.exec(text)?.[1] ?? text;
}

/** Where `marker` starts a line at or after `from` (and before `end`), or -1. */
function lineStart(data: Buffer, marker: string, from: number, end: number): number {
  for (let at = data.indexOf(marker, from); at !== -1 && at < end; at = data.indexOf(marker, at + 1)) {
    if (at === 0 || data[at - 1] === NEWLINE) return at;
  }
  return -1;
}

/** Channel lists for JOIN lines that stay well inside the 512-byte line limit. */
function joinBatches(names: string[]): string[] {
  const batches: string[] = [];
  let current = '';
  for (const name of names) {
    if (current && current.length + name.length > 400) {
      batches.push(current);
      current = '';
    }
    current = current ? `${current},${name}` : name;
  }
  if (current) batches.push(current);
  return batches;
}

let worker: Worker | null = null;

process.on('message', (message: ParentMessage) => {
  switch (message.kind) {
    case 'setup': {
      const started = Date.now();
      worker = new Worker(message);
      const current = worker;
      current.connectAll().then(
        () => send({ kind: 'connected', ms: Date.now() - started, status: current.currentStatus() }),
        (error: unknown) => send({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    case 'churn': {
      const current = worker!;
      void current
        .churn(message.seconds, message.rates)
        .then((counts) => send({ kind: 'churned', counts, status: current.currentStatus() }));
      return;
    }
    case 'status':
      send({ kind: 'status', status: worker!.currentStatus() });
      return;
    case 'stop':
      worker?.stop();
      process.exit(0);
  }
});
// Whoever forked this worker is gone: so is the crowd.
process.on('disconnect', () => {
  worker?.stop();
  process.exit(0);
});
