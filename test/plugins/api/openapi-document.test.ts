import { Ajv2020 } from 'ajv/dist/2020.js';
import t, { type Test } from 'tap';
import { ApiError, notFound, unavailable } from '../../../lib/http/errors.js';
import {
  buildOpenApiDocument,
  errorBodySchema,
  TOKEN_SCHEME,
  type OpenApiDocument,
} from '../../../plugins/api/openapi-document.js';
import { openApiPath } from '../../../lib/http/routes.js';
import { HttpServer, type RegisteredRoute } from '../../../lib/http/server.js';
import type { RouteDefinition } from '../../../lib/http/types.js';
import { createLogger } from '../../../lib/logger.js';
import { OpenApiValidator } from './fixtures/openapi-validator.js';

function route(definition: Partial<RouteDefinition> & Pick<RouteDefinition, 'path' | 'name'>): RegisteredRoute {
  return {
    plugin: 'test',
    route: {
      method: 'GET',
      summary: `${definition.name} summary`,
      tier: 'public',
      handler: () => ({ body: null }),
      ...definition,
    },
  };
}

const itemSchema = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };

const routes: RegisteredRoute[] = [
  route({
    path: '/api/irc/channels/',
    name: 'irc.channels',
    response: { type: 'object', properties: { results: { type: 'array', items: itemSchema } } },
    queryParameters: [{ name: 'limit', description: 'Items per page.', schema: { type: 'integer', minimum: 1 } }],
  }),
  route({ path: '/api/irc/channels/:name/', name: 'irc.channel', response: itemSchema }),
  route({ path: '/api/irc/users/:nick/', name: 'irc.user', tier: 'token', response: itemSchema }),
  route({
    method: 'POST',
    path: '/api/irc/check-credentials/',
    name: 'irc.check_credentials',
    tier: 'token',
    body: {
      type: 'object',
      required: ['nick', 'password'],
      properties: { nick: { type: 'string' }, password: { type: 'string' } },
    },
    response: { type: 'object' },
  }),
  route({ path: '/api/staff/tokens/', name: 'staff.tokens', tier: 'staff' }),
  route({ method: 'POST', path: '/api/staff/tokens/', name: 'staff.tokens', tier: 'staff', body: { type: 'object' } }),
];

const document = buildOpenApiDocument(routes, { title: 'Test API', version: '1' });
type Operation = Record<string, unknown> & {
  responses: Record<string, unknown>;
  parameters?: Record<string, unknown>[];
};
const operation = (path: string, method: string) => document.paths[path]![method] as Operation;

t.test('paths use OpenAPI templates, one path item per path with an operation per method', async (t) => {
  t.equal(openApiPath('/api/irc/channels/:name/'), '/api/irc/channels/{name}/');
  t.equal(openApiPath('/api/openapi.json'), '/api/openapi.json');
  t.equal(document.openapi, '3.1.0');
  t.same(Object.keys(document.paths), [
    '/api/irc/channels/',
    '/api/irc/channels/{name}/',
    '/api/irc/users/{nick}/',
    '/api/irc/check-credentials/',
    '/api/staff/tokens/',
  ]);
  t.same(Object.keys(document.paths['/api/staff/tokens/']!), ['get', 'head', 'post']);
  t.equal(operation('/api/staff/tokens/', 'get').operationId, 'staff.tokens.get', 'a shared name gets the method');
  t.equal(operation('/api/irc/channels/{name}/', 'get').operationId, 'irc.channel');
  t.equal(operation('/api/irc/channels/{name}/', 'get')['x-endpoint-name'], 'irc.channel');
  t.same(JSON.parse(JSON.stringify(document)), document, 'the document is plain JSON');
});

t.test('parameters: path parameters required, query parameters from the route', async (t) => {
  t.match(operation('/api/irc/channels/{name}/', 'get').parameters, [
    { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
  ]);
  t.match(operation('/api/irc/channels/', 'get').parameters, [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
  ]);
});

t.test("responses: the 200 schema is the route's own; errors use the contract body", async (t) => {
  const channel = operation('/api/irc/channels/{name}/', 'get');
  t.equal(
    (channel.responses['200'] as { content: Record<string, { schema: unknown }> }).content['application/json']!.schema,
    routes[1]!.route.response,
    'the very schema object of the route: one source of truth',
  );
  t.same(Object.keys(channel.responses).sort(), ['200', '304', '400', '401', '404', '429', '500', '503']);
  t.same(channel.responses['404'], { $ref: '#/components/responses/NotFound' });
  t.same(channel.security, [{}, { tokenAuth: [] }], 'public routes need no token; one may be presented');
  t.notOk(channel.responses['403'], 'a public route refuses no live token');
  const list = operation('/api/irc/channels/', 'get');
  t.notOk(list.responses['404'], 'a list without path parameters has no 404 of its own');

  const user = operation('/api/irc/users/{nick}/', 'get');
  t.same(user.security, [{ [TOKEN_SCHEME]: [] }]);
  t.ok(user.responses['401'] && user.responses['403'], 'token routes document 401 and 403');
  const scheme = (document.components.securitySchemes as Record<string, Record<string, unknown>>)[TOKEN_SCHEME];
  t.match(scheme, { type: 'apiKey', in: 'header', name: 'Authorization', description: /Token <API_TOKEN>/ });

  const check = operation('/api/irc/check-credentials/', 'post');
  t.match(check.requestBody, {
    required: true,
    content: { 'application/json': { schema: { required: ['nick', 'password'] } } },
  });
  t.ok(check.responses['413'] && check.responses['415'] && check.responses['400']);
  t.notOk(check.responses['304'], 'only GET answers 304');
  t.same((document.components.schemas as Record<string, unknown>).Error, errorBodySchema);
  const notFound = (document.components.responses as Record<string, Record<string, unknown>>).NotFound;
  t.match(notFound, { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
  const responses = document.components.responses as Record<string, { headers: Record<string, unknown> }>;
  for (const name of ['RateLimited', 'Unavailable']) {
    t.same(responses[name]!.headers['Retry-After'], { $ref: '#/components/headers/Retry-After' }, name);
  }
  t.notOk(responses.NotFound!.headers['Retry-After'], 'only where it is sent');
});

t.test("a 304's headers: each one a component with a description, and no Content-Type", async (t) => {
  const components = document.components.headers as Record<string, { description?: string }>;
  for (const { path, get, head } of getOperations(document)) {
    for (const [method, operation] of [
      ['GET', get],
      ['HEAD', head],
    ] as const) {
      const notModified = responseOf(document, operation?.responses['304']);
      t.notOk('content' in notModified, `${method} ${path} 304 has no body`);
      for (const [name, header] of Object.entries(notModified.headers ?? {})) {
        const ref = (header as { $ref?: string }).$ref ?? '';
        const description = components[ref.replace('#/components/headers/', '')]?.description;
        t.match(description, /\w/, `${method} ${path} 304 ${name} is described`);
      }
      t.notOk(
        Object.keys(notModified.headers ?? {}).some((name) => name.toLowerCase() === 'content-type'),
        `${method} ${path} 304 lists no Content-Type, which OpenAPI would ignore anyway`,
      );
    }
  }
});

t.test('error responses list every header the server sends with them, each a described component', async (t) => {
  const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
  const always = ['API-Version', 'Cache-Control'];
  const expected: Record<string, string[]> = {
    BadRequest: [...always, ...rateLimit],
    Unauthorized: [...always, 'WWW-Authenticate'],
    Forbidden: [...always, ...rateLimit],
    NotFound: [...always, ...rateLimit],
    MethodNotAllowed: [...always, 'Allow'],
    PayloadTooLarge: [...always, ...rateLimit],
    UnsupportedMediaType: [...always, ...rateLimit],
    RateLimited: [...always, 'Retry-After', ...rateLimit],
    Internal: [...always, ...rateLimit],
    Unavailable: [...always, 'Retry-After', ...rateLimit],
  };
  const responses = document.components.responses as Record<string, ResponseObject>;
  const headers = document.components.headers as Record<string, { description?: string }>;
  const errors = Object.keys(responses).filter((name) => name in expected || name.replace(/^Head/, '') in expected);
  t.same(
    errors.sort(),
    Object.keys(expected)
      .flatMap((name) => (/PayloadTooLarge|UnsupportedMediaType/.test(name) ? [name] : [name, `Head${name}`]))
      .sort(),
    'every error has its component, and a bodiless one for HEAD unless only a request body causes it',
  );
  for (const name of errors) {
    const listed = responses[name]!.headers ?? {};
    t.same(Object.keys(listed).sort(), [...expected[name.replace(/^Head/, '')]!].sort(), `${name} headers`);
    for (const [header, value] of Object.entries(listed)) {
      t.same(value, { $ref: `#/components/headers/${header}` }, `${name} ${header} is the shared component`);
      t.match(headers[header]?.description, /\w/, `${name} ${header} is described`);
    }
  }
  for (const header of rateLimit) {
    t.match(headers[header]!.description, /^When rate limits are on/, `${header}: only when rate limits are on`);
  }
  t.match(headers['Cache-Control']!.description, /`no-store` on errors/);
  for (const path of Object.keys(document.paths)) {
    for (const [method, value] of Object.entries(document.paths[path]!)) {
      const statuses = Object.keys((value as Operation).responses);
      t.notOk(statuses.includes('405'), `${method.toUpperCase()} ${path}: no operation lists the 405 of other methods`);
    }
  }
});

t.test('every schema in the document compiles as draft 2020-12', async (t) => {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ ...document, $id: 'https://example.test/openapi.json' });
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, value] of Object.entries(item)) {
      const responses = (value as Operation).responses;
      for (const status of Object.keys(responses)) {
        const pointer = `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}`;
        t.doesNotThrow(
          () => ajv.compile({ $ref: `https://example.test/openapi.json${pointer}` }),
          `${method} ${path} ${status}`,
        );
      }
    }
  }
});

t.test('the validator the tests use finds what does not match', async (t) => {
  const validator = new OpenApiValidator(document);
  t.same(validator.check('GET', '/api/irc/channels/%23a/', 200, { name: '#a' }), []);
  t.same(validator.check('GET', '/api/irc/channels/%23a', 200, { name: '#a' }), [], 'without the trailing slash too');
  t.match(validator.check('GET', '/api/irc/channels/%23a/', 200, { topic: 'x' }), [
    /must have required property 'name'/,
  ]);
  t.same(
    validator.check('GET', '/api/irc/channels/%23a/', 404, {
      error: { status: 404, code: 'channel_not_found', message: 'No' },
    }),
    [],
  );
  t.match(validator.check('GET', '/api/irc/channels/%23a/', 404, { error: { code: 'x' } }), [
    /required property 'status'/,
  ]);
  t.match(validator.check('GET', '/api/irc/channels/%23a/', 418, {}), [/status 418 is not documented/]);
  t.match(validator.check('GET', '/api/elsewhere/', 200, {}), [/not in the document/]);
  t.same(validator.check('GET', '/api/irc/channels/', 304, undefined), []);

  const sent = (headers: Record<string, string>) =>
    new Headers({
      date: 'Sat, 21 Nov 2026 14:03:00 GMT',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      ...headers,
    });
  const notModified = { 'API-Version': '1', 'Cache-Control': 'public, max-age=10', ETag: '"a"' };
  for (const method of ['GET', 'HEAD']) {
    t.same(validator.undocumentedHeaders(method, '/api/irc/channels/', 304, sent(notModified)), [], `${method} 304`);
    t.match(
      validator.undocumentedHeaders(method, '/api/irc/channels/', 304, sent({ ...notModified, 'X-Extra': 'yes' })),
      [/sends x-extra, which the document does not list/],
      `${method}: a header the 304 does not list`,
    );
    t.match(
      validator.undocumentedHeaders(method, '/api/irc/channels/', 304, sent({ 'Content-Type': 'application/json' })),
      [/sends content-type/],
      `${method}: a 304 has no body for a Content-Type to describe`,
    );
  }
  t.same(
    validator.undocumentedHeaders('GET', '/api/irc/channels/', 200, sent({ 'Content-Type': 'application/json' })),
    [],
    "a 200's Content-Type is that of its documented body",
  );
  t.match(validator.undocumentedHeaders('GET', '/api/irc/channels/', 418, sent({})), [/status 418 is not documented/]);

  const error = { 'API-Version': '1', 'Cache-Control': 'no-store', 'Content-Type': 'application/json' };
  const limits = { 'RateLimit-Limit': '60', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '60' };
  for (const method of ['GET', 'HEAD']) {
    const channel = '/api/irc/channels/%23a/';
    t.same(
      validator.undocumentedHeaders(method, channel, 404, sent({ ...error, ...limits })),
      [],
      `${method} 404 with the rate limit headers (a HEAD's Content-Type is that of the GET's error body)`,
    );
    t.match(
      validator.undocumentedHeaders(method, channel, 404, sent({ ...error, 'Retry-After': '1' })),
      [/→ 404: sends retry-after, which the document does not list/],
      `${method}: a header the 404 does not list`,
    );
    t.same(validator.undocumentedHeaders(method, channel, 429, sent({ ...error, ...limits, 'Retry-After': '1' })), []);
    t.same(
      validator.undocumentedHeaders(method, '/api/irc/users/x/', 401, sent({ ...error, 'WWW-Authenticate': 'Token' })),
      [],
    );
    t.match(
      validator.undocumentedHeaders(method, '/api/irc/users/x/', 401, sent({ ...error, ...limits })),
      [/sends ratelimit-limit/, /sends ratelimit-remaining/, /sends ratelimit-reset/],
      `${method}: a 401 never carries RateLimit-*`,
    );
    t.same(
      validator.undocumentedHeaders(method, '/api/elsewhere/', 404, sent(error)),
      [],
      `${method}: an unknown path`,
    );
    t.match(
      validator.undocumentedHeaders(method, '/api/elsewhere/', 404, sent({ ...error, Allow: 'GET' })),
      [/sends allow/],
      `${method}: an unknown path's 404 is checked against the NotFound component`,
    );
    t.match(validator.undocumentedHeaders(method, '/api/elsewhere/', 400, sent(error)), [/not in the document/]);
  }
  t.same(
    validator.undocumentedHeaders('HEAD', '/api/irc/check-credentials/', 405, sent({ ...error, Allow: 'POST' })),
    [],
    "a method without an operation: the 405's component",
  );
  t.same(
    validator.undocumentedHeaders('DELETE', '/api/irc/channels/', 405, sent({ ...error, Allow: 'GET, HEAD' })),
    [],
  );
  t.match(
    validator.undocumentedHeaders('DELETE', '/api/irc/channels/', 405, sent({ ...error, 'WWW-Authenticate': 'Token' })),
    [/sends www-authenticate/],
  );
  t.match(validator.undocumentedHeaders('DELETE', '/api/irc/channels/', 404, sent(error)), [/no such operation/]);
  t.match(
    validator.undocumentedHeaders('HEAD', '/api/irc/channels/', 200, sent({ 'Content-Type': 'application/json' })),
    [],
    "a HEAD 200's Content-Type is that of the GET's body",
  );

  const notFoundBody = { error: { status: 404, code: 'channel_not_found', message: 'No' } };
  t.same(validator.check('GET', '/api/irc/channels/%23a/', 404, notFoundBody, sent(error)), [], 'check with headers');
  t.match(
    validator.check('GET', '/api/irc/channels/%23a/', 404, notFoundBody, sent({ ...error, 'X-Extra': 'yes' })),
    [/sends x-extra/],
    'check given the headers fails on one the document does not list',
  );
  t.same(validator.check('HEAD', '/api/elsewhere/', 404, undefined, sent(error)), [], "an unknown path's HEAD 404");
  t.match(validator.check('HEAD', '/api/elsewhere/', 404, notFoundBody), [/a body where none is documented/]);
  t.same(validator.check('POST', '/api/irc/channels/', 405, { error: { status: 405, code: 'x', message: 'y' } }), []);
  t.match(validator.check('POST', '/api/irc/channels/', 405, {}), [/required property 'error'/]);
});

/** A response object as the document has it, with a `$ref` to a component response followed. */
interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: unknown;
}

function responseOf(source: OpenApiDocument, response: unknown): ResponseObject {
  const { $ref } = response as { $ref?: string };
  if ($ref === undefined) return response as ResponseObject;
  const name = $ref.replace('#/components/responses/', '');
  const component = (source.components.responses as Record<string, ResponseObject>)[name];
  if (!component) throw new Error(`${$ref} names no component response`);
  return component;
}

const getOperations = (source: OpenApiDocument) =>
  Object.entries(source.paths).flatMap(([path, item]) =>
    item.get ? [{ path, get: item.get as Operation, head: item.head as Operation | undefined }] : [],
  );

t.test('every GET has a HEAD operation with its id, tags, name, parameters and security', async (t) => {
  const gets = getOperations(document);
  t.equal(gets.length, 4, 'the GET routes of the fixture');
  for (const { path, get, head } of gets) {
    if (!head) {
      t.fail(`GET ${path} has no HEAD operation`);
      continue;
    }
    t.equal(head.operationId, `${get.operationId as string}.head`, `${path} id`);
    t.match(head.summary, /headers only.*without its body/, `${path} summary`);
    t.ok((head.summary as string).startsWith(get.summary as string), `${path} summary names the GET's`);
    t.same(head.tags, get.tags, `${path} tags`);
    t.equal(head['x-endpoint-name'], get['x-endpoint-name'], `${path} endpoint name`);
    t.same(head.parameters, get.parameters, `${path} parameters`);
    t.same(head.security, get.security, `${path} security`);
    t.notOk('requestBody' in head, `${path} HEAD takes no body`);
  }
  t.equal(operation('/api/staff/tokens/', 'head').operationId, 'staff.tokens.get.head', "a shared name's GET id");
  t.notOk(document.paths['/api/irc/check-credentials/']!.head, 'only GET routes answer HEAD');
});

t.test('operation ids are unique across the document', async (t) => {
  const ids = Object.values(document.paths).flatMap((item) =>
    Object.values(item).map((value) => (value as Operation).operationId),
  );
  t.equal(ids.length, 10, 'six routes, four of them GETs');
  t.same([...new Set(ids)].sort(), [...ids].sort(), ids.join(', '));
});

t.test('two operations that would share an id still get ids of their own', async (t) => {
  const clash = [
    route({ path: '/api/a/', name: 'x' }),
    { ...route({ path: '/api/b/', name: 'x.head' }), plugin: 'other' },
  ];
  const built = buildOpenApiDocument(clash, { title: 'Clash', version: '1' });
  const ids = Object.values(built.paths).flatMap((item) =>
    Object.values(item).map((operation) => (operation as { operationId: string }).operationId),
  );
  t.same(ids, ['x', 'x.head.2', 'x.head', 'x.head.head'], "a route keeps its own id; only a HEAD's gets a number");
});

t.test("HEAD responses: the GET's statuses and headers, never a body", async (t) => {
  for (const { path, get, head } of getOperations(document)) {
    if (!head) {
      t.fail(`GET ${path} has no HEAD operation`);
      continue;
    }
    t.same(Object.keys(head.responses), Object.keys(get.responses), `${path}: the same statuses`);
    for (const [status, response] of Object.entries(head.responses)) {
      const headResponse = responseOf(document, response);
      const getResponse = responseOf(document, get.responses[status]);
      t.notOk('content' in headResponse, `HEAD ${path} ${status} has no body`);
      t.same(headResponse.headers, getResponse.headers, `HEAD ${path} ${status} has the GET's headers`);
    }
    for (const status of ['200', '304']) {
      t.same(
        Object.keys(responseOf(document, head.responses[status]).headers ?? {}).sort(),
        [
          'API-Version',
          'Cache-Control',
          ...(status === '200' ? ['Content-Encoding'] : []),
          'ETag',
          'RateLimit-Limit',
          'RateLimit-Remaining',
          'RateLimit-Reset',
          'Vary',
        ],
        `HEAD ${path} ${status} headers`,
      );
    }
  }
  t.same(
    operation('/api/irc/channels/{name}/', 'head').responses['404'],
    { $ref: '#/components/responses/HeadNotFound' },
    'errors refer to the bodiless components',
  );
  const responses = document.components.responses as Record<string, ResponseObject>;
  t.notOk(responses.HeadPayloadTooLarge, 'no HEAD answer for errors of request bodies');
  t.notOk(responses.HeadUnsupportedMediaType);
  t.match(responses.HeadNotFound!.description, /HEAD gets the status and headers only/);
});

/**
 * A server with a GET route for each answer a HEAD can get: a list (200, 304), a name (404, 400
 * for a malformed escape), a token route (401, 403, and 429 from a per-token limit) and a
 * route whose data is not there yet (503).
 */
async function headServer(t: Test) {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: createLogger({ sink: () => undefined }) });
  const served: RouteDefinition[] = [
    {
      method: 'GET',
      path: '/api/irc/channels/',
      name: 'irc.channels',
      summary: 'Every visible channel',
      tier: 'public',
      handler: () => ({ body: { count: 1, results: [{ name: '#a' }] } }),
    },
    {
      method: 'GET',
      path: '/api/irc/channels/:name/',
      name: 'irc.channel',
      summary: 'One visible channel',
      tier: 'public',
      handler: (request) => {
        if (request.params.name !== '#a')
          throw notFound('channel_not_found', `No visible channel named ${request.params.name}`);
        return { body: { name: '#a' } };
      },
    },
    {
      method: 'GET',
      path: '/api/irc/users/:nick/',
      name: 'irc.user',
      summary: 'One connected user',
      tier: 'token',
      handler: (request) => ({ body: { nick: request.params.nick } }),
    },
    {
      method: 'GET',
      path: '/api/irc/stats/',
      name: 'irc.stats',
      summary: 'Network statistics',
      tier: 'public',
      handler: () => {
        throw unavailable('The network has not finished its first sync');
      },
    },
  ];
  for (const definition of served) server.route('test', definition);
  server.setGuards(() => ({
    token: (request) => {
      const token = request.headers.authorization?.replace(/^Token /, '');
      if (token !== 'approved' && token !== 'limited' && token !== 'unapproved')
        throw new ApiError(401, 'unauthorized', 'Missing or unknown token', undefined, { 'WWW-Authenticate': 'Token' });
      if (token === 'unapproved') throw new ApiError(403, 'forbidden', 'The token is not approved for irc.user');
      request.tokenId = token;
    },
  }));
  server.addHook((request) => {
    if (request.tokenId === 'limited')
      throw new ApiError(429, 'rate_limited', 'Over the limit of this token', undefined, { 'Retry-After': '7' });
  });
  const { url } = await server.listen();
  t.teardown(() => server.close());
  return { url, served: buildOpenApiDocument(server.routes(), { title: 'HEAD test', version: '1' }) };
}

t.test("a real server's HEAD answers agree with the document's HEAD operations", async (t) => {
  const { url, served } = await headServer(t);
  const etag = (await fetch(`${url}/api/irc/channels/`)).headers.get('etag') ?? '';
  t.match(etag, /^".+"$/, 'the GET has an ETag to send back');
  const cases: { path: string; template: string; status: number; headers?: Record<string, string> }[] = [
    { path: '/api/irc/channels/', template: '/api/irc/channels/', status: 200 },
    { path: '/api/irc/channels/', template: '/api/irc/channels/', status: 304, headers: { 'If-None-Match': etag } },
    { path: '/api/irc/channels/%23a/', template: '/api/irc/channels/{name}/', status: 200 },
    { path: '/api/irc/channels/%23nope/', template: '/api/irc/channels/{name}/', status: 404 },
    { path: '/api/irc/channels/%zz/', template: '/api/irc/channels/{name}/', status: 400 },
    { path: '/api/irc/users/alice/', template: '/api/irc/users/{nick}/', status: 401 },
    {
      path: '/api/irc/users/alice/',
      template: '/api/irc/users/{nick}/',
      status: 403,
      headers: { Authorization: 'Token unapproved' },
    },
    {
      path: '/api/irc/users/alice/',
      template: '/api/irc/users/{nick}/',
      status: 429,
      headers: { Authorization: 'Token limited' },
    },
    {
      path: '/api/irc/users/alice/',
      template: '/api/irc/users/{nick}/',
      status: 200,
      headers: { Authorization: 'Token approved' },
    },
    { path: '/api/irc/stats/', template: '/api/irc/stats/', status: 503 },
  ];
  for (const { path, template, status, headers = {} } of cases) {
    const where = `HEAD ${path} → ${status}`;
    const head = await fetch(url + path, { method: 'HEAD', headers });
    const get = await fetch(url + path, { headers });
    const getBody = await get.text();
    t.equal(head.status, status, where);
    t.equal(get.status, status, `${where}: the GET's status too`);
    t.equal(await head.text(), '', `${where}: no body`);
    const operation = served.paths[template]?.head as Operation | undefined;
    if (!operation) {
      t.fail(`${where}: the document has no HEAD operation for ${template}`);
      continue;
    }
    const documented = operation.responses[String(status)];
    if (!documented) {
      t.fail(`${where}: the status is not documented for HEAD ${template}`);
      continue;
    }
    const response = responseOf(served, documented);
    t.notOk('content' in response, `${where}: the document promises no body`);
    const names = Object.keys(response.headers ?? {});
    t.ok(names.includes('API-Version'), `${where}: API-Version is documented`);
    for (const name of names) {
      // The document says a 503 "may" carry Retry-After: only when the wait is known to be short.
      // The RateLimit-* headers come only when rate limits are on, and this server has none.
      // Vary and Content-Encoding only on a body of 1 KB or more that the server answers again, gzip'd once asked.
      const optional =
        (status === 503 && name === 'Retry-After') ||
        name.startsWith('RateLimit-') ||
        name === 'Vary' ||
        name === 'Content-Encoding';
      if (!optional) t.ok(head.headers.has(name), `${where}: documented ${name} is sent`);
      t.equal(head.headers.get(name), get.headers.get(name), `${where}: ${name} as the GET's`);
    }
    t.equal(head.headers.get('api-version'), '1', `${where}: API-Version`);
    for (const [method, answer] of [
      ['HEAD', head],
      ['GET', get],
    ] as const) {
      t.same(
        new OpenApiValidator(served).undocumentedHeaders(method, path, status, answer.headers),
        [],
        `${method} ${path} → ${status}: the document lists every header sent`,
      );
    }
    if (status !== 304) {
      t.not(getBody, '', `${where}: the GET has the body HEAD leaves out`);
      t.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)), `${where}: Content-Length`);
    }
  }
});
