/**
 * The control of the events bench (bench/events.ts): node:http alone, in a process of its own, holding the same
 * number of `text/event-stream` answers open as the bot did and writing to each as often, and as much each time,
 * as the bot's streams were written to during the churn. Its CPU is what those writes cost on this machine
 * whatever the server (the floor under what the bot's streams can cost).
 */
import http from 'node:http';

export type RawWriterRequest =
  | { kind: 'serve' }
  /** Write `bytes` to every open answer `rate` times a second for `seconds`. */
  | { kind: 'write'; rate: number; bytes: number; seconds: number };

export type RawWriterAnswer = { kind: 'serving'; url: string } | { kind: 'written'; writes: number };

const open = new Set<http.ServerResponse>();

function serve(): Promise<string> {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store' });
    response.write(`event: hello\ndata: {}\n\n`);
    open.add(response);
    response.once('close', () => open.delete(response));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`));
  });
}

function write(rate: number, bytes: number, seconds: number): Promise<number> {
  // A frame of the size the bot wrote: what the readers' process reads is the same bytes a second.
  const text = `id: 0\nevent: part\ndata: ${'x'.repeat(Math.max(1, bytes - 27))}\n\n`;
  const gapMs = 1000 / rate;
  const started = performance.now();
  let writes = 0;
  return new Promise((resolve) => {
    const tick = (round: number): void => {
      for (const response of open) {
        response.write(text);
        writes++;
      }
      const next = started + (round + 1) * gapMs;
      if (next - started >= seconds * 1000) resolve(writes);
      else setTimeout(() => tick(round + 1), Math.max(0, next - performance.now()));
    };
    tick(0);
  });
}

process.on('message', (request: RawWriterRequest) => {
  if (request.kind === 'serve') {
    void serve().then((url) => process.send!({ kind: 'serving', url } satisfies RawWriterAnswer));
  } else {
    void write(request.rate, request.bytes, request.seconds).then((writes) =>
      process.send!({ kind: 'written', writes } satisfies RawWriterAnswer),
    );
  }
});
// The bench is gone: so is the control.
process.on('disconnect', () => process.exit(0));
