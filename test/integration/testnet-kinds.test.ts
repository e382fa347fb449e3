import t from 'tap';
import { IrcClient } from '../support/irc-client.js';
import {
  isAlive,
  missingSources,
  NETWORK_KINDS,
  registerAccount,
  SOURCE_KINDS,
  startTestNetwork,
  type NetworkKind,
  type TestNetwork,
} from '../support/testnet.js';

// Every kind of test network the kit starts, side by side on free ports: each one links its two
// IRC servers and services (where it has them), takes an account registration from the leaf, opers its oper
// block, restarts single daemons and stops without leftovers. The kinds built from source are skipped, each with
// one line, where their archives are missing.

/** The servers LINKS shows on a network of `kind`. */
function wantServers(network: TestNetwork): string[] {
  return ['hub.test.net', 'leaf.test.net', ...(network.services === null ? [] : ['services.test.net'])];
}

async function connect(port: number, nick: string): Promise<IrcClient> {
  const client = new IrcClient({ port, nick });
  await client.connect();
  const result = await client.register();
  if (!result.ok) throw new Error(`${nick} could not register on port ${port}: ${result.last.raw}`);
  return client;
}

/** LINKS from a new client; as an operator on ircu, which shows LINKS to operators only (head-in-sand). */
async function links(network: TestNetwork, port: number, nick: string): Promise<string[]> {
  const client = await connect(port, nick);
  try {
    if (network.ircd === 'ircu') await client.request(`OPER ${network.operName} ${network.operPass}`, '381');
    const replies = await client.request('LINKS', '365');
    return replies
      .filter((message) => message.command === '364')
      .map((message) => message.params[1] ?? '')
      .sort();
  } finally {
    await client.quit();
  }
}

/** What one kind's network did; asserted by the kind's own test. */
interface Observed {
  network: TestNetwork;
  pidNames: string[];
  fromHub: string[];
  fromLeaf: string[];
  operReply: string | undefined;
  servicesPids: [number | undefined, number | undefined];
  leafPids: [number | undefined, number | undefined];
  afterRestart: string[];
  survivors: number[];
  timings: Record<string, number>;
}

/** Runs the whole scenario on one kind; the kinds run side by side, so the file takes as long as the slowest. */
async function exercise(kind: NetworkKind): Promise<Observed> {
  const timings: Record<string, number> = {};
  let last = Date.now();
  const lap = (name: string): void => {
    timings[name] = Date.now() - last;
    last = Date.now();
  };
  const network = await startTestNetwork({ network: kind });
  lap('start');
  try {
    const pidNames = Object.keys(network.pids()).sort();
    const [fromHub, fromLeaf] = await Promise.all([
      links(network, network.hubPort, 'linksHub'),
      links(network, network.leafPort, 'linksLeaf'),
    ]);
    if (network.services !== null) await registerAccount(network, { account: 'kindacct', password: 's3cret-pass' });
    lap('links+register');
    const oper = await connect(network.leafPort, 'kindOper');
    const answer = await oper.request(`OPER ${network.operName} ${network.operPass}`, ['381', '464', '491']);
    await oper.quit();
    // The services restart (where there are some; else the fake DNS, or nothing).
    const restarted = network.services ?? (network.pids().fakedns === undefined ? null : 'fakedns');
    const servicesBefore = restarted === null ? undefined : network.pids()[restarted];
    if (restarted !== null) await network.restartServer(restarted);
    const servicesAfter = restarted === null ? undefined : network.pids()[restarted];
    lap(`restart ${restarted ?? 'nothing'}`);
    const leafBefore = network.pids().leaf;
    await network.restartServer('leaf');
    const leafAfter = network.pids().leaf;
    lap('restart leaf');
    const afterRestart = await links(network, network.leafPort, 'afterRestart');
    const pids = Object.values(network.pids());
    await network.stop();
    lap('stop');
    return {
      network,
      pidNames,
      fromHub,
      fromLeaf,
      operReply: answer.at(-1)?.command,
      servicesPids: [servicesBefore, servicesAfter],
      leafPids: [leafBefore, leafAfter],
      afterRestart,
      survivors: pids.filter((pid) => isAlive(pid)),
      timings,
    };
  } finally {
    await network.stop();
  }
}

const kinds = [...NETWORK_KINDS, ...SOURCE_KINDS.filter((kind) => missingSources(kind) === undefined)];
for (const kind of SOURCE_KINDS) {
  const missing = missingSources(kind);
  if (missing !== undefined) t.test(kind, { skip: missing }, () => undefined);
}

const runs = new Map<NetworkKind, Promise<Observed>>();
for (const kind of kinds) {
  const run = exercise(kind);
  run.catch(() => {}); // reported by the kind's own test
  runs.set(kind, run);
}

for (const kind of kinds) {
  t.test(kind, async (t) => {
    const seen = await runs.get(kind)!;
    const { network } = seen;
    t.equal(network.network, kind, 'network.env names the kind');
    t.equal(network.env.IRC_NETWORK, kind, 'IRC_NETWORK in network.env');
    const daemons = [
      'hub',
      'leaf',
      ...(network.services === null ? [] : [network.services]),
      ...(network.ircd === 'hybrid' || network.ircd === 'irc2' ? ['fakedns'] : []),
    ];
    t.same(seen.pidNames, daemons.sort(), 'the daemons of the kind');
    t.same(seen.fromHub, wantServers(network), 'LINKS from the hub shows every server');
    t.same(seen.fromLeaf, wantServers(network), 'LINKS from the leaf shows every server');
    if (network.services !== null) t.pass('NickServ REGISTER from a leaf client');
    t.equal(seen.operReply, '381', 'OPER with the oper block succeeds');
    t.not(seen.servicesPids[1], seen.servicesPids[0], `${network.services ?? 'fakedns'} restarted under a new PID`);
    t.not(seen.leafPids[1], seen.leafPids[0], 'the leaf restarted under a new PID');
    t.same(seen.afterRestart, wantServers(network), 'linked again after the restarts');
    t.same(seen.survivors, [], 'no daemon survives stop()');
    t.comment(`ms: ${JSON.stringify(seen.timings)}`);
  });
}
