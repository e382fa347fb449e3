/** Config slice of the HTTP API (`plugins.api`), written once: its type is read off the schema. */
import type { FromJsonSchema } from '../../lib/sdk.js';

export const apiConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cache_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: 3600,
      default: 10,
      description: 'Seconds public responses may be cached by clients and proxies (Cache-Control max-age).',
    },
    reuse_ms: {
      type: 'integer',
      minimum: 0,
      maximum: 60000,
      default: 1000,
      description:
        'While the network keeps changing, each answer is computed at most once per this many milliseconds ' +
        'and reused meanwhile, so an answer may be that far behind the network; 0 computes one anew after ' +
        'every change (on a busy network every request then pays for a whole list).',
    },
  },
} as const;

/** `cache_seconds`: seconds public answers may be cached; `reuse_ms`: how long an answer is reused while the network changes. */
export type ApiConfig = FromJsonSchema<typeof apiConfigSchema>;
