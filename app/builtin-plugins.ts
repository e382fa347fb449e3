/**
 * The built-in plugins, in one place: the program (app/main.ts) and the package's entry offer them to the
 * host. A plugin runs when the config has its key under `plugins`.
 */
import type { PluginDefinition } from '../lib/sdk.js';
import account from '../plugins/account/index.js';
import api from '../plugins/api/index.js';
import events from '../plugins/events/index.js';
import metrics from '../plugins/metrics/index.js';
import nickserv from '../plugins/nickserv/index.js';
import stats from '../plugins/stats/index.js';
import tokens from '../plugins/tokens/index.js';
import web from '../plugins/web/index.js';

export const builtinPlugins: readonly PluginDefinition<never>[] = [
  stats as PluginDefinition<never>,
  api as PluginDefinition<never>,
  tokens as PluginDefinition<never>,
  nickserv as PluginDefinition<never>,
  web as PluginDefinition<never>,
  account as PluginDefinition<never>,
  metrics as PluginDefinition<never>,
  events as PluginDefinition<never>,
];
