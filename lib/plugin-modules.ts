/**
 * Plugins from outside the package, named in the config's `plugin_modules`: each is a JavaScript module
 * whose default export is a plugin definition (`definePlugin({...})`), found by a path relative to the
 * config file. The program adds them to the built-in plugins before the host checks `plugins`.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from './config.js';
import { errorMessage } from './logger.js';
import type { PluginDefinition } from './plugin.js';

function isPluginDefinition(value: unknown): value is PluginDefinition<never> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof PluginDefinition, unknown>>;
  return (
    typeof candidate.name === 'string' &&
    candidate.name !== '' &&
    typeof candidate.start === 'function' &&
    typeof candidate.configSchema === 'object' &&
    candidate.configSchema !== null
  );
}

/**
 * Import each module of `modules` (paths relative to `baseDir`, the config file's folder) and return
 * their plugin definitions, in order. Throws ConfigError naming every module that cannot be loaded or
 * does not export a plugin, and every name that a built-in plugin (`taken`) or an earlier module has.
 */
export async function loadPluginModules(
  modules: readonly string[],
  baseDir: string,
  taken: readonly string[] = [],
): Promise<PluginDefinition<never>[]> {
  const problems: string[] = [];
  const loaded: PluginDefinition<never>[] = [];
  const names = new Set(taken);
  for (const [index, module] of modules.entries()) {
    const key = `config.plugin_modules[${index}]`;
    const file = path.resolve(baseDir, module);
    let exported: unknown;
    try {
      exported = ((await import(pathToFileURL(file).href)) as { default?: unknown }).default;
    } catch (error) {
      problems.push(`${key}: cannot load ${file}: ${errorMessage(error)}`);
      continue;
    }
    if (!isPluginDefinition(exported)) {
      problems.push(
        `${key}: ${file} does not export a plugin as its default export (export default definePlugin({...}))`,
      );
    } else if (names.has(exported.name)) {
      problems.push(
        `${key}: ${file} exports the plugin "${exported.name}", but a plugin of that name is already loaded`,
      );
    } else {
      names.add(exported.name);
      loaded.push(exported);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return loaded;
}
