/** The command line: config problems are reported by key and exit 2, before anything connects. */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../app/main.js');
const dir = mkdtempSync(path.join(tmpdir(), 'main-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [main, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 20000,
  });
  return { code: result.status, stderr: result.stderr, stdout: result.stdout };
}

t.test('without a config path it prints the usage', async (t) => {
  const result = run([]);
  t.equal(result.code, 2);
  t.match(result.stderr, /usage: irc-network-data --config <path>/);
});

t.test('every config problem is listed with its key path', async (t) => {
  const file = path.join(dir, 'bad.json');
  writeFileSync(
    file,
    JSON.stringify({
      irc: { host: '127.0.0.1', nick: 'Bot', port: 0, sasl: { account: 'Bot', password: 'hunter2-secret' } },
      plugins: { stats: { refresh_seconds: 0 } },
    }),
  );
  const result = run(['--config', file]);
  t.equal(result.code, 2);
  t.match(result.stderr, /config\.irc\.port must be an integer from 1 to 65535, got 0/);
  t.notMatch(result.stderr + result.stdout, /hunter2-secret/, 'the password is never printed');
});

t.test('plugin config problems name the plugin and the key', async (t) => {
  const file = path.join(dir, 'plugin.json');
  writeFileSync(
    file,
    JSON.stringify({
      irc: { host: '127.0.0.1', nick: 'Bot', port: 1 },
      http: { port: 0 },
      store: { path: path.join(dir, 'store.json') },
      plugins: { stats: { refresh_seconds: 0 } },
    }),
  );
  const result = run([`--config=${file}`]);
  t.equal(result.code, 2);
  t.match(result.stderr + result.stdout, /config\.plugins\.stats\.refresh_seconds must be .*1.*got 0/);
});

t.test('IRC_DATA_CONFIG names the file too', async (t) => {
  const result = run([], { IRC_DATA_CONFIG: path.join(dir, 'missing.json') });
  t.equal(result.code, 2);
  t.match(result.stderr, /missing\.json/);
});

t.test('the bin and npm start run node with the bot’s V8 flags and environment', async (t) => {
  const { BOT_NODE_ENV_WORDS, BOT_NODE_FLAGS } = await import('../../lib/node-flags.js');
  const firstLine = readFileSync(main, 'utf8').split('\n')[0];
  t.equal(firstLine, `#!/usr/bin/env -S ${BOT_NODE_ENV_WORDS.join(' ')} node ${BOT_NODE_FLAGS.join(' ')}`);
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const scripts = (
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  t.equal(scripts.start, `${BOT_NODE_ENV_WORDS.join(' ')} node ${BOT_NODE_FLAGS.join(' ')} dist/app/main.js`);
  // The shipped systemd unit and the operations guide's template unit pass the same.
  const unit = readFileSync(path.join(root, 'deploy/systemd/irc-network-data.service'), 'utf8');
  t.match(unit, new RegExp(`^ExecStart=/usr/bin/node ${BOT_NODE_FLAGS.join(' ')} /`, 'm'), 'the unit: the flags');
  for (const word of BOT_NODE_ENV_WORDS) t.match(unit, new RegExp(`^Environment=.*\\b${word}\\b`, 'm'), word);
  const guide = readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
  t.match(guide, new RegExp(`^ExecStart=/usr/bin/node ${BOT_NODE_FLAGS.join(' ')} /`, 'm'), 'the template unit');
  // Run through the shebang itself: `env -S` hands the flags to node, which accepts them.
  chmodSync(main, 0o755);
  const probe = spawnSync(main, [], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 20000 });
  t.equal(probe.status, 2, 'the usage, run as an executable');
  t.match(probe.stderr, /usage: irc-network-data/);
});
