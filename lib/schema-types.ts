/**
 * Types from JSON Schemas: a config or an answer is written once, as its schema (with `as const`), and its
 * TypeScript type is read off it. ajv stays the validator; json-schema-to-ts reads the types.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * What a value that passed `Schema` looks like once ajv filled in its defaults: a property with a
 * `default` is there, one without is optional unless `required` says otherwise.
 */
export type FromJsonSchema<Schema extends JSONSchema> = FromSchema<Schema>;

export type { JSONSchema as TypedJsonSchema } from 'json-schema-to-ts';
