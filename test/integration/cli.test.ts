/**
 * The command line against the real network: it starts from a config file,
 * and SIGTERM stops it gracefully — plugins stop, the store is flushed, the bot
 * QUITs with its message, HTTP closes, exit code 0.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { testIrcClient } from '../support/bot.js';
import { IrcClient } from '../support/irc-client.js';
import { freePorts, registerAccount, startTestNetwork } from '../support/testnet.js';

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../app/main.js');
/** The example of an outside plugin, loaded from the config as an operator would load one. */
const example = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../examples/top-talkers/index.js');

t.test('start from a config file, stop on SIGTERM', async (t) => {
  const network = await startTestNetwork();
  t.teardown(() => network.stop());
  const dir = mkdtempSync(path.join(tmpdir(), 'cli-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tag = Math.random().toString(36).slice(2, 6);
  const nick = `CliBot${tag}`;
  const password = 'cli-bot-password';
  await registerAccount(network, { account: nick, password });

  const observer = new IrcClient({ port: network.hubPort, nick: `watch${tag}` });
  await observer.connect();
  await observer.register();
  await observer.request('JOIN #watch', '366');
  t.teardown(() => observer.destroy());

  const [httpPort] = await freePorts(1);
  const storePath = path.join(dir, 'store.json');
  const configPath = path.join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      irc: {
        host: '127.0.0.1',
        port: network.leafPort,
        nick,
        client: testIrcClient(),
        sasl: { account: nick },
        oper: { name: network.operName },
        quit_message: 'Maintenance, back soon',
      },
      // Through the front (off by default; the other integration tests run without it).
      http: { host: '127.0.0.1', port: httpPort, front: { enabled: true } },
      store: { path: storePath },
      // Relative to the config file, as an operator writes it.
      plugin_modules: [path.relative(dir, example)],
      // Every built-in plugin with all of its defaults, and the outside one.
      plugins: { stats: {}, nickserv: {}, api: {}, tokens: {}, 'top-talkers': { count: 3 } },
    }),
  );
  const child = spawn(process.execPath, [main, '--config', configPath], {
    env: {
      PATH: process.env.PATH ?? '',
      IRC_DATA_SASL_PASSWORD: password,
      IRC_DATA_OPER_PASSWORD: network.operPass,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  const joined = await observer.waitFor((m) => m.command === 'JOIN' && m.nick === nick, { timeout: 30000 });
  t.ok(joined, 'the bot joined the visible channel (join "*" by default)');
  t.match(output, new RegExp(`HTTP API listening on http://127\\.0\\.0\\.1:${httpPort}`));
  const stats = await fetch(`http://127.0.0.1:${httpPort}/api/irc/stats/`);
  t.ok([200, 503].includes(stats.status), `the HTTP API answers (${stats.status})`);

  // The outside plugin, on the stats plugin's service: the observer's lines in #watch count for it.
  for (let line = 0; line < 3; line++) observer.send(`PRIVMSG #watch :hello ${line}`);
  const deadline = Date.now() + 15000;
  let talkers: { results?: { nick: string; lines: number }[] } = {};
  while (Date.now() < deadline) {
    const answer = await fetch(`http://127.0.0.1:${httpPort}/network/data/top-talkers/`);
    if (answer.status === 200) {
      talkers = (await answer.json()) as typeof talkers;
      if (talkers.results?.some((entry) => entry.nick === observer.nick && entry.lines === 3)) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.match(talkers, { results: [{ nick: observer.nick, lines: 3 }] }, 'the outside plugin answers over HTTP');
  // The front writes its access-log line once the answer is out, through the bot's logger.
  const logged = /\[http\] GET \/network\/data\/top-talkers\/ status=200 .*ip=127\.0\.0\.1/;
  const logDeadline = Date.now() + 5000;
  while (!logged.test(output) && Date.now() < logDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.match(output, logged, "the front's access log, through the bot's logger");
  const reply = observer.waitFor((m) => m.command === 'NOTICE' && m.nick === nick, { timeout: 10000 });
  observer.send(`PRIVMSG ${nick} :TOPTALKERS`);
  t.match((await reply).params[1], new RegExp(`^Top talkers on \\d{4}-\\d\\d-\\d\\d: 1\\. ${observer.nick} \\(3\\)`));

  const quit = observer.waitFor((m) => m.command === 'QUIT' && m.nick === nick, { timeout: 15000 });
  child.kill('SIGTERM');
  const quitLine = await quit;
  t.match(quitLine.params[0], /Maintenance, back soon/, 'QUIT carries the configured message');
  t.equal(await exited, 0, 'exit code 0');
  t.match(output, /stopping/);
  t.match(output, /\[host\] stopped/);
  // Flushing persisted slices on stop is covered by test/lib/host.test.ts; nothing here persists.
  t.notOk(existsSync(`${storePath}.tmp`), 'no half-written store file left behind');
  await t.rejects(fetch(`http://127.0.0.1:${httpPort}/api/irc/stats/`), 'HTTP is closed');
  t.notOk(output.includes(password), 'the SASL password is not in the output');
  t.notOk(output.includes(network.operPass), 'the oper password is not in the output');
});
