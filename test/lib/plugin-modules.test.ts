/** Outside plugins named in the config's plugin_modules: loaded by path, or refused with the reason. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ConfigError } from '../../lib/config.js';
import { loadPluginModules } from '../../lib/plugin-modules.js';
import { findRepoRoot } from '../support/testnet.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const example = path.join(here, '../../examples/top-talkers/index.js');

t.test('a module is found relative to the config folder, and its default export is the plugin', async (t) => {
  const [plugin] = await loadPluginModules([path.relative(here, example)], here, ['stats', 'api']);
  t.equal(plugin?.name, 'top-talkers');
  t.same(plugin?.uses, ['stats.activity']);
});

t.test('every module that cannot be used is named, with why', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'plugin-modules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'not-a-plugin.mjs'), 'export default { name: "x" };\n');
  writeFileSync(path.join(dir, 'broken.mjs'), 'export default ;\n');
  writeFileSync(
    path.join(dir, 'stats.mjs'),
    'export default { name: "stats", description: "", configSchema: {}, start() {} };\n',
  );
  const error = await loadPluginModules(
    ['missing.mjs', 'not-a-plugin.mjs', 'broken.mjs', 'stats.mjs', example, example],
    dir,
    ['stats'],
  ).catch((caught: unknown) => caught);
  t.type(error, ConfigError);
  const problems = (error as ConfigError).problems;
  t.equal(problems.length, 5);
  t.match(problems[0], /^config\.plugin_modules\[0\]: cannot load .*missing\.mjs/);
  t.match(
    problems[1],
    /^config\.plugin_modules\[1\]: .*not-a-plugin\.mjs does not export a plugin as its default export/,
  );
  t.match(problems[2], /^config\.plugin_modules\[2\]: cannot load .*broken\.mjs: .*Unexpected token/);
  t.match(
    problems[3],
    /^config\.plugin_modules\[3\]: .* exports the plugin "stats", but a plugin of that name is already loaded/,
  );
  t.match(problems[4], /^config\.plugin_modules\[5\]: .* exports the plugin "top-talkers", but a plugin of that name/);
});

t.test('the example compiles in a repository of its own, against the built package', async (t) => {
  const root = findRepoRoot();
  const dir = mkdtempSync(path.join(tmpdir(), 'outside-plugin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(root, path.join(dir, 'node_modules', 'irc-network-data'), 'dir');
  // The example as its own repository has it: the SDK's entry instead of a path into this one.
  const source = readFileSync(path.join(root, 'examples/top-talkers/index.ts'), 'utf8').replace(
    "'../../app/sdk.js'",
    "'irc-network-data/sdk'",
  );
  t.notMatch(source, /from '\.\.?\//, 'no import of a path into this repository is left');
  writeFileSync(path.join(dir, 'index.ts'), source);
  // The same, using a service nobody declares: the compiler must refuse it, or the check proves nothing.
  writeFileSync(path.join(dir, 'wrong.ts'), source.replace(/'stats\.activity'/g, "'stats.nope'"));
  const tsconfig = (file: string) =>
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [path.join(root, 'node_modules/@types')],
      },
      files: [file],
    });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'top-talkers', type: 'module' }));
  writeFileSync(path.join(dir, 'tsconfig.json'), tsconfig('index.ts'));
  writeFileSync(path.join(dir, 'tsconfig.wrong.json'), tsconfig('wrong.ts'));
  const tsc = (project: string) =>
    spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: dir,
      encoding: 'utf8',
    });
  const good = tsc('tsconfig.json');
  t.equal(good.status, 0, `it compiles: ${good.stdout}${good.stderr}`);
  const wrong = tsc('tsconfig.wrong.json');
  t.not(wrong.status, 0, 'an unknown service does not compile');
  t.match(wrong.stdout, /stats\.nope/);
});
