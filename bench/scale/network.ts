/**
 * The scale network: a hub and N leaves of InspIRCd 3 in a tree, and Atheme on the hub, on free
 * loopback ports in a private directory (templates in testnet/conf/scale/, Atheme's from the test
 * network). The hub carries services, the truth oracle and the bot; the leaves carry the crowd, at
 * most {@link USERS_PER_LEAF} each, well under the 20,000 descriptors one process may hold here.
 * Daemons are tracked by PID, stopped by stop(), killed on process exit, and by a watchdog if this
 * process dies without either.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  findRepoRoot,
  freePorts,
  isAlive,
  killQuietly,
  startTestNetwork,
  waitForExit,
} from '../../test/support/testnet.js';
import { Oracle } from './oracle.js';
import { networkNiceness } from './proc.js';

/** Crowd connections per leaf by default. */
export const USERS_PER_LEAF = 12_500;

export interface ScaleNetworkOptions {
  /** The crowd's size: picks the number of leaves and the connection limits. */
  users: number;
  /** Leaves; default one per {@link USERS_PER_LEAF} users, at least 2. */
  leaves?: number;
  /** The hardsendq of the class the bot connects in (InspIRCd size syntax, e.g. `8M`). */
  botSendq?: string;
  /** The most channels one crowd user may be in (`<connect maxchans>` on the leaves). */
  maxChannelsPerUser?: number;
  /** The most channels the bot's oper type may be in (`<type maxchans>`). */
  botMaxChannels?: number;
  /** Keep the run directory (configs and logs) after stop(). */
  keepRun?: boolean;
}

export interface ScaleServer {
  name: string;
  /** Directory of its logs under the run directory, and its key in pids(). */
  key: string;
  clientPort: number;
  serverPort: number;
}

export interface ScaleNetwork {
  runDir: string;
  host: '127.0.0.1';
  hub: ScaleServer;
  leaves: ScaleServer[];
  /** The oracle's oper block (NetAdmin, everything). */
  operName: string;
  operPass: string;
  /** The bot's oper block (type DataBot). */
  botOperName: string;
  botOperPass: string;
  botSendq: string;
  /** PIDs of the daemons by key (`hub`, `leaf1`, ..., `atheme`). */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

const repoRoot = findRepoRoot();
const confDir = path.join(repoRoot, 'testnet', 'conf');
const scaleConfDir = path.join(confDir, 'scale');

/** Every live network's daemons, killed if this process exits without stop(). */
const live = new Map<string, Record<string, number>>();
process.on('exit', () => {
  for (const pids of live.values()) for (const pid of Object.values(pids)) killQuietly(pid, 'SIGKILL');
});

/** Fills `@NAME@` placeholders; a placeholder left over is a template bug, named in the error. */
export function render(template: string, values: Record<string, string | number>): string {
  const text = template.replace(/@([A-Z_]+)@/g, (whole, key: string) => (key in values ? String(values[key]) : whole));
  const left = /@[A-Z_]+@/.exec(text);
  if (left) throw new Error(`scale network: no value for the placeholder ${left[0]} (add it to the renderer's values)`);
  return text;
}

function renderFile(template: string, target: string, values: Record<string, string | number>): void {
  fs.writeFileSync(target, render(fs.readFileSync(template, 'utf8'), values));
}

/**
 * Starts a daemon with its descriptor limit raised to the hard limit (its soft limit may be lower),
 * in a session of its own so a terminal's Ctrl-C reaches only the harness, which stops it by PID, and
 * at the network's niceness (proc.ts).
 */
function startDaemon(argv: string[], logFile: string): number {
  const out = fs.openSync(logFile, 'a');
  const nice = String(networkNiceness());
  const child = spawn('bash', ['-c', 'ulimit -n "$(ulimit -Hn)"; exec nice -n "$0" "$@"', nice, ...argv], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  child.unref();
  if (!child.pid) throw new Error(`could not start ${argv[0]}`);
  lowerSessionWeight(child.pid);
  return child.pid;
}

/**
 * With the kernel's autogroups (sched_autogroup_enabled), each session shares the CPU equally with the
 * others whatever its processes' niceness, and every daemon has a session of its own: its group's weight
 * is lowered to the network's niceness too (`/proc/<pid>/autogroup`), where the kernel allows it.
 */
function lowerSessionWeight(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, String(networkNiceness()));
  } catch {
    // No autogroups (or not allowed): the niceness alone applies.
  }
}

/** A detached process that stops the daemons (testnet/stop.sh, by PID) when this process disappears. */
function startWatchdog(runDir: string, keepRun: boolean): void {
  const script = 'tail --pid="$1" -f /dev/null; exec "$2" "$3" >/dev/null 2>&1';
  const stopScript = path.join(repoRoot, 'testnet', 'stop.sh');
  spawn('sh', ['-c', script, 'scale-watchdog', String(process.pid), stopScript, runDir], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, TESTNET_CURRENT: path.join(runDir, 'current'), KEEP_RUN: keepRun ? '1' : '0' },
  }).unref();
}

function writePids(runDir: string, pids: Record<string, number>): void {
  // testnet/stop.sh's format, so the watchdog can use it.
  const text = Object.entries(pids)
    .map(([name, pid]) => `${name} ${pid}\n`)
    .join('');
  fs.writeFileSync(path.join(runDir, 'pids'), text);
}

/** Starts the scale network and resolves once every server and services are linked. */
export async function startScaleNetwork(options: ScaleNetworkOptions): Promise<ScaleNetwork> {
  if (!fs.existsSync('/usr/sbin/inspircd') || !fs.existsSync('/usr/bin/atheme-services')) {
    // The test network's start installs the Debian packages (serialised with other installs): start and stop one.
    await (await startTestNetwork()).stop();
  }
  const leafCount = options.leaves ?? Math.max(2, Math.ceil(options.users / USERS_PER_LEAF));
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ircnet-scale-'));
  const ports = await freePorts(4 + 2 * leafCount);
  const [hubPort, hubServerPort, rpcPort] = ports as [number, number, number];
  const hub: ScaleServer = { name: 'hub.test.net', key: 'hub', clientPort: hubPort, serverPort: hubServerPort };
  const leaves: ScaleServer[] = Array.from({ length: leafCount }, (_, index) => ({
    name: `leaf${index + 1}.test.net`,
    key: `leaf${index + 1}`,
    clientPort: ports[4 + 2 * index]!,
    serverPort: ports[5 + 2 * index]!,
  }));
  const perLeaf = Math.ceil(options.users / leafCount);
  const botSendq = options.botSendq ?? '8M';
  const secrets = {
    OPER_NAME: 'scaleoper',
    OPER_PASS: 'scaleoperpass',
    BOT_OPER_NAME: 'databot',
    BOT_OPER_PASS: 'databotpass',
    LINK_PASS: 'linkpass',
    SVC_SEND_PASS: 'svcsend',
    SVC_RECV_PASS: 'svcrecv',
    DIE_PASS: 'diepass',
    WEBIRC_PASS: 'webircpass',
  };
  const values: Record<string, string | number> = {
    ...secrets,
    RUN: runDir,
    HUB_PORT: hubPort,
    HUB_SPORT: hubServerPort,
    RPC_PORT: rpcPort,
    SOMAXCONN: somaxconn(),
    // A few descriptors under the hard limit stay free for the server's own files and links.
    SOFTLIMIT: Math.max(1024, descriptorLimit() - 100),
    WHOWAS_GROUPS: 100_000,
    BOT_SENDQ: botSendq,
    BOT_MAXCHANS: options.botMaxChannels ?? 200,
    MAXCHANS: options.maxChannelsPerUser ?? 20,
    // Every user is on 127.0.0.1: the per-IP limits must admit the whole crowd (and its reconnects).
    GLOBALMAX: options.users * 2 + 1000,
    LOCALMAX: perLeaf * 2 + 1000,
    // The scale network is InspIRCd's (testnet/start.sh sets the same for its inspircd kinds).
    ATHEME_PROTOCOL: 'inspircd',
    ATHEME_CASEMAPPING: 'rfc1459',
    ATHEME_NUMERIC: '00A',
    ATHEME_RECV_PASS: secrets.SVC_RECV_PASS,
  };
  fs.mkdirSync(path.join(runDir, 'hub'));
  fs.mkdirSync(path.join(runDir, 'atheme', 'data'), { recursive: true });
  fs.mkdirSync(path.join(runDir, 'atheme', 'www'));
  renderFile(path.join(scaleConfDir, 'common.conf.tmpl'), path.join(runDir, 'common.conf'), values);
  renderFile(path.join(scaleConfDir, 'hub.conf.tmpl'), path.join(runDir, 'hub.conf'), values);
  const linkTemplate = fs.readFileSync(path.join(scaleConfDir, 'link.conf.tmpl'), 'utf8');
  fs.writeFileSync(
    path.join(runDir, 'links.conf'),
    [hub, ...leaves]
      .map((server) =>
        render(linkTemplate, { LINK_NAME: server.name, LINK_PORT: server.serverPort, LINK_PASS: secrets.LINK_PASS }),
      )
      .join(''),
  );
  leaves.forEach((leaf, index) => {
    fs.mkdirSync(path.join(runDir, leaf.key));
    renderFile(path.join(scaleConfDir, 'leaf.conf.tmpl'), path.join(runDir, `${leaf.key}.conf`), {
      ...values,
      NAME: leaf.name,
      DIR: leaf.key,
      SID: String(index + 2).padStart(3, '0'),
      CLIENT_PORT: leaf.clientPort,
      SERVER_PORT: leaf.serverPort,
    });
  });
  renderFile(path.join(confDir, 'atheme.conf.tmpl'), path.join(runDir, 'atheme.conf'), values);
  renderFile(path.join(confDir, 'dns-off.conf.tmpl'), path.join(runDir, 'dns.conf'), values);
  fs.copyFileSync(path.join(confDir, 'motd.txt'), path.join(runDir, 'motd.txt'));

  const rootFlag = process.getuid?.() === 0 ? ['--runasroot'] : [];
  const pids: Record<string, number> = {};
  live.set(runDir, pids);
  startWatchdog(runDir, options.keepRun ?? false);
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // Services first, so Atheme saves and SQUITs cleanly; then the servers, all at once.
      for (const key of ['atheme', ...leaves.map((leaf) => leaf.key), 'hub']) {
        const pid = pids[key];
        if (pid !== undefined) killQuietly(pid, 'SIGTERM');
      }
      for (const pid of Object.values(pids)) if (!(await waitForExit(pid, 15_000))) killQuietly(pid, 'SIGKILL');
      live.delete(runDir);
      fs.rmSync(path.join(runDir, 'pids'), { force: true });
      if (!options.keepRun) fs.rmSync(runDir, { recursive: true, force: true });
    })());

  try {
    const inspircd = (key: string): string[] => [
      '/usr/sbin/inspircd',
      '--nofork',
      ...rootFlag,
      `--config=${path.join(runDir, `${key}.conf`)}`,
    ];
    pids.hub = startDaemon(inspircd('hub'), path.join(runDir, 'hub', 'stdout.log'));
    for (const leaf of leaves)
      pids[leaf.key] = startDaemon(inspircd(leaf.key), path.join(runDir, leaf.key, 'stdout.log'));
    pids.atheme = startDaemon(
      [
        '/usr/bin/atheme-services',
        '-n',
        '-c',
        path.join(runDir, 'atheme.conf'),
        '-D',
        path.join(runDir, 'atheme', 'data'),
        '-l',
        path.join(runDir, 'atheme', 'atheme.log'),
        '-p',
        path.join(runDir, 'atheme', 'atheme.pid'),
      ],
      path.join(runDir, 'atheme', 'stdout.log'),
    );
    writePids(runDir, pids);
    await waitUntilLinked({ hub, leaves, pids, runDir, operName: secrets.OPER_NAME, operPass: secrets.OPER_PASS });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    runDir,
    host: '127.0.0.1',
    hub,
    leaves,
    operName: secrets.OPER_NAME,
    operPass: secrets.OPER_PASS,
    botOperName: secrets.BOT_OPER_NAME,
    botOperPass: secrets.BOT_OPER_PASS,
    botSendq,
    pids,
    stop,
  };
}

/** Until the hub's LINKS shows every server: an oper asks the hub to CONNECT a missing leaf at once. */
async function waitUntilLinked(network: {
  hub: ScaleServer;
  leaves: ScaleServer[];
  pids: Record<string, number>;
  runDir: string;
  operName: string;
  operPass: string;
}): Promise<void> {
  const deadline = Date.now() + 60_000;
  const expected = [network.hub.name, 'services.test.net', ...network.leaves.map((leaf) => leaf.name)];
  let oracle: Oracle | null = null;
  let missing: string[] = expected;
  try {
    while (Date.now() < deadline) {
      for (const [key, pid] of Object.entries(network.pids)) {
        if (!isAlive(pid)) {
          const log = path.join(network.runDir, key, 'stdout.log');
          const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
          throw new Error(`scale network: ${key} (pid ${pid}) died during startup:\n${tail}`);
        }
      }
      if (!oracle) {
        oracle = await Oracle.onHub(network, 'ScaleProbe').catch(() => null);
      }
      if (oracle) {
        const linked = new Set(await oracle.links());
        missing = expected.filter((name) => !linked.has(name));
        if (missing.length === 0) return;
        // <autoconnect> only fires on InspIRCd's 5 s background timer; CONNECT makes it at once.
        for (const name of missing) if (name.startsWith('leaf')) oracle.send(`CONNECT ${name}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`scale network in ${network.runDir} not linked after 60 s: missing ${missing.join(', ')}`);
  } finally {
    await oracle?.close();
  }
}

function somaxconn(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim()) || 128;
  } catch {
    return 128;
  }
}

/** The hard limit of open files of this process (what a daemon raises its soft limit to). */
export function descriptorLimit(): number {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((candidate) => candidate.startsWith('Max open files'));
    const hard = line?.trim().split(/\s+/)[4];
    return hard === 'unlimited' ? 1_048_576 : Number(hard) || 1024;
  } catch {
    return 1024;
  }
}
