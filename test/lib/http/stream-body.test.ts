import http from 'node:http';
import net from 'node:net';
import t, { type Test } from 'tap';
import { HttpServer } from '../../../lib/http/server.js';
import { StreamBody, type OpenStream } from '../../../lib/http/stream-body.js';
import type { RequestFacts } from '../../../lib/metrics.js';
import { captureLog, route } from '../../support/http.js';

const TYPE = 'text/event-stream; charset=utf-8';

async function start(t: Test, options: { front?: boolean; requestTimeout?: number; headersTimeout?: number } = {}) {
  const log = captureLog();
  const requests: RequestFacts[] = [];
  const opened: OpenStream[] = [];
  const ended: OpenStream[] = [];
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: log.logger,
    onRequest: (facts) => requests.push(facts),
    ...options,
  });
  server.route(
    'events',
    route({
      path: '/api/stream/',
      name: 'test.stream',
      handler: () => ({
        body: new StreamBody(TYPE, (stream) => {
          opened.push(stream);
          stream.onEnd(() => ended.push(stream));
          stream.write('data: first\n\n');
        }),
        headers: { 'RateLimit-Remaining': '5' },
      }),
    }),
  );
  server.route(
    'events',
    route({
      path: '/api/broken/',
      name: 'test.broken',
      handler: () => ({
        body: new StreamBody(TYPE, () => {
          throw new Error('no stream today');
        }),
      }),
    }),
  );
  // A stream with a status that has no body (a plugin's mistake): what it writes must not reach the connection.
  server.route(
    'events',
    route({
      path: '/api/nobody/',
      name: 'test.nobody',
      handler: () => ({
        status: 204,
        body: new StreamBody(TYPE, (stream) => {
          stream.write(Buffer.from('data: nobody\n\n'));
          stream.write('data: nobody either\n\n');
          stream.end();
        }),
      }),
    }),
  );
  // Answers after `release` is called: a request pipelined behind it waits for its turn.
  let release: () => void = () => undefined;
  server.route(
    'events',
    route({
      path: '/api/slow/',
      name: 'test.slow',
      handler: () => new Promise((resolve) => (release = () => resolve({ body: { slow: true } }))),
    }),
  );
  const { url } = await server.listen();
  let closed = false;
  t.teardown(() => (closed ? undefined : server.close()));
  return {
    url,
    log,
    server,
    requests,
    opened,
    ended,
    release: () => release(),
    close: () => {
      closed = true;
      return server.close();
    },
  };
}

/** Open a stream; resolves with the response once its head is in, and gathers what comes. */
function open(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ response: http.IncomingMessage; text: () => string; request: http.ClientRequest; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      const ended = new Promise<void>((done) => response.on('close', () => done()));
      resolve({ response, text: () => text, request, ended });
    });
    request.on('error', reject);
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const front of [false, true]) {
  t.test(`a stream's head, then each write as it is made${front ? ', through the front' : ''}`, async (t) => {
    const { url, opened, ended, requests, log, close } = await start(t, { front });
    const client = await open(`${url}/api/stream/`, { 'Accept-Encoding': 'gzip' });
    const { headers, statusCode } = client.response;
    t.equal(statusCode, 200);
    t.equal(headers['content-type'], TYPE);
    t.equal(headers['cache-control'], 'no-store');
    t.equal(headers['x-accel-buffering'], 'no');
    t.equal(headers['api-version'], '1');
    t.equal(headers['ratelimit-remaining'], '5', "a handler's headers ride on the head");
    t.equal(headers.etag, undefined, 'a stream has no ETag');
    t.equal(headers['content-length'], undefined);
    t.equal(headers['content-encoding'], undefined, 'never compressed');
    await until(() => client.text() === 'data: first\n\n', 'the first write');
    opened[0]!.write('data: second\n\n');
    await until(() => client.text().endsWith('data: second\n\n'), 'the second write');
    t.equal(opened[0]!.ended, false);
    // The client leaves: the stream ends, and is logged with what it sent.
    client.request.destroy();
    await until(() => ended.length === 1, 'the end of the stream');
    t.equal(opened[0]!.ended, true);
    opened[0]!.write('data: too late\n\n');
    await until(() => requests.length === 1, 'the request to be counted');
    t.equal(requests[0]!.streamed, true, 'counted as a stream: kept out of the durations');
    if (!front) {
      const line = await log.waitForLine(/GET \/api\/stream\//);
      t.match(line, /bytes=27\b/, 'the access log counts what was sent');
    }
    await close();
  });
}

for (const front of [false, true]) {
  t.test(
    `the server ends open streams when it closes, and a HEAD gets the head alone${front ? ', through the front' : ''}`,
    async (t) => {
      const { url, opened, ended, close } = await start(t, { front });
      const head = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.request(`${url}/api/stream/`, { method: 'HEAD' }, resolve).on('error', reject).end(),
      );
      t.equal(head.headers['content-type'], TYPE);
      t.equal(opened.length, 0, 'nothing opened for a HEAD');
      const client = await open(`${url}/api/stream/`);
      await until(() => opened.length === 1, 'the stream to open');
      await close();
      await client.ended;
      t.equal(ended.length, 1, 'ended by the close');
      t.equal(client.text(), 'data: first\n\n', 'what was written reached the client before the end');
    },
  );
}

t.test('a stream whose open throws is logged and ended', async (t) => {
  const { url, log } = await start(t);
  const client = await open(`${url}/api/broken/`);
  await client.ended;
  t.equal(client.response.statusCode, 200, 'the head was out before the failure');
  await log.waitForLine(/its stream failed to open.*no stream today/);
});

t.test('abort drops the connection at once', async (t) => {
  const { url, opened, ended } = await start(t);
  const client = await open(`${url}/api/stream/`);
  await until(() => opened.length === 1, 'the stream to open');
  opened[0]!.abort();
  await client.ended;
  t.equal(ended.length, 1);
  t.equal(opened[0]!.ended, true);
});

t.test('a stream outlives the request timeouts: they are about the request, not the answer', async (t) => {
  const { url, opened, ended } = await start(t, { requestTimeout: 500, headersTimeout: 500 });
  const client = await open(`${url}/api/stream/`);
  await until(() => opened.length === 1, 'the stream to open');
  await new Promise((resolve) => setTimeout(resolve, 1600));
  t.equal(ended.length, 0, 'still open after three times the request timeout');
  opened[0]!.write('data: later\n\n');
  await until(() => client.text().endsWith('data: later\n\n'), 'a write after the timeouts');
  client.request.destroy();
});

// (Through the front, what the bot sent waits in the front, whose close gives its answers 10 s at most.)
for (const front of [false, true]) {
  t.test(`a client that stopped reading cannot hold the close${front ? ', through the front' : ''}`, async (t) => {
    const { url, opened, close } = await start(t, { front });
    const client = await open(`${url}/api/stream/`);
    client.response.pause();
    await until(() => opened.length === 1, 'the stream to open');
    const chunk = `data: ${'x'.repeat(64 * 1024)}\n\n`;
    // Far more than the sockets' buffers hold: the rest waits in the response.
    for (let index = 0; index < 400 && opened[0]!.buffered < 4 * 1024 * 1024; index++) {
      opened[0]!.write(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    t.ok(opened[0]!.buffered > 0, `${opened[0]!.buffered} bytes wait for the client`);
    const started = Date.now();
    await close();
    const took = Date.now() - started;
    t.ok(took < 4000, `closed in ${took} ms`);
    client.request.destroy();
  });
}

/** A raw connection to `url`'s server: what it sent so far, as text. */
async function connect(url: string): Promise<{ socket: net.Socket; text: () => string; closed: Promise<void> }> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, text: () => text, closed };
}

t.test(
  'one Buffer written to many streams reaches each whole, and an ended stream leaves its connection reusable',
  async (t) => {
    const { url, opened } = await start(t);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const clients = [
      await open(`${url}/api/stream/`),
      await open(`${url}/api/stream/`),
      await open(`${url}/api/stream/`),
    ];
    await until(() => opened.length === 3, 'the streams to open');
    // Written straight to each connection, framed as a chunk once for all three.
    const shared = Buffer.from(`data: ${'é'.repeat(3000)}\n\n`);
    for (const stream of opened) stream.write(shared);
    for (const stream of opened) stream.write(shared);
    const expected = `data: first\n\n${shared.toString('utf8')}${shared.toString('utf8')}`;
    await until(() => clients.every((client) => client.text() === expected), 'the shared writes at every client');
    for (const client of clients) client.request.destroy();

    // On a kept-alive connection: the stream's end closes its chunked body, and the next request is answered.
    const kept = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${url}/api/stream/`, { agent }, resolve).on('error', reject),
    );
    const port = kept.socket.localPort;
    let text = '';
    kept.setEncoding('utf8');
    kept.on('data', (chunk: string) => (text += chunk));
    await until(() => opened.length === 4, 'the kept-alive stream to open');
    opened[3]!.write(shared);
    opened[3]!.end();
    await new Promise((resolve) => kept.on('end', resolve));
    t.equal(text, `data: first\n\n${shared.toString('utf8')}`, 'the whole body, then its end');
    const next = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${url}/api/stream/`, { agent }, resolve).on('error', reject),
    );
    t.equal(next.statusCode, 200, 'the same connection answers the next request');
    t.equal(next.socket.localPort, port, 'on the connection the ended stream had');
    next.destroy();
  },
);

t.test('a stream answered 204 sends nothing after its head, and its connection answers the next request', async (t) => {
  const { url } = await start(t);
  const client = await connect(url);
  client.socket.write('GET /api/nobody/ HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await until(() => client.text().includes('\r\n\r\n'), 'the 204');
  client.socket.write('GET /api/stream/ HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await until(() => client.text().includes('data: first'), 'the next answer');
  const text = client.text();
  t.match(text, /^HTTP\/1\.1 204 /, 'the 204 first');
  t.notMatch(text, /nobody/, "nothing of the 204's writes");
  t.match(text.slice(text.indexOf('\r\n\r\n') + 4), /^HTTP\/1\.1 200 /, 'the next answer right after its head');
  client.socket.destroy();
});

t.test('an HTTP/1.0 client gets the stream unframed, ended by the close', async (t) => {
  const { url, opened } = await start(t);
  const client = await connect(url);
  client.socket.write('GET /api/stream/ HTTP/1.0\r\nHost: localhost\r\n\r\n');
  await until(() => opened.length === 1, 'the stream to open');
  opened[0]!.write(Buffer.from('data: second\n\n'));
  opened[0]!.end();
  await client.closed;
  const [head, body] = client.text().split('\r\n\r\n');
  t.notMatch(head!, /Transfer-Encoding/i, 'not chunked');
  t.equal(body, 'data: first\n\ndata: second\n\n', 'the events as written, nothing around them');
});

t.test('a stream pipelined behind another answer waits its turn, its writes in order', async (t) => {
  const { url, opened, release } = await start(t);
  const client = await connect(url);
  client.socket.write(
    'GET /api/slow/ HTTP/1.1\r\nHost: localhost\r\n\r\nGET /api/stream/ HTTP/1.1\r\nHost: localhost\r\n\r\n',
  );
  await until(() => opened.length === 1, 'the stream to open behind the slow answer');
  // Before its turn: held by the response, behind the answer in front.
  opened[0]!.write(Buffer.from('data: second\n\n'));
  t.ok(opened[0]!.buffered > 0, 'held while the answer in front is not out');
  release();
  await until(() => client.text().includes('second'), 'the stream after the slow answer');
  opened[0]!.write(Buffer.from('data: third\n\n'));
  await until(() => client.text().includes('third'), 'a write in its turn');
  const text = client.text();
  t.ok(text.indexOf('{"slow":true}') < text.indexOf('text/event-stream'), 'the answer in front first');
  const body = text.slice(text.indexOf('\r\n\r\n', text.indexOf('text/event-stream')) + 4);
  t.equal(
    body,
    'd\r\ndata: first\n\n\r\ne\r\ndata: second\n\n\r\nd\r\ndata: third\n\n\r\n',
    'each write a chunk, in order',
  );
  client.socket.destroy();
});

t.test('a reader that stopped reading is told when what waited has gone', async (t) => {
  const { url, opened } = await start(t);
  const client = await open(`${url}/api/stream/`);
  client.response.pause();
  await until(() => opened.length === 1, 'the stream to open');
  let drains = 0;
  opened[0]!.onDrain(() => drains++);
  const chunk = Buffer.from(`data: ${'x'.repeat(64 * 1024)}\n\n`);
  for (let index = 0; index < 200 && opened[0]!.buffered === 0; index++) {
    opened[0]!.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.ok(opened[0]!.buffered > 0, 'the connection is full');
  t.equal(drains, 0);
  client.response.resume();
  await until(() => drains > 0, 'the drain');
  t.equal(drains, 1, 'told once');
  t.equal(opened[0]!.buffered, 0);
  client.request.destroy();
});
