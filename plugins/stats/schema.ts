/** Config slice of the collector (`plugins.stats`). */
import type { FromJsonSchema } from '../../lib/sdk.js';

export const statsConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    refresh_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 86400,
      default: 60,
      description: 'Full sync (LUSERS, LINKS, LIST, WHO) every this many seconds.',
    },
    latency_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 86400,
      default: 30,
      description: 'Measure the round trip to every linked server every this many seconds.',
    },
    commands_refresh_seconds: {
      type: 'integer',
      minimum: 1,
      // Node's timers hold at most 2^31 - 1 ms (24.8 days).
      maximum: 2000000,
      default: 21600,
      description: 'Ask the services for their command lists every this many seconds.',
    },
    join: {
      anyOf: [{ type: 'array', items: { type: 'string', pattern: '^[#&+!]' } }, { const: '*' }],
      default: '*',
      description: 'Channels the bot joins: a list of names, or "*" for every visible channel (up to max_channels).',
    },
    max_channels: {
      type: 'integer',
      minimum: 0,
      default: 200,
      description: 'With join "*", join at most this many channels (the biggest first).',
    },
    services: {
      type: 'array',
      items: { type: 'string' },
      default: ['NickServ', 'ChanServ', 'OperServ', 'MemoServ', 'HostServ', 'BotServ'],
      description: 'Service nicks asked for HELP; SaslServ is left out on purpose (it has no commands).',
    },
    services_servers: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'Server names to mark as services (U-lined). The server NickServ is on is always marked.',
    },
    who_chunk_above: {
      type: 'integer',
      minimum: 0,
      default: 1000,
      description:
        'With more users than this on the network, WHO is asked in chunks by the first letter of the nick, ' +
        'so no single reply can overflow the send queue the server keeps for the bot (1 MB by default on InspIRCd). ' +
        'A server that answers a WHO with fewer rows (ircd-hybrid 500, ngIRCd 25) is asked in chunks from that many on.',
    },
    list_chunk_above: {
      type: 'integer',
      minimum: 0,
      default: 2000,
      description:
        'With more channels than this on the network, LIST is asked in bands of user counts (when the server ' +
        'supports ELIST=U), for the same reason.',
    },
    time_zone: {
      type: 'string',
      minLength: 1,
      default: 'UTC',
      description: 'IANA time zone whose midnight starts a new day for the activity counts, e.g. "Europe/Berlin".',
    },
    retention_days: {
      type: 'integer',
      minimum: 1,
      maximum: 3660,
      default: 30,
      description: 'Days of activity counts kept, today included (per hour for today, per day before).',
    },
    save_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 3600,
      default: 60,
      description:
        'Write new activity counts and channel records to the store at most this often; they are always written at shutdown.',
    },
    history_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 86400,
      default: 300,
      description: 'Record a history point (users, channels, operators, servers, max users) every this many seconds.',
    },
    history_full_days: {
      type: 'integer',
      minimum: 1,
      maximum: 3660,
      default: 7,
      description: 'Days history points are kept at full resolution; older ones are merged into hourly points.',
    },
    history_hourly_days: {
      type: 'integer',
      minimum: 1,
      maximum: 36600,
      default: 90,
      description: 'Days hourly history points are kept; older ones are merged into daily points.',
    },
    history_daily_days: {
      type: 'integer',
      minimum: 1,
      maximum: 36600,
      default: 730,
      description: 'Days daily history points are kept.',
    },
    version_requests_per_second: {
      type: 'number',
      minimum: 0,
      maximum: 10,
      default: 1,
      description:
        'CTCP VERSION requests sent per second at most, to learn which client each user runs; 0 asks nobody.',
    },
    version_retry_seconds: {
      type: 'integer',
      minimum: 1,
      maximum: 2000000,
      default: 86400,
      description: 'A user who did not answer CTCP VERSION is asked again after this many seconds.',
    },
    whois_per_second: {
      type: 'number',
      minimum: 0,
      maximum: 10,
      default: 1,
      description:
        'On a server without WHOX (ngircd) WHO shows no account and no IP: each user is asked WHOIS ' +
        'once per connection, at most this many a second, for their account and (as an operator) their IP; 0 asks nobody.',
    },
    geoip_database: {
      type: ['string', 'null'],
      minLength: 1,
      default: null,
      description:
        "Path of a country database in MaxMind's format (.mmdb), e.g. the GeoLite2-Country.mmdb that geoipupdate " +
        'keeps up to date; null takes the GeoLite2 country data packaged with the bot.',
    },
  },
} as const;

/** The collector's settings, as the schema above describes them. */
export type StatsConfig = FromJsonSchema<typeof statsConfigSchema>;
