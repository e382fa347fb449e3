/** Config slice of the HTTP API (`plugins.api`). */
export interface ApiConfig {
  /** Seconds public responses may be cached (`Cache-Control: public, max-age`). */
  cache_seconds: number;
}

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
  },
} as const;
