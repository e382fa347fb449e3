/**
 * What every list route shares: the DRF-style page envelope as a schema, and
 * the `limit`, `offset`, `search`, `ordering` query parameters as the OpenAPI
 * document shows them. `paginate()` (lib/http/paging.ts) applies them.
 */
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../lib/http/paging.js';
import type { JsonSchema, RouteDefinition } from '../../lib/http/types.js';

/** Schema of a page whose `results` are `item`s. */
export function pageSchema(item: JsonSchema, extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    required: ['count', 'next', 'previous', 'results'],
    additionalProperties: false,
    properties: {
      count: { type: 'integer', minimum: 0, description: 'Items matching the query, on all pages.' },
      next: { type: ['string', 'null'], description: 'Path and query of the next page; null on the last page.' },
      previous: { type: ['string', 'null'], description: 'Path and query of the previous page; null on the first.' },
      results: { type: 'array', items: item },
      ...extra,
    },
  };
}

/** The query parameters of a list: paging, a search of `searchOf`, ordering by one of `orderingFields`. */
export function listQueryParameters(
  searchOf: string,
  orderingFields: readonly string[],
  defaultOrdering: string,
): NonNullable<RouteDefinition['queryParameters']> {
  return [
    {
      name: 'limit',
      description: `Items per page (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    },
    {
      name: 'offset',
      description: 'Items to skip before the page starts.',
      schema: { type: 'integer', minimum: 0, default: 0 },
    },
    {
      name: 'search',
      description: `Case-insensitive substring of ${searchOf}.`,
      schema: { type: 'string' },
    },
    {
      name: 'ordering',
      description: `Field to order by, "-" first for descending (default ${defaultOrdering}).`,
      schema: { type: 'string', enum: orderingFields.flatMap((field) => [field, `-${field}`]) },
    },
  ];
}

/** Nullable ISO-8601 UTC time. */
export const nullableTime: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
