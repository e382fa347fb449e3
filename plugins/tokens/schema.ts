/** Config slice of the token plugin (`plugins.tokens`). */
import type { FromJsonSchema } from '../../lib/sdk.js';

/** A token bucket: `capacity` requests at once, refilled at `refill_per_second`. */
export type { BucketConfig } from '../../lib/sdk.js';

const bucketSchema = (capacity: number, refill: number, who: string) =>
  ({
    type: 'object',
    additionalProperties: false,
    default: {},
    description: `Token bucket ${who}.`,
    properties: {
      capacity: {
        type: 'integer',
        minimum: 1,
        default: capacity,
        description: 'Requests allowed in a burst (the bucket size).',
      },
      refill_per_second: {
        type: 'number',
        exclusiveMinimum: 0,
        default: refill,
        description: 'Requests added back to the bucket every second (the sustained rate).',
      },
    },
  }) as const;

export const tokensConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    opers_are_admins: {
      type: 'boolean',
      default: false,
      description:
        'Treat IRC operators (WHOIS 313) who are logged in to an account as administrators of tokens, besides the accounts in "admins".',
    },
    max_tokens_per_account: {
      type: 'integer',
      minimum: 1,
      default: 10,
      description: 'How many live (not revoked) tokens one account may hold.',
    },
    max_created_per_day: {
      type: 'integer',
      minimum: 1,
      default: 20,
      description:
        'How many tokens one account may make in 24 hours, revoked ones included (create-then-revoke would ' +
        'otherwise grow the tokens and the audit log without bound).',
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Rate limits of the HTTP API (token buckets); answers 429 rate_limited with Retry-After.',
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Set to false to turn every rate limit off.' },
        public: bucketSchema(60, 1, 'per client IP on public paths (failed token authentications also draw from it)'),
        token: bucketSchema(120, 2, 'per API token on token and staff paths'),
      },
    },
  },
} as const;

/** The tokens plugin's settings: `opers_are_admins`, `max_tokens_per_account`, and the HTTP `rate_limit` buckets. */
export type TokensConfig = FromJsonSchema<typeof tokensConfigSchema>;
