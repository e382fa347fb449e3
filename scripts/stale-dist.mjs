#!/usr/bin/env node
/**
 * Part of the build: removes from dist/ what tsc wrote for a source that is gone (a file moved or deleted
 * since the last build), which tsc itself never does, so that neither the package nor a test picks it up.
 * Only files without a source are removed: a bot or a test running from dist/ meanwhile keeps its files.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, 'dist');
/** What tsc writes for `x.ts` (and for `x.mts`, `x.cts`), by ending. */
const OUTPUTS = /\.(?:d\.[mc]?ts\.map|d\.[mc]?ts|[mc]?js\.map|[mc]?js)$/;

function sourceOf(file) {
  const relative = path.relative(dist, file);
  const base = relative.replace(OUTPUTS, '');
  const kind = /\.(?:d\.)?([mc]?)(?:ts|js)(?:\.map)?$/.exec(relative)?.[1] ?? '';
  return [path.join(root, `${base}.${kind}ts`), path.join(root, `${base}.d.${kind}ts`)];
}

let removed = 0;
function sweep(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      // The GeoIP data is copied, not compiled.
      if (file !== path.join(dist, 'geoip')) sweep(file);
    } else if (OUTPUTS.test(entry.name) && !sourceOf(file).some((source) => existsSync(source))) {
      rmSync(file);
      removed++;
    }
  }
}

if (existsSync(dist)) sweep(dist);
if (removed > 0) console.log(`build: removed ${removed} file(s) of dist/ whose source is gone`);
