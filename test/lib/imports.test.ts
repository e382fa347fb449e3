/**
 * The import graph of lib/ and plugins/, type-only imports included: no module imports itself through
 * others, so each can be read (and moved) without the ones that use it.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { findRepoRoot } from '../support/testnet.js';

const root = findRepoRoot();
const IMPORT = /^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Each source file's relative imports, as files of the repository. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = [...text.matchAll(IMPORT)]
      .map((match) => path.resolve(path.dirname(file), match[1]!).replace(/\.js$/, '.ts'))
      .filter((target) => fs.existsSync(target));
    graph.set(file, targets);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the files around it. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') cycles.push(stack.slice(stack.indexOf(target)));
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

t.test('the cycle finder finds a cycle of type imports', async (t) => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  t.same(cyclesOf(graph), [['a.ts', 'b.ts', 'c.ts']]);
});

t.test('lib/ and plugins/ import no module back through others', async (t) => {
  const files = [...sources(path.join(root, 'lib')), ...sources(path.join(root, 'plugins'))];
  t.ok(files.length > 50, 'the sources were found');
  const cycles = cyclesOf(importGraph(files)).map((cycle) =>
    cycle.map((file) => path.relative(root, file)).join(' → '),
  );
  t.same(cycles, [], 'no import circles');
});

t.test('lib/ never imports plugins/: the entry points that wire the built-in plugins live in app/', async (t) => {
  const files = sources(path.join(root, 'lib'));
  const arrows = [...importGraph(files)].flatMap(([file, targets]) =>
    targets
      .filter((target) => path.relative(root, target).startsWith(`plugins${path.sep}`))
      .map((target) => `${path.relative(root, file)} → ${path.relative(root, target)}`),
  );
  t.same(arrows, []);
});

t.test('a plugin imports the core only through lib/sdk.ts, and no other plugin', async (t) => {
  const pluginsDir = path.join(root, 'plugins');
  const sdk = path.join(root, 'lib', 'sdk.ts');
  const publicSdk = path.join(root, 'app', 'sdk.ts');
  // The example of an outside plugin: the package's SDK, which brings the built-in plugins' service contracts.
  // A program embedding the host and a plugin's tests: the package's other entries.
  const entries = ['app/index.ts', 'app/irc-framework.ts', 'app/matrix-org-irc.ts', 'testing/index.ts'].map((entry) =>
    path.join(root, entry),
  );
  const integrator = (file: string) => file.includes(`${path.sep}embedded-bot${path.sep}`) || file.endsWith('.test.ts');
  const outside = [...importGraph(sources(path.join(root, 'examples')))].flatMap(([file, targets]) =>
    targets
      .filter((target) => target !== publicSdk && !path.relative(path.dirname(file), target).match(/^[^.]/))
      .filter((target) => !(integrator(file) && entries.includes(target)))
      .map((target) => `${path.relative(root, file)} → ${path.relative(root, target)}`),
  );
  t.same(outside, [], "examples/ import only the package's entries (a plugin: app/sdk.ts only) and their own files");
  const arrows = [...importGraph(sources(pluginsDir))].flatMap(([file, targets]) => {
    const own = path.relative(pluginsDir, file).split(path.sep)[0]!;
    return targets
      .filter((target) => {
        const where = path.relative(root, target);
        if (where.startsWith(`lib${path.sep}`)) return target !== sdk;
        return !path.relative(pluginsDir, target).startsWith(`${own}${path.sep}`);
      })
      .map((target) => `${path.relative(root, file)} → ${path.relative(root, target)}`);
  });
  t.same(arrows, []);
});

t.test('the lint rule refuses a plugin that imports another lib/ file or another plugin', async (t) => {
  const { ESLint } = await import('eslint');
  const eslint = new ESLint({ cwd: root });
  const lint = async (filePath: string, code: string) =>
    (await eslint.lintText(code, { filePath: path.join(root, filePath) }))[0]!.messages.map(
      (message) => `${message.ruleId}: ${message.message}`,
    );
  const [deep] = await lint('plugins/api/example.ts', "export { errorMessage } from '../../lib/logger.js';\n");
  t.match(deep, /^no-restricted-imports: .*only from lib\/sdk\.js/);
  const [sibling] = await lint('plugins/api/example.ts', "export { historyService } from '../stats/services.js';\n");
  t.match(sibling, /^no-restricted-imports: .*may not import another plugin's files/);
  const [outside] = await lint('examples/top-talkers/example.ts', "export { Host } from '../../lib/host.js';\n");
  t.match(outside, /^no-restricted-imports: /);
  const [entry] = await lint(
    'examples/top-talkers/example.ts',
    "export { builtinPlugins } from '../../app/index.js';\n",
  );
  t.match(
    entry,
    /^no-restricted-imports: .*imports only the SDK/,
    "an outside plugin does not import the package's entry",
  );
  const [packageEntry] = await lint(
    'examples/top-talkers/example.ts',
    "export type { Host } from 'irc-network-data';\n",
  );
  t.match(packageEntry, /^no-restricted-imports: .*imports only the SDK/, 'nor by its name');
  t.same(
    await lint('examples/top-talkers/example.ts', "export type { ActivityService } from 'irc-network-data/sdk';\n"),
    [],
    'the SDK it may',
  );
  t.same(
    await lint('examples/top-talkers/example.ts', "export type { ActivityService } from '../../app/sdk.js';\n"),
    [],
    'and the SDK by its path in this repository',
  );
  const [coreSdk] = await lint('examples/top-talkers/example.ts', "export { definePlugin } from '../../lib/sdk.js';\n");
  t.match(coreSdk, /^no-restricted-imports: .*only the package's SDK/, "not the core's SDK, which lacks the contracts");
  const [publicSdk] = await lint('plugins/api/example.ts', "export { definePlugin } from '../../app/sdk.js';\n");
  t.match(publicSdk, /^no-restricted-imports: .*does not import the program/, 'a built-in plugin imports lib/sdk.js');
  const [dynamic] = await lint('plugins/api/example.ts', "export const host = await import('../../lib/host.js');\n");
  t.match(dynamic, /^no-restricted-syntax: .*imports statically/, 'a dynamic import() is refused too');
  const [program] = await lint(
    'plugins/api/example.ts',
    "export { builtinPlugins } from '../../app/builtin-plugins.js';\n",
  );
  t.match(program, /^no-restricted-imports: .*does not import the program/);
  t.same(await lint('plugins/api/example.ts', "export { errorMessage } from '../../lib/sdk.js';\n"), []);
});
