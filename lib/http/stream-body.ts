/**
 * A body written over time, such as Server-Sent Events (`text/event-stream`): a route's handler answers with
 * a {@link StreamBody}, and once the head is out the server hands its `open` an {@link OpenStream} to write
 * to until the stream ends. A stream is never kept, compressed, given an ETag or reused by the front; its
 * head says `Cache-Control: no-store` and `X-Accel-Buffering: no` (nginx then passes each write on at once).
 * The server ends every open stream when it closes, so that a close never waits on a client that keeps
 * reading.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What the handler of a stream writes to. */
export interface OpenStream {
  /**
   * Write `chunk` as it is (text as UTF-8). Nothing happens once the stream has ended. A chunk written to many
   * streams goes best as one Buffer, encoded once. Returns false, as Node's streams do, when the connection is
   * full: a writer with more to send should wait for {@link onDrain}; true when it may go on writing.
   */
  write(chunk: string | Buffer): boolean;
  /** Bytes written that the client has not taken yet: the stream's share of memory, bounded by its writer. */
  readonly buffered: number;
  /** Whether the stream has ended: by {@link end}, by the client leaving, or by the server closing. */
  readonly ended: boolean;
  /** End the stream after what was written. */
  end(): void;
  /**
   * Close the connection at once, dropping what the client has not taken yet (a client that stopped reading);
   * nothing happens once everything written has gone to the client's connection.
   */
  abort(): void;
  /** `listener` runs once when the stream ends, whoever ends it (at once, if it has). */
  onEnd(listener: () => void): void;
  /** `listener` runs each time what waited for the client has gone to its connection, after a write returned false. */
  onDrain(listener: () => void): void;
}

/** The body of an answer written over time; see the module's comment. */
export class StreamBody {
  /**
   * @param contentType the stream's `Content-Type`, e.g. `text/event-stream; charset=utf-8`
   * @param open called once the head is written, with the stream to write to
   */
  constructor(
    readonly contentType: string,
    readonly open: (stream: OpenStream) => void,
  ) {}
}

const CRLF = Buffer.from('\r\n');

/** Each Buffer written as an HTTP/1.1 chunk, framed once however many streams it goes to. */
const chunks = new WeakMap<Buffer, Buffer>();

/** `bytes` as one HTTP/1.1 chunk: its size in hex, CRLF, the bytes, CRLF (RFC 9112 §7.1); made once per Buffer. */
function chunkOf(bytes: Buffer): Buffer {
  let chunk = chunks.get(bytes);
  if (chunk === undefined) {
    chunk = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF]);
    chunks.set(bytes, chunk);
  }
  return chunk;
}

/**
 * An open stream over a response. Once the head is out and nothing of the response waits in Node's own buffer,
 * each write goes to the connection itself as one HTTP/1.1 chunk (a Buffer written to many streams is framed
 * once; a Buffer must not be changed once written): a write through the response costs twice the CPU, and a
 * thousand streams are written to about forty times a second each. Where the response still waits its turn (a
 * pipelined request behind another), holds something, or is not chunked (an HTTP/1.0 client, a status without a
 * body), the write goes through it, which keeps the order and Node's rules.
 */
export class ResponseStream implements OpenStream {
  private endedValue = false;
  private readonly listeners: (() => void)[] = [];
  private readonly drainListeners: (() => void)[] = [];
  /** A write returned false, and the drain listeners have not been told since. */
  private needDrain = false;
  /** The connection whose `drain` the stream waits for, if it does. */
  private waitingOn: Socket | undefined;
  private readonly socketDrained = (): void => {
    this.waitingOn = undefined;
    this.drained();
  };

  constructor(
    private readonly response: ServerResponse,
    /** Counts the bytes written, for the access log. */
    private readonly sent: (bytes: number) => void,
    /** Told of a listener of the stream's end that threw. */
    private readonly failed: (error: unknown) => void,
  ) {
    response.once('close', () => this.finish());
    response.on('drain', () => this.drained());
  }

  get buffered(): number {
    return this.response.writableLength;
  }

  get ended(): boolean {
    return this.endedValue;
  }

  write(chunk: string | Buffer): boolean {
    if (this.endedValue || this.response.destroyed) return false;
    const socket = this.direct();
    let written: boolean;
    if (typeof chunk === 'string') {
      const length = Buffer.byteLength(chunk);
      if (length === 0) return true;
      this.sent(length);
      // Text is written to one stream (shared text comes as a Buffer): framed as it is encoded, not kept.
      written = socket ? socket.write(`${length.toString(16)}\r\n${chunk}\r\n`) : this.response.write(chunk);
    } else {
      if (chunk.length === 0) return true;
      this.sent(chunk.length);
      written = socket ? socket.write(chunkOf(chunk)) : this.response.write(chunk);
    }
    if (!written) {
      this.needDrain = true;
      this.awaitDrain();
    }
    return written;
  }

  /**
   * The connection, where a write may go to it straight: the head is out (`open` in respond.ts flushes it before
   * the stream is handed over), the body is chunked, the connection is this response's (a pipelined response has
   * none until its turn) and takes writes, and nothing of the response waits in front of it.
   */
  private direct(): Socket | undefined {
    const { response } = this;
    const socket = response.socket as Socket | null;
    if (!socket || !response.headersSent || !response.chunkedEncoding || !socket.writable) return undefined;
    return response.writableLength === socket.writableLength ? socket : undefined;
  }

  /** Wait for the connection's drain where it owes one; the response's own drain comes by its listener. */
  private awaitDrain(): void {
    const socket = this.response.socket as Socket | null;
    if (this.waitingOn !== undefined || !socket || !socket.writableNeedDrain) return;
    this.waitingOn = socket;
    socket.once('drain', this.socketDrained);
  }

  end(): void {
    if (this.endedValue) return;
    if (!this.response.destroyed) this.response.end();
    this.finish();
  }

  abort(): void {
    // Nothing to drop once the client has taken everything.
    if (!this.response.writableFinished) this.response.destroy();
    this.finish();
  }

  onDrain(listener: () => void): void {
    this.drainListeners.push(listener);
  }

  onEnd(listener: () => void): void {
    if (this.endedValue) listener();
    else this.listeners.push(listener);
  }

  /**
   * A drain of the response or of its connection. The listeners are told once per write that returned false, and
   * only once neither owes a drain any more (a write would return true): the response's drain may come while the
   * connection still holds more than it takes, and both may come for one wait.
   */
  private drained(): void {
    if (this.endedValue || !this.needDrain) return;
    const socket = this.response.socket as Socket | null;
    if (this.response.writableNeedDrain || socket?.writableNeedDrain) {
      this.awaitDrain();
      return;
    }
    this.needDrain = false;
    for (const listener of this.drainListeners) {
      try {
        listener();
      } catch (error) {
        this.failed(error);
      }
    }
  }

  private finish(): void {
    if (this.endedValue) return;
    this.endedValue = true;
    // A kept-alive connection goes on to other answers: its drain is no longer this stream's.
    this.waitingOn?.off('drain', this.socketDrained);
    this.waitingOn = undefined;
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch (error) {
        this.failed(error);
      }
    }
  }
}
