/**
 * A confirmed token change survives the bot being killed: the real program runs as its own process,
 * is SIGKILLed the moment its answer to TOKEN CREATE, TOKEN GRANT or TOKEN REVOKE reaches the user,
 * restarts on the same store, and the change is there — the secret that was shown works, the grant
 * holds, the revoked token answers 401.
 *
 * It runs once, on the default IRC client library: what it checks (the answer waits for the store)
 * happens after the transport, in the command handlers. A SIGKILL leaves the kernel's page cache, so
 * this shows that the answer waits for the write; that the write is fsynced before its rename (what a
 * power cut needs) is the store's own code, tested in test/lib/store/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { IrcClient } from '../support/irc-client.js';
import { freePorts, registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../app/main.js');
const ROUNDS = 5;
const tag = Math.random().toString(36).slice(2, 6);
const botNick = `KillBot${tag}`;
const adminAccount = `kadmin${tag}`;
const password = 'kill-test-password';
const channel = `#kill${tag}`;

let network: TestNetwork;
let admin: IrcClient;
/** An IRC operator, for the ghost a killed bot may leave behind. */
let oper: IrcClient;
let dir: string;
let configPath: string;
let httpUrl: string;
let bot: ChildProcess | undefined;
/** Everything every bot process wrote, for the failure report. */
let output = '';

/**
 * Start the bot; resolves when it has joined the admin's channel: it is registered,
 * has synced, and its HTTP server (which listens before it connects) answers.
 */
async function startBot(): Promise<void> {
  const joined = admin.waitFor((message) => message.command === 'JOIN' && message.nick === botNick, {
    timeout: 30000,
    what: 'the bot to join',
  });
  const child = spawn(process.execPath, [main, '--config', configPath], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  bot = child;
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await joined;
}

/**
 * Send a command and SIGKILL the bot in the same instant its first answer arrives; resolves with that
 * answer once the network has seen the bot go.
 */
async function answerThenKill(command: string): Promise<string> {
  const victim = bot!;
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    victim.once('exit', (_code, signal) => resolve(signal)),
  );
  const gone = admin.waitFor((message) => message.command === 'QUIT' && message.nick === botNick, {
    timeout: 15000,
    what: 'the killed bot to leave',
  });
  // InspIRCd 3 at times leaves a killed client's connection open (CLOSE-WAIT: it has the client's FIN but
  // never reads it) until its ping timeout, two minutes here; an operator then KILLs the ghost, as one
  // would, so that the next bot gets its nick.
  const ghostKiller = setTimeout(() => oper.send(`KILL ${botNick} :ghost of a killed bot`), 3000);
  void gone.finally(() => clearTimeout(ghostKiller)).catch(() => undefined);
  const answer = admin.waitFor(
    (message) => {
      if (message.command !== 'NOTICE' || message.nick !== botNick) return false;
      victim.kill('SIGKILL');
      return true;
    },
    { timeout: 15000, what: `the answer to ${command}` },
  );
  admin.send(`PRIVMSG ${botNick} :${command}`);
  const text = (await answer).params[1] ?? '';
  if ((await exited) !== 'SIGKILL') throw new Error(`the bot exited by itself while answering ${command}`);
  await gone;
  return text;
}

/** Create a token without a kill, and restart the bot gracefully (SIGTERM flushes the store) so it is saved. */
async function createSaved(label: string): Promise<string> {
  const answer = admin.waitFor(
    (message) =>
      message.command === 'NOTICE' && message.nick === botNick && /created: ntd_/.test(message.params[1] ?? ''),
    { timeout: 15000, what: 'the new token' },
  );
  admin.send(`PRIVMSG ${botNick} :TOKEN CREATE ${label}`);
  const text = (await answer).params[1]!;
  const victim = bot!;
  const exited = new Promise((resolve) => victim.once('exit', resolve));
  victim.kill('SIGTERM');
  await exited;
  await startBot();
  return text;
}

const CREATED = /^Token #(\d+) .*created: (ntd_[A-Za-z0-9_-]{43})$/;

/** The status of a token request (a live token without the grant gets 403, with it 200). */
async function statusWith(secret: string): Promise<number> {
  const response = await fetch(`${httpUrl}/api/irc/users/`, { headers: { Authorization: `Token ${secret}` } });
  await response.arrayBuffer();
  return response.status;
}

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: adminAccount, password });
  dir = mkdtempSync(path.join(tmpdir(), 'tokens-kill-'));
  admin = new IrcClient({ port: network.leafPort, nick: `ka${tag}`, sasl: { account: adminAccount, password } });
  await admin.connect();
  const registered = await admin.register();
  if (registered.sasl !== '903') throw new Error(`the admin could not log in: ${registered.saslText}`);
  await admin.request(`JOIN ${channel}`, '366');
  oper = new IrcClient({ port: network.leafPort, nick: `ko${tag}` });
  await oper.connect();
  await oper.register();
  await oper.request(`OPER ${network.operName} ${network.operPass}`, '381');

  const [httpPort] = await freePorts(1);
  httpUrl = `http://127.0.0.1:${httpPort}`;
  configPath = path.join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      irc: {
        host: '127.0.0.1',
        port: network.leafPort,
        nick: botNick,
        // Restarts are quicker at the pace the other integration tests use.
        pacing: { burst: 10, interval_ms: 50 },
      },
      http: { host: '127.0.0.1', port: httpPort },
      store: { path: path.join(dir, 'store.json') },
      admins: [adminAccount],
      plugins: { stats: {}, api: {}, tokens: {} },
    }),
  );
  await startBot();
});

t.teardown(async () => {
  if (bot && bot.exitCode === null && bot.signalCode === null) bot.kill('SIGKILL');
  admin?.destroy();
  oper?.destroy();
  await network?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

t.test(
  `SIGKILL right after each confirmed change, ${ROUNDS} times each: the change is there after the restart`,
  async (t) => {
    const lost: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const created = await answerThenKill(`TOKEN CREATE kill-${round}`);
      t.match(created, CREATED, `round ${round}: TOKEN CREATE confirmed with the secret`);
      let [, id, secret] = CREATED.exec(created) ?? [];
      await startBot();
      const afterCreate = await statusWith(secret!);
      t.equal(afterCreate, 403, `round ${round}: token #${id} exists after the restart (403: live, no endpoint yet)`);
      if (afterCreate !== 403) {
        lost.push(`create #${id}`);
        // So that the grant below has a token to change.
        [, id, secret] = CREATED.exec(await createSaved(`kill-${round}-again`)) ?? [];
      }

      const granted = await answerThenKill(`TOKEN GRANT #${id} irc.users`);
      t.match(granted, new RegExp(`^Token #${id} may now call irc\\.users`), `round ${round}: the grant was confirmed`);
      await startBot();
      const afterGrant = await statusWith(secret!);
      t.equal(afterGrant, 200, `round ${round}: the grant to #${id} is there after the restart`);
      if (afterGrant !== 200) lost.push(`grant #${id}`);

      const revoked = await answerThenKill(`TOKEN REVOKE #${id}`);
      t.match(revoked, new RegExp(`^Token #${id} is revoked`), `round ${round}: the revocation was confirmed`);
      await startBot();
      const afterRevoke = await statusWith(secret!);
      t.equal(afterRevoke, 401, `round ${round}: #${id} is still revoked after the restart`);
      if (afterRevoke !== 401) lost.push(`revoke #${id}`);
    }
    t.same(lost, [], 'no confirmed change was lost');
    if (lost.length > 0) t.comment(output.slice(-4000));
  },
);
