/** Config slice of the token plugin (`plugins.tokens`). */
import { ipv6PrefixLengthSchema, type FromJsonSchema } from '../../lib/sdk.js';

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
    retention: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        'What the tokens slice keeps. Checked at start and every hour; what is past it is appended to the ' +
        'archive file (store.archive_dir, tokens.jsonl) and then forgotten.',
      properties: {
        revoked_days: {
          type: 'integer',
          minimum: 1,
          default: 90,
          description: 'Days a revoked token is kept after its revocation (its id is never handed out again).',
        },
        audit_days: {
          type: 'integer',
          minimum: 1,
          default: 365,
          description: 'Days an audit entry is kept.',
        },
        audit_max_entries: {
          type: 'integer',
          minimum: 100,
          default: 100_000,
          description: 'The most audit entries kept; the oldest beyond it go first, whatever their age.',
        },
      },
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
        ipv6_prefix_length: ipv6PrefixLengthSchema(
          'IPv6 client addresses share the public bucket of their network of this prefix length (one holder ' +
            'usually has a whole /64); IPv4 addresses each have their own.',
        ),
      },
    },
  },
} as const;

/** The tokens plugin's settings: `opers_are_admins`, `max_tokens_per_account`, and the HTTP `rate_limit` buckets. */
export type TokensConfig = FromJsonSchema<typeof tokensConfigSchema>;
