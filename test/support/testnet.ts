import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IrcClient } from './irc-client.js';

/**
 * The kinds of network testnet/start.sh starts (its NETWORK): IRC server software + services, or the server alone
 * where the network has no services (`irc2`).
 */
export type NetworkKind =
  | 'inspircd+atheme'
  | 'inspircd+anope'
  | 'hybrid+anope'
  | 'ngircd+atheme'
  | 'unreal+anope21'
  | 'solanum+atheme'
  | 'ircu+atheme'
  | 'irc2';

/** The kinds built from Debian's packages, the default (InspIRCd 3 + Atheme 7.2) first. */
export const NETWORK_KINDS: readonly NetworkKind[] = [
  'inspircd+atheme',
  'inspircd+anope',
  'hybrid+anope',
  'ngircd+atheme',
  'irc2',
];

/**
 * The kinds whose software Debian does not package: testnet/build-source.sh builds it from the source archives
 * (testnet/sources.txt) once per machine.
 */
export const SOURCE_KINDS: readonly NetworkKind[] = ['unreal+anope21', 'solanum+atheme', 'ircu+atheme'];

/** The IRC server software of a kind. */
export type IrcdName = 'inspircd' | 'hybrid' | 'ngircd' | 'unreal' | 'solanum' | 'ircu' | 'irc2';

/** The services package of a kind; also the name of its daemon (see {@link ServerName}). */
export type ServicesName = 'atheme' | 'anope' | 'anope21';

/** The source archives a kind needs (testnet/sources.txt names), by the software's name in the kind. */
const SOURCE_NAMES: Partial<Record<IrcdName | ServicesName, string>> = {
  unreal: 'unrealircd',
  solanum: 'solanum',
  ircu: 'ircu',
  anope21: 'anope21',
};

/**
 * Why a kind cannot start on this machine, in one line, when the source archives it needs are missing
 * (looked for in IRCD_SOURCES, default ../shared/ircd-sources beside the repository); undefined when it can.
 */
export function missingSources(kind: NetworkKind): string | undefined {
  const folder = process.env.IRCD_SOURCES ?? path.resolve(repoRoot, '..', 'shared', 'ircd-sources');
  const listed = fs
    .readFileSync(path.join(testnetDir, 'sources.txt'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(/\s+/) as [string, string, string]);
  const { ircd, services } = networkParts(kind);
  const missing = [ircd, ...(services === null ? [] : [services])]
    .map((part) => SOURCE_NAMES[part])
    .filter((name) => name !== undefined)
    .map((name) => listed.find(([listedName]) => listedName === name)![1])
    .filter((file) => !fs.existsSync(path.join(folder, file)));
  if (missing.length === 0) return undefined;
  return (
    `${kind} is built from source, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in ${folder}: ` +
    'put the archives there (testnet/sources.txt lists them with their sha256) or set IRCD_SOURCES to their folder'
  );
}

/** The IRC server and services software of a network kind; `services` null where it has none. */
export function networkParts(kind: NetworkKind): { ircd: IrcdName; services: ServicesName | null } {
  const [ircd, services] = kind.split('+') as [IrcdName, ServicesName | undefined];
  return { ircd, services: services ?? null };
}

/**
 * A daemon of the test network: the two IRC servers, the services (named after their package:
 * 'atheme' or 'anope', whichever the kind runs) and, on hybrid+anope, the fake DNS hybrid needs.
 */
export type ServerName = 'hub' | 'leaf' | ServicesName | 'fakedns';

/** Options of {@link startTestNetwork}. */
export interface TestNetworkOptions {
  /** Which network to start (default 'inspircd+atheme'). */
  network?: NetworkKind;
  operName?: string;
  operPass?: string;
  webircPass?: string;
  /** Seconds start.sh waits for readiness (default 60). */
  readyTimeout?: number;
  /** Keep the run dir (logs) after stop(). */
  keepRun?: boolean;
  /** Start attempts when a picked port turns out to be taken (default 4). */
  attempts?: number;
  /** Where start.sh's progress goes (default: discarded unless it fails). */
  log?: (line: string) => void;
}

/** A running loopback IRC network: hub + leaf IRC servers and services, in a private run dir. */
export interface TestNetwork {
  /** Its kind (network.env IRC_NETWORK). */
  network: NetworkKind;
  ircd: IrcdName;
  /** The services package, which is also its daemon's name in pids() and stopServer(); null where there are none. */
  services: ServicesName | null;
  runDir: string;
  host: '127.0.0.1';
  hubPort: number;
  leafPort: number;
  hubServerPort: number;
  leafServerPort: number;
  /**
   * The services' RPC endpoint: Atheme JSON-RPC, Anope 2.0 XML-RPC or Anope 2.1 JSON-RPC (reading it on a network
   * without services throws).
   */
  rpcUrl: string;
  /** What {@link rpcUrl} speaks: the name of the nickserv plugin's backend for it (throws without services). */
  rpcProtocol: 'atheme-jsonrpc' | 'anope-xmlrpc' | 'anope-rpc';
  /** The hub's InspIRCd httpd_stats XML endpoint (InspIRCd kinds only: reading it elsewhere throws). */
  statsUrl: string;
  operName: string;
  operPass: string;
  webircPass: string;
  /** Everything network.env exported. */
  env: Record<string, string>;
  /** Current PIDs by daemon name (read from the run dir's pids file). */
  pids(): Record<string, number>;
  /** Stops every daemon (stop.sh) and removes the run dir unless keepRun. Idempotent. */
  stop(): Promise<void>;
  /** Stops one daemon and starts it again, then waits until the network is linked and services are back. */
  restartServer(name: ServerName): Promise<void>;
  /** SIGTERM one daemon by PID and wait until it is gone. */
  stopServer(name: ServerName): Promise<void>;
  /** Start one daemon with start.sh's command line; waits for readiness when the other daemons run. */
  startServer(name: ServerName): Promise<void>;
}

/** Options of {@link registerAccount}. */
export interface RegisterAccountOptions {
  account: string;
  password: string;
  /** Client port to use (default: the leaf, so registration crosses the server link). */
  port?: number;
  timeout?: number;
}

/** The repository root: the nearest ancestor of this file holding package.json. */
export function findRepoRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'testnet', 'start.sh')))
      return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json with testnet/start.sh above ${from}`);
    dir = parent;
  }
}

const repoRoot = findRepoRoot();
const testnetDir = path.join(repoRoot, 'testnet');

/** Finds `count` distinct free TCP ports on 127.0.0.1 by binding port 0 (held together so they differ). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

// Daemons of every network this process started; killed synchronously if the process exits
// without stop() (a watchdog process covers deaths that skip 'exit', like SIGKILL).
const liveNetworks = new Set<{ runDir: string; watchdog: number | null }>();
process.on('exit', () => {
  for (const network of liveNetworks) {
    for (const pid of Object.values(readPids(network.runDir))) killQuietly(pid, 'SIGKILL');
    if (network.watchdog) killQuietly(-network.watchdog, 'SIGKILL');
    fs.rmSync(network.runDir, { recursive: true, force: true });
  }
});

/** Sends a signal to a process that may be gone already. */
export function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Whether a process (not necessarily our child) is still there. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readPids(runDir: string): Record<string, number> {
  let text: string;
  try {
    text = fs.readFileSync(path.join(runDir, 'pids'), 'utf8');
  } catch {
    return {};
  }
  const pids: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [name, pid] = line.trim().split(/\s+/);
    if (name && pid) pids[name] = Number(pid);
  }
  return pids;
}

function writePid(runDir: string, name: string, pid: number): void {
  const pids = { ...readPids(runDir), [name]: pid };
  const text = Object.entries(pids)
    .map(([daemon, value]) => `${daemon} ${value}\n`)
    .join('');
  fs.writeFileSync(path.join(runDir, 'pids'), text);
}

function parseEnvFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (match?.[1]) env[match[1]] = match[2] ?? '';
  }
  return env;
}

function requireEnv(env: Record<string, string>, key: string): string {
  const value = env[key];
  if (value === undefined) throw new Error(`network.env lacks ${key}`);
  return value;
}

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to completion in its own session (detached), so the daemons start.sh leaves
 * behind never receive the terminal's Ctrl-C: whoever started the network stops it, by PID.
 */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => killQuietly(-(child.pid ?? 0), 'SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/** Resolves true once the process is gone, false after `timeoutMs`. */
export function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  // No exit event exists for a process that is not our child: poll /proc cheaply.
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const check = (): void => {
      if (!isAlive(pid)) resolve(true);
      else if (Date.now() > deadline) resolve(false);
      else setTimeout(check, 25);
    };
    check();
  });
}

function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`port ${port} did not open within ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** What {@link daemonCommand} needs to know besides the run dir (from network.env). */
interface DaemonContext {
  kind: NetworkKind;
  /** Where start.sh unpacked ngircd (IRC_NGIRCD_ROOT). */
  ngircdRoot: string;
  /** The fake DNS (hybrid+anope): its loopback address and the suffix of the names it makes up. */
  fakednsAddr: string;
  fakednsSynth: string;
  hubPort: number;
  hubServerPort: number;
  leafPort: number;
  leafServerPort: number;
  /** Where build-source.sh installed UnrealIRCd and Anope 2.1 (IRC_UNREAL_PREFIX, IRC_ANOPE21_PREFIX). */
  unrealPrefix: string;
  anope21Prefix: string;
  solanumPrefix: string;
  /** Where build-source.sh installed ircu (IRC_IRCU_PREFIX). */
  ircuPrefix: string;
  /** Where start.sh unpacked ircd-irc2 (IRC_IRC2_ROOT). */
  irc2Root: string;
}

/** Runs the rest of a command line as the user irc (the servers that refuse root), as start.sh does. */
const AS_IRC = ['setpriv', '--reuid=irc', '--regid=irc', '--clear-groups'] as const;

/** The folders UnrealIRCd writes, compiled into its install. */
const UNREAL_FOLDERS = ['data', 'tmp', 'logs', 'cache'] as const;

/**
 * `program` run as irc in a mount namespace of its own, where each `[folder, over]` is bound over a folder the
 * program writes (start.sh's `own_folders`): unshare, sh and setpriv all exec, so the PID is the program's.
 */
function asIrcWithOwnFolders(
  binds: readonly (readonly [folder: string, over: string])[],
  program: readonly string[],
): string[] {
  return [
    'unshare',
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    OWN_FOLDERS_SCRIPT,
    'own-folders',
    ...binds.flat(),
    '--',
    ...AS_IRC,
    ...program,
  ];
}

/** Binds each pair of arguments until `--`, then execs the rest (the same in testnet/start.sh). */
const OWN_FOLDERS_SCRIPT = 'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"';

/** The command line start.sh uses for each daemon (keep in sync with testnet/start.sh). */
function daemonCommand(runDir: string, name: ServerName, context: DaemonContext): { logFile: string; argv: string[] } {
  const root = process.getuid?.() === 0;
  const rootFlag = root ? ['--runasroot'] : [];
  // hybrid and ngircd refuse root, and Anope sleeps 3 s when root: start.sh runs them as irc.
  const asIrc = root ? AS_IRC : [];
  const { ircd, services } = networkParts(context.kind);
  const logFile = path.join(runDir, name, 'stdout.log');
  const inRun = (...parts: string[]): string => path.join(runDir, ...parts);
  // hybrid and Solanum (its descendant) take the same options for the foreground and the server's own files.
  const foreground = [
    '-foreground',
    '-configfile',
    inRun(name, 'ircd.conf'),
    '-logfile',
    inRun(name, 'ircd.log'),
    '-pidfile',
    inRun(name, 'ircd.pid'),
  ];
  switch (name) {
    case 'hub':
    case 'leaf':
      if (ircd === 'hybrid') {
        return {
          logFile,
          argv: [
            'unshare',
            '--mount',
            '--propagation',
            'private',
            'sh',
            '-c',
            'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"',
            'hybrid-ns',
            inRun('resolv.conf'),
            ...asIrc,
            '/usr/sbin/ircd-hybrid',
            ...foreground,
            '-klinefile',
            inRun(name, 'kline.db'),
            '-dlinefile',
            inRun(name, 'dline.db'),
            '-xlinefile',
            inRun(name, 'xline.db'),
            '-resvfile',
            inRun(name, 'resv.db'),
          ],
        };
      }
      if (ircd === 'ngircd') {
        // ngIRCd gets its two ports already listening (backlog 4096 instead of its own 10).
        const ports =
          name === 'hub' ? [context.hubPort, context.hubServerPort] : [context.leafPort, context.leafServerPort];
        return {
          logFile,
          argv: [
            'perl',
            path.join(testnetDir, 'lib', 'listen-exec.pl'),
            '127.0.0.1',
            ports.join(','),
            path.join(context.ngircdRoot, 'usr', 'sbin', 'ngircd'),
            '--nodaemon',
            '--config',
            inRun(name, 'ngircd.conf'),
          ],
        };
      }
      if (ircd === 'solanum') {
        // Its ban database helper writes <prefix>/etc/ban.db, whatever -banfile says: a folder of its own there.
        return {
          logFile,
          argv: asIrcWithOwnFolders(
            [[inRun(name, 'etc'), path.join(context.solanumPrefix, 'etc')]],
            [path.join(context.solanumPrefix, 'bin', 'solanum'), ...foreground, '-banfile', inRun(name, 'ban.db')],
          ),
        };
      }
      if (ircd === 'irc2') {
        // Its paths are compiled in: the server's folder over /etc/ircd, /run/ircd and /var/log/ircd, and the fake
        // DNS's resolv.conf over /etc/resolv.conf.
        const folder = inRun(name);
        return {
          logFile,
          argv: asIrcWithOwnFolders(
            [
              [folder, '/etc/ircd'],
              [folder, '/run/ircd'],
              [folder, '/var/log/ircd'],
              [inRun('resolv.conf'), '/etc/resolv.conf'],
            ],
            [path.join(context.irc2Root, 'usr', 'sbin', 'ircd'), '-s', '-t'],
          ),
        };
      }
      if (ircd === 'ircu') {
        // Its log, PID and MOTD paths are relative to its data folder (-d): the server's own. It refuses root.
        return {
          logFile,
          argv: [
            ...AS_IRC,
            path.join(context.ircuPrefix, 'bin', 'ircd'),
            '-n',
            '-d',
            inRun(name),
            '-f',
            inRun(name, 'ircd.conf'),
          ],
        };
      }
      if (ircd === 'unreal') {
        // Its data, temp, log and cache folders are compiled into the install: the server's own bound over them.
        return {
          logFile,
          argv: asIrcWithOwnFolders(
            UNREAL_FOLDERS.map((folder) => [inRun(name, folder), path.join(context.unrealPrefix, folder)] as const),
            [path.join(context.unrealPrefix, 'bin', 'unrealircd'), '-F', '-f', inRun(name, 'ircd.conf')],
          ),
        };
      }
      return { logFile, argv: ['/usr/sbin/inspircd', '--nofork', ...rootFlag, `--config=${inRun(`${name}.conf`)}`] };
    case 'anope21':
      if (name !== services) throw new Error(`a ${context.kind} network has no ${name}`);
      return {
        logFile,
        argv: [
          ...AS_IRC,
          path.join(context.anope21Prefix, 'bin', 'anope'),
          '--nofork',
          `--confdir=${inRun('anope21', 'conf')}`,
          '--config=services.conf',
          `--dbdir=${inRun('anope21', 'data')}`,
          `--logdir=${inRun('anope21', 'logs')}`,
          `--modulesdir=${path.join(context.anope21Prefix, 'modules')}`,
          `--localedir=${path.join(context.anope21Prefix, 'locale')}`,
        ],
      };
    case 'atheme':
    case 'anope':
      if (name !== services) throw new Error(`a ${context.kind} network has no ${name}`);
      if (name === 'anope') {
        return {
          logFile,
          argv: [
            ...asIrc,
            '/usr/sbin/anope',
            '--nofork',
            `--confdir=${inRun('anope', 'conf')}`,
            '--config=services.conf',
            `--dbdir=${inRun('anope', 'data')}`,
            `--logdir=${inRun('anope', 'logs')}`,
            '--modulesdir=/usr/lib/anope',
            '--localedir=/usr/share/anope/locale',
          ],
        };
      }
      return {
        logFile,
        argv: [
          '/usr/bin/atheme-services',
          '-n',
          '-c',
          inRun('atheme.conf'),
          '-D',
          inRun('atheme', 'data'),
          '-l',
          inRun('atheme', 'atheme.log'),
          '-p',
          inRun('atheme', 'atheme.pid'),
        ],
      };
    case 'fakedns':
      return {
        logFile,
        argv: [
          process.execPath,
          path.join(testnetDir, 'lib', 'fakedns.mjs'),
          context.fakednsAddr,
          '53',
          inRun('fakedns.hosts'),
          ...(context.fakednsSynth ? [context.fakednsSynth] : []),
        ],
      };
  }
}

/**
 * Starts a private test network on free loopback ports (testnet/start.sh) and resolves once
 * it is linked and services answer. Always call stop(); a process exit kills the daemons anyway.
 */
export async function startTestNetwork(options: TestNetworkOptions = {}): Promise<TestNetwork> {
  const attempts = options.attempts ?? 4;
  let lastError = '';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ircnet-test-'));
    // The TLS ports are UnrealIRCd's, the WEBIRC ports ircu's (it takes WEBIRC on a port of its own only).
    const [hubPort, leafPort, hubServerPort, leafServerPort, rpcPort, httpdPort, ...more] = await freePorts(10);
    const [hubTlsPort, leafTlsPort, hubWebircPort, leafWebircPort] = more;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NETWORK: options.network ?? 'inspircd+atheme',
      TESTNET_RUN: runDir,
      TESTNET_CURRENT: path.join(runDir, 'current'),
      HUB_PORT: String(hubPort),
      LEAF_PORT: String(leafPort),
      HUB_SPORT: String(hubServerPort),
      LEAF_SPORT: String(leafServerPort),
      RPC_PORT: String(rpcPort),
      HTTPD_PORT: String(httpdPort),
      HUB_TLS_PORT: String(hubTlsPort),
      LEAF_TLS_PORT: String(leafTlsPort),
      HUB_WEBIRC_PORT: String(hubWebircPort),
      LEAF_WEBIRC_PORT: String(leafWebircPort),
      OPER_NAME: options.operName ?? 'botoper',
      OPER_PASS: options.operPass ?? 'operpass',
      WEBIRC_PASS: options.webircPass ?? 'webircpass',
      READY_TIMEOUT: String(options.readyTimeout ?? 60),
    };
    const tracked = { runDir, watchdog: null as number | null };
    liveNetworks.add(tracked);
    const result = await run(
      ...startCommand(options.network ?? 'inspircd+atheme'),
      env,
      ((options.readyTimeout ?? 60) + 120) * 1000,
    );
    for (const line of result.stderr.split('\n')) if (line) options.log?.(line);
    if (result.code === 0 && fs.existsSync(path.join(runDir, 'network.env'))) {
      tracked.watchdog = startWatchdog(runDir);
      return makeNetwork(runDir, parseEnvFile(path.join(runDir, 'network.env')), tracked, options);
    }
    liveNetworks.delete(tracked);
    // start.sh cleans up after itself on failure; make sure nothing is left either way.
    await run(path.join(testnetDir, 'stop.sh'), [runDir], env, 30000);
    fs.rmSync(runDir, { recursive: true, force: true });
    lastError = `${result.stderr}${result.stdout}`.trim();
    const portRace = /already in use|died during startup|bind|Address already/i.test(lastError);
    if (!portRace) break;
  }
  throw new Error(`testnet/start.sh failed: ${lastError.split('\n').slice(-25).join('\n')}`);
}

/**
 * start.sh, serialised through flock while the Debian packages are missing: test files run in
 * parallel, and two concurrent apt-get installs would fight over the dpkg lock. `-o`: the lock's descriptor is
 * closed for start.sh, so the daemons it starts do not inherit it; they did, and an UnrealIRCd left running held
 * the lock for as long as it lived, every later start of a network built from source waiting on it until its test
 * timed out.
 */
function startCommand(kind: NetworkKind): [string, string[]] {
  const startScript = path.join(testnetDir, 'start.sh');
  const { ircd, services } = networkParts(kind);
  // Built by start.sh (build-source.sh) into its cache: serialised like an install while it may build.
  const serialised: [string, string[]] = ['flock', ['-o', path.join(os.tmpdir(), 'ircnet-install.lock'), startScript]];
  if (SOURCE_KINDS.includes(kind)) return serialised;
  const programs: Record<string, string> = {
    inspircd: '/usr/sbin/inspircd',
    hybrid: '/usr/sbin/ircd-hybrid',
    // unpacked by start.sh (default NGIRCD_ROOT), not installed: it conflicts with ircd-hybrid
    ngircd: path.join(process.env.NGIRCD_ROOT ?? '/var/cache/irc-testnet/ngircd', 'usr', 'sbin', 'ngircd'),
    // the same: ircd-irc2 conflicts with inspircd and ircd-hybrid
    irc2: path.join(process.env.IRC2_ROOT ?? '/var/cache/irc-testnet/irc2', 'usr', 'sbin', 'ircd'),
    atheme: '/usr/bin/atheme-services',
    anope: '/usr/sbin/anope',
  };
  const installed = fs.existsSync(programs[ircd]!) && (services === null || fs.existsSync(programs[services]!));
  if (installed) return [startScript, []];
  return serialised;
}

/** A detached process that runs stop.sh when this process disappears without stop(). */
function startWatchdog(runDir: string): number | null {
  const script = 'tail --pid="$1" -f /dev/null; exec "$2" "$3" >/dev/null 2>&1';
  const child = spawn(
    'sh',
    ['-c', script, 'testnet-watchdog', String(process.pid), path.join(testnetDir, 'stop.sh'), runDir],
    {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, TESTNET_CURRENT: path.join(runDir, 'current') },
    },
  );
  child.unref();
  return child.pid ?? null;
}

function makeNetwork(
  runDir: string,
  env: Record<string, string>,
  tracked: { runDir: string; watchdog: number | null },
  options: TestNetworkOptions,
): TestNetwork {
  const kind = (env.IRC_NETWORK ?? 'inspircd+atheme') as NetworkKind;
  if (!NETWORK_KINDS.includes(kind) && !SOURCE_KINDS.includes(kind)) {
    throw new Error(`network.env names an unknown kind ${kind}`);
  }
  const { ircd, services } = networkParts(kind);
  const hubPort = Number(requireEnv(env, 'IRC_HUB_PORT'));
  const leafPort = Number(requireEnv(env, 'IRC_LEAF_PORT'));
  const rpcUrl =
    services === null
      ? null
      : requireEnv(
          env,
          services === 'anope' ? 'ANOPE_XMLRPC_URL' : services === 'anope21' ? 'ANOPE_JSONRPC_URL' : 'ATHEME_RPC_URL',
        );
  const rpcPort = rpcUrl === null ? 0 : Number(new URL(rpcUrl).port);
  const withServices = <T>(value: T | null): T => {
    if (value === null) throw new Error(`a ${kind} network has no services, so no RPC endpoint`);
    return value;
  };
  const context: DaemonContext = {
    kind,
    ngircdRoot: env.IRC_NGIRCD_ROOT ?? '/var/cache/irc-testnet/ngircd',
    fakednsAddr: env.IRC_FAKEDNS_ADDR ?? '127.0.0.153',
    fakednsSynth: env.IRC_FAKEDNS_SYNTH ?? 'static.example.net',
    hubPort,
    hubServerPort: Number(requireEnv(env, 'IRC_HUB_SERVER_PORT')),
    leafPort,
    leafServerPort: Number(requireEnv(env, 'IRC_LEAF_SERVER_PORT')),
    unrealPrefix: env.IRC_UNREAL_PREFIX ?? '',
    anope21Prefix: env.IRC_ANOPE21_PREFIX ?? '',
    solanumPrefix: env.IRC_SOLANUM_PREFIX ?? '',
    ircuPrefix: env.IRC_IRCU_PREFIX ?? '',
    irc2Root: env.IRC_IRC2_ROOT ?? '/var/cache/irc-testnet/irc2',
  };
  const statsUrl = env.INSPIRCD_STATS_URL;
  const operName = requireEnv(env, 'IRC_OPER_NAME');
  const operPass = requireEnv(env, 'IRC_OPER_PASS');
  const scriptEnv = {
    ...process.env,
    TESTNET_CURRENT: path.join(runDir, 'current'),
    KEEP_RUN: options.keepRun ? '1' : '0',
  };
  let stopped: Promise<void> | null = null;

  const allRunning = (): boolean => {
    const pids = readPids(runDir);
    const names = [
      'hub',
      'leaf',
      ...(services === null ? [] : [services]),
      ...(ircd === 'hybrid' || ircd === 'irc2' ? ['fakedns'] : []),
    ];
    return names.every((name) => pids[name] !== undefined && isAlive(pids[name]));
  };

  const waitUntilReady = async (timeoutMs = 60000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let reason = '';
    while (Date.now() < deadline) {
      const probe = await run(
        process.execPath,
        [
          path.join(testnetDir, 'lib', 'probe.mjs'),
          String(hubPort),
          String(leafPort),
          String(rpcPort),
          operName,
          operPass,
        ],
        {
          ...process.env,
          IRC_NETWORK: kind,
          PROBE_TIMEOUT_MS: String(Math.max(1000, Math.min(10000, deadline - Date.now()))),
        },
        20000,
      );
      if (probe.code === 0) return;
      reason = probe.stdout.trim() || probe.stderr.trim();
      // The probe fails fast while a port is still closed; do not spin.
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`network in ${runDir} not ready after ${timeoutMs} ms: ${reason}`);
  };

  const stopServer = async (name: ServerName): Promise<void> => {
    const pid = readPids(runDir)[name];
    if (pid === undefined || !isAlive(pid)) return;
    process.kill(pid, 'SIGTERM');
    if (!(await waitForExit(pid, 10000))) {
      killQuietly(pid, 'SIGKILL');
      await waitForExit(pid, 5000);
    }
  };

  const startServer = async (name: ServerName): Promise<void> => {
    const existing = readPids(runDir)[name];
    if (existing !== undefined && isAlive(existing)) throw new Error(`${name} is already running (pid ${existing})`);
    const { logFile, argv } = daemonCommand(runDir, name, context);
    // Same as start.sh's startd: nohup, backgrounded by a shell so the daemon outlives it, PID = $!.
    const script =
      'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; out=$1; shift; nohup "$@" >> "$out" 2>&1 < /dev/null & echo $!';
    const launched = await run('bash', ['-c', script, 'startd', logFile, ...argv], process.env, 10000);
    const pid = Number(launched.stdout.trim());
    if (launched.code !== 0 || !Number.isInteger(pid) || pid <= 0) {
      throw new Error(`could not start ${name}: ${launched.stderr}${launched.stdout}`);
    }
    writePid(runDir, name, pid);
    if (name !== 'hub' && name !== 'leaf') {
      if (allRunning()) await waitUntilReady();
      return;
    }
    await waitForPort(name === 'hub' ? hubPort : leafPort, 15000);
    if (allRunning()) await waitUntilReady();
  };

  return {
    network: kind,
    ircd,
    services,
    runDir,
    host: '127.0.0.1',
    hubPort,
    leafPort,
    hubServerPort: Number(requireEnv(env, 'IRC_HUB_SERVER_PORT')),
    leafServerPort: Number(requireEnv(env, 'IRC_LEAF_SERVER_PORT')),
    get rpcUrl(): string {
      return withServices(rpcUrl);
    },
    get rpcProtocol() {
      return withServices(services) === 'anope'
        ? 'anope-xmlrpc'
        : services === 'anope21'
          ? 'anope-rpc'
          : 'atheme-jsonrpc';
    },
    get statsUrl(): string {
      if (statsUrl === undefined) throw new Error(`a ${kind} network has no InspIRCd httpd_stats endpoint`);
      return statsUrl;
    },
    operName,
    operPass,
    webircPass: requireEnv(env, 'IRC_WEBIRC_PASS'),
    env,
    pids: () => readPids(runDir),
    stopServer,
    startServer,
    async restartServer(name) {
      await stopServer(name);
      await startServer(name);
    },
    stop() {
      stopped ??= (async () => {
        const result = await run(path.join(testnetDir, 'stop.sh'), [runDir], scriptEnv, 60000);
        if (result.code !== 0) throw new Error(`stop.sh failed: ${result.stderr}`);
        liveNetworks.delete(tracked);
        if (tracked.watchdog) killQuietly(-tracked.watchdog, 'SIGTERM');
      })();
      return stopped;
    },
  };
}

/**
 * Registers a NickServ account: connects as nick `account`, sends `REGISTER <password> <email>`
 * (the syntax of Atheme and of Anope 2.0) and resolves once services confirm: 900 (where the IRCd
 * has SASL), Atheme's "<account> is now registered to <email>..." or Anope's "Nickname <account>
 * registered."; rejects with services' answer otherwise.
 */
export async function registerAccount(
  network: Pick<TestNetwork, 'host' | 'leafPort'>,
  { account, password, port, timeout = 15000 }: RegisterAccountOptions,
): Promise<void> {
  const client = new IrcClient({ host: network.host, port: port ?? network.leafPort, nick: account, user: 'register' });
  await client.connect();
  try {
    const registration = await client.register();
    if (!registration.ok) throw new Error(`cannot register ${account}: ${registration.last.raw}`);
    const outcome = client.waitFor(
      (message) =>
        message.command === '900' ||
        (message.command === 'NOTICE' &&
          message.nick === 'NickServ' &&
          /registered|invalid|cannot|not|error|must/i.test(message.params[1] ?? '')),
      { timeout, what: `NickServ REGISTER ${account}` },
    );
    client.send(`PRIVMSG NickServ :REGISTER ${password} ${account}@example.com`);
    const answer = await outcome;
    const text = answer.params.at(-1) ?? '';
    const confirmed =
      answer.command === '900' || / is now registered to /i.test(text) || /^Nickname \S+ registered\b/i.test(text);
    if (!confirmed) throw new Error(`NickServ refused REGISTER ${account}: ${text}`);
  } finally {
    await client.quit('registered');
  }
}
