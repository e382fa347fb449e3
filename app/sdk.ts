/**
 * The package's SDK (`irc-network-data/sdk`), what a plugin from outside this repository imports: the
 * core's SDK (lib/sdk.ts, which the built-in plugins import) and the contracts of the built-in plugins'
 * services that any plugin may use. Each contract lives in its plugin and adds its service to `Services`
 * there; re-exporting its types here brings that addition along to whoever imports this entry, so an
 * outside plugin's `services.get('stats.activity')` is typed, while lib/ never imports plugins/. Types
 * only from plugins/: importing this entry loads no plugin.
 * @module irc-network-data/sdk
 */
export * from '../lib/sdk.js';
export type {
  ActivityDay,
  ActivityService,
  ChannelActivity,
  ChannelLines,
  ChannelRecord,
  EventsService,
  HistoryPoint,
  HistoryService,
  NickActivity,
  NetworkEvent,
  NetworkEventData,
  NetworkEventType,
  NickLines,
  RecordsService,
} from '../plugins/stats/contract.js';
export type { PublicApi, PublicReadOptions } from '../plugins/api/contract.js';
