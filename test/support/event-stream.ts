/**
 * A Server-Sent Events reader for tests: opens `GET /api/irc/events/` over real HTTP, parses each frame as the
 * EventSource API would (id, event, data, retry; comments kept apart), and lets a test wait for the frame it
 * expects.
 */
import http from 'node:http';

export interface StreamEvent {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
}

export interface EventStreamReader {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Every event so far, in order. */
  events: StreamEvent[];
  /** Comment lines so far (heartbeats). */
  comments: string[];
  /** Every byte of the body so far, as text. */
  text(): string;
  /** The body of a refusal (a status other than 200), parsed. */
  refusal: unknown;
  /** The first event from index `from` on that `match` accepts; waits for it. */
  next(match: (event: StreamEvent) => boolean, what: string, timeoutMs?: number, from?: number): Promise<StreamEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Stop reading and close the connection. */
  close(): void;
  /** Stop reading without closing (the socket's buffers fill up): a client that fell behind. */
  pause(): void;
  /** Read again after {@link pause}. */
  resume(): void;
}

/** Open the stream at `url` (the whole URL, query included) with `headers`. */
export function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (response) => {
      response.setEncoding('utf8');
      const events: StreamEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let all = '';
      let pending = '';
      let refusalText = '';
      const ended = new Promise<void>((done) => response.on('close', () => done()));
      const reader: EventStreamReader = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events,
        comments,
        text: () => all,
        get refusal() {
          return refusalText === '' ? undefined : (JSON.parse(refusalText) as unknown);
        },
        next(match, what, timeoutMs = 10000, from = 0) {
          return new Promise((found, failed) => {
            const look = (): boolean => {
              const event = events.slice(from).find(match);
              if (!event) return false;
              clearTimeout(timer);
              waiters.delete(check);
              found(event);
              return true;
            };
            const check = () => void look();
            const timer = setTimeout(() => {
              waiters.delete(check);
              failed(
                new Error(
                  `no event ${what} within ${timeoutMs} ms; had: ${events.map((event) => `${event.event} ${JSON.stringify(event.data)}`).join(' | ')}`,
                ),
              );
            }, timeoutMs);
            if (!look()) waiters.add(check);
          });
        },
        ended,
        close: () => request.destroy(),
        pause: () => response.pause(),
        resume: () => response.resume(),
      };
      response.on('data', (chunk: string) => {
        if (reader.status !== 200) {
          refusalText += chunk;
          return;
        }
        all += chunk;
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n\n')) !== -1) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) events.push({ id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
        }
        for (const waiter of [...waiters]) waiter();
      });
      resolve(reader);
    });
    request.on('error', reject);
  });
}
