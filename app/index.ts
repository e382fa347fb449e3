/**
 * The package's entry: the API for embedding the host or writing plugins (lib/index.ts), and the
 * built-in plugins, which lib/ itself never imports.
 * @packageDocumentation
 */
export * from '../lib/index.js';
export { builtinPlugins } from '../plugins/index.js';
