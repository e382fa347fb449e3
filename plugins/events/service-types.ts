/** The types of what the stats plugin's `stats.events` gives, read off the service's contract (Services), and the list of event types. */
import type { Services } from '../../lib/sdk.js';

export type EventsService = Services['stats.events'];
export type NetworkEvent = Parameters<Parameters<EventsService['subscribe']>[0]>[0];
export type NetworkEventData = NonNullable<NetworkEvent['data']>;
export type NetworkEventType = NetworkEvent['type'];

/** Every event type, in the order the docs list them; the compiler holds the list to the contract's, both ways. */
export const EVENT_TYPES = [
  'join',
  'part',
  'kick',
  'quit',
  'nick',
  'topic',
  'mode',
  'away',
  'account',
  'connect',
  'channel_created',
  'channel_emptied',
  'server_linked',
  'server_split',
  'counts',
] as const satisfies readonly NetworkEventType[];
const everyType: [Exclude<NetworkEventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : never = true;
void everyType;
