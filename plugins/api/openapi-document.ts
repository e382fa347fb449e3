/**
 * The OpenAPI 3.1 document, generated from the route table (`http.routes()`): the same definitions
 * (paths, tiers, names, summaries, JSON schemas, query parameters) the server uses and each plugin
 * declares of its own routes, so the document cannot drift from what is served. The error responses follow
 * the HTTP contract: every error has the body `{"error": {status, code, message}}`.
 * The server answers HEAD wherever a GET is routed, with the GET's status and headers
 * and never a body (errors included), so each GET has a HEAD operation that says so.
 */
import { openApiPath, type JsonSchema, type RegisteredRoute, type RouteDefinition } from '../../lib/sdk.js';

export interface OpenApiInfo {
  title: string;
  /** The API's version (the `API-Version` header), not the package's. */
  version: string;
  description?: string;
}

export type OpenApiDocument = Record<string, unknown> & {
  openapi: string;
  info: OpenApiInfo;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
};

/** The name of the security scheme of the token and staff tiers. */
export const TOKEN_SCHEME = 'tokenAuth';

/** The contract's error body. */
export const errorBodySchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['status', 'code', 'message'],
      additionalProperties: false,
      properties: {
        status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status, repeated.' },
        code: { type: 'string', description: 'A stable machine-readable code, e.g. `channel_not_found`.' },
        message: { type: 'string', description: 'What went wrong, for people.' },
        details: {
          type: 'array',
          description: 'For `invalid_body` and `invalid_parameter`: each offending field.',
          items: {
            type: 'object',
            required: ['field', 'message'],
            additionalProperties: false,
            properties: {
              field: { type: 'string', description: 'JSON pointer into the body, or the parameter name.' },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

interface ErrorResponse {
  component: string;
  description: string;
  headers?: readonly HeaderName[];
  rateLimits?: false;
  requestBody?: true;
}

/**
 * Each error response the document refers to: status, component name, when it happens and its codes,
 * and the headers it carries besides `API-Version` and `Cache-Control`, which every error has.
 * `requestBody` errors only answer a request that has a body, so no HEAD gets them. No operation
 * lists the 405: it answers the methods the document has no operation for. `rateLimits: false`
 * marks errors answered before the rate limit hook runs that add no rate limit headers of their
 * own, so they never carry `RateLimit-*`.
 */
const ERROR_RESPONSES = {
  400: {
    component: 'BadRequest',
    description:
      'A bad query parameter (`invalid_parameter`) or body (`invalid_body`). A malformed percent-escape in the path ' +
      'is refused before the rate limits count the request, so that answer has no `RateLimit-*` headers.',
  },
  401: {
    component: 'Unauthorized',
    description:
      'No `Authorization` header, a malformed one, or an unknown or revoked token (`unauthorized`). A public ' +
      'path needs no token, but a request that presents one (the `Token` scheme) there is refused this way too ' +
      'when it is not live. Carries ' +
      '`WWW-Authenticate: Token`, and no `RateLimit-*` headers, even where refusals count against the rate limit.',
    headers: ['WWW-Authenticate'],
    rateLimits: false,
  },
  403: { component: 'Forbidden', description: 'The token is not approved for this endpoint (`forbidden`).' },
  404: {
    component: 'NotFound',
    description:
      'No such name (`channel_not_found`, `server_not_found`, `user_not_found`, `operator_not_found`, `not_found`). ' +
      'A path the server does not have at all is `not_found` too, and has no `RateLimit-*` headers.',
  },
  405: {
    component: 'MethodNotAllowed',
    description:
      'The path is served, but not with this method (`method_not_allowed`). Carries `Allow`. No operation lists ' +
      'this response: it answers the methods a path of the document has no operation for.',
    headers: ['Allow'],
    rateLimits: false,
  },
  413: {
    component: 'PayloadTooLarge',
    description: 'The body is over the size limit (`payload_too_large`).',
    requestBody: true,
  },
  415: {
    component: 'UnsupportedMediaType',
    description: 'The body is not `application/json` (`unsupported_media_type`).',
    requestBody: true,
  },
  429: {
    component: 'RateLimited',
    description: 'Over a rate limit (`rate_limited`). Carries `Retry-After` in seconds.',
    headers: ['Retry-After'],
  },
  500: { component: 'Internal', description: 'A bug (`internal`); the message never carries details.' },
  503: {
    component: 'Unavailable',
    description:
      'The data is not there yet: not connected, not synced yet, or a service cannot be reached (`unavailable`). ' +
      'May carry `Retry-After` in seconds when the wait is known to be short (all credential-check connections busy).',
    headers: ['Retry-After'],
  },
} as const satisfies Record<number, ErrorResponse>;

type ErrorStatus = keyof typeof ERROR_RESPONSES;

const HEADERS = {
  Allow: {
    description: 'The methods the path is served with, e.g. `GET, HEAD`.',
    schema: { type: 'string' },
  },
  'API-Version': { description: 'The API version of the response: 1.', schema: { type: 'string', const: '1' } },
  'Cache-Control': {
    description:
      '`public, max-age=<n>` on public answers to GET, `private, no-store` on token and staff answers, ' +
      '`no-store` on errors and on public answers to other methods.',
    schema: { type: 'string' },
  },
  'Content-Encoding': {
    description:
      '`gzip` when the request accepts it (`Accept-Encoding`) and the body is one the server sends again and ' +
      'again (a kept page of a list, a network statistics answer) of 1 KB or more, once its compressed copy is ' +
      'made (from the second time it is asked for). Otherwise absent: the body is sent as it is.',
    schema: { type: 'string', const: 'gzip' },
  },
  ETag: {
    description:
      'Strong entity tag of the body; send it back in `If-None-Match` to get 304. The gzip form of a body has ' +
      'a tag of its own (the hash of its bytes).',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: 'When rate limits are on: the size of the bucket the request drew from, in requests.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'When rate limits are on: the whole requests left in that bucket.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'When rate limits are on: seconds until that bucket is full again.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
  Vary: {
    description: '`Accept-Encoding` on a GET answer that may go gzip (see `Content-Encoding`), and on its 304.',
    schema: { type: 'string', const: 'Accept-Encoding' },
  },
  'WWW-Authenticate': { description: 'Always `Token`.', schema: { type: 'string' } },
} as const;

type HeaderName = keyof typeof HEADERS;

const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/** The component of an error's bodiless HEAD answer, next to the GET's: `NotFound` → `HeadNotFound`. */
const headComponent = (status: ErrorStatus): string => `Head${ERROR_RESPONSES[status].component}`;

/** An OpenAPI operation object. */
type Operation = Record<string, unknown> & { operationId: string; responses: Record<string, unknown> };

function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]!);
}

function errorStatuses(route: RouteDefinition): ErrorStatus[] {
  const statuses: ErrorStatus[] = [];
  const hasParameters = pathParameterNames(route.path).length > 0 || (route.queryParameters?.length ?? 0) > 0;
  const hasBody = route.method === 'POST' || route.method === 'PATCH';
  if (hasParameters || hasBody) statuses.push(400);
  // A public path answers 401 only to a token presented anyway that is not live.
  statuses.push(401);
  if (route.tier !== 'public') statuses.push(403);
  if (pathParameterNames(route.path).length > 0) statuses.push(404);
  if (hasBody) statuses.push(413, 415);
  statuses.push(429, 500, 503);
  return statuses;
}

function parametersOf(route: RouteDefinition): Record<string, unknown>[] {
  return [
    ...pathParameterNames(route.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      description: 'Percent-decoded once (a channel\'s "#" is written %23); compared with the network\'s CASEMAPPING.',
      schema: { type: 'string' },
    })),
    ...(route.queryParameters ?? []).map((parameter) => ({
      name: parameter.name,
      in: parameter.in ?? 'query',
      required: false,
      description: parameter.description,
      schema: parameter.schema,
    })),
  ];
}

/**
 * The tokens plugin's rate limit hook, on by default, adds these to every answer it lets through (errors
 * included), and its guards to their 403 and to each 429 they give.
 */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': headerRef('RateLimit-Limit'),
  'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
  'RateLimit-Reset': headerRef('RateLimit-Reset'),
};

function successHeaders(route: RouteDefinition): Record<string, unknown> {
  const headers: Record<string, unknown> = {
    'API-Version': headerRef('API-Version'),
    'Cache-Control': headerRef('Cache-Control'),
  };
  if (route.streamType) {
    headers['X-Accel-Buffering'] = {
      description: '`no`: a proxy (nginx) passes each part of the stream on as it comes.',
      schema: { type: 'string', const: 'no' },
    };
  } else if (route.method === 'GET') {
    headers.ETag = headerRef('ETag');
    headers.Vary = headerRef('Vary');
    headers['Content-Encoding'] = headerRef('Content-Encoding');
  }
  return { ...headers, ...RATE_LIMIT_HEADERS };
}

/**
 * A GET's (and HEAD's) 304. It carries what the 200 would have of the headers RFC 9110 §15.4.5 names
 * (`Cache-Control`, `ETag`, `Vary`, and `Date`, which no answer lists) and the headers every answer gets;
 * being bodiless, it has no `Content-Type`, `Content-Length` or `Content-Encoding`.
 */
function notModified(): Record<string, unknown> {
  return {
    description:
      'Not modified: the `If-None-Match` header names the current ETag. No body, so no `Content-Type`, ' +
      "`Content-Length` or `Content-Encoding`; the 200's `Cache-Control`, `ETag` and `Vary` are repeated.",
    headers: {
      'API-Version': headerRef('API-Version'),
      'Cache-Control': headerRef('Cache-Control'),
      ETag: headerRef('ETag'),
      Vary: headerRef('Vary'),
      ...RATE_LIMIT_HEADERS,
    },
  };
}

function operationFor(route: RouteDefinition, operationId: string): Operation {
  const parameters = parametersOf(route);
  const responses: Record<string, unknown> = {
    200: {
      description: route.summary,
      headers: successHeaders(route),
      content: route.streamType ? streamContent(route) : { 'application/json': { schema: route.response ?? {} } },
    },
  };
  if (route.method === 'GET' && !route.streamType) responses[304] = notModified();
  for (const status of errorStatuses(route)) {
    responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].component}` };
  }
  const operation: Operation = {
    operationId,
    summary: route.summary,
    tags: [route.tier],
    'x-endpoint-name': route.name,
    responses,
  };
  if (parameters.length > 0) operation.parameters = parameters;
  if (route.body) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: route.body } } };
  }
  // On a public path the token is optional: no requirement ({}) or the token.
  operation.security = route.tier === 'public' ? [{}, { [TOKEN_SCHEME]: [] }] : [{ [TOKEN_SCHEME]: [] }];
  return operation;
}

/**
 * A stream's content: text, whose items `x-itemSchema` describes (OpenAPI 3.2 names this `itemSchema`; 3.1,
 * which this document is, has no word for it).
 */
function streamContent(route: RouteDefinition): Record<string, unknown> {
  return {
    [route.streamType!]: {
      schema: { type: 'string', description: 'A stream that stays open; each item as `x-itemSchema` describes it.' },
      'x-itemSchema': route.response ?? {},
    },
  };
}

/**
 * The HEAD operation of a GET route: the GET's parameters, security, statuses and headers, and no
 * `content` anywhere, since the server sends no body to a HEAD, not even an error's.
 */
function headOperationFor(route: RouteDefinition, get: Operation, operationId: string): Operation {
  const responses: Record<string, unknown> = {
    200: {
      description:
        `${route.summary}: the headers of the GET's 200, without its body. ` +
        '`Content-Type` and `Content-Length` are those of the body a GET would get.',
      headers: successHeaders(route),
    },
  };
  if (!route.streamType) responses[304] = notModified();
  for (const status of errorStatuses(route)) {
    responses[status] = { $ref: `#/components/responses/${headComponent(status)}` };
  }
  return {
    ...get,
    operationId,
    summary: `${route.summary} (headers only: the GET's answer without its body)`,
    responses,
  };
}

/**
 * Every header an error answer can carry: the server gives each error `API-Version` and
 * `Cache-Control: no-store`, and the rate limit hook's headers once it has run.
 */
function errorHeaders(status: ErrorStatus): Record<string, unknown> {
  const error: ErrorResponse = ERROR_RESPONSES[status];
  const headers: Record<string, unknown> = {
    'API-Version': headerRef('API-Version'),
    'Cache-Control': headerRef('Cache-Control'),
  };
  for (const name of error.headers ?? []) headers[name] = headerRef(name);
  return error.rateLimits === false ? headers : { ...headers, ...RATE_LIMIT_HEADERS };
}

function components(): OpenApiDocument['components'] {
  const responses: Record<string, unknown> = {};
  const statuses = Object.keys(ERROR_RESPONSES).map((status) => Number(status) as ErrorStatus);
  for (const status of statuses) {
    const { component, description } = ERROR_RESPONSES[status];
    responses[component] = {
      description,
      headers: errorHeaders(status),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  for (const status of statuses) {
    if ('requestBody' in ERROR_RESPONSES[status]) continue;
    responses[headComponent(status)] = {
      description:
        `${ERROR_RESPONSES[status].description} A HEAD gets the status and headers only: no error body. ` +
        '`Content-Type` and `Content-Length` are those of the error body a GET would get.',
      headers: errorHeaders(status),
    };
  }
  return {
    schemas: { Error: errorBodySchema },
    responses,
    headers: HEADERS,
    securitySchemes: {
      [TOKEN_SCHEME]: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description:
          'An API token as `Authorization: Token <API_TOKEN>`. Each token endpoint must also be approved for the token by an administrator.',
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of every registered route, in registration order, with a HEAD
 * operation after each GET. An operation's id is its route's name, `<name>.<method>` when
 * routes share the name, and `<GET's id>.head` for a HEAD; a HEAD id taken already by a route gets `.2`, `.3`, ...
 */
export function buildOpenApiDocument(allRoutes: readonly RegisteredRoute[], info: OpenApiInfo): OpenApiDocument {
  // Pages are for people, operations routes for an operator's tools; the document describes the JSON API.
  const routes = allRoutes.filter(({ route }) => route.document !== 'page' && route.document !== 'operations');
  const nameCounts = new Map<string, number>();
  for (const { route } of routes) nameCounts.set(route.name, (nameCounts.get(route.name) ?? 0) + 1);
  const taken = new Set<string>();
  // Two routes named alike by different plugins must not break the document: the later one's id gets a number.
  const claim = (operationId: string): string => {
    let unique = operationId;
    for (let suffix = 2; taken.has(unique); suffix++) unique = `${operationId}.${suffix}`;
    taken.add(unique);
    return unique;
  };
  // The routes' own ids are claimed first, so a HEAD's id is the only kind that may need a number.
  const operations = routes.map(({ route }) => {
    const operationId = nameCounts.get(route.name) === 1 ? route.name : `${route.name}.${route.method.toLowerCase()}`;
    return { route, operation: operationFor(route, claim(operationId)) };
  });
  const paths: OpenApiDocument['paths'] = {};
  for (const { route, operation } of operations) {
    const path = openApiPath(route.path);
    const item: Record<string, Operation> = { [route.method.toLowerCase()]: operation };
    if (route.method === 'GET') {
      item.head = headOperationFor(route, operation, claim(`${operation.operationId}.head`));
    }
    paths[path] = { ...paths[path], ...item };
  }
  return {
    openapi: '3.1.0',
    info,
    tags: [
      { name: 'public', description: 'No authentication.' },
      { name: 'token', description: 'An API token approved by an administrator for the endpoint.' },
      { name: 'staff', description: 'A token an administrator marked as staff.' },
    ],
    paths,
    components: components(),
  };
}
