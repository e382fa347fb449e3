/** The types of what the stats plugin's `stats.events` gives, read off the service's contract (Services). */
import type { Services } from '../../lib/sdk.js';

export type EventsService = Services['stats.events'];
export type NetworkEvent = Parameters<Parameters<EventsService['subscribe']>[0]>[0];
export type NetworkEventData = NonNullable<NetworkEvent['data']>;
export type NetworkEventType = NetworkEvent['type'];
