/**
 * The receiver example of docs/webhooks.md (docs/examples/webhook-receiver.mjs), run as its readers run it: it
 * takes the bot's batches (the first after a retry, since it was not listening yet) and prints their events, and
 * refuses a request whose body, timestamp or signature is not what the secret signed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { PluginDefinition } from '../../../lib/plugin.js';
import events from '../../../plugins/events/index.js';
import stats from '../../../plugins/stats/index.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import { startHarness } from '../../../testing/harness.js';

const SECRET = `whsec_${Buffer.from('the example receiver checks this').toString('base64')}`;

/** The repository root, found from this file whether it runs from test/ or dist/test/. */
function projectRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(directory, 'package.json'))) directory = dirname(directory);
  return directory;
}

/** The example, running on `port` (0: any), and what it printed. */
class Example {
  readonly out: string[] = [];
  readonly err: string[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(
    t: Test,
    port: number,
    private readonly child: ChildProcess = spawn(
      process.execPath,
      [join(projectRoot(), 'docs/examples/webhook-receiver.mjs')],
      { env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: String(port), HOST: '127.0.0.1' } },
    ),
  ) {
    const lines = (into: string[]) => (chunk: Buffer) => {
      into.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      for (const waiter of [...this.waiters]) waiter();
    };
    this.child.stdout!.on('data', lines(this.out));
    this.child.stderr!.on('data', lines(this.err));
    t.teardown(() => {
      this.child.kill();
    });
  }

  /** Resolves once `check` holds, asked at every line it prints. */
  until(check: () => boolean, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`waited 10 s for the example to print ${what}; it printed ${JSON.stringify(this.out)}`));
      }, 10_000);
      const waiter = (): void => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      };
      this.waiters.add(waiter);
    });
  }

  async url(): Promise<string> {
    await this.until(() => this.out.some((line) => line.startsWith('listening on ')), 'that it listens');
    return this.out.find((line) => line.startsWith('listening on '))!.slice('listening on '.length);
  }

  /** The events it printed. */
  events(): Record<string, unknown>[] {
    return this.out.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/** A POST of `body` to `url`, signed with `SECRET` at `timestamp` unless `headers` say otherwise; its status. */
function post(url: string, body: string, id: string, timestamp: number, headers: Record<string, string> = {}) {
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  return new Promise<number>((resolve, reject) => {
    const request = http.request(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
        ...headers,
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.end(body);
  });
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test("the example takes the bot's batches, the first after a retry, and prints their events", async (t) => {
  const port = await freePort();
  const bot = await startHarness(t, {
    registry: [stats, events] as PluginDefinition<never>[],
    plugins: {
      stats: {},
      events: {
        webhooks: [{ name: 'example', url: `http://127.0.0.1:${port}/`, secret: SECRET, types: ['join'] }],
      },
    },
    isupport: 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst WHOX',
    network: fakeNetwork({ users: [{ nick: 'alice', server: 'hub.test.net' }] }),
    operator: true,
    version: 'InspIRCd-3',
  });
  await bot.synced();
  bot.irc.receive(
    ':DataBot!databot@bot.host JOIN #room * :Data Bot',
    ':hub.test.net 353 DataBot = #room :DataBot @op',
    ':hub.test.net 366 DataBot #room :End of /NAMES list.',
    ':hub.test.net 324 DataBot #room +nt',
  );
  bot.irc.receive(':carol!ca@home.example JOIN #room carolacct :Carol C');
  bot.irc.receive(':dave!da@home.example JOIN #room daveacct :Dave D');
  await bot.clock.advance(1000);
  const failed = (): string[] => bot.logs.filter((line) => line.includes('webhook delivery failed'));
  await bot.until(() => failed().length === 1, 'the failure: nothing listens yet');
  t.match(failed()[0], /ECONNREFUSED/);

  const example = new Example(t, port);
  t.equal(await example.url(), `http://127.0.0.1:${port}/`);
  await bot.clock.advance(1000);
  await example.until(() => example.events().length === 2, 'two events');
  t.match(example.events(), [
    { type: 'join', channel: '#room', nick: 'carol' },
    { type: 'join', channel: '#room', nick: 'dave' },
  ]);
  await bot.until(
    () => bot.logs.some((line) => /INFO .*webhook delivered .*attempts=2/.test(line)),
    'the delivery, on the second attempt',
  );
  t.same(example.err, [], 'nothing refused');
});

t.test('the example refuses a changed body, an old timestamp, a wrong signature and missing headers', async (t) => {
  const example = new Example(t, 0);
  const url = await example.url();
  const now = Math.floor(Date.now() / 1000);
  const batch = (nick: string) =>
    JSON.stringify({
      type: 'irc.events',
      timestamp: new Date().toISOString(),
      data: { dropped: 0, events: [{ id: 'r-1', type: 'join', time: new Date().toISOString(), nick }] },
    });
  t.equal(await post(url, batch('carol'), 'msg_good', now), 204, 'signed: taken');
  await example.until(() => example.events().length === 1, 'the event');
  t.equal(await post(url, batch('carol'), 'msg_good', now), 204, 'the same webhook-id again: taken');

  const signed = batch('dave');
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const signature = `v1,${createHmac('sha256', key).update(`msg_changed.${now}.${signed}`).digest('base64')}`;
  t.equal(
    await post(url, signed.replace('dave', 'mallory'), 'msg_changed', now, { 'webhook-signature': signature }),
    401,
    'a body changed after it was signed: refused',
  );
  t.equal(await post(url, batch('erin'), 'msg_old', now - 600), 401, 'signed 10 minutes ago: refused');
  t.equal(await post(url, batch('erin'), 'msg_future', now + 600), 401, 'signed 10 minutes ahead: refused');
  t.equal(
    await post(url, batch('frank'), 'msg_forged', now, {
      'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
    }),
    401,
    'a signature of another key: refused',
  );
  t.equal(
    await post(url, batch('gina'), 'msg_bare', now, { 'webhook-signature': '' }),
    401,
    'an empty signature: refused',
  );
  const bare = await new Promise<number>((resolve, reject) => {
    const request = http.request(url, { method: 'POST' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end(batch('hank'));
  });
  t.equal(bare, 400, 'no webhook headers: refused');
  t.equal(await post(url, batch('ivan'), 'msg_last', now), 204);
  await example.until(() => example.events().length === 2, 'the last event');
  t.same(
    example.events().map((event) => event.nick),
    ['carol', 'ivan'],
    'printed: each good batch once, nothing of the refused ones',
  );
  t.equal(example.err.filter((line) => line.startsWith('refused (401)')).length, 5);
});
