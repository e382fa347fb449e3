/**
 * Debian's nginx (installed when missing) running the site config the project ships
 * (deploy/nginx/irc-network-data.conf) in front of a bot, on a free loopback port, in a private folder.
 * Only what a test machine cannot have is changed: the TLS server listens in plain HTTP on the free port
 * (the redirect from port 80 goes), the upstream is the bot's port, and the cache lives in the folder.
 * Each change must find what it changes, so the shipped file cannot drift away from what is tested.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureDebianPackage } from './browser.js';
import { findRepoRoot } from './testnet.js';

export const NGINX = '/usr/sbin/nginx';
export const SITE_CONFIG = path.join(findRepoRoot(), 'deploy', 'nginx', 'irc-network-data.conf');

export interface RunningNginx {
  url: string;
  port: number;
  dir: string;
  /** The site config as nginx runs it. */
  site: string;
  stop(): Promise<void>;
}

/** A port nobody listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function replaceOnce(text: string, pattern: RegExp, replacement: string, what: string): string {
  if (!pattern.test(text)) throw new Error(`${SITE_CONFIG} no longer has ${what} (${pattern})`);
  return text.replace(pattern, replacement);
}

/** The shipped site, made to run here: plain HTTP on `port`, the bot on `botPort`, the cache in `cacheDir`. */
export function testSite(shipped: string, port: number, botPort: number, cacheDir: string): string {
  let site = shipped;
  site = replaceOnce(
    site,
    /proxy_cache_path \/var\/cache\/nginx\/irc-network-data /,
    `proxy_cache_path ${cacheDir} `,
    'the cache path',
  );
  site = replaceOnce(site, /server 127\.0\.0\.1:8080;/, `server 127.0.0.1:${botPort};`, 'the upstream');
  site = replaceOnce(
    site,
    /\n# Plain HTTP only redirects to HTTPS\.\nserver \{[^}]*\}\n/,
    '\n',
    'the redirect from port 80',
  );
  site = replaceOnce(site, /listen 443 ssl http2;/, `listen 127.0.0.1:${port};`, 'the TLS listen');
  site = replaceOnce(site, /\n\s*listen \[::\]:443 ssl http2;/, '', 'the IPv6 TLS listen');
  site = replaceOnce(site, /(\n\s*ssl_[a-z_]+ [^\n]*;)+/, '', 'the certificate lines');
  return site;
}

export async function startNginx(botPort: number): Promise<RunningNginx> {
  ensureDebianPackage(NGINX, 'nginx');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nginx-test-'));
  // nginx's workers run as nobody: they must reach the folder, and write the cache and temp files.
  fs.chmodSync(dir, 0o755);
  for (const sub of ['cache', 'temp', 'logs']) fs.mkdirSync(path.join(dir, sub), { mode: 0o777 });
  for (const sub of ['cache', 'temp', 'logs']) fs.chmodSync(path.join(dir, sub), 0o777);
  const port = await freePort();
  const site = testSite(fs.readFileSync(SITE_CONFIG, 'utf8'), port, botPort, path.join(dir, 'cache'));
  fs.writeFileSync(path.join(dir, 'site.conf'), site);
  const temp = path.join(dir, 'temp');
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      'daemon off;',
      `pid ${path.join(dir, 'nginx.pid')};`,
      `error_log ${path.join(dir, 'logs', 'error.log')} warn;`,
      'events { worker_connections 256; }',
      'http {',
      `  access_log ${path.join(dir, 'logs', 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${temp}/${kind};`),
      `  include ${path.join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(
    NGINX,
    ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'logs', 'error.log')],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready once it accepts connections.
  const deadline = Date.now() + 10000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = fs.readFileSync(path.join(dir, 'logs', 'error.log'), 'utf8');
      throw new Error(`nginx exited (${child.exitCode}): ${stderr}${log}`);
    }
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) break;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} within 10 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    site,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
