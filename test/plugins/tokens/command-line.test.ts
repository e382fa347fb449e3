/**
 * `irc-network-data token …`, the real command line (app/main.js in a child process) over a real store: each
 * command's answer and exit code, the audit log naming the operator (`via: 'cli'`), bad input refused with the
 * usage, and a store held by a running bot refused. A token it made works on the bot's HTTP API.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { freePorts } from '../../support/testnet.js';

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../app/main.js');

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** A config of the api and tokens plugins with a store of its own; the IRC port is closed (never reached). */
function setup(t: Test, httpPort = 0): { config: string; store: string; token: (...words: string[]) => Ran } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'token-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config.json');
  const store = path.join(dir, 'data', 'store.json');
  writeFileSync(
    config,
    JSON.stringify({
      irc: { host: '127.0.0.1', port: 1, nick: 'DataBot' },
      http: { host: '127.0.0.1', port: httpPort },
      store: { path: store },
      log: { level: 'info', format: 'text' },
      plugins: { stats: {}, api: {}, tokens: {} },
    }),
  );
  const token = (...words: string[]): Ran => {
    const result = spawnSync(process.execPath, [main, 'token', ...words, '--config', config], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      timeout: 30000,
    });
    return { code: result.status, out: result.stdout, err: result.stderr };
  };
  return { config, store, token };
}

t.test('create, grant, deny, staff, revoke: each answered, each in the audit log by the operator', async (t) => {
  const { token, store } = setup(t);
  const operator = os.userInfo().username;
  const created = token('create', 'alice', 'monitoring', 'box');
  t.equal(created.code, 0, created.err);
  const match = /^Token #1 of alice created: (ntd_[A-Za-z0-9_-]{43})\n/.exec(created.out);
  t.ok(match, created.out);
  const secret = match?.[1] ?? '';
  t.match(created.out, /shown only this once.*irc-network-data token grant 1 <endpoint>/);
  t.notOk(
    readFileSync(store.replace('store.json', 'store.durable.json'), 'utf8').includes(secret),
    'only its hash is kept',
  );

  t.match(token('grant', '#1', 'irc.users', 'netstats.*'), {
    code: 0,
    out: 'Token #1 may now call irc.users, netstats.*; its endpoints: irc.users, netstats.*.\n',
  });
  t.match(token('approve', '1', 'irc.users'), { code: 0, out: /^Token #1 already had irc\.users/ });
  t.match(token('deny', '1', 'irc.users', '--as', 'opal'), {
    code: 0,
    out: 'Token #1 may no longer call irc.users; its endpoints: netstats.*.\n',
  });
  t.match(token('staff', '1', 'on'), { code: 0, out: 'Token #1 is now a staff token.\n' });
  t.match(token('list'), {
    code: 0,
    out: /^#1 "monitoring box" of alice: active; endpoints: netstats\.\*; staff; last used never\n$/,
  });
  t.match(token('list', 'bob'), { code: 0, out: 'bob holds no token.\n' });
  t.match(token('revoke', '1', '--as=opal'), { code: 0, out: 'Token #1 revoked.\n' });
  t.match(token('revoke', '1'), { code: 0, out: 'Token #1 was already revoked.\n' });
  t.match(token('info', '1'), { code: 0, out: /^#1 "monitoring box" of alice: revoked \d{4}-/ });

  const audit = token('audit', '1');
  t.equal(audit.code, 0);
  const lines = audit.out.trim().split('\n');
  t.match(lines, [
    new RegExp(`#1 create by ${operator} on the command line$`),
    new RegExp(`#1 grant irc\\.users, netstats\\.\\* by ${operator} on the command line$`),
    /#1 deny irc\.users by opal on the command line$/,
    new RegExp(`#1 staff on by ${operator} on the command line$`),
    /#1 revoke by opal on the command line$/,
  ]);
  t.equal(lines.length, 5, 'a change that changed nothing is not logged');
  t.notMatch(audit.out + audit.err, new RegExp(secret), 'the secret is never shown again');
});

t.test('bad input: the usage and exit 2; a refusal: why, and exit 1; the store unchanged', async (t) => {
  const { token } = setup(t);
  for (const words of [[], ['frob'], ['create'], ['grant', '1'], ['revoke', 'x'], ['staff', '1', 'maybe'], ['--as']]) {
    const ran = token(...words);
    t.equal(ran.code, 2, `token ${words.join(' ')}`);
    t.match(ran.err, /usage: irc-network-data token <command>/, `token ${words.join(' ')}: the usage`);
  }
  t.match(token('help'), { code: 0, out: /usage: irc-network-data token/ });
  t.match(token('revoke', '7'), { code: 1, err: 'There is no token #7.\n' });
  t.equal(token('create', 'alice').code, 0);
  t.match(token('grant', '1', 'irc.nothing'), {
    code: 1,
    err: /^Nothing changed: unknown endpoint irc\.nothing\. Valid names: .*irc\.users.*irc\.\*/,
  });
  t.match(token('create', 'alice', 'x'.repeat(65)), { code: 1, err: /at most 64 characters; this one has 65/ });
  t.match(token('list'), { code: 0, out: /^#1 of alice: active; endpoints: none; last used never\n$/ });
  t.match(token('endpoints'), { code: 0, out: /^irc\.users {2}GET \/api\/irc\/users\/ {2}/m });
});

t.test('a running bot holds the store: refused, naming it; stopped, the token made works on its API', async (t) => {
  const [httpPort] = (await freePorts(1)) as [number];
  const { token, config, store } = setup(t, httpPort);
  t.equal(token('create', 'alice').code, 0);
  const secret = /created: (ntd_\S+)/.exec(token('create', 'bob').out)?.[1] ?? '';
  t.equal(token('grant', '2', 'irc.users').code, 0);

  const bot = spawn(process.execPath, [main, '--config', config], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void bot.kill('SIGKILL'));
  let output = '';
  bot.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  bot.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  for (let waited = 0; !/HTTP API listening/.test(output); waited += 50) {
    if (waited > 20000) throw new Error(`the bot did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(existsSync(`${store}.lock`));
  const refused = token('revoke', '2');
  t.equal(refused.code, 2);
  t.match(refused.err, new RegExp(`the store is in use by process ${bot.pid} \\(another irc-network-data`));

  const url = `http://127.0.0.1:${httpPort}/api/irc/users/`;
  const granted = await fetch(url, { headers: { Authorization: `Token ${secret}` } });
  t.notOk([401, 403].includes(granted.status), `the granted endpoint lets the token in (${granted.status})`);
  const other = await fetch(`http://127.0.0.1:${httpPort}/api/irc/opers/`, {
    headers: { Authorization: `Token ${secret}` },
  });
  t.equal(other.status, 403, 'an endpoint not granted does not');

  bot.kill('SIGTERM');
  await new Promise((resolve) => bot.once('exit', resolve));
  t.notOk(existsSync(`${store}.lock`), 'the bot let go of the store as it stopped');
  t.match(token('revoke', '2'), { code: 0, out: 'Token #2 revoked.\n' });
  t.match(token('audit'), { code: 0, out: /#2 revoke by \S+ on the command line\n$/ });
});
