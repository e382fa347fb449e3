/** Config slice of the events plugin (`plugins.events`), written once: its type is read off the schema. */
import { ipv6PrefixLengthSchema, type FromJsonSchema } from '../../lib/sdk.js';
import { webhooksSchema } from './webhooks-config.js';

const count = (minimum: number, maximum: number, fallback: number, description: string) =>
  ({ type: 'integer', minimum, maximum, default: fallback, description }) as const;

export const eventsConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    buffer_events: count(
      100,
      1_000_000,
      10_000,
      'The most recent events kept for replay (Last-Event-ID, ?since=); older ones are dropped first.',
    ),
    buffer_seconds: count(
      10,
      86_400,
      600,
      'How long an event is kept for replay, in seconds, whatever the count; a reader who comes back later is told how many it missed.',
    ),
    max_streams: count(1, 100_000, 2_000, 'Open event streams at most, over every client.'),
    max_streams_per_address: count(1, 10_000, 10, 'Open event streams at most from one client address.'),
    ipv6_prefix_length: ipv6PrefixLengthSchema(
      'IPv6 client addresses count against max_streams_per_address as their network of this prefix length (one holder usually has a whole /64); IPv4 addresses each as itself.',
    ),
    max_streams_per_token: count(1, 10_000, 20, 'Open event streams at most with one API token.'),
    heartbeat_seconds: count(
      1,
      300,
      15,
      'A comment line is sent to every stream this often, so that proxies do not close idle ones.',
    ),
    max_buffered_kb: count(
      16,
      65_536,
      256,
      'The most a stream may have waiting for its client, in KiB; a client that falls further behind is sent an `end` event and disconnected.',
    ),
    write_interval_ms: count(
      0,
      10_000,
      25,
      'The least time between two writes of new events to the streams, in milliseconds: 0 writes them once the line that made them is handled. Under a steady flow of events a larger value means fewer, larger writes (less CPU with many streams) and up to that much more latency; an event after a quiet spell goes out at once.',
    ),
    retry_ms: count(
      100,
      600_000,
      3_000,
      'How long a browser waits before it reconnects a dropped stream (the `retry` field), in milliseconds.',
    ),
    webhooks: webhooksSchema,
  },
} as const;

export type EventsConfig = FromJsonSchema<typeof eventsConfigSchema>;
