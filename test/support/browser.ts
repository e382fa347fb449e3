/**
 * A real browser for the website's tests: Debian's `chromium` (installed with apt-get when missing, one
 * install at a time across test files), driven headless by puppeteer-core.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Installs Debian's chromium when it is missing. */
export function ensureChromium(): void {
  if (fs.existsSync(CHROMIUM)) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const lock = path.join(os.tmpdir(), 'ircnet-install.lock');
  const install = [
    ...sudo,
    'env',
    'DEBIAN_FRONTEND=noninteractive',
    'apt-get',
    'install',
    '-y',
    '-qq',
    '--no-install-recommends',
    'chromium',
  ];
  const update = [...sudo, 'apt-get', 'update', '-qq'];
  // The test network's installs take the same lock: apt-get runs once at a time.
  execFileSync('flock', [lock, 'sh', '-c', `${update.join(' ')} && ${install.join(' ')}`], { stdio: 'ignore' });
  if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get did not install ${CHROMIUM}`);
}

/** Headless chromium. As root it must run without its sandbox (which needs an unprivileged user). */
export async function launchBrowser(): Promise<Browser> {
  ensureChromium();
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
    ],
  });
}
