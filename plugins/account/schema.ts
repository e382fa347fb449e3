/** Config slice of the account pages (`plugins.account`), written once: its type is read off the schema. */
import type { FromJsonSchema } from '../../lib/sdk.js';

export const accountConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    session: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'How long a sign-in lasts.',
      properties: {
        idle_seconds: {
          type: 'integer',
          minimum: 60,
          maximum: 2_592_000,
          default: 3600,
          description: 'A session not used for this many seconds ends (default one hour).',
        },
        lifetime_seconds: {
          type: 'integer',
          minimum: 60,
          maximum: 31_536_000,
          default: 43_200,
          description:
            'A session ends this many seconds after its sign-in, however much it is used (default 12 hours).',
        },
        max_per_account: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          default: 10,
          description: 'Sessions one account may hold at once; a sign-in beyond that ends its oldest session.',
        },
      },
    },
    public_origin: {
      type: ['string', 'null'],
      pattern: '^https?://[^/?#\\s]+$',
      'x-expected': 'an origin such as "https://irc.example.net" (scheme, host and port; no path)',
      default: null,
      description:
        'The origin browsers reach the website at, e.g. "https://irc.example.net": a form sent from any other ' +
        "origin is refused. Null takes the request's own: its Host header, with https when it came over HTTPS. " +
        'Set it behind a reverse proxy that changes Host.',
    },
  },
} as const;

/** `session` (`idle_seconds`, `lifetime_seconds`, `max_per_account`) and `public_origin`. */
export type AccountConfig = FromJsonSchema<typeof accountConfigSchema>;
