/** Config slice of the metrics plugin (`plugins.metrics`), written once: its type is read off the schema. */
import type { FromJsonSchema } from '../../lib/sdk.js';

export const metricsConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    allow: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: [],
      description:
        'Addresses and CIDR ranges (or loopback, linklocal, uniquelocal) that may read /metrics without a ' +
        'token, e.g. the Prometheus server. Anyone else needs an API token approved for the "metrics" endpoint. ' +
        'Behind a reverse proxy, the address is the one http.trust_proxy resolves.',
    },
  },
} as const;

/** `allow`. */
export type MetricsConfig = FromJsonSchema<typeof metricsConfigSchema>;
