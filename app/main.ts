#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2 --heap-growing-percent=20
/**
 * The command line: `irc-network-data --config <path>` (or IRC_DATA_CONFIG).
 * Loads and checks the config, starts the host, and stops it gracefully on
 * SIGINT/SIGTERM (a second signal exits at once).
 */
import { dirname } from 'node:path';
import { builtinPlugins } from './builtin-plugins.js';
import { loadPluginModules } from '../lib/plugin-modules.js';
import { ConfigError, configPathFrom, loadConfig } from '../lib/config.js';
import { Host, HostError } from '../lib/host.js';
import { createTransport } from '../lib/irc/create-transport.js';
import { createLogger, errorMessage } from '../lib/logger.js';
import { versionString } from '../lib/version.js';

async function main(): Promise<number> {
  let path: string | null;
  let config;
  let plugins;
  try {
    path = configPathFrom(process.argv.slice(2), process.env);
    if (!path) {
      process.stderr.write('usage: irc-network-data --config <path>   (or set IRC_DATA_CONFIG=<path>)\n');
      return 2;
    }
    config = await loadConfig(path, process.env);
    const outside = await loadPluginModules(
      config.plugin_modules,
      dirname(path),
      builtinPlugins.map((plugin) => plugin.name),
    );
    plugins = [...builtinPlugins, ...outside];
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`the configuration has ${error.problems.length} problem(s):\n`);
      for (const problem of error.problems) process.stderr.write(`  - ${problem}\n`);
      return 2;
    }
    throw error;
  }
  const logger = createLogger({ level: config.log.level, format: config.log.format });
  logger.info(`starting ${versionString}`, { config: path });
  const transport = await createTransport(config, logger.child('irc'));
  const host = new Host({ config, logger, plugins, transport });

  process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: errorMessage(reason) }));
  process.on('uncaughtException', (error) => logger.error('uncaught exception', { error: errorMessage(error) }));

  let signals = 0;
  const finished = new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      signals++;
      if (signals > 1) {
        logger.warn(`second ${signal}: exiting without waiting`);
        process.exit(130);
      }
      host.stop(`${config.irc.quit_message}`).then(
        () => resolve(0),
        (error: unknown) => {
          logger.error('stop failed', { error: errorMessage(error) });
          resolve(1);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  try {
    await host.start();
  } catch (error) {
    if (error instanceof HostError) {
      for (const problem of error.problems) logger.error(problem);
      await host.stop('Startup failed').catch(() => undefined);
      return 2;
    }
    throw error;
  }
  return finished;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fatal: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
