/** Outside plugins named in the config's plugin_modules: loaded by path, or refused with the reason. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ConfigError } from '../../lib/config.js';
import { loadPluginModules } from '../../lib/plugin-modules.js';

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
