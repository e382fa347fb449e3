#!/usr/bin/env node
/**
 * The package's `prepare`: builds dist/ wherever npm prepares it — in a clone after `npm ci`, for a git
 * dependency (npm installed the dev dependencies first), before `npm pack` — and for `npm install <folder>`
 * of a clone nobody has installed yet, where npm links the folder as it is: there it first installs the
 * clone's own dependencies (`npm ci`, without their install scripts), which the build needs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

function run(args) {
  const result = spawnSync('npm', args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!existsSync(path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'))) {
  console.log('prepare: installing the dependencies the build needs (npm ci --ignore-scripts)');
  run(['ci', '--ignore-scripts', '--no-audit', '--no-fund']);
}
run(['run', 'build']);
