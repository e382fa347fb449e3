import http from 'node:http';
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
