/**
 * The package as an integrator gets it: `npm pack`, the tarball installed into a project of its own (from the
 * npm cache where it has the packages), its types checked in a strict consumer (`skipLibCheck: false`) under
 * NodeNext and Bundler on TypeScript 6 and 7, an outside plugin tested with the package's harness on node's own
 * test runner, and two embedded bots run against the real test network: one on the consumer's own
 * irc-framework client, one on matrix-org-irc, each with the outside plugin loaded from its config, answering
 * over HTTP and IRC while the consumer's own handlers keep working.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { IrcClient } from '../support/irc-client.js';
import { findRepoRoot, freePorts, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const root = findRepoRoot();
/** The version of a package this repository has installed: the consumer gets the same (from the npm cache). */
const installed = (name: string): string =>
  (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

/** What the tarball may hold: the built entries and their types, the GeoIP data read, and the documents. */
const ALLOWED = [
  /^package\.json$/,
  /^(README|CHANGELOG)\.md$/,
  /^LICENSE$/,
  /^config\.example\.json$/,
  /^deploy\/[\w./-]+$/,
  /^dist\/(app|lib|plugins|testing)\/[\w./-]+\.(js|d\.ts)$/,
  /^dist\/geoip\/(geolite2-country\.mmdb|GEOLITE2_LICENSE|GEOLITE2_EULA)$/,
];
/** Files an integrator needs, which a wrong `files` list would leave out. */
const REQUIRED = [
  'dist/app/index.js',
  'dist/app/index.d.ts',
  'dist/app/main.js',
  'dist/app/sdk.d.ts',
  'dist/app/irc-framework.d.ts',
  'dist/app/matrix-org-irc.d.ts',
  'dist/testing/index.d.ts',
  'dist/geoip/geolite2-country.mmdb',
  'LICENSE',
  'config.example.json',
];

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}

/**
 * A consumer's command, as it would run outside this test: without the test runner's loaders, which it puts in
 * NODE_OPTIONS of every process the test starts.
 */
function outside(command: string, args: string[]): [string, string[]] {
  return ['env', ['-u', 'NODE_OPTIONS', 'FORCE_COLOR=0', command, ...args]];
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(...outside(command, args), {
    cwd,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, ...env },
  });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}` };
}

/** `npm pack` of the built tree (the test command built it: no `prepare` again). */
function pack(into: string): Packed {
  const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', into], root);
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.output}`);
  const json = packed.output.slice(packed.output.indexOf('['));
  return (JSON.parse(json) as Packed[])[0]!;
}

/** The size of `tarball` packed again without the folder `left`. */
function packedWithout(tarball: string, left: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'repack-'));
  try {
    const unpacked = spawnSync('tar', ['xzf', tarball, '-C', dir]);
    if (unpacked.status !== 0) throw new Error(`tar xzf ${tarball}: ${String(unpacked.stderr)}`);
    rmSync(path.join(dir, left), { recursive: true, force: true });
    const packedAgain = spawnSync('tar', ['czf', '-', '-C', dir, 'package'], { maxBuffer: 64 * 1024 * 1024 });
    return packedAgain.stdout.length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The package installed alone, as a consumer on irc-framework who never asked for matrix-org-irc has it: npm
 * brings irc-framework (a peer dependency) and not matrix-org-irc (an optional one); the types hold without
 * it; a config naming it is a clear error, not a crash.
 */
function checkAlone(t: Test, parent: string, tarball: string): void {
  const dir = path.join(parent, 'alone');
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'alone',
      private: true,
      type: 'module',
      dependencies: { 'irc-network-data': `file:../${tarball}`, '@types/node': installed('@types/node') },
    }),
  );
  const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  t.equal(install.status, 0, 'alone: npm install of the tarball');
  if (install.status !== 0) return void t.comment(install.output);
  t.ok(existsSync(path.join(dir, 'node_modules/irc-framework')), 'alone: npm brought irc-framework, a peer');
  t.notOk(existsSync(path.join(dir, 'node_modules/matrix-org-irc')), 'alone: and not matrix-org-irc, an optional one');
  const listed = run('npm', ['ls', '--all', '--parseable'], dir);
  t.comment(`alone: ${listed.output.trim().split('\n').length - 1} packages installed`);
  writeFileSync(
    path.join(dir, 'src/main.ts'),
    [
      "import { createLogger, createTransport, parseConfig, type PluginDefinition } from 'irc-network-data';",
      "import { definePlugin } from 'irc-network-data/sdk';",
      "import { IrcFrameworkTransport } from 'irc-network-data/irc-framework';",
      "const plugin: PluginDefinition = definePlugin({ name: 'p', description: 'p', configSchema: {}, start() {} });",
      'const logger = createLogger({ sink: () => undefined });',
      "const config = (client: string) => parseConfig(JSON.stringify({ irc: { host: 'irc.example', nick: 'Bot', client } }), 'main.ts', {});",
      "const own = await createTransport(config('irc-framework'), logger);",
      'console.log(plugin.name, own instanceof IrcFrameworkTransport);',
      "await createTransport(config('matrix-org-irc'), logger).catch((error: Error) => console.log(error.message));",
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        target: 'ES2022',
        lib: ['ES2023'],
        types: ['node'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    }),
  );
  const built = run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
  t.equal(built.status, 0, 'alone: the types hold without matrix-org-irc (skipLibCheck false)');
  if (built.status !== 0) return void t.comment(built.output);
  const ran = run(process.execPath, ['dist/main.js'], dir);
  t.equal(
    ran.output.trim(),
    'p true\nirc.client is "matrix-org-irc", but the package matrix-org-irc is not installed: npm install matrix-org-irc',
    'alone: the irc-framework adapter is made; a config naming matrix-org-irc is a clear error',
  );
}

/** The consumer's sources: the repository's examples, importing the package by its name. */
function writeConsumer(dir: string, tarball: string): void {
  const fromPackage = (source: string) =>
    source
      .replaceAll("'../../app/sdk.js'", "'irc-network-data/sdk'")
      .replaceAll("'../../app/index.js'", "'irc-network-data'")
      .replaceAll("'../../app/irc-framework.js'", "'irc-network-data/irc-framework'")
      .replaceAll("'../../app/matrix-org-irc.js'", "'irc-network-data/matrix-org-irc'")
      .replaceAll("'../../testing/index.js'", "'irc-network-data/testing'");
  const example = (file: string) => fromPackage(readFileSync(path.join(root, 'examples', file), 'utf8'));
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'src/top-talkers.ts'), example('top-talkers/index.ts'));
  writeFileSync(
    path.join(dir, 'src/top-talkers.test.ts'),
    example('top-talkers/index.test.ts').replace("'./index.js'", "'./top-talkers.js'"),
  );
  writeFileSync(path.join(dir, 'src/embed.ts'), example('embedded-bot/index.ts'));
  writeFileSync(path.join(dir, 'src/embed-matrix.ts'), example('embedded-bot/matrix-org-irc.ts'));
  writeFileSync(path.join(dir, 'src/setup.ts'), example('embedded-bot/setup.ts'));
  // irc-framework ships no types: a consumer declares what it uses, as this repository does (the client; not
  // the library's socket transport, which only the adapter extends).
  const declarations = readFileSync(path.join(root, 'types/irc-framework.d.ts'), 'utf8');
  writeFileSync(
    path.join(dir, 'src/irc-framework.d.ts'),
    declarations.slice(0, declarations.indexOf('/** The library')),
  );
  writeFileSync(
    path.join(dir, 'src/wrong.ts'),
    [
      "import IrcFramework from 'irc-framework';",
      "import { Client } from 'matrix-org-irc';",
      "import { createLogger, definePlugin, parseConfig, transportOptions } from 'irc-network-data';",
      "import { IrcFrameworkTransport } from 'irc-network-data/irc-framework';",
      "import { MatrixIrcTransport } from 'irc-network-data/matrix-org-irc';",
      "const config = parseConfig(JSON.stringify({ irc: { host: 'irc.example', nick: 'Bot' } }), 'wrong.ts', {});",
      'const options = transportOptions(config);',
      'const logger = createLogger({});',
      '// @ts-expect-error: not a client',
      "IrcFrameworkTransport.attach('irc.example', options, logger);",
      '// @ts-expect-error: a matrix-org-irc client is not an irc-framework one',
      "IrcFrameworkTransport.attach(new Client('irc.example', 'Bot', {}), options, logger);",
      '// @ts-expect-error: nor the other way round',
      'MatrixIrcTransport.attach(new IrcFramework.Client(), options, logger);',
      "definePlugin({ name: 'x', description: 'x', configSchema: {}, start() {},",
      '  // @ts-expect-error: a service no plugin offers',
      "  uses: ['stats.nope'] });",
      'IrcFrameworkTransport.attach(new IrcFramework.Client(), options, logger);',
      '',
    ].join('\n'),
  );
  const compilerOptions = {
    strict: true,
    skipLibCheck: false,
    noUncheckedIndexedAccess: true,
    target: 'ES2022',
    lib: ['ES2023'],
    types: ['node'],
    verbatimModuleSyntax: true,
    esModuleInterop: true,
  };
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        ...compilerOptions,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        rootDir: 'src',
        outDir: 'dist',
      },
      include: ['src'],
    }),
  );
  writeFileSync(
    path.join(dir, 'tsconfig.bundler.json'),
    JSON.stringify({
      compilerOptions: { ...compilerOptions, module: 'preserve', moduleResolution: 'Bundler', noEmit: true },
      include: ['src'],
    }),
  );
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'my-bot',
      private: true,
      type: 'module',
      dependencies: {
        'irc-network-data': `file:${tarball}`,
        // The lowest of the peer range, not the version this repository runs: the package must use the
        // consumer's copy, and work on it.
        'irc-framework': '4.13.1',
        'matrix-org-irc': installed('matrix-org-irc'),
        '@types/node': installed('@types/node'),
      },
    }),
  );
  // What importing an entry loads: ES modules through a load hook, CommonJS ones from the require cache.
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function load(url, context, next) {\n' +
      "  if (url.startsWith('file:')) appendFileSync(process.env.LOADED_LOG, url + '\\n');\n" +
      '  return next(url, context);\n' +
      '}\n',
  );
  writeFileSync(
    path.join(dir, 'import-cost.mjs'),
    "import { register, createRequire } from 'node:module';\n" +
      "import { readFileSync } from 'node:fs';\n" +
      "register('./hooks.mjs', import.meta.url);\n" +
      'const started = performance.now();\n' +
      'await import(process.argv[2]);\n' +
      'const ms = performance.now() - started;\n' +
      "const esm = readFileSync(process.env.LOADED_LOG, 'utf8').split('\\n').filter(Boolean);\n" +
      "const cjs = Object.keys(createRequire(import.meta.url).cache).map((file) => 'file://' + file);\n" +
      'const files = [...new Set([...esm, ...cjs])];\n' +
      'console.log(JSON.stringify({ ms, files }));\n',
  );
}

/** Start an embedded bot program; resolves with its HTTP URL once it says the plugins started. */
async function startEmbedded(
  t: Test,
  dir: string,
  program: string,
  config: object,
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const configPath = path.join(dir, `${path.basename(program, '.js')}.config.json`);
  writeFileSync(configPath, JSON.stringify(config));
  const child = spawn(...outside(process.execPath, [program, configPath]), {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const url = /plugins started; HTTP at (http:\/\/\S+)/.exec(output)?.[1];
    if (url) return { url: url.replace(/\/$/, ''), child, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${program} did not start its plugins:\n${output}`);
}

/** Poll `url` until it answers 200; its JSON body. */
async function until200(url: string, timeoutMs = 30_000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  let status = 0;
  while (Date.now() < deadline) {
    const response = await fetch(url).catch(() => null);
    status = response?.status ?? 0;
    if (response?.ok) return response.json();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer 200 (last ${status})`);
}

async function checkEmbedded(
  t: Test,
  network: TestNetwork,
  dir: string,
  program: string,
  client: 'irc-framework' | 'matrix-org-irc',
): Promise<void> {
  const tag = Math.random().toString(36).slice(2, 6);
  const nick = `Emb${tag}`;
  const observer = new IrcClient({ port: network.hubPort, nick: `obs${tag}` });
  await observer.connect();
  await observer.register();
  // #lobby, which the consumer's bot joins itself, and #talk, which the collector joins after its sync.
  await observer.request('JOIN #lobby', '366');
  await observer.request('JOIN #talk', '366');
  t.teardown(() => observer.destroy());
  const joined = (channel: string) =>
    observer.waitFor((m) => m.command === 'JOIN' && m.nick === nick && m.params[0] === channel, { timeout: 30_000 });
  const joinedBoth = Promise.all([joined('#lobby'), joined('#talk')]);
  const [httpPort] = await freePorts(1);
  const { url, child, output } = await startEmbedded(t, dir, program, {
    irc: {
      host: network.host,
      port: network.hubPort,
      nick,
      client,
      oper: { name: network.operName, password: network.operPass },
    },
    http: { host: '127.0.0.1', port: httpPort },
    store: { path: path.join(dir, `${client}.store.json`) },
    plugin_modules: ['./dist/top-talkers.js'],
    plugins: { stats: { refresh_seconds: 600 }, api: {}, 'top-talkers': { count: 3 } },
  });
  const stats = (await until200(`${url}/api/irc/stats/`)) as { servers: number; synced_as_operator: boolean };
  t.match(stats, { servers: 3, synced_as_operator: true }, `${client}: the API answers from the synced model`);

  // The consumer's own handler, on its own client.
  await joinedBoth;
  const pong = observer.waitFor((m) => m.command === 'PRIVMSG' && m.nick === nick, { timeout: 10_000 });
  observer.send('PRIVMSG #lobby :!ping');
  t.equal((await pong).params[1], 'pong', `${client}: the bot's own handler answers`);

  // The outside plugin, over HTTP and IRC.
  observer.send('PRIVMSG #talk :hello');
  const deadline = Date.now() + 15_000;
  let talkers: { results?: { nick: string; lines: number }[] } = {};
  while (Date.now() < deadline) {
    talkers = (await until200(`${url}/network/data/top-talkers/`)) as typeof talkers;
    if (talkers.results?.some((entry) => entry.nick === observer.nick)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.match(talkers, { results: [{ nick: observer.nick }] }, `${client}: the outside plugin answers over HTTP`);
  const reply = observer.waitFor((m) => m.command === 'NOTICE' && m.nick === nick, { timeout: 10_000 });
  observer.send(`PRIVMSG ${nick} :TOPTALKERS`);
  t.match((await reply).params[1], new RegExp(`^Top talkers on \\d{4}-\\d\\d-\\d\\d: 1\\. ${observer.nick} \\(\\d\\)`));

  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0, `${client}: stopped on SIGTERM`);
  t.notMatch(output(), network.operPass, 'the oper password is not in the output');
}

t.test('the packed package, installed, type-checked and embedded', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'consumer-'));
  // KEEP_CONSUMER=1 keeps the consumer's folder, to look into.
  if (!process.env.KEEP_CONSUMER) t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  else t.comment(`the consumer's folder: ${dir}`);

  const packed = pack(dir);
  const outside = packed.files
    .map((file) => file.path)
    .filter((file) => !ALLOWED.some((allowed) => allowed.test(file)));
  t.same(outside, [], 'no file in the tarball outside the allow-list');
  const paths = new Set(packed.files.map((file) => file.path));
  t.same(
    REQUIRED.filter((file) => !paths.has(file)),
    [],
    'every file an integrator needs is in it',
  );
  // Built output of a source that is gone (a stale dist/) would pass the allow-list: each has its source.
  const orphans = [...paths].filter((file) => {
    const built = /^dist\/(.+?)(\.d)?\.js$|^dist\/(.+?)\.d\.ts$/.exec(file);
    const base = built?.[1] ?? built?.[3];
    return base !== undefined && !existsSync(path.join(root, `${base}.ts`));
  });
  t.same(orphans, [], 'every built file in it has its source');
  const geoip = packed.files
    .filter((file) => file.path.startsWith('dist/geoip/'))
    .reduce((sum, file) => sum + file.size, 0);
  const withoutGeoip = packedWithout(path.join(dir, packed.filename), 'package/dist/geoip');
  t.ok(withoutGeoip < 1e6, `under 1 MB packed without the GeoIP data (${(withoutGeoip / 1e6).toFixed(2)} MB)`);
  t.comment(
    `tarball: ${(packed.size / 1e6).toFixed(2)} MB packed, ${(withoutGeoip / 1e6).toFixed(2)} MB without the GeoIP ` +
      `data; ${(packed.unpackedSize / 1e6).toFixed(2)} MB unpacked (${((packed.unpackedSize - geoip) / 1e6).toFixed(2)} ` +
      `MB without it); ${packed.entryCount} files`,
  );

  checkAlone(t, dir, packed.filename);

  writeConsumer(dir, path.join(dir, packed.filename));
  const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  t.equal(install.status, 0, 'npm install of the tarball');
  if (install.status !== 0) {
    t.comment(install.output);
    return;
  }
  t.notOk(
    existsSync(path.join(dir, 'node_modules/irc-network-data/node_modules/irc-framework')),
    "the consumer's irc-framework 4.13.1 serves the package (a peer dependency): no second copy",
  );
  t.notOk(existsSync(path.join(dir, 'node_modules/@ip-location-db')), 'no GeoIP data package beside the one file');

  const compilers = {
    'TypeScript 6': path.join(root, 'node_modules/typescript/bin/tsc'),
    'TypeScript 7': path.join(root, 'node_modules/typescript-7/bin/tsc'),
  };
  for (const [name, tsc] of Object.entries(compilers)) {
    for (const project of ['tsconfig.json', 'tsconfig.bundler.json']) {
      const checked = run(process.execPath, [tsc, '-p', project, '--noEmit'], dir);
      t.equal(checked.status, 0, `${name}, ${project}: the consumer type-checks with skipLibCheck false`);
      if (checked.status !== 0) t.comment(checked.output);
    }
  }
  const built = run(process.execPath, [compilers['TypeScript 6'], '-p', 'tsconfig.json'], dir);
  t.equal(built.status, 0, 'the consumer builds');

  const harnessRun = run(process.execPath, ['--test', 'dist/top-talkers.test.js'], dir);
  t.equal(harnessRun.status, 0, "the outside plugin's test on the package's harness, with node --test");
  if (harnessRun.status !== 0) t.comment(harnessRun.output);

  const required = run(
    process.execPath,
    ['-e', "const sdk = require('irc-network-data/sdk'); if (typeof sdk.definePlugin !== 'function') process.exit(1)"],
    dir,
  );
  t.equal(required.status, 0, 'CommonJS require of the SDK');

  for (const entry of ['irc-network-data/sdk', 'irc-network-data']) {
    const log = path.join(dir, `loaded-${entry.replace('/', '-')}.log`);
    writeFileSync(log, '');
    const cost = run(process.execPath, ['import-cost.mjs', entry], dir, { LOADED_LOG: log });
    const { ms, files } = JSON.parse(cost.output.trim().split('\n').at(-1) ?? '{}') as { ms: number; files: string[] };
    const libraries = files.filter((file) => /\/node_modules\/(irc-framework|matrix-org-irc)\//.test(file));
    t.same(libraries, [], `importing ${entry} loads no IRC client library`);
    t.comment(`import ${entry}: ${files.length} files, ${ms.toFixed(0)} ms`);
  }

  const network = await startTestNetwork();
  t.teardown(() => network.stop());
  await checkEmbedded(t, network, dir, 'dist/embed.js', 'irc-framework');
  await checkEmbedded(t, network, dir, 'dist/embed-matrix.js', 'matrix-org-irc');
});
