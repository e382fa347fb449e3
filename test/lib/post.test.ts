/** One POST to a configured URL (lib/post.ts): its answer, and each way it fails without one. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { postOnce, type PostOptions } from '../../lib/post.js';

class Refused extends Error {}

async function server(t: Test, handler: http.RequestListener): Promise<URL> {
  const listening = http.createServer(handler);
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    listening.closeAllConnections();
    listening.close();
  });
  return new URL(`http://user:secret@127.0.0.1:${(listening.address() as AddressInfo).port}/hook`);
}

function options(url: URL, more: Partial<PostOptions> = {}): PostOptions {
  return {
    url,
    headers: { 'Content-Type': 'text/plain' },
    body: Buffer.from('hello'),
    timeoutMs: 2000,
    signal: new AbortController().signal,
    reasons: {
      timedOut: 'timed out',
      aborted: () => 'aborted',
      unreachable: (error) => `unreachable: ${error.message}`,
    },
    error: (reason) => new Refused(reason),
    ...more,
  };
}

const readText = (response: http.IncomingMessage, settle: { resolve(value: string): void }) => {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('end', () => settle.resolve(Buffer.concat(chunks).toString('utf8')));
};

t.test('the body goes with its length, Basic authentication from the URL, a connection of its own', async (t) => {
  let seen: http.IncomingHttpHeaders | undefined;
  let body = '';
  const url = await server(t, (request, response) => {
    seen = request.headers;
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => response.end('thanks'));
  });
  t.equal(await postOnce(options(url), readText), 'thanks');
  t.equal(body, 'hello');
  t.equal(seen?.['content-length'], '5');
  t.equal(seen?.connection, 'close');
  t.equal(seen?.authorization, `Basic ${Buffer.from('user:secret').toString('base64')}`);
});

t.test('no answer in time, an abort, a refused connection, a header Node will not send: the error given', async (t) => {
  const silent = await server(t, () => undefined);
  await t.rejects(postOnce(options(silent, { timeoutMs: 100 }), readText), new Refused('timed out'));

  const controller = new AbortController();
  const aborted = postOnce(options(silent, { signal: controller.signal }), readText);
  controller.abort();
  await t.rejects(aborted, new Refused('aborted'));
  const already = new AbortController();
  already.abort();
  await t.rejects(postOnce(options(silent, { signal: already.signal }), readText), new Refused('aborted'));

  const closed = new URL(silent);
  closed.port = '1';
  await t.rejects(postOnce(options(closed), readText), { message: /^unreachable: connect ECONNREFUSED/ });

  const refused = postOnce(options(silent, { headers: { 'X-Bad': 'a\r\nb' } }), readText);
  await t.rejects(refused, { constructor: Refused, message: /^unreachable: Invalid character in header/ });
});

t.test('the answer is read by the caller, who may fail it', async (t) => {
  const url = await server(t, (_request, response) => {
    response.statusCode = 503;
    response.end('busy');
  });
  const failed = postOnce<string>(options(url), (response, settle) => {
    response.resume();
    settle.fail(`HTTP ${response.statusCode}`);
  });
  await t.rejects(failed, new Refused('HTTP 503'));
});
