/**
 * The package's entry: the API for embedding the host or writing plugins (lib/sdk.ts), and the
 * built-in plugins, which lib/ itself never imports.
 * @packageDocumentation
 */
export * from '../lib/sdk.js';
export { builtinPlugins } from './builtin-plugins.js';
