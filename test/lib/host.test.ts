import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Host, HostError, resolvePlugins, type HostOptions } from '../../lib/host.js';
import { packageVersion } from '../../lib/version.js';
import semver from 'semver';
import { ApiError } from '../../lib/http/errors.js';
import type { ApiRequest } from '../../lib/http/types.js';
import { createLogger } from '../../lib/logger.js';
import type { ModelSlice } from '../../lib/model/slice.js';
import { definePlugin, type PluginDefinition } from '../../lib/plugin.js';
import { FakeTransport } from '../../testing/fake-irc.js';
import { ManualClock } from '../../testing/manual-clock.js';
import { testHostConfig } from '../../testing/host-config.js';

type AnyPlugin = PluginDefinition<never>;

function plugin(name: string, dependencies: string[] = [], start: AnyPlugin['start'] = () => undefined): AnyPlugin {
  return {
    name,
    description: `${name} plugin`,
    dependencies,
    configSchema: { type: 'object', properties: { level: { type: 'integer', minimum: 1, default: 3 } } },
    start,
  };
}

function setup(
  plugins: readonly AnyPlugin[],
  pluginConfig: Record<string, unknown>,
  admins: string[] = [],
  options: Pick<HostOptions, 'listen' | 'storeInMemory'> = {},
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'host-test-'));
  const config = testHostConfig(path.join(dir, 'store.json'), { admins, plugins: pluginConfig });
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', sink: (line) => logs.push(line) });
  const transport = new FakeTransport();
  const host = new Host({ config, logger, plugins, transport, ...options });
  return { host, transport, logs, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

t.test('plugins start in dependency order and stop in reverse', async (t) => {
  const events: string[] = [];
  const make = (name: string, dependencies: string[] = []) =>
    plugin(name, dependencies, () => {
      events.push(`start ${name}`);
      return () => {
        events.push(`stop ${name}`);
      };
    });
  // Registered in an order that is not the dependency order.
  const registry = [make('api', ['tokens', 'stats']), make('tokens', ['stats']), make('stats'), make('unused')];
  const { host, cleanup } = setup(registry, { api: {}, tokens: {}, stats: {} });
  t.teardown(cleanup);
  await host.start();
  t.same(events, ['start stats', 'start tokens', 'start api']);
  await host.stop();
  t.same(events.slice(3), ['stop api', 'stop tokens', 'stop stats']);
});

t.test('a plugin names the host versions it works with; another host refuses to start', async (t) => {
  const named = (host: string) => ({ ...plugin('hello'), host });
  const major = semver.major(packageVersion);
  for (const range of [packageVersion, `^${packageVersion}`, `>=${packageVersion}`, `${major}.x`, '*']) {
    t.doesNotThrow(() => resolvePlugins([named(range)], { hello: {} }), `${range} takes ${packageVersion}`);
  }
  const later = `>=${semver.inc(packageVersion, 'minor')}`;
  t.throws(() => resolvePlugins([named(later)], { hello: {} }), {
    message: `Plugin "hello" works with irc-network-data ${later}; this is irc-network-data ${packageVersion}: use a version of the plugin made for this one, or a host in its range`,
  });
  t.throws(() => resolvePlugins([named(`${major + 1}.x`)], { hello: {} }), {
    message: new RegExp(`works with irc-network-data ${major + 1}\\.x; this is irc-network-data`),
  });
  t.throws(() => resolvePlugins([named('version one')], { hello: {} }), {
    message: 'Plugin "hello" names the host versions it works with as "version one", which is not a version range',
  });
  t.doesNotThrow(() => resolvePlugins([named(`${major + 1}.x`)], {}), 'a plugin not enabled is not checked');
});

t.test('boot errors name the plugin and the key', async (t) => {
  const registry = [plugin('stats'), plugin('api', ['stats']), plugin('tokens', ['ghost'])];
  t.throws(() => resolvePlugins(registry, { api: {} }), {
    message: /The dependency "stats" of plugin "api" is not enabled/,
  });
  t.throws(() => resolvePlugins(registry, { tokens: {} }), {
    message: /The dependency "ghost" of plugin "tokens" is not registered/,
  });
  t.throws(() => resolvePlugins(registry, { stats: { level: 0 } }), {
    message: /config\.plugins\.stats\.level must be .*1.*got 0/,
  });
  t.throws(() => resolvePlugins(registry, { stats: { levle: 2 } }), {
    message: /config\.plugins\.stats: unknown key "levle"/,
  });
  t.throws(() => resolvePlugins(registry, { nope: {} }), {
    message: /no plugin named "nope" \(known: stats, api, tokens\)/,
  });
  const cyclic = [plugin('a', ['b']), plugin('b', ['a'])];
  t.throws(() => resolvePlugins(cyclic, { a: {}, b: {} }), { message: /cycle: a → b → a/ });
  try {
    resolvePlugins(registry, { stats: { level: 0 }, nope: {} });
    t.fail('should throw');
  } catch (error) {
    t.ok(error instanceof HostError);
    t.equal((error as HostError).problems.length, 2, 'every problem is reported at once');
  }
});

t.test('defaults are filled and enabled: false turns a plugin off', async (t) => {
  const plan = resolvePlugins([plugin('stats'), plugin('api')], { stats: {}, api: { enabled: false } });
  t.same(
    plan.map((entry) => entry.definition.name),
    ['stats'],
  );
  t.equal(plan[0]!.config.level, 3, 'the schema default');
});

t.test('a throwing handler is logged with the plugin name and the host goes on', async (t) => {
  const seen: string[] = [];
  const faulty = definePlugin({
    name: 'faulty',
    description: 'throws everywhere',
    configSchema: { type: 'object' },
    start({ irc, onModelChange, timers }) {
      irc.on('message', (message) => {
        if (message.command === 'PRIVMSG') throw new Error('sync boom');
      });
      irc.on('message', async (message) => {
        if (message.command === 'PRIVMSG') throw new Error('async boom');
      });
      onModelChange(() => {
        throw new Error('model boom');
      });
      timers.after(1, () => {
        throw new Error('timer boom');
      });
    },
  }) as AnyPlugin;
  const healthy = plugin('healthy', [], ({ irc }) => {
    irc.on('message', (message) => seen.push(message.command));
  });
  const { host, transport, logs, cleanup } = setup([faulty, healthy], { faulty: {}, healthy: {} });
  t.teardown(cleanup);
  await host.start();
  transport.register();
  transport.receive(':alice!a@h PRIVMSG #chan :hello');
  host.model.upsertUser('alice');
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(seen.includes('PRIVMSG'), 'the other plugin still got the message');
  for (const what of ['sync boom', 'async boom', 'model boom', 'timer boom']) {
    t.ok(
      logs.some((line) => line.includes('ERROR') && line.includes('plugin=faulty') && line.includes(what)),
      `logged: ${what}`,
    );
  }
  transport.receive(':bob!b@h PRIVMSG #chan :again');
  t.equal(seen.filter((command) => command === 'PRIVMSG').length, 2, 'still running');
  await host.stop();
});

t.test('a plugin that fails to start stops the ones already started', async (t) => {
  const events: string[] = [];
  const first = plugin('first', [], () => () => {
    events.push('stop first');
  });
  const broken = plugin('broken', ['first'], () => {
    throw new Error('cannot start');
  });
  const { host, cleanup } = setup([first, broken], { first: {}, broken: {} });
  t.teardown(cleanup);
  await t.rejects(host.start(), { message: /plugin "broken" failed to start: cannot start/ });
  t.same(events, ['stop first']);
  await host.stop();
});

t.test('stop flushes persisting slices to the store and QUITs', async (t) => {
  class CounterSlice implements ModelSlice {
    readonly name = 'counter';
    value = 0;
    readonly persistence = {
      snapshot: () => ({ value: this.value }),
      restore: (data: unknown) => {
        this.value = (data as { value: number }).value;
      },
    };
  }
  const counter = new CounterSlice();
  const counting = plugin('counting', [], ({ model }) => {
    model.addSlice(counter);
    return undefined;
  });
  const { host, transport, dir, cleanup } = setup([counting], { counting: {} });
  t.teardown(cleanup);
  await host.start();
  transport.register();
  counter.value = 41;
  host.model.changed({ slice: 'counter', kind: 'increment' });
  counter.value = 42;
  host.model.changed({ slice: 'counter', kind: 'increment' });
  await host.stop('Bye now');
  const file = JSON.parse(readFileSync(path.join(dir, 'store.json'), 'utf8')) as {
    slices: { counter: { value: number } };
  };
  t.equal(file.slices.counter.value, 42, 'the last value is on disk');
  t.ok(transport.sent.includes('QUIT :Bye now'), 'QUIT with the message');

  // A new host restores it.
  const again = new CounterSlice();
  const restoring = plugin('counting', [], ({ model }) => {
    model.addSlice(again);
  });
  const second = new Host({
    config: host['options'].config,
    logger: createLogger({ sink: () => undefined }),
    plugins: [restoring],
    transport: new FakeTransport(),
  });
  await second.start();
  t.equal(again.value, 42, 'restored at start');
  await second.stop();
});

declare module '../../lib/sdk.js' {
  interface Services {
    /** Only these tests provide and use it. */
    'test.counter': { count: number };
  }
}

t.test(
  'without listening and with the store in memory, routes answer through inject and no file is written',
  async (t) => {
    class NoteSlice implements ModelSlice {
      readonly name = 'note';
      readonly persistence = { snapshot: () => ({ note: 'kept' }), restore: () => undefined, durable: true };
    }
    const registry = [
      plugin('notes', [], ({ http, model }) => {
        model.addSlice(new NoteSlice());
        http.route({
          method: 'GET',
          path: '/api/note/',
          name: 'test.note',
          summary: 'note',
          tier: 'public',
          handler: () => ({ body: { note: 'kept' } }),
        });
      }),
    ];
    const { host, dir, cleanup } = setup(registry, { notes: {} }, [], { listen: false, storeInMemory: true });
    t.teardown(cleanup);
    await host.start();
    t.equal(host.url, null, 'no address: nothing listens');
    t.same((await host.http.inject({ method: 'GET', path: '/api/note/' })).body, { note: 'kept' });
    host.model.changed({ slice: 'note', kind: 'set' });
    await host.store.persisted();
    await host.stop();
    t.same(readdirSync(dir), [], 'the store wrote nothing to its folder');
  },
);

t.test('a plugin gets the service it uses from the plugin that provides it, which starts first', async (t) => {
  const seen: number[] = [];
  const events: string[] = [];
  const registry: AnyPlugin[] = [
    {
      ...plugin('api', [], ({ services }) => {
        events.push('api');
        seen.push(services.get('test.counter').count);
      }),
      uses: ['test.counter'],
    },
    {
      ...plugin('stats', [], ({ services }) => {
        events.push('stats');
        services.provide('test.counter', { count: 7 });
      }),
      provides: ['test.counter'],
    },
  ];
  const { host, cleanup } = setup(registry, { api: {}, stats: {} });
  t.teardown(cleanup);
  await host.start();
  t.same(events, ['stats', 'api'], 'the provider started first, though listed later');
  t.same(seen, [7]);
  await host.stop();
});

t.test('services that are not declared, not provided or provided twice are errors naming the plugins', async (t) => {
  const provider = (
    name: string,
    start: AnyPlugin['start'] = ({ services }) => services.provide('test.counter', { count: 1 }),
  ) => ({
    ...plugin(name, [], start),
    provides: ['test.counter' as const],
  });
  const user = { ...plugin('api'), uses: ['test.counter' as const] };

  t.throws(() => resolvePlugins([user, provider('stats')], { api: {} }), {
    message:
      /The plugin "api" uses the service "test\.counter", which the plugin "stats" provides, but "stats" is not enabled: add "stats": \{\} under config\.plugins/,
  });
  t.throws(() => resolvePlugins([user, provider('stats')], { api: {}, stats: { enabled: false } }), {
    message: /but "stats" is turned off \("enabled": false under config\.plugins\.stats\)/,
  });
  t.doesNotThrow(
    () => resolvePlugins([{ ...provider('stats'), uses: ['test.counter' as const] }], { stats: {} }),
    'a plugin may use what it provides itself',
  );
  t.throws(() => resolvePlugins([user], { api: {} }), {
    message: /The plugin "api" uses the service "test\.counter", which no registered plugin provides/,
  });
  t.throws(() => resolvePlugins([provider('stats'), provider('rival')], { stats: {}, rival: {} }), {
    message: /The plugins "stats" and "rival" both provide the service "test\.counter"/,
  });
  t.doesNotThrow(() =>
    resolvePlugins([provider('stats'), provider('rival')], { stats: {}, rival: { enabled: false } }),
  );

  const silent = setup([provider('stats', () => undefined)], { stats: {} });
  t.teardown(silent.cleanup);
  await t.rejects(silent.host.start(), {
    message: /plugin "stats" failed to start: it declares that it provides "test\.counter" but did not/,
  });

  const undeclared = setup([plugin('stats', [], ({ services }) => services.provide('test.counter', { count: 1 }))], {
    stats: {},
  });
  t.teardown(undeclared.cleanup);
  await t.rejects(undeclared.host.start(), {
    message: /the plugin "stats" provides "test\.counter" without declaring it in its "provides"/,
  });

  const sneaky = setup([provider('stats'), plugin('api', [], ({ services }) => void services.get('test.counter'))], {
    stats: {},
    api: {},
  });
  t.teardown(sneaky.cleanup);
  await t.rejects(sneaky.host.start(), {
    message: /the plugin "api" uses "test\.counter" without declaring it in its "uses"/,
  });
});

t.test(
  'a stopping host tells a plugin its used service is gone with a 503; a failing stop does not hide a boot error',
  async (t) => {
    let readLater: () => unknown = () => undefined;
    const registry: AnyPlugin[] = [
      {
        ...plugin('stats', [], ({ services }) => services.provide('test.counter', { count: 7 })),
        provides: ['test.counter'],
      },
      {
        ...plugin('api', [], ({ services }) => {
          readLater = () => services.get('test.counter');
        }),
        uses: ['test.counter'],
      },
    ];
    const { host, cleanup } = setup(registry, { api: {}, stats: {} });
    t.teardown(cleanup);
    await host.start();
    t.same(readLater(), { count: 7 });
    await host.stop();
    t.throws(() => readLater(), { status: 503, message: /The service "test\.counter" is not available/ });

    const events: string[] = [];
    const broken: AnyPlugin[] = [
      plugin('first', [], () => () => void events.push('first stopped')),
      {
        ...plugin('liar', [], () => () => {
          throw new Error('stop failed too');
        }),
        provides: ['test.counter'],
      },
    ];
    const second = setup(broken, { first: {}, liar: {} });
    t.teardown(second.cleanup);
    await t.rejects(second.host.start(), { message: /plugin "liar" failed to start: it declares that it provides/ });
    t.same(events, ['first stopped'], 'the plugins started before it were stopped');
    t.ok(second.logs.some((line) => /plugin stop failed plugin=liar error="?stop failed too/.test(line)));
  },
);

t.test('the tiers are guarded by the plugin that provides http.guard, while it runs', async (t) => {
  /** Stands in for the api plugin: a public route and a token route. */
  const routes = plugin('routes', [], ({ http }) => {
    http.route({
      method: 'GET',
      path: '/api/open/',
      name: 'test.open',
      summary: 'open',
      tier: 'public',
      handler: () => ({ body: { open: true } }),
    });
    http.route({
      method: 'GET',
      path: '/api/closed/',
      name: 'test.closed',
      summary: 'closed',
      tier: 'token',
      handler: (request) => ({ body: { token: request.tokenId } }),
    });
  });
  const refuse = (request: ApiRequest): void => {
    if (request.headers.authorization !== 'Token good') throw new ApiError(401, 'unauthorized', 'Bad token');
  };
  const guard: AnyPlugin = {
    ...plugin('guard', [], ({ services }) =>
      services.provide('http.guard', {
        token: (request) => {
          refuse(request);
          request.tokenId = 'good';
        },
        public: (request) => {
          if (request.headers.authorization !== undefined) refuse(request);
        },
      }),
    ),
    provides: ['http.guard'],
  };

  const unguarded = setup([routes, guard], { routes: {} });
  t.teardown(unguarded.cleanup);
  await unguarded.host.start();
  const closed = await unguarded.host.http.inject({ method: 'GET', path: '/api/closed/' });
  t.equal(closed.status, 503, 'without a guard, token routes are closed');
  t.match(closed.body, { error: { code: 'unavailable' } });
  t.equal((await unguarded.host.http.inject({ method: 'GET', path: '/api/open/' })).status, 200);
  const unchecked = { method: 'GET', path: '/api/open/', headers: { Authorization: 'Token bad' } };
  t.equal((await unguarded.host.http.inject(unchecked)).status, 200, 'and public routes are not checked');
  await unguarded.host.stop();

  const guarded = setup([routes, guard], { routes: {}, guard: {} });
  t.teardown(guarded.cleanup);
  await guarded.host.start();
  const inject = (path: string, authorization?: string) =>
    guarded.host.http.inject({
      method: 'GET',
      path,
      ...(authorization ? { headers: { Authorization: authorization } } : {}),
    });
  t.equal((await inject('/api/closed/')).status, 401, "the provider's token guard runs");
  t.same((await inject('/api/closed/', 'Token good')).body, { token: 'good' });
  t.equal((await inject('/api/open/', 'Token bad')).status, 401, 'and its public guard');
  t.equal((await inject('/api/open/')).status, 200);
  await guarded.host.stop();
  t.equal((await inject('/api/closed/', 'Token good')).status, 503, 'the guards go when their plugin stops');
  t.equal((await inject('/api/open/', 'Token bad')).status, 200);
});

t.test('two plugins guarding the tiers is a boot error naming both', async (t) => {
  const guard = (name: string): AnyPlugin => ({
    ...plugin(name, [], ({ services }) => services.provide('http.guard', { token: () => undefined })),
    provides: ['http.guard'],
  });
  t.throws(() => resolvePlugins([guard('tokens'), guard('rival')], { tokens: {}, rival: {} }), {
    message: /The plugins "tokens" and "rival" both provide the service "http\.guard"/,
  });
});

t.test("a plugin's timers run on the host's timers, isolated, and are cancelled when it stops", async (t) => {
  const ran: string[] = [];
  const timing = plugin('timing', [], ({ timers }) => {
    timers.every(100, () => {
      ran.push('every');
    });
    timers.after(250, () => {
      ran.push('after');
      throw new Error('the task broke');
    });
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'host-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const logs: string[] = [];
  const clock = new ManualClock();
  const host = new Host({
    config: testHostConfig(path.join(dir, 'store.json'), { plugins: { timing: {} } }),
    logger: createLogger({ sink: (line) => logs.push(line) }),
    plugins: [timing],
    transport: new FakeTransport(),
    storeInMemory: true,
    listen: false,
    timers: clock,
  });
  await host.start();
  t.same(ran, [], 'nothing before the clock moves');
  await clock.advance(300);
  t.same(ran, ['every', 'every', 'after', 'every'], 'each when it falls due, in order');
  t.match(logs.join('\n'), /ERROR \[host\] timer failed plugin=timing error="the task broke"/, 'a throw is logged');
  await host.stop();
  await clock.advance(1000);
  t.equal(ran.length, 4, 'none after the plugin stopped');
});

t.test('a manual clock that jumps runs each timer that fell due once, and goes on from there', async (t) => {
  const clock = new ManualClock();
  const ran: string[] = [];
  clock.every(100, () => ran.push(`every at ${clock.elapsed}`));
  clock.after(150, () => ran.push(`after at ${clock.elapsed}`));
  clock.after(5000, () => ran.push('not yet'));
  await clock.jump(1000);
  t.same(ran, ['every at 1000', 'after at 1000'], 'once each, in the order they fell due');
  await clock.advance(250);
  t.same(ran.slice(2), ['every at 1100', 'every at 1200']);
});

t.test("the config's HTTP timeouts and connection cap reach the server", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'host-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = testHostConfig(path.join(dir, 'store.json'), {
    http: { host: '127.0.0.1', port: 0, headers_timeout_seconds: 1, request_timeout_seconds: 2, max_connections: 1 },
  });
  const logs: string[] = [];
  const host = new Host({
    config,
    logger: createLogger({ level: 'debug', sink: (line) => logs.push(line) }),
    plugins: [],
    transport: new FakeTransport(),
  });
  await host.start();
  t.teardown(() => host.stop());
  const port = Number(new URL(host.url!).port);
  // Headers that never end: a 408 after the configured second, not Node's minute.
  const slow = net.connect(port, '127.0.0.1');
  t.teardown(() => slow.destroy());
  const started = performance.now();
  const answer = await new Promise<string>((resolve) => {
    let received = '';
    slow.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    slow.on('close', () => resolve(received));
    slow.on('error', () => resolve(received));
    slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  });
  const waited = performance.now() - started;
  t.match(answer, /^HTTP\/1\.1 408 /, 'a 408');
  t.ok(waited < 5000, `after ${Math.round(waited)} ms (headers_timeout_seconds: 1)`);
  // One connection at most: a second, while one is open, is closed unanswered.
  const held = net.connect(port, '127.0.0.1');
  t.teardown(() => held.destroy());
  await new Promise((resolve) => held.once('connect', resolve));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const extra = net.connect(port, '127.0.0.1');
  extra.on('error', () => undefined);
  let extraAnswered = false;
  extra.on('data', () => (extraAnswered = true));
  extra.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => extra.once('close', resolve));
  t.notOk(extraAnswered, 'max_connections: 1');
});

t.test('headers_timeout_seconds over request_timeout_seconds is a config error', async (t) => {
  t.throws(
    () => testHostConfig('store.json', { http: { headers_timeout_seconds: 400, request_timeout_seconds: 300 } }),
    {
      message:
        /config\.http\.headers_timeout_seconds must be at most config\.http\.request_timeout_seconds \(300\), got 400/,
    },
  );
});
