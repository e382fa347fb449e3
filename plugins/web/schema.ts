/** Config slice of the website (`plugins.web`), written once: its type is read off the schema. */
import type { FromJsonSchema } from '../../lib/sdk.js';

export const webConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    network_name: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 100,
      default: null,
      description: "The network's name heading every page; null takes the IRC server's (ISUPPORT NETWORK).",
    },
    cache_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: 3600,
      default: 10,
      description: 'Seconds a page may be cached by browsers and proxies (Cache-Control max-age).',
    },
    live_seconds: {
      type: 'integer',
      minimum: 5,
      maximum: 3600,
      default: 15,
      description:
        "Seconds between the status and channel pages' reads of their numbers where they have no event stream to follow (the events plugin is off, or the browser cannot), and between the status page's chart refreshes while its counts are ahead of it.",
    },
  },
} as const;

/** `network_name`, `cache_seconds`, `live_seconds`. */
export type WebConfig = FromJsonSchema<typeof webConfigSchema>;
