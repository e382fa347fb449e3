/**
 * The control beside the bot in the scale bench's HTTP load: node:http alone, in a process of its own at the
 * bot's priority, answering each path under test with the bytes the bot answered it with (captured once before
 * the load). Loaded at the same rate at the same moments, it shows how much of an answer's time on this
 * machine is the machine's (a process waiting for one of the cores the network under test keeps busy),
 * whatever the server does.
 */
import http from 'node:http';

/** One captured answer: what the raw server sends for its path. */
export interface RawAnswer {
  path: string;
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

export type RawServerMessage = { kind: 'answers'; answers: RawAnswer[] };

process.once('message', (message: RawServerMessage) => {
  const answers = new Map(
    message.answers.map((answer) => [
      answer.path,
      { status: answer.status, headers: answer.headers, body: Buffer.from(answer.body, 'base64') },
    ]),
  );
  const server = http.createServer((request, response) => {
    const answer = answers.get(request.url ?? '');
    if (!answer) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(answer.status, { ...answer.headers, 'content-length': answer.body.length });
    response.end(answer.body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  });
});
// The bench is gone: so is the control.
process.on('disconnect', () => process.exit(0));
