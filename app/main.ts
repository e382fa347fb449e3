#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2 --heap-growing-percent=20
/**
 * The command line: `irc-network-data --config <path>` (or IRC_DATA_CONFIG).
 * Loads and checks the config, starts the host, and stops it gracefully on
 * SIGINT/SIGTERM (a second signal exits at once).
 *
 * `irc-network-data <command> [words…] --config <path>` runs a command a plugin added to the command line
 * (`token list`), in a host started from the same config that neither connects to IRC nor listens: it holds
 * the store while the command runs, and is refused while a bot holds it.
 */
import { dirname } from 'node:path';
import { builtinPlugins } from './builtin-plugins.js';
import { loadPluginModules } from '../lib/plugin-modules.js';
import { ConfigError, configPathFrom, loadConfig } from '../lib/config.js';
import { Host, HostError, type HostOptions } from '../lib/host.js';
import { createTransport } from '../lib/irc/create-transport.js';
import { createLogger, errorMessage, flushLogs } from '../lib/logger.js';
import { versionString } from '../lib/version.js';

/** The words of the command line without `--config <path>` and `--config=<path>`. */
function withoutConfigOption(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    if (argv[index] === '--config') index++;
    else if (!argv[index]!.startsWith('--config=')) words.push(argv[index]!);
  }
  return words;
}

const USAGE =
  'usage: irc-network-data --config <path>   (or set IRC_DATA_CONFIG=<path>)\n' +
  '       irc-network-data <command> [words…] --config <path>   (irc-network-data help lists the commands)\n';

async function main(): Promise<number> {
  const words = withoutConfigOption(process.argv.slice(2));
  let path: string | null;
  let config;
  let plugins;
  try {
    path = configPathFrom(process.argv.slice(2), process.env);
    if (!path) {
      process.stderr.write(USAGE);
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
  if (words.length > 0) return runCommand(words, { config, plugins });
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

/** `irc-network-data <command> …`: a plugin's command-line command in a host that neither connects nor listens. */
async function runCommand(
  [name, ...args]: string[],
  { config, plugins }: Pick<HostOptions, 'config' | 'plugins'>,
): Promise<number> {
  // An answer piped into `head` ends early: so does the command, as any command line tool does.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(0);
    });
  }
  // Its own log lines are of no interest unless something is wrong: warnings and errors, to stderr.
  const logger = createLogger({
    level: 'warn',
    format: config.log.format,
    sink: (line) => process.stderr.write(`${line}\n`),
  });
  const transport = await createTransport(config, logger.child('irc'));
  const host = new Host({ config, logger, plugins, transport, listen: false, connect: false });
  try {
    await host.start();
  } catch (error) {
    if (!(error instanceof HostError)) throw error;
    for (const problem of error.problems) process.stderr.write(`${problem}\n`);
    await host.stop('Startup failed').catch(() => undefined);
    return 2;
  }
  try {
    const commands = host.commandLineCommands();
    const found = commands.find(({ command }) => command.name === name);
    if (!found) {
      const known = commands.map(({ command, plugin }) => `  ${command.name}  ${command.summary} (plugin ${plugin})`);
      const lines = known.length > 0 ? known : ['  (none: no enabled plugin adds a command)'];
      const asked = name === 'help' || name === '--help' || name === '-h';
      (asked ? process.stdout : process.stderr).write(
        `${asked ? '' : `unknown command "${name}"\n`}${USAGE}commands:\n${lines.join('\n')}\n`,
      );
      return asked ? 0 : 2;
    }
    return await found.command.run(args, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await host.stop('command line done');
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // The lines logged before it first, so that the fatal message is the last.
    flushLogs();
    process.stderr.write(`fatal: ${errorMessage(error)}\n`);
    process.exit(1);
  },
);
