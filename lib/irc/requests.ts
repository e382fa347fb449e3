/**
 * Requests and their replies: a line sent, and the lines that answer it collected (or handed on as they
 * come) up to the one that ends the reply. Requests take turns, a few unanswered at a time, answers to
 * people first.
 */
import { formatLine } from './text.js';
import type { IrcMessage, IrcRequest } from './port.js';

/**
 * Requests whose reply is awaited go out, in order (answers to people first), as soon as fewer than this
 * many are unanswered, outside the paced queue: a few lines that each wait for their reply cannot flood
 * a server (its receive queue holds them; a server that throttles commands only delays them), while pacing
 * them cost a big network's sync tens of seconds (one WHO per line slot). Eight let a sync ask several WHO
 * masks at once, so that a busy server's delay is paid once for them, not once per mask.
 */
export const REQUESTS_IN_FLIGHT = 8;

/** The time a request's reply may take from when its line is written, unless it says otherwise. */
const DEFAULT_TIMEOUT_MS = 15000;

interface PendingRequest {
  request: IrcRequest;
  collected: IrcMessage[];
  resolve: (lines: IrcMessage[]) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

const NO_PENDING: readonly PendingRequest[] = [];

export class RequestLane {
  /** Requests sent and not yet answered. */
  private readonly pending: PendingRequest[] = [];
  /** Requests waiting for their turn to be sent, answers to people first, each in order. */
  private readonly waiting: { urgent: PendingRequest[]; other: PendingRequest[] } = { urgent: [], other: [] };

  /** `write` writes a line now, unpaced; `open` tells whether there is a connection to write to. */
  constructor(
    private readonly write: (line: string) => void,
    private readonly open: () => boolean,
  ) {}

  /** Send `request` when its turn comes; resolves with its reply, rejects on timeout or {@link rejectAll}. */
  add(request: IrcRequest): Promise<IrcMessage[]> {
    return new Promise((resolve, reject) => {
      if (!this.open()) {
        reject(new Error(`not connected; cannot send ${request.send[0]}`));
        return;
      }
      const pending: PendingRequest = { request, collected: [], resolve, reject, timer: undefined };
      (request.urgent ? this.waiting.urgent : this.waiting.other).push(pending);
      this.sendWaiting();
    });
  }

  /** Match a received line against the requests sent: collect it, hand it on, or end a reply with it. */
  match(message: IrcMessage): void {
    for (const pending of this.pending.length > 0 ? [...this.pending] : NO_PENDING) {
      const { request } = pending;
      const isEnd = request.end(message);
      if (isEnd) pending.collected.push(message);
      else if (request.reply(message)) {
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
    for (const pending of [
      ...this.pending.splice(0),
      ...this.waiting.urgent.splice(0),
      ...this.waiting.other.splice(0),
    ]) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`disconnected before the reply to ${pending.request.send[0]}: ${reason}`));
    }
  }

  /** Send waiting requests while fewer than {@link REQUESTS_IN_FLIGHT} are unanswered. */
  private sendWaiting(): void {
    while (this.pending.length < REQUESTS_IN_FLIGHT && this.open()) {
      const pending = this.waiting.urgent.shift() ?? this.waiting.other.shift();
      if (!pending) return;
      const { request } = pending;
      const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      // The clock runs from the moment the line is written: a request waiting its turn is not timed out.
      pending.timer = setTimeout(() => {
        this.remove(pending);
        pending.reject(new Error(`no complete reply to ${request.send[0]} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.push(pending);
      this.write(formatLine(request.send[0]!, request.send.slice(1)));
      request.onSent?.();
    }
  }

  private remove(pending: PendingRequest): void {
    clearTimeout(pending.timer);
    const index = this.pending.indexOf(pending);
    if (index >= 0) this.pending.splice(index, 1);
    this.sendWaiting();
  }
}
