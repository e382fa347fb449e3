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
  ensureDebianPackage(CHROMIUM, 'chromium');
}

/**
 * Installs a Debian package when `program` is missing, one apt-get at a time across test files (the test
 * networks' installs take the same lock). The package's own service is not started (policy-rc.d).
 */
export function ensureDebianPackage(program: string, debianPackage: string): void {
  if (fs.existsSync(program)) return;
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
    debianPackage,
  ];
  const update = [...sudo, 'apt-get', 'update', '-qq'];
  // A policy-rc.d that exits 101 keeps the package's postinst from starting its daemon (nginx on port 80).
  const policy = `[ -e /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\\nexit 101\\n' | ${sudo.join(' ')} tee /usr/sbin/policy-rc.d >/dev/null && ${sudo.join(' ')} chmod 755 /usr/sbin/policy-rc.d && made=1; }`;
  const unpolicy = `[ "$made" = 1 ] && ${sudo.join(' ')} rm -f /usr/sbin/policy-rc.d; true`;
  const script = `[ -e ${program} ] || { made=0; ${policy}; ${update.join(' ')} && ${install.join(' ')}; status=$?; ${unpolicy}; exit $status; }`;
  // The test network's installs take the same lock: apt-get runs once at a time.
  execFileSync('flock', [lock, 'sh', '-c', script], { stdio: 'ignore' });
  if (!fs.existsSync(program)) throw new Error(`apt-get did not install ${program} (package ${debianPackage})`);
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
