#!/usr/bin/env node
/**
 * A receiver for the bot's webhooks (docs/webhooks.md): it checks each request's Standard Webhooks signature and
 * timestamp, then prints its events, one JSON line each. Plain Node (20 or later), no dependencies.
 *
 *   WEBHOOK_SECRET=whsec_... node docs/examples/webhook-receiver.mjs
 *   WEBHOOK_SECRET=whsec_... PORT=9000 HOST=0.0.0.0 node docs/examples/webhook-receiver.mjs
 *
 * and in the bot's config, under plugins.events.webhooks:
 *
 *   { "name": "example", "url": "http://127.0.0.1:8787/", "secret": "whsec_..." }
 *
 * It answers 204 to a batch it took (the bot then sends the next one), 401 to a request whose signature or
 * timestamp is wrong, 400 to one without the webhook headers or whose body is not a batch. A batch it took before
 * (the same webhook-id: the bot sent it again because the answer was lost) is answered 204 and not printed again.
 */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { pathToFileURL } from 'node:url';

/** How far a request's webhook-timestamp may be from now: older ones may be replays. */
const TOLERANCE_SECONDS = 5 * 60;
/** A batch of 1,000 events is well under this. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** How many webhook-ids it remembers to recognise a batch sent again. */
const REMEMBERED_IDS = 10_000;

/**
 * Check a request: `headers` as Node gives them (lower-case names), `body` the exact text received (never
 * re-serialized JSON: the signature is over the bytes). Returns null when it is good, else why not.
 */
export function verify(secret, headers, body, nowSeconds = Math.floor(Date.now() / 1000)) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') {
    return 'missing webhook-id, webhook-timestamp or webhook-signature';
  }
  if (!/^\d+$/.test(timestamp)) return 'webhook-timestamp is not a number of seconds';
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) {
    return `webhook-timestamp is more than ${TOLERANCE_SECONDS} s from now`;
  }
  // The key is the bytes the secret's base64 stands for, after "whsec_".
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  // The header is a space-separated list (several during a change of secret); one matching "v1," entry is enough.
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) continue;
    const given = Buffer.from(signature, 'base64');
    // A comparison in constant time, so that the answer's timing tells nothing of the expected signature.
    if (given.length === expected.length && timingSafeEqual(given, expected)) return null;
  }
  return 'no signature matches';
}

/** The request's body as text, or null when it is bigger than MAX_BODY_BYTES. */
function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    request.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** A server that checks requests with `secret` and hands each new batch's events to `print`. */
export function receiver(secret, print = (line) => console.log(line), warn = (line) => console.error(line)) {
  const seen = new Set();
  return http.createServer(async (request, response) => {
    const answer = (status, why) => {
      if (why) warn(`refused (${status}): ${why}`);
      response.writeHead(status, why ? { 'Content-Type': 'text/plain; charset=utf-8' } : {}).end(why);
    };
    if (request.method !== 'POST') return answer(405, 'only POST');
    let body;
    try {
      body = await readBody(request);
    } catch {
      return; // The sender went away: there is nobody to answer.
    }
    if (body === null) return answer(413, 'the body is too big');
    const why = verify(secret, request.headers, body);
    if (why) return answer(why.startsWith('missing') ? 400 : 401, why);
    const id = request.headers['webhook-id'];
    if (seen.has(id)) return answer(204);
    let batch;
    try {
      batch = JSON.parse(body);
    } catch {
      return answer(400, 'the body is not JSON');
    }
    if (batch?.type !== 'irc.events' || !Array.isArray(batch.data?.events)) return answer(400, 'not a batch of events');
    seen.add(id);
    if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value);
    if (batch.data.dropped > 0)
      warn(`${batch.data.dropped} events were dropped before this batch (the bot's queue was full)`);
    for (const event of batch.data.events) print(JSON.stringify(event));
    answer(204);
  });
}

function main() {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret || !/^whsec_[A-Za-z0-9+/]+=*$/.test(secret)) {
    console.error('Set WEBHOOK_SECRET to the endpoint\'s secret ("whsec_" and base64), as in the bot\'s config.');
    process.exit(2);
  }
  const host = process.env.HOST ?? '127.0.0.1';
  const port = Number(process.env.PORT ?? 8787);
  const server = receiver(secret);
  server.listen(port, host, () => {
    const { port: listening } = server.address();
    console.log(`listening on http://${host.includes(':') ? `[${host}]` : host}:${listening}/`);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
