/** A route's own guards: run in order at their points, answering, finding, throwing, at once or later. */
import t, { type Test } from 'tap';
import { ApiError } from '../../../lib/http/errors.js';
import { HttpServer } from '../../../lib/http/server.js';
import type { GuardOutcome, GuardPoint, RouteDefinition, RouteGuard } from '../../../lib/http/types.js';
import { captureLog, route } from '../../support/http.js';

function server(t: Test) {
  const log = captureLog();
  const http = new HttpServer({ host: '127.0.0.1', port: 0, logger: log.logger });
  t.teardown(() => http.close());
  return { http, log };
}

/** A guard that notes its name in `calls` and gives `outcome` (at once, or as a promise when `later`). */
function noting<Found>(
  calls: string[],
  name: string,
  point: GuardPoint,
  outcome: () => GuardOutcome<Found>,
  later = false,
): RouteGuard<Found> {
  return {
    name,
    point,
    check(request) {
      calls.push(`${name}${request.body === undefined ? '' : ' (body read)'}`);
      return later ? Promise.resolve().then(outcome) : outcome();
    },
  };
}

t.test('guards run in order at their points: after the tier guard and the hooks, around the body', async (t) => {
  const { http } = server(t);
  const calls: string[] = [];
  const first = noting(calls, 'first', 'request', () => ({ found: 1 }));
  const second = noting(calls, 'second', 'request', () => ({ found: 2 }), true);
  const afterBody = noting(calls, 'afterBody', 'body', () => ({ found: 3 }));
  http.setGuards(() => ({
    public: () => {
      calls.push('tier');
    },
  }));
  http.addHook(() => {
    calls.push('hook');
  });
  http.route(
    'test',
    route({
      method: 'POST',
      path: '/api/ordered/',
      guards: [afterBody, first, second],
      handler: (request, found) => {
        calls.push('handler');
        return { body: { found: [found.get(first), found.get(second), found.get(afterBody)], sent: request.body } };
      },
    }),
  );
  const response = await http.inject({ method: 'POST', path: '/api/ordered/', body: { a: 1 } });
  t.equal(response.status, 200);
  t.same(response.body, { found: [1, 2, 3], sent: { a: 1 } }, 'the handler reads what each guard found');
  t.same(
    calls,
    ['tier', 'hook', 'first', 'second', 'afterBody (body read)', 'handler'],
    'the tier guard, the hooks, the request guards in their order, the body, the body guards, the handler',
  );
});

t.test('a guard that answers: nothing after it runs, and its answer carries the hooks headers', async (t) => {
  const { http } = server(t);
  const calls: string[] = [];
  let refuse = true;
  const refusing = noting(calls, 'refusing', 'request', () =>
    refuse
      ? { answer: { status: 403, body: { refused: true }, headers: { 'X-Refused': 'yes' } } }
      : { found: undefined },
  );
  const later = noting(calls, 'later', 'request', () => ({ found: undefined }));
  http.addHook(() => ({ 'RateLimit-Remaining': '9' }));
  http.route(
    'test',
    route({
      method: 'POST',
      path: '/api/refused/',
      guards: [refusing, later],
      handler: () => {
        calls.push('handler');
        return { body: {} };
      },
    }),
  );
  // Not JSON: the body reader would refuse it (400) if the guard let it run.
  const notJson = {
    method: 'POST',
    path: '/api/refused/',
    body: 'not json',
    headers: { 'content-type': 'application/json' },
  };
  const refused = await http.inject(notJson);
  t.equal(refused.status, 403);
  t.same(refused.body, { refused: true });
  t.equal(refused.headers['x-refused'], 'yes');
  t.equal(refused.headers['ratelimit-remaining'], '9', "the hooks' headers ride on a guard's answer");
  t.equal(refused.headers['cache-control'], 'no-store');
  t.same(calls, ['refusing'], 'no later guard, no body, no handler');

  refuse = false;
  calls.length = 0;
  const read = await http.inject(notJson);
  t.equal(read.status, 400, 'let through, the body is read and refused');
  t.same(calls, ['refusing', 'later']);
});

t.test('guards may answer at once or with a promise, and refuse by throwing or rejecting', async (t) => {
  const { http } = server(t);
  type Mode = 'sync' | 'async' | 'throw' | 'reject';
  const modes: Record<'one' | 'two', Mode> = { one: 'sync', two: 'sync' };
  const calls: string[] = [];
  const guard = (name: 'one' | 'two', point: GuardPoint): RouteGuard<string> => ({
    name,
    point,
    check() {
      calls.push(name);
      const refusal = new ApiError(418, `${name}_refused`, `${name} refused`);
      switch (modes[name]) {
        case 'sync':
          return { found: name };
        case 'async':
          return Promise.resolve({ found: name });
        case 'throw':
          throw refusal;
        case 'reject':
          return Promise.reject(refusal);
      }
    },
  });
  const one = guard('one', 'request');
  const two = guard('two', 'body');
  http.route(
    'test',
    route({
      method: 'POST',
      path: '/api/modes/',
      guards: [one, two],
      handler: (_request, found) => ({ body: [found.get(one), found.get(two)] }),
    }),
  );
  for (const first of ['sync', 'async'] as const) {
    for (const second of ['sync', 'async'] as const) {
      Object.assign(modes, { one: first, two: second });
      calls.length = 0;
      const response = await http.inject({ method: 'POST', path: '/api/modes/', body: {} });
      t.same([response.status, response.body], [200, ['one', 'two']], `${first}, then ${second}`);
      t.same(calls, ['one', 'two']);
    }
  }
  for (const failing of ['one', 'two'] as const) {
    for (const failure of ['throw', 'reject'] as const) {
      Object.assign(modes, { one: 'async', two: 'async', [failing]: failure });
      calls.length = 0;
      const response = await http.inject({ method: 'POST', path: '/api/modes/', body: {} });
      t.equal(response.status, 418, `${failing} ${failure}s`);
      t.match(response.body, { error: { code: `${failing}_refused` } }, 'its error is the answer');
      t.equal(calls.at(-1), failing, 'nothing runs after it');
    }
  }
});

t.test('a guard that fails is a logged 500 naming it and its plugin', async (t) => {
  const { http, log } = server(t);
  const broken: RouteGuard<void> = {
    name: 'broken',
    point: 'request',
    check() {
      throw new Error('secret detail');
    },
  };
  const confused = { name: 'confused', point: 'request', check: () => undefined } as unknown as RouteGuard;
  http.route('test', route({ path: '/api/broken/', guards: [broken], handler: () => ({ body: {} }) }));
  http.route('test', route({ path: '/api/confused/', guards: [confused], handler: () => ({ body: {} }) }));
  const response = await http.inject({ method: 'GET', path: '/api/broken/' });
  t.equal(response.status, 500);
  t.notMatch(response.text, /secret detail/, 'the answer reveals nothing');
  t.match(
    await log.waitForLine(/failed in guard/),
    /GET \/api\/broken\/ failed in guard "broken" of plugin "test".*secret detail/,
  );
  t.equal((await http.inject({ method: 'GET', path: '/api/confused/' })).status, 500);
  t.match(
    await log.waitForLine(/confused/),
    /failed in guard "confused" of plugin "test".*must give \{ found \} to let the request on or \{ answer \} to answer it; it gave undefined/,
    'a guard that gives neither what it found nor an answer is a bug, named',
  );
});

t.test('a later guard reads what an earlier one found; reading a guard the route lacks fails', async (t) => {
  const { http, log } = server(t);
  const account: RouteGuard<string> = {
    name: 'account',
    point: 'request',
    check: (request) => ({ found: request.query.get('as') ?? 'nobody' }),
  };
  const admin: RouteGuard<boolean> = {
    name: 'admin',
    point: 'request',
    needs: [account],
    check: (_request, found) => ({ found: found.get(account) === 'boss' }),
  };
  http.route(
    'test',
    route({
      path: '/api/who/',
      guards: [account, admin],
      handler: (_request, found) => ({ body: { account: found.get(account), admin: found.get(admin) } }),
    }),
  );
  http.route('test', route({ path: '/api/forgot/', handler: (_request, found) => ({ body: found.get(account) }) }));
  t.same((await http.inject({ method: 'GET', path: '/api/who/?as=boss' })).body, { account: 'boss', admin: true });
  t.same((await http.inject({ method: 'GET', path: '/api/who/?as=al' })).body, { account: 'al', admin: false });
  t.equal((await http.inject({ method: 'GET', path: '/api/forgot/' })).status, 500);
  t.match(
    await log.waitForLine(/forgot/),
    /Route GET \/api\/forgot\/ reads what guard \\?"account\\?" found, but that guard did not run for it: list it in the route's guards/,
  );
});

t.test(
  'a route whose guards answer at once stays on the synchronous path; one without guards is unchanged',
  async (t) => {
    const { http } = server(t);
    const ran: string[] = [];
    const sync: RouteGuard<number> = { name: 'sync', point: 'request', check: () => ({ found: 7 }) };
    http.route(
      'test',
      route({
        path: '/api/plain/',
        handler: () => {
          ran.push('plain');
          return { body: { plain: true } };
        },
      }),
    );
    http.route(
      'test',
      route({
        path: '/api/guarded/',
        guards: [sync],
        handler: (_request, found) => {
          ran.push('guarded');
          return { body: { found: found.get(sync) } };
        },
      }),
    );
    const plain = http.inject({ method: 'GET', path: '/api/plain/' });
    const guarded = http.inject({ method: 'GET', path: '/api/guarded/' });
    t.same(ran, ['plain', 'guarded'], 'both handlers ran before inject() returned: no stage waited');
    const [plainAnswer, guardedAnswer] = await Promise.all([plain, guarded]);
    t.same(plainAnswer.body, { plain: true });
    t.equal(plainAnswer.headers['cache-control'], 'public, max-age=10');
    t.same(guardedAnswer.body, { found: 7 });
    t.equal(
      guardedAnswer.headers['cache-control'],
      'no-store',
      'a guarded answer depends on who asks: no cache keeps it, though the route is public',
    );
  },
);

t.test('a route declares how it answers its own ApiErrors (renderError)', async (t) => {
  const { http } = server(t);
  let failing: 'guard' | 'handler' | 'tier' | 'hook' | 'bug' = 'handler';
  const guard: RouteGuard<void> = {
    name: 'maybe',
    point: 'request',
    check() {
      if (failing === 'guard') throw new ApiError(403, 'forbidden', 'Not you');
      return { found: undefined };
    },
  };
  http.setGuards(() => ({
    public: () => {
      if (failing === 'tier') throw new ApiError(401, 'unauthorized', 'Bad token');
    },
  }));
  http.addHook(() => {
    if (failing === 'hook') throw new ApiError(429, 'rate_limited', 'Slow down');
  });
  const page: RouteDefinition = route({
    path: '/network/page/',
    document: 'page',
    guards: [guard],
    handler: () => {
      if (failing === 'bug') throw new Error('a bug');
      throw new ApiError(404, 'not_found', 'No such thing');
    },
    renderError: (error, request) => ({
      status: error.status,
      body: { page: `${error.status} ${error.message} at ${request.path}` },
      headers: { 'X-Page': 'refusal' },
    }),
  });
  http.route('test', page);
  const get = () => http.inject({ method: 'GET', path: '/network/page/' });
  let response = await get();
  t.equal(response.status, 404);
  t.same(response.body, { page: '404 No such thing at /network/page/' }, "the handler's error, rendered");
  t.equal(response.headers['x-page'], 'refusal');
  failing = 'guard';
  response = await get();
  t.same([response.status, response.body], [403, { page: '403 Not you at /network/page/' }], "a guard's, rendered");
  for (const kept of ['tier', 'hook'] as const) {
    failing = kept;
    response = await get();
    t.match(
      response.body,
      { error: { message: kept === 'tier' ? 'Bad token' : 'Slow down' } },
      `the ${kept}'s is JSON`,
    );
    t.equal(response.headers['x-page'], undefined);
  }
  failing = 'bug';
  response = await get();
  t.equal(response.status, 500, 'a bug stays a 500');
  t.match(response.body, { error: { code: 'internal' } });
});

t.test('guards are checked when the route is registered, naming the route, plugin and guard', async (t) => {
  const { http } = server(t);
  const found = (): GuardOutcome<void> => ({ found: undefined });
  const first: RouteGuard<void> = { name: 'first', point: 'request', check: found };
  const afterBody: RouteGuard<void> = { name: 'afterBody', point: 'body', check: found };
  const needsFirst: RouteGuard<void> = { name: 'needsFirst', point: 'request', needs: [first], check: found };
  const needsBody: RouteGuard<void> = { name: 'needsBody', point: 'request', needs: [afterBody], check: found };
  const add = (path: string, guards: RouteGuard[]) =>
    http.route('account', route({ method: 'POST', path, guards, handler: () => ({ body: {} }) }));
  t.throws(() => add('/a/', [first, first]), /Guard "first" is listed twice on route POST \/a\/ of plugin "account"/);
  t.throws(
    () => add('/b/', [needsFirst, first]),
    /Guard "needsFirst" of route POST \/b\/ of plugin "account" needs guard "first": list "first" before it/,
  );
  t.throws(
    () => add('/c/', [afterBody, needsBody]),
    /Guard "needsBody" of route POST \/c\/ .* runs before the body is read, but needs guard "afterBody", which runs after/,
  );
  t.throws(
    () => add('/d/', [{ ...first, point: 'later' as GuardPoint }]),
    /Guard "first" of route POST \/d\/ of plugin "account" runs at "later"; its point must be "request" or "body"/,
  );
  t.throws(() => add('/e/', [{ ...first, name: '' }]), /A guard of route POST \/e\/ of plugin "account" has no name/);
  t.doesNotThrow(() => add('/f/', [first, needsFirst, afterBody]));
  t.same(
    http.routes().map(({ route }) => route.path),
    ['/f/'],
    'a refused route is not registered',
  );
});
