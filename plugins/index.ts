/**
 * The plugin registry: every plugin the host can load, in one place.
 * A plugin runs when the config has its key under `plugins`.
 */
import type { PluginDefinition } from '../lib/plugin.js';
import api from './api/index.js';
import nickserv from './nickserv/index.js';
import stats from './stats/index.js';
import tokens from './tokens/index.js';

export const builtinPlugins: readonly PluginDefinition<never>[] = [
  stats as PluginDefinition<never>,
  api as PluginDefinition<never>,
  tokens as PluginDefinition<never>,
  nickserv as PluginDefinition<never>,
];
