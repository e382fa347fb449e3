/**
 * The package's entry: the API for embedding the host or writing plugins (lib/sdk.ts), the built-in
 * plugins, which lib/ itself never imports, and the types of the services they provide. Importing a
 * type from here brings their declarations in `Services`, so an outside plugin that uses
 * `stats.activity` is typed as a built-in one is.
 * @packageDocumentation
 */
export * from '../lib/sdk.js';
export { builtinPlugins } from './builtin-plugins.js';
export type { ActivityService, HistoryService, RecordsService } from '../plugins/stats/services.js';
export type { PublicApi, PublicReadOptions } from '../plugins/api/public-service.js';
