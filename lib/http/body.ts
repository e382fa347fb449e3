/**
 * The body of a POST or PATCH: the media type is checked, the bytes are read within a limit, and
 * parsed: JSON checked against the route's schema, or an HTML form's fields on a route marked `form`.
 */
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import { ApiError, type ErrorDetail } from './errors.js';
import type { JsonSchema } from './types.js';

/** The default body limit in bytes (16 KiB). */
export const DEFAULT_BODY_LIMIT = 16 * 1024;

/** Checks a parsed body; returns the problems, empty when the body is valid. */
export type BodyValidator = (body: unknown) => ErrorDetail[];

// `format` stays an annotation, as draft 2020-12 specifies: no format plugin is installed,
// and strict mode would otherwise reject every schema that names one. The compiler keeps nothing between
// compilations: two servers in a process share no schema (not an `$id`). It is loaded with the first
// schema: the HTTP front's thread, which has no routes, never loads it.
let compiler: Ajv2020 | undefined;
function ajvCompiler(): Ajv2020 {
  if (!compiler) {
    const { Ajv2020: Compiler } = createRequire(import.meta.url)('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
    compiler = new Compiler({ allErrors: true, validateFormats: false });
  }
  return compiler;
}

/** Compile a route's body schema once, at registration; a broken schema throws there. */
export function compileBodySchema(schema: JsonSchema): BodyValidator {
  const ajv = ajvCompiler();
  let validate;
  try {
    validate = ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
  return (body) => (validate(body) ? [] : (validate.errors ?? []).map(toDetail));
}

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** One ajv error as a detail whose field is the JSON pointer of the offending value. */
function toDetail(error: ErrorObject): ErrorDetail {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    return { field: `${error.instancePath}/${escapePointerToken(params.missingProperty)}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return {
      field: `${error.instancePath}/${escapePointerToken(params.additionalProperty)}`,
      message: 'is not allowed',
    };
  }
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return {
      field: error.instancePath,
      message: `must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`,
    };
  }
  return { field: error.instancePath, message: error.message ?? `fails the "${error.keyword}" rule` };
}

/** The media type of a JSON body, and of an HTML form's (as browsers send a form without a file). */
export const JSON_MEDIA_TYPE = 'application/json';
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** 415 unless the request's `Content-Type` is `mediaType` (a UTF-8 charset parameter is fine). */
export function checkContentType(request: IncomingMessage, mediaType: string): void {
  const header = request.headers['content-type'] ?? '';
  const [sent = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((parameter) => parameter.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (sent !== mediaType || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new ApiError(
      415,
      'unsupported_media_type',
      `The body must be sent as Content-Type: ${mediaType} (UTF-8), got ${header === '' ? 'no Content-Type' : JSON.stringify(header)}`,
    );
  }
}

/** 415 unless the request says `Content-Type: application/json` (a UTF-8 charset parameter is fine). */
export function checkJsonContentType(request: IncomingMessage): void {
  checkContentType(request, JSON_MEDIA_TYPE);
}

function payloadTooLarge(limit: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The body exceeds the limit of ${limit} bytes`);
}

/** Raised when the client goes away before its body is complete; nobody is left to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('The client closed the connection before the request body was complete');
    this.name = 'ClientGoneError';
  }
}

/** 413 when the request declares a Content-Length over the limit. */
export function checkDeclaredLength(request: IncomingMessage, limit: number): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw payloadTooLarge(limit);
}

/**
 * Read the body bytes, refusing (413) a declared Content-Length over the limit up front and a
 * streamed body as soon as it passes the limit. Bytes past the limit are never kept: the
 * rest of the upload is discarded so the connection stays usable for the next request.
 */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  try {
    checkDeclaredLength(request, limit);
  } catch (error) {
    return Promise.reject(error as Error);
  }

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
    };
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      received += chunk.length;
      if (received > limit) {
        chunks.length = 0;
        settle(() => reject(payloadTooLarge(limit)));
      } else {
        chunks.push(chunk);
      }
    });
    request.once('end', () => settle(() => resolve(Buffer.concat(chunks))));
    request.once('error', () => settle(() => reject(new ClientGoneError())));
    request.once('close', () => settle(() => reject(new ClientGoneError())));
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parse the bytes as JSON and check them against the route's validator; 400 invalid_body otherwise. */
export function parseJsonBody(bytes: Buffer, validate: BodyValidator | undefined): unknown {
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(bytes));
  } catch {
    // JSON.parse's message quotes the input, which may hold a password: keep it out of the answer.
    throw new ApiError(
      400,
      'invalid_body',
      bytes.length === 0 ? 'The body is empty; send a JSON document' : 'The body is not valid UTF-8 JSON',
    );
  }
  const details = validate?.(body) ?? [];
  if (details.length > 0) {
    const summary = details.map((detail) => `${detail.field || '(the body)'} ${detail.message}`).join('; ');
    throw new ApiError(400, 'invalid_body', `The body is invalid: ${summary}`, details);
  }
  return body;
}

/**
 * The fields of an HTML form sent as `application/x-www-form-urlencoded` (UTF-8, as the pages' forms
 * declare); 400 invalid_body when the bytes are not UTF-8. Nothing of the body is quoted: a form may
 * carry a password.
 */
export function parseFormBody(bytes: Buffer): URLSearchParams {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError(400, 'invalid_body', 'The form is not valid UTF-8');
  }
  return new URLSearchParams(text);
}
