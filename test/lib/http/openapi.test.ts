import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { buildOpenApiDocument, errorBodySchema, openApiPath, TOKEN_SCHEME } from '../../../lib/http/openapi.js';
import type { RegisteredRoute } from '../../../lib/http/server.js';
import type { RouteDefinition } from '../../../lib/http/types.js';
import { OpenApiValidator } from '../../plugins/api/fixtures/openapi-validator.js';

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
  t.same(Object.keys(document.paths['/api/staff/tokens/']!), ['get', 'post']);
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
  t.same(Object.keys(channel.responses).sort(), ['200', '304', '400', '404', '429', '500', '503']);
  t.same(channel.responses['404'], { $ref: '#/components/responses/NotFound' });
  t.notOk(channel.security, 'public routes need no token');
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
});
