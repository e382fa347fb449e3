/**
 * The package's entry, for embedding the host: the API of the SDK (app/sdk.ts: lib/sdk.ts and the
 * contracts of the built-in plugins' services) and the built-in plugins, which lib/ itself never imports.
 * A plugin imports the SDK (`irc-network-data/sdk`) instead.
 * @module irc-network-data
 */
export * from './sdk.js';
export { builtinPlugins } from './builtin-plugins.js';
