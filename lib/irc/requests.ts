/**
 * Requests and their replies: a line sent, and the lines that answer it collected (or handed on as they
 * come) up to the one that ends the reply. Requests take turns, a few unanswered at a time, answers to
 * people first; a serial request waits while one of its command is out.
 */
import { formatLine } from './text.js';
import type { IrcMessage, IrcRequest } from './port.js';
import { UNKNOWN_SERVER, type ServerProfile } from './server-profile.js';

/**
 * Requests whose reply is awaited go out, in order (answers to people first; a serial request passed over
 * while one of its command is out), as soon as fewer than this
 * many are unanswered, outside the paced queue: a few lines that each wait for their reply cannot flood
 * a server (its receive queue holds them; a server that throttles commands only delays them), while pacing
 * them cost a big network's sync tens of seconds (one WHO per line slot). Eight let a sync ask several WHO
 * masks at once, so that a busy server's delay is paid once for them, not once per mask.
 */
export const REQUESTS_IN_FLIGHT = 8;

/** The time a request's reply may take from its turn (see {@link RequestLane}), unless it says otherwise. */
const DEFAULT_TIMEOUT_MS = 15000;

/** How the lane sends requests to a server: how many may be unanswered at once, and their default timeout. */
export interface RequestLimits {
  inFlight: number;
  /** The time a request's reply may take from its turn, unless the request says otherwise. */
  defaultTimeoutMs: number;
}

/** The limits on most servers. */
const GENERIC_LIMITS: RequestLimits = { inFlight: REQUESTS_IN_FLIGHT, defaultTimeoutMs: DEFAULT_TIMEOUT_MS };

/**
 * The limits on a server that penalises commands (its profile's `commandPenalty`, ircd 2.11), which reads a
 * client's next command only seconds after the last (a PRIVMSG 2.2 s, LUSERS or TIME 3 s, a WHO up to 12 s): one
 * request at a time, since the eighth of eight written at once would be read half a minute later (its timeout ran
 * from the moment its line was written before requests were timed from their turn). One at a time, each still waits for the penalties of the
 * request before it and of the paced lines written meanwhile: a sync's LUSERS written after its WHO and three
 * CTCP VERSION lines was answered after more than 15 s, which the longer default timeout allows.
 */
export const PENALISED_LIMITS: RequestLimits = { inFlight: 1, defaultTimeoutMs: 45_000 };

/** The limits of the request lane on a server of `profile`. */
export function requestLimitsFor(profile: Pick<ServerProfile, 'commandPenalty'>): RequestLimits {
  return profile.commandPenalty ? PENALISED_LIMITS : GENERIC_LIMITS;
}

interface PendingRequest {
  request: IrcRequest;
  collected: IrcMessage[];
  resolve: (lines: IrcMessage[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  /** Whether its turn has come: its clock runs (see {@link RequestLane}). */
  turn: boolean;
  /** When its turn came (ms). */
  turnAt: number;
  /** The lines written on the connection up to its last line ({@link LaneFlow.written}). */
  seq: number;
  /** Whether a line of its reply came yet. */
  heard: boolean;
  /** Given up on (timed out) while its late reply is still awaited: the next request's turn has come. */
  late: boolean;
  /** How many times the server refused it with RPL_TRYAGAIN (263) so far. */
  refused: number;
}

const NO_PENDING: readonly PendingRequest[] = [];

/**
 * RPL_TRYAGAIN `263 <nick> <command> :...`: the server refuses a command it rate-limits. ircd-hybrid does
 * so for anyone but an operator within `pace_wait` of anyone's last LINKS, MAP, STATS, WHO of a mask, ...
 * and within `pace_wait_simple` of the last LUSERS, VERSION, remote WHOIS, ...; it follows a refused WHO
 * with an empty RPL_ENDOFWHO.
 */
const RPL_TRYAGAIN = '263';

/** How a request the server refused with RPL_TRYAGAIN is sent again. */
export interface TryAgainOptions {
  /** The wait before the first new try; each later wait is twice the one before. */
  firstWaitMs: number;
  /** How many times the request is sent again before it is rejected. */
  times: number;
}

/**
 * 2 s, 4 s, 8 s, 16 s: the last try goes out 30 s after the refusal, past ircd-hybrid's default
 * `pace_wait` (10 s), which runs from the last time anyone used the command, not the bot alone.
 */
export const TRY_AGAIN: TryAgainOptions = { firstWaitMs: 2000, times: 4 };

/** What the lane tells of how far the server has read the connection's lines (the transport's `ReadGauge`). */
export interface LaneFlow {
  /** How many lines were written on the connection so far, the lane's and others'. */
  written(): number;
  /**
   * The first line of a request's reply came: the server has read the connection's lines up to `seq` (its
   * {@link written} when the request was written), and held it `holdMs` from its turn before answering (null: it
   * answered before its turn, a request before it being slower, e.g. answered by a server further away).
   */
  heard(seq: number, holdMs: number | null): void;
  /** No request is unanswered any more (answered, given up on or refused). */
  idle(): void;
}

/**
 * Requests to one server. A request's clock (its timeout) runs from its turn: when it is written, if no request
 * written before it is unanswered, else when the one written just before it is answered (or given up on). A
 * server reads a client's lines in order and answers each before it reads the next, so a request written behind
 * others waits for their replies, and on a server that penalises commands (InspIRCd's fake lag for anyone
 * without `users/flood/no-fakelag`: a second per command, 5 ms per WHO row, 5 s per LIST) for their penalties
 * too: a plain user's LUSERS written behind seven WHO masks was read 14 s later, and a clock run from its writing
 * gave up on it at 15 s. From its turn, a request waits only for the penalty of the one before it.
 */
export class RequestLane {
  /** Requests sent and not yet answered. */
  private readonly pending: PendingRequest[] = [];
  /** Requests waiting for their turn to be sent, answers to people first, each in order. */
  private readonly waiting: { urgent: PendingRequest[]; other: PendingRequest[] } = { urgent: [], other: [] };
  /** Requests the server refused with RPL_TRYAGAIN (263), waiting to be sent again. */
  private readonly refused = new Set<PendingRequest>();

  /** `write` writes a line now, unpaced; `open` tells whether there is a connection to write to. */
  constructor(
    private readonly write: (line: string) => void,
    private readonly open: () => boolean,
    /** How a request the server refused with RPL_TRYAGAIN is sent again. */
    private readonly tryAgain: TryAgainOptions = TRY_AGAIN,
    /** What the error of a request refused too often advises: the server profile's `tryAgainText`. */
    private readonly tryAgainAdvice: () => string = () => UNKNOWN_SERVER.tryAgainText,
    /** How many requests may be unanswered at once, and their default timeout: {@link requestLimitsFor} the server. */
    private readonly limits: () => RequestLimits = () => GENERIC_LIMITS,
    /** Told how far the server has read, as replies come. */
    private readonly flow?: LaneFlow,
  ) {}

  /** Whether a request is written and unanswered. */
  get busy(): boolean {
    return this.pending.length > 0;
  }

  /** Send `request` when its turn comes; resolves with its reply, rejects on timeout or {@link rejectAll}. */
  add(request: IrcRequest): Promise<IrcMessage[]> {
    return new Promise((resolve, reject) => {
      if (!this.open()) {
        reject(new Error(`not connected; cannot send ${request.send[0]}`));
        return;
      }
      const pending: PendingRequest = {
        request,
        collected: [],
        resolve,
        reject,
        timer: undefined,
        turn: false,
        turnAt: 0,
        seq: 0,
        heard: false,
        late: false,
        refused: 0,
      };
      (request.urgent ? this.waiting.urgent : this.waiting.other).push(pending);
      this.sendWaiting();
    });
  }

  /** Match a received line against the requests sent: collect it, hand it on, or end a reply with it. */
  match(message: IrcMessage): void {
    if (message.command === RPL_TRYAGAIN && this.takeTryAgain(message)) return;
    for (const pending of this.pending.length > 0 ? [...this.pending] : NO_PENDING) {
      const { request } = pending;
      const isEnd = request.end(message);
      if (isEnd) {
        this.hear(pending);
        pending.collected.push(message);
      } else if (request.reply(message)) {
        this.hear(pending);
        if (request.onReply) request.onReply(message);
        else pending.collected.push(message);
      }
      if (isEnd) {
        this.remove(pending);
        pending.resolve(pending.collected);
      }
    }
  }

  /** The connection is gone: every request sent or waiting is rejected with `reason`. */
  rejectAll(reason: string): void {
    const refused = [...this.refused];
    this.refused.clear();
    for (const pending of [
      ...this.pending.splice(0),
      ...refused,
      ...this.waiting.urgent.splice(0),
      ...this.waiting.other.splice(0),
    ]) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`disconnected before the reply to ${pending.request.send[0]}: ${reason}`));
    }
    this.flow?.idle();
  }

  /**
   * Send waiting requests while fewer than {@link REQUESTS_IN_FLIGHT} (one on a server that penalises commands) are
   * unanswered, in order, passing over a serial request whose command is already out (it keeps its place until
   * that reply ends).
   */
  private sendWaiting(): void {
    while (this.pending.length < this.limits().inFlight && this.open()) {
      const pending = this.takeSendable(this.waiting.urgent) ?? this.takeSendable(this.waiting.other);
      if (!pending) return;
      const { request } = pending;
      pending.turn = false;
      pending.heard = false;
      this.pending.push(pending);
      this.write(formatLine(request.send[0]!, request.send.slice(1)));
      for (const line of request.more ?? []) this.write(formatLine(line[0]!, line.slice(1)));
      pending.seq = this.flow?.written() ?? 0;
      request.onSent?.();
      // Its turn now if the request written before it was answered or given up on; else once it is.
      const before = this.pending.at(-2);
      if (!before || before.late) this.startTurn(pending);
    }
  }

  /** The first line of `pending`'s reply came. */
  private hear(pending: PendingRequest): void {
    if (pending.heard) return;
    pending.heard = true;
    // Answered by another server, late (given up on), or before its turn: its wait says nothing of the hold.
    const told = pending.turn && !pending.late && pending.request.remote !== true;
    this.flow?.heard(pending.seq, told ? Date.now() - pending.turnAt : null);
  }

  /** `pending`'s turn has come: its clock starts (a request waiting to be written, or for its turn, is not timed out). */
  private startTurn(pending: PendingRequest): void {
    if (pending.turn) return;
    pending.turn = true;
    pending.turnAt = Date.now();
    const { request } = pending;
    const timeoutMs = request.timeoutMs ?? this.limits().defaultTimeoutMs;
    pending.timer = setTimeout(() => {
      // Given up on: the next one's turn.
      this.passTurn(pending);
      if (request.serial) this.drainLate(pending, timeoutMs);
      else this.remove(pending);
      pending.reject(new Error(`no complete reply to ${request.send[0]} within ${timeoutMs} ms`));
    }, timeoutMs);
    request.onTurn?.();
  }

  /** The request written after `pending` (still unanswered), if any, takes its turn: `pending` was answered or given up on. */
  private passTurn(pending: PendingRequest): void {
    const index = this.pending.indexOf(pending);
    const next = index < 0 ? undefined : this.pending[index + 1];
    if (next) this.startTurn(next);
  }

  /**
   * A serial request timed out, but its reply may still come: until its end arrives (or as long again), it
   * keeps its command's turn and takes its lines, unused, so that the next request of its command does not
   * take them for its own.
   */
  private drainLate(pending: PendingRequest, timeoutMs: number): void {
    const { onReply: _unused, ...request } = pending.request;
    pending.request = { ...request, reply: () => false };
    pending.late = true;
    pending.timer = setTimeout(() => this.remove(pending), timeoutMs);
  }

  /** The first of `queue` that may go out now, taken off it. */
  private takeSendable(queue: PendingRequest[]): PendingRequest | undefined {
    const index = queue.findIndex((waiting) => !waiting.request.serial || !this.serialOut(waiting.request));
    return index < 0 ? undefined : queue.splice(index, 1)[0];
  }

  /** Whether a serial request of `request`'s command is out: sent and unanswered, or refused and sent again later. */
  private serialOut(request: IrcRequest): boolean {
    const command = request.send[0]?.toUpperCase();
    const same = (other: PendingRequest): boolean =>
      other.request.serial === true && other.request.send[0]?.toUpperCase() === command;
    if (this.pending.some(same)) return true;
    for (const other of this.refused) if (same(other)) return true;
    return false;
  }

  /**
   * An RPL_TRYAGAIN for a command the bot has a request of out: the oldest such request takes it (the
   * server answers in order). It is sent again after a wait that doubles each time, and rejected once
   * it has been refused {@link TryAgainOptions.times} more times. False if no request is of that command.
   */
  private takeTryAgain(message: IrcMessage): boolean {
    const command = message.params[1]?.toUpperCase();
    const pending = command ? this.pending.find((sent) => sent.request.send[0]?.toUpperCase() === command) : undefined;
    if (!pending) return false;
    // Out of the unanswered requests at once: the empty RPL_ENDOFWHO ircd-hybrid sends after refusing a WHO
    // does not end it, and its turn goes to the next request (not to a serial one of its command).
    clearTimeout(pending.timer);
    this.passTurn(pending);
    this.pending.splice(this.pending.indexOf(pending), 1);
    pending.collected = [];
    const { firstWaitMs, times } = this.tryAgain;
    if (pending.refused >= times) {
      const waited = firstWaitMs * (2 ** times - 1);
      this.sendWaiting();
      pending.reject(
        new Error(
          `the server rate-limits ${pending.request.send[0]} (RPL_TRYAGAIN, 263) and refused it ${times + 1} times ` +
            `over ${waited / 1000} s; ${this.tryAgainAdvice()}`,
        ),
      );
      return true;
    }
    const waitMs = firstWaitMs * 2 ** pending.refused;
    pending.refused++;
    this.refused.add(pending);
    this.sendWaiting();
    if (this.pending.length === 0) this.flow?.idle();
    pending.timer = setTimeout(() => {
      if (!this.refused.delete(pending)) return;
      // Back to the head of its queue: it was sent before the requests still waiting.
      (pending.request.urgent ? this.waiting.urgent : this.waiting.other).unshift(pending);
      this.sendWaiting();
    }, waitMs);
    return true;
  }

  private remove(pending: PendingRequest): void {
    clearTimeout(pending.timer);
    const index = this.pending.indexOf(pending);
    if (index >= 0) {
      this.passTurn(pending);
      this.pending.splice(index, 1);
    }
    this.sendWaiting();
    if (this.pending.length === 0) this.flow?.idle();
  }
}
