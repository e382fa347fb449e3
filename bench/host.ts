/**
 * The real host for a benchmark that needs no IRC network: the built-in plugins named in `plugins`, a
 * fake IRC connection that never registers (so the collector never syncs over the model the benchmark
 * builds), HTTP on a free loopback port, the store in a private temporary folder, only errors logged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { builtinPlugins } from '../app/builtin-plugins.js';
import { parseConfig } from '../lib/config.js';
import { Host } from '../lib/host.js';
import { createLogger } from '../lib/logger.js';
import { FakeTransport } from '../testing/fake-irc.js';

export interface BenchHost {
  host: Host;
  /** Stops the host and removes its store. */
  stop(): Promise<void>;
}

/** How a bench host logs: by default only errors, thrown away; `info` writes the access log as the default config does. */
export interface BenchHostLog {
  level: 'info' | 'error';
  /** Where lines go: nowhere (the default), or the process's stdout and stderr as the bot writes them. */
  to?: 'nowhere' | 'stdout';
}

export async function startBenchHost(
  plugins: Record<string, Record<string, unknown>>,
  log: BenchHostLog = { level: 'error' },
): Promise<BenchHost> {
  const storeDir = mkdtempSync(path.join(tmpdir(), 'bench-host-'));
  const config = parseConfig(
    JSON.stringify({
      irc: { host: '127.0.0.1', port: 6667, nick: 'DataBot' },
      http: { host: '127.0.0.1', port: 0 },
      store: { path: path.join(storeDir, 'store.json') },
      admins: [],
      log: { level: log.level },
      plugins,
    }),
    'bench config',
    {},
  );
  const logger = createLogger({ level: log.level, ...(log.to === 'stdout' ? {} : { sink: () => undefined }) });
  // Without this the fake connection would give up after the registration timeout, and the disconnect
  // would empty the model under load.
  const transport = new FakeTransport({ registrationTimeoutMs: 24 * 60 * 60 * 1000 });
  const host = new Host({ config, logger, plugins: builtinPlugins, transport });
  await host.start();
  return {
    host,
    async stop() {
      await host.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
