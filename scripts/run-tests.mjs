#!/usr/bin/env node
// Runs tap on the compiled tests, streams its TAP output, and ends with exactly one line
// "N passed, N failed" counting assertions. A test file that fails without a failing
// assertion of its own (crash, non-zero exit, signal, timeout) counts as one failure.
//
// The tests that run the bot run once per IRC client library: the integration tests that import
// test/support/bot.js, and the plugin tests on the harness (testing/harness.js, whose fake
// connection stands for the library of TEST_IRC_CLIENT). They run first with everything else on
// irc-framework, then again with TEST_IRC_CLIENT=matrix-org-irc. Their names carry the library
// ("host.test.js [matrix-org-irc]"), and the last line counts both runs. With TEST_IRC_CLIENT set,
// there is one run, on that library.
//
// usage: node scripts/run-tests.mjs [tap options] [files, dirs or name filters]
//   no positional argument: every dist/test/**/*.test.js
//   test/x.test.ts or dist/test/x.test.js: that file; a directory: its *.test.js files;
//   anything else: the test files whose path contains it (e.g. "integration", "logger").
// Exit code: 0 only when at least one assertion ran and nothing failed.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testRoot = path.join(root, 'dist', 'test');

function testFilesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.test.js'))
    .map((name) => path.relative(root, path.join(dir, name)))
    .sort();
}

/**
 * Maps a source path to what was compiled from it: a file (test/x.test.ts) to dist/test/x.test.js, a folder
 * (test/plugins/tokens) to dist/test/plugins/tokens.
 */
function compiledPath(arg) {
  const relative = path.relative(root, path.resolve(arg));
  if (!/^(test|scripts|lib|plugins)(\/|$)/.test(relative)) return relative;
  if (/\.[mc]?ts$/.test(relative)) return path.join('dist', relative.replace(/\.([mc]?)ts$/, '.$1js'));
  const source = path.join(root, relative);
  return fs.existsSync(source) && fs.statSync(source).isDirectory() ? path.join('dist', relative) : relative;
}

function selectFiles(positionals) {
  const all = testFilesUnder(testRoot);
  if (positionals.length === 0) return all;
  const chosen = new Set();
  for (const arg of positionals) {
    const candidate = compiledPath(arg);
    if (fs.existsSync(path.join(root, candidate)) && fs.statSync(path.join(root, candidate)).isDirectory()) {
      for (const file of testFilesUnder(path.join(root, candidate))) chosen.add(file);
    } else if (fs.existsSync(path.join(root, candidate))) {
      chosen.add(candidate);
    } else {
      const matches = all.filter((file) => file.includes(arg));
      if (matches.length === 0) console.error(`run-tests: no test file matches "${arg}"`);
      for (const file of matches) chosen.add(file);
    }
  }
  return [...chosen];
}

// Options that take a value as the next argument (so the value is not mistaken for a file).
const valueOptions = new Set([
  '-R',
  '--reporter',
  '-t',
  '--timeout',
  '-j',
  '--jobs',
  '-g',
  '--grep',
  '-o',
  '--output-file',
  '-d',
  '--output-dir',
  '--plugin',
  '-P',
]);
const options = [];
const positionals = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg.startsWith('-')) {
    options.push(arg);
    if (valueOptions.has(arg) && i + 1 < argv.length) options.push(argv[++i]);
  } else {
    positionals.push(arg);
  }
}

const files = selectFiles(positionals);
if (files.length === 0) {
  console.log('run-tests: no test files found (did the build run? expected dist/test/**/*.test.js)');
  console.log('0 passed, 0 failed');
  process.exit(1);
}

/**
 * Counts assertions in a TAP 14 stream as it arrives. Subtests are announced by
 * "# Subtest: name" at the indentation of their own result line; YAML diagnostics are skipped.
 */
class TapCounter {
  passed = 0;
  failed = 0;
  skipped = 0;
  crashedFiles = [];
  /** Each failed assertion as "file › subtest › assertion", for the summary at the end. */
  failures = [];
  bailedOut = false;
  #subtestNames = []; // names of the announced, unfinished subtests, beside #openSubtests
  #yamlIndent = null;
  #openSubtests = []; // indents of announced, unfinished subtests (a stack)
  #failuresAtFileStart = 0;
  #currentFile = '';
  #expectExpired = null;

  line(text) {
    const indent = text.length - text.trimStart().length;
    const body = text.trimStart();
    if (this.#yamlIndent !== null) {
      if (indent === this.#yamlIndent && body === '...') {
        this.#yamlIndent = null;
        if (this.#expectExpired) this.crashedFiles.push(this.#expectExpired);
        this.#expectExpired = null;
      } else if (this.#expectExpired && indent === 2 && body.startsWith('expired:')) {
        this.crashedFiles.push(`${this.#expectExpired} (${body})`);
        this.#expectExpired = null;
      }
      return;
    }
    if (body.startsWith('# Subtest')) {
      if (indent === 0) {
        this.#failuresAtFileStart = this.failed;
        this.#currentFile = body.replace(/^# Subtest:?\s*/, '');
      }
      this.#openSubtests.push(indent);
      this.#subtestNames.push(body.replace(/^# Subtest:?\s*/, ''));
      return;
    }

    if (body.startsWith('Bail out!')) {
      this.bailedOut = true;
      return;
    }
    const point = /^(not ok|ok)\b(?:\s+\d+)?(?:\s+-)?\s*(.*)$/.exec(body);
    if (point) {
      const [, status, rest] = point;
      const directive = /#\s*(SKIP|TODO)\b/i.exec(rest)?.[1]?.toUpperCase();
      if (this.#openSubtests.at(-1) === indent) {
        this.#openSubtests.pop();
        this.#subtestNames.pop();
        const description = rest.replace(/\s*#.*$/, '');
        if (indent === 0 && status === 'not ok' && directive !== 'TODO') {
          if (description !== this.#currentFile) {
            // tap's own failure ("timeout!") printed in place of a file's result line.
            this.failed++;
            this.#expectExpired = description;
          } else if (this.failed === this.#failuresAtFileStart) {
            // A file that failed with no failing assertion inside it crashed.
            this.failed++;
            this.crashedFiles.push(description);
          }
        }
      } else if (directive) {
        this.skipped++;
      } else if (status === 'ok') {
        this.passed++;
      } else {
        this.failed++;
        this.failures.push([...this.#subtestNames, rest.replace(/\s*#.*$/, '')].join(' › '));
      }
      return;
    }
    if (body === '---' && indent >= 2) this.#yamlIndent = indent;
  }
}

const tapBin = path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const tapCommand = fs.existsSync(tapBin) ? [process.execPath, tapBin] : ['npx', 'tap'];
const IRC_CLIENTS = ['irc-framework', 'matrix-org-irc'];

/**
 * The compiled test files (`dist/test/...`, and the plugin harness's `dist/testing/...`) that `file` imports,
 * itself or through the test support files it imports.
 */
function testImportsOf(file, seen = new Set()) {
  if (seen.has(file) || !fs.existsSync(path.join(root, file))) return seen;
  seen.add(file);
  const source = fs.readFileSync(path.join(root, file), 'utf8');
  for (const [, specifier] of source.matchAll(/from ['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const imported = path.join(path.dirname(file), specifier);
    const inTests = ['test', 'testing'].some((folder) => imported.startsWith(path.join('dist', folder) + path.sep));
    if (inTests) testImportsOf(imported, seen);
  }
  return seen;
}

/**
 * Test files that run the bot, and so depend on its IRC client library: the integration tests that start it (themselves
 * or through the network suite), and the tests on the plugin harness.
 */
function runsTheBot(file) {
  if (file.startsWith(path.join('dist', 'test', 'integration') + path.sep)) {
    return /from ['"]\.\.\/support\/(?:bot|network-suite)\.js['"]/.test(fs.readFileSync(path.join(root, file), 'utf8'));
  }
  return testImportsOf(file).has(path.join('dist', 'testing', 'harness.js'));
}

/** One tap run: `label` appends the library to the names of the files that run the bot. */
function runTap(runFiles, env, labelled, client) {
  const counter = new TapCounter();
  const label = (line) => {
    if (!/^\s*(# Subtest: |(not )?ok \d+ - )/.test(line)) return line;
    for (const file of labelled) line = line.split(file).join(`${file} [${client}]`);
    return line;
  };
  return new Promise((resolve) => {
    const child = spawn(tapCommand[0], [...tapCommand.slice(1), '--reporter=tap', ...options, ...runFiles], {
      cwd: root,
      stdio: ['inherit', 'pipe', 'inherit'],
      env: { ...process.env, ...env, FORCE_COLOR: '0' },
    });
    const stop = () => child.kill('SIGTERM');
    process.on('SIGTERM', stop);
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const raw of lines) {
        const line = label(raw.replace(/\r$/, ''));
        process.stdout.write(line + '\n');
        counter.line(line);
      }
    });
    child.on('close', (code, signal) => {
      process.off('SIGTERM', stop);
      if (pending) {
        const line = label(pending);
        process.stdout.write(line + '\n');
        counter.line(line);
      }
      // tap itself failing (bad option, crash) with nothing counted as failed is still a failure.
      if ((code !== 0 || signal || counter.bailedOut) && counter.failed === 0) counter.failed = 1;
      resolve(counter);
    });
  });
}

// Ctrl-C reaches tap and its test processes directly (same process group); just wait for tap.
process.on('SIGINT', () => {});

const chosenClient = process.env.TEST_IRC_CLIENT;
if (chosenClient && !IRC_CLIENTS.includes(chosenClient)) {
  console.log(`run-tests: TEST_IRC_CLIENT="${chosenClient}" is not one of ${IRC_CLIENTS.join(', ')}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
/**
 * The IRC servers and services Debian does not package are built from their source archives once per machine,
 * into a cache outside the repository (testnet/build-source.sh). On a machine whose cache is empty, that is done
 * here, before the integration tests start: a first build takes minutes (Anope 2.1 about seven on two cores),
 * longer than a test waits for its network, and the tests that start those networks timed out while it ran. A
 * missing archive (exit 3) is left to the tests, which skip with one line; a failed build is reported, and its
 * tests fail saying why.
 */
function buildSourceServers() {
  if (!files.some((file) => file.split(path.sep).includes('integration'))) return;
  const script = path.join(root, 'testnet', 'build-source.sh');
  for (const name of ['ircu', 'solanum', 'unrealircd', 'anope21']) {
    const started = Date.now();
    const result = spawnSync(script, [name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (result.status === 0) {
      if (Date.now() - started > 5000)
        console.log(`run-tests: built ${name} from source in ${seconds} s (cached from now on)`);
    } else if (result.status !== 3) {
      const tail = (result.stderr ?? '').trim().split('\n').slice(-5).join('\n');
      console.log(
        `run-tests: building ${name} from source failed (exit ${result.status}); its tests will fail:\n${tail}`,
      );
    }
  }
}
buildSourceServers();

const botFiles = files.filter(runsTheBot);
const runs = chosenClient
  ? [{ files, client: chosenClient }]
  : [{ files, client: IRC_CLIENTS[0] }, ...IRC_CLIENTS.slice(1).map((client) => ({ files: botFiles, client }))].filter(
      (run) => run.files.length > 0,
    );

const counters = [];
for (const [index, run] of runs.entries()) {
  if (index > 0) console.log(`# again on ${run.client}: ${run.files.length} test file(s) that run the bot`);
  counters.push(await runTap(run.files, { TEST_IRC_CLIENT: run.client }, botFiles, run.client));
}

const total = { passed: 0, failed: 0, skipped: 0, crashedFiles: [], failures: [] };
for (const counter of counters) {
  total.passed += counter.passed;
  total.failed += counter.failed;
  total.skipped += counter.skipped;
  total.crashedFiles.push(...counter.crashedFiles);
  total.failures.push(...counter.failures);
}
// The failures again at the end, where a reader of a long log (or of its last lines) finds them.
if (total.failures.length) {
  console.log(`# failed assertions (${total.failures.length}):`);
  for (const failure of total.failures.slice(0, 50)) console.log(`#   ${failure}`);
}
if (total.crashedFiles.length) {
  console.log(`# failures outside assertions (crashed or timed-out files): ${total.crashedFiles.join(', ')}`);
}
if (total.skipped) console.log(`# ${total.skipped} skipped or todo`);
console.log(`${total.passed} passed, ${total.failed} failed`);
process.exit(total.failed === 0 && total.passed > 0 ? 0 : 1);
