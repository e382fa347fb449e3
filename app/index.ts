/**
 * The package's entry, for embedding the host: the API of the SDK (lib/sdk.ts) and the built-in plugins,
 * which lib/ itself never imports. A plugin imports the SDK (`irc-network-data/sdk`) instead: it holds the
 * contracts of the services the built-in plugins share (`stats.activity`, `api.public`, ...).
 * @packageDocumentation
 */
export * from '../lib/sdk.js';
export { builtinPlugins } from './builtin-plugins.js';
