/**
 * What both programs read before they start: the config file named on the command line (the program's
 * format), the plugins the host will run (the built-in ones and those `plugin_modules` names, loaded as the
 * program loads them), and a logger.
 */
import { dirname } from 'node:path';
import { builtinPlugins, createLogger, loadConfig, loadPluginModules } from '../../app/index.js';

export async function setup(program: string) {
  const configPath = process.argv[2];
  if (!configPath) {
    process.stderr.write(`usage: node ${program} <config.json>\n`);
    process.exit(2);
  }
  const config = await loadConfig(configPath);
  const builtinNames = builtinPlugins.map((plugin) => plugin.name);
  const outside = await loadPluginModules(config.plugin_modules, dirname(configPath), builtinNames);
  return {
    config,
    plugins: [...builtinPlugins, ...outside],
    logger: createLogger({ level: config.log.level, format: config.log.format }),
  };
}
