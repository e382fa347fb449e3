/**
 * Netsplits on the real test network, as the bot (an operator on the hub) sees
 * them: a SQUIT of the leaf and of the services server, and their return. The
 * split-off server is stopped (SIGSTOP) before its SQUIT, so that it cannot link
 * back on its own while the test looks; it links again once it runs (SIGCONT).
 * The refresh is a minute, so only what the bot sees as it happens can make
 * the times asked here.
 */
import diagnostics from 'node:diagnostics_channel';
import type net from 'node:net';
import t from 'tap';
import { startCrowd, type Crowd } from '../../scripts/crowd.js';
import { eventually, startBot, type TestBot } from '../support/bot.js';
import { openEventStream, type StreamEvent } from '../support/event-stream.js';
import { IrcClient, type IrcMessage } from '../support/irc-client.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { testGuardPlugin } from '../plugins/nickserv/fixtures/test-guard.js';

const tag = Math.random().toString(36).slice(2, 6);
const account = { account: `spl${tag}`, password: `split-${tag}-Correct-Horse` };

let network: TestNetwork;
let crowd: Crowd | undefined;
let bot: TestBot;
/** No operator: it sees a split only through the netsplit QUITs in its channels. */
let watcher: TestBot;
let oracle: IrcClient;
const clients: IrcClient[] = [];
const stopped = new Set<number>();

async function client(nick: string, port: number): Promise<IrcClient> {
  const irc = new IrcClient({ port, nick });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

function pause(name: 'leaf' | 'atheme'): void {
  const pid = network.pids()[name]!;
  process.kill(pid, 'SIGSTOP');
  stopped.add(pid);
}

function resume(name: 'leaf' | 'atheme'): void {
  const pid = network.pids()[name]!;
  process.kill(pid, 'SIGCONT');
  stopped.delete(pid);
}

interface Truth {
  stats: { users: number; invisible: number; channels: number; operators: number; servers: number };
  servers: string[];
  /** Users the hub's WHO shows, services' pseudo-users included. */
  who: number;
}

/** The network as the hub tells an operator: LUSERS, LINKS and WHO (every user, invisible ones too). */
async function truth(): Promise<Truth> {
  const lusers = await oracle.request('LUSERS', '266');
  const text = (code: string) => lusers.find((line) => line.command === code)?.params.at(-1) ?? '';
  const param = (code: string) => Number(lusers.find((line) => line.command === code)?.params[1] ?? 0);
  const counts = /There are (\d+) users and (\d+) invisible on (\d+) servers/.exec(text('251'))!;
  const global = /Current global users: (\d+)/.exec(text('266'))!;
  const links = await oracle.request('LINKS', '365');
  const who = await oracle.request('WHO *', '315', 20000);
  return {
    stats: {
      users: Number(global[1]),
      invisible: Number(counts[2]),
      channels: param('254'),
      operators: param('252'),
      servers: Number(counts[3]),
    },
    servers: links
      .filter((line: IrcMessage) => line.command === '364')
      .map((line) => line.params[1]!)
      .sort(),
    who: who.filter((line) => line.command === '352').length,
  };
}

/** What the API says of the same. */
async function seen(): Promise<Truth> {
  const stats = (await (await fetch(`${bot.url}/api/irc/stats/`)).json()) as Truth['stats'];
  const servers = (await (await fetch(`${bot.url}/api/irc/servers/?limit=100`)).json()) as {
    results: { name: string }[];
  };
  return {
    stats: {
      users: stats.users,
      invisible: stats.invisible,
      channels: stats.channels,
      operators: stats.operators,
      servers: stats.servers,
    },
    servers: servers.results.map((server) => server.name).sort(),
    who: bot.host.model.users.size,
  };
}

/**
 * Milliseconds from `since` until the network is as `expected` says and the API equals it, or the
 * deadline passes; the last comparison.
 */
async function timeToTruth(
  since: number,
  deadlineMs: number,
  expected: (network: Truth) => boolean = () => true,
): Promise<{ ms: number; api: Truth; network: Truth }> {
  let api: Truth | undefined;
  let net: Truth | undefined;
  await eventually(
    async () => {
      net = await truth();
      api = await seen();
      return expected(net) && JSON.stringify(api) === JSON.stringify(net);
    },
    'the API to equal the network',
    deadlineMs,
  ).catch(() => undefined);
  return { ms: Date.now() - since, api: api!, network: net! };
}

/** Resolves when a SASL connection of the bot's checker has its `sasl` capability (and so asks services to start). */
function saslStarted(): Promise<void> {
  return new Promise((resolve) => {
    const onSocket = ({ socket }: { socket: net.Socket }): void => {
      socket.on('data', (chunk: string | Buffer) => {
        if (!/ CAP \S+ ACK :sasl/.test(chunk.toString())) return;
        diagnostics.unsubscribe('net.client.socket', onSocket as (message: unknown) => void);
        resolve();
      });
    };
    diagnostics.subscribe('net.client.socket', onSocket as (message: unknown) => void);
  });
}

async function check(password: string): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${bot.url}/api/irc/check-credentials/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Token splits' },
    signal: AbortSignal.timeout(20000),
    body: JSON.stringify({ nick: account.account, password }),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    ms: Date.now() - started,
  };
}

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, account);
  crowd = await startCrowd({
    host: network.host,
    ports: [network.hubPort, network.leafPort],
    clients: 40,
    channels: ['#split0', '#split1', '#split2'],
    perClient: 1,
    chatIntervalMs: 0,
    connectGapMs: 5,
  });
  // Invisible users in no channel on the leaf: only WHO as an operator shows them, and no QUIT of theirs
  // reaches the bot when they split.
  for (let i = 0; i < 3; i++) {
    const loner = await client(`loner${i}${tag}`, network.leafPort);
    loner.send(`MODE ${loner.nick} +i`);
  }
  oracle = await client(`oracle${tag}`, network.hubPort);
  await oracle.request(`OPER ${network.operName} ${network.operPass}`, '381');
  // The watcher first: the bot's first sync counts it.
  watcher = await startBot(network, {
    nick: `watch${tag}`,
    oper: false,
    plugins: { stats: { refresh_seconds: 60, latency_seconds: 60, join: ['#split0', '#split1', '#split2'] } },
  });
  bot = await startBot(network, {
    nick: `split${tag}`,
    extraPlugins: [testGuardPlugin],
    plugins: {
      stats: { refresh_seconds: 60, latency_seconds: 60 },
      api: {},
      testguard: {},
      nickserv: {},
      events: {},
    },
  });
  await eventually(() => bot.host.model.ready && watcher.host.model.ready, 'the first syncs', 30000);
  await eventually(
    () => ['#split0', '#split1', '#split2'].every((name) => watcher.host.model.channels.get(name)?.joined),
    'the watcher in the crowd channels',
    30000,
  );
  const first = await timeToTruth(Date.now(), 20000);
  if (JSON.stringify(first.api) !== JSON.stringify(first.network)) {
    throw new Error(`the API never equalled the network: ${JSON.stringify(first)}`);
  }
});

t.teardown(async () => {
  for (const pid of stopped) process.kill(pid, 'SIGCONT');
  for (const irc of clients) irc.destroy();
  await crowd?.stop();
  await bot?.stop();
  await watcher?.stop();
  await network?.stop();
});

t.test('SQUIT of the leaf: the API equals LUSERS, LINKS and WHO within 3 s; after CONNECT within 5 s', async (t) => {
  const before = await truth();
  t.ok(before.servers.includes('leaf.test.net'), 'the leaf is linked');
  const events = await openEventStream(`${bot.url}/api/irc/events/?types=server_split,server_linked`);
  const about = (type: string) => (event: StreamEvent) => event.event === type && event.data.server === 'leaf.test.net';
  pause('leaf');
  const split = Date.now();
  oracle.send('SQUIT leaf.test.net :split test');
  const afterSplit = await timeToTruth(split, 3000, (network) => !network.servers.includes('leaf.test.net'));
  t.same(afterSplit.api, afterSplit.network, `after the split, in ${afterSplit.ms} ms`);
  t.ok(afterSplit.ms <= 3000, `within 3 s (${afterSplit.ms} ms)`);
  t.notOk(afterSplit.network.servers.includes('leaf.test.net'), 'the leaf was gone meanwhile');
  t.ok(afterSplit.network.who < before.who - 20, `the leaf took its users (${before.who} → ${afterSplit.network.who})`);
  await events.next(about('server_split'), 'the split in the event stream', 3000);
  const watched = watcher.host.model;
  await eventually(
    () =>
      !watched.servers.get('leaf.test.net') &&
      ![...watched.users.all()].some((user) => user.server === 'leaf.test.net'),
    'the watcher to drop the leaf',
    Math.max(1, 3000 - (Date.now() - split)),
  ).catch(() => undefined);
  t.notOk(watched.servers.get('leaf.test.net'), 'a bot that is no operator saw the split through its channels');
  t.same(
    [...watched.users.all()].filter((user) => user.server === 'leaf.test.net').map((user) => user.nick),
    [],
    'and dropped every user on the leaf, within 3 s of the SQUIT',
  );

  resume('leaf');
  const linked = Date.now();
  oracle.send('CONNECT leaf.test.net');
  // The link and the leaf's burst take a moment: the network must be whole again, and the API equal to it.
  const afterLink = await timeToTruth(linked, 5000, (network) => network.who === before.who);
  t.same(afterLink.api, afterLink.network, `after the link, in ${afterLink.ms} ms`);
  t.ok(afterLink.ms <= 5000, `within 5 s (${afterLink.ms} ms)`);
  t.equal(afterLink.network.who, before.who, 'every user is back');
  const link = await events.next(about('server_linked'), 'the link in the event stream', 3000);
  t.equal(link.data.uplink, 'hub.test.net', 'linked to the hub');
  t.same(
    events.events.filter((event) => event.event !== 'hello').map((event) => event.event),
    ['server_split', 'server_linked'],
    'a split, then a link, in order',
  );
  events.close();
});

t.test('services split off: a credential check answers 503 within 1 s, also one already running', async (t) => {
  t.match(await check(account.password), { status: 200, body: { valid: true } }, 'valid while services are linked');
  pause('atheme');
  // Services no longer answer, but are linked: this check waits for them once it starts SASL.
  const waiting = saslStarted();
  const running = check(account.password);
  await waiting;
  const split = Date.now();
  oracle.send('SQUIT services.test.net :split test');
  const answered = await running;
  const runningMs = Date.now() - split;
  t.equal(answered.status, 503, 'the running check is unavailable');
  t.match(answered.body, { error: { code: 'unavailable', message: /services\.test\.net split/ } });
  t.ok(runningMs <= 1000, `it answered ${runningMs} ms after the split`);

  const next = await check(account.password);
  t.equal(next.status, 503, 'a new check is unavailable');
  t.match(next.body, { error: { message: /services server services\.test\.net is split from the network/ } });
  t.ok(next.ms <= 1000, `at once (${next.ms} ms)`);
  const counts = await timeToTruth(split, 3000);
  t.same(counts.api, counts.network, `the counts equal the network without services, in ${counts.ms} ms`);

  resume('atheme');
  let back = next;
  await eventually(
    async () => {
      back = await check(account.password);
      return back.status === 200;
    },
    'checks to work again',
    30000,
  ).catch(() => undefined);
  t.match(back, { status: 200, body: { valid: true } }, 'valid again once services linked back');
});
