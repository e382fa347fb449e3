/**
 * A body written over time, such as Server-Sent Events (`text/event-stream`): a route's handler answers with
 * a {@link StreamBody}, and once the head is out the server hands its `open` an {@link OpenStream} to write
 * to until the stream ends. A stream is never kept, compressed, given an ETag or reused by the front; its
 * head says `Cache-Control: no-store` and `X-Accel-Buffering: no` (nginx then passes each write on at once).
 * The server ends every open stream when it closes, so that a close never waits on a client that keeps
 * reading.
 */
import type { ServerResponse } from 'node:http';

/** What the handler of a stream writes to. */
export interface OpenStream {
  /**
   * Write `chunk` as it is (text as UTF-8). Nothing happens once the stream has ended. A chunk written to many
   * streams goes best as one Buffer, encoded once.
   */
  write(chunk: string | Buffer): void;
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
  /** `listener` runs each time what waited for the client has gone to its connection (Node's `drain`). */
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

/** An open stream over a response. */
export class ResponseStream implements OpenStream {
  private endedValue = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly response: ServerResponse,
    /** Counts the bytes written, for the access log. */
    private readonly sent: (bytes: number) => void,
    /** Told of a listener of the stream's end that threw. */
    private readonly failed: (error: unknown) => void,
  ) {
    response.once('close', () => this.finish());
  }

  get buffered(): number {
    return this.response.writableLength;
  }

  get ended(): boolean {
    return this.endedValue;
  }

  write(chunk: string | Buffer): void {
    if (this.endedValue || this.response.destroyed) return;
    this.sent(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
    this.response.write(chunk);
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
    this.response.on('drain', () => {
      if (this.endedValue) return;
      try {
        listener();
      } catch (error) {
        this.failed(error);
      }
    });
  }

  onEnd(listener: () => void): void {
    if (this.endedValue) listener();
    else this.listeners.push(listener);
  }

  private finish(): void {
    if (this.endedValue) return;
    this.endedValue = true;
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch (error) {
        this.failed(error);
      }
    }
  }
}
