// The demo (`npm run demo`): a private loopback IRC network (installed from Debian packages by
// testnet/start.sh when missing), services accounts for the bot, its oper and an admin, a chatty
// crowd, and the bot itself (`node dist/app/main.js --config <generated>`), until Ctrl-C.
// Everything it starts is stopped by PID; if the bot exits on its own, the demo stops the rest
// and exits non-zero. DEMO_BOT_MAIN=<path> runs another bot script (for trying the demo out).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  freePorts,
  findRepoRoot,
  registerAccount,
  startTestNetwork,
  type TestNetwork,
} from '../test/support/testnet.js';
import { BOT_NODE_ENV, BOT_NODE_ENV_WORDS, BOT_NODE_FLAGS } from '../lib/node-flags.js';
import { startCrowd, type Crowd } from './crowd.js';

const botAccountBase = 'DataBot';
const adminAccount = 'DataBotAdmin';

function say(text: string): void {
  process.stdout.write(`[demo] ${text}\n`);
}

function password(): string {
  return randomBytes(12).toString('base64url');
}

/** Registers DataBot, or DataBot2, DataBot3, ... when the name is taken; returns the account. */
async function registerBotAccount(network: TestNetwork, secret: string): Promise<string> {
  let lastError: unknown;
  for (let n = 1; n <= 9; n++) {
    const account = n === 1 ? botAccountBase : `${botAccountBase}${n}`;
    try {
      await registerAccount(network, { account, password: secret });
      return account;
    } catch (error) {
      lastError = error;
    }
  }
  throw new Error(`could not register any ${botAccountBase}<n> account: ${String(lastError)}`);
}

/** Resolves when the HTTP server answers anything; rejects if the bot exits first or after the timeout. */
async function waitForHttp(url: string, bot: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (bot.exitCode !== null || bot.signalCode !== null)
      throw new Error('the bot exited before its HTTP port answered');
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      // not listening yet: there is no event to wait for from another process
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`no HTTP answer from ${url} within ${timeoutMs / 1000} s`);
}

function stopBot(bot: ChildProcess): Promise<void> {
  if (bot.exitCode !== null || bot.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => bot.kill('SIGKILL'), 10000);
    bot.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    bot.kill('SIGTERM');
  });
}

async function main(): Promise<number> {
  const root = findRepoRoot();
  const botMain = process.env.DEMO_BOT_MAIN ?? path.join(root, 'dist', 'app', 'main.js');
  if (!fs.existsSync(botMain)) throw new Error(`${botMain} does not exist; run npm run build first`);

  let network: TestNetwork | null = null;
  let crowd: Crowd | null = null;
  let bot: ChildProcess | null = null;
  let stopping: Promise<void> | null = null;

  const stopAll = (): Promise<void> => {
    stopping ??= (async () => {
      if (bot) {
        say(`stopping the bot (pid ${bot.pid ?? '?'})`);
        await stopBot(bot);
      }
      if (crowd) {
        say('stopping the crowd');
        await crowd.stop();
      }
      if (network) {
        say('stopping the IRC network');
        await network.stop();
      }
    })();
    return stopping;
  };

  let interrupted: (code: number) => void = () => undefined;
  const interruption = new Promise<number>((resolve) => (interrupted = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    say(`${signal}: shutting down`);
    interrupted(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Last resort if the demo dies some other way: the bot must not outlive it.
  process.on('exit', () => {
    if (bot?.pid && bot.exitCode === null) bot.kill('SIGKILL');
  });

  const setup = async (): Promise<number> => {
    say('starting the IRC network (testnet/start.sh; installs inspircd and atheme-services when missing)');
    const operName = 'botoper';
    const operPass = password();
    network = await startTestNetwork({ operName, operPass, log: (line) => say(line) });
    say(`network up: hub 127.0.0.1:${network.hubPort}, leaf 127.0.0.1:${network.leafPort}, run dir ${network.runDir}`);

    const botPassword = password();
    const adminPassword = password();
    const botAccount = await registerBotAccount(network, botPassword);
    await registerAccount(network, { account: operName, password: operPass });
    await registerAccount(network, { account: adminAccount, password: adminPassword });
    say(`registered NickServ accounts ${botAccount}, ${operName} (services operator), ${adminAccount}`);

    crowd = await startCrowd({
      host: network.host,
      ports: [network.hubPort, network.leafPort],
      clients: 40,
      channels: ['#lobby', '#help', '#dev', '#random', '#music', '#games'],
      perClient: 2,
      chatIntervalMs: 15000,
      // A member leaves a channel a while or goes away every two minutes or so: something for the Live page to show.
      moveIntervalMs: 120_000,
      webircEvery: 4,
      webircPass: network.webircPass,
      seed: 1,
    });
    say(
      `crowd of ${crowd.clients.length} clients joined ${[...new Set(crowd.clients.flatMap((member) => member.channels))].join(' ')}`,
    );

    const [httpPort] = (await freePorts(1)) as [number];
    const configPath = path.join(network.runDir, 'config.json');
    const config = {
      irc: {
        host: '127.0.0.1',
        port: network.hubPort,
        tls: false,
        nick: botAccount,
        username: 'databot',
        realname: 'IRC network data service',
        sasl: { account: botAccount, password: botPassword },
        oper: { name: operName, password: operPass },
      },
      http: { host: '127.0.0.1', port: httpPort },
      store: { path: path.join(network.runDir, 'store.json') },
      admins: [adminAccount],
      plugins: {
        stats: {},
        nickserv: {},
        api: {},
        tokens: {},
        web: {},
        account: {},
        metrics: { allow: ['127.0.0.1'] },
        events: {},
      },
    };
    fs.writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

    // The bot's own settings come from the generated file only.
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('IRC_DATA_'))),
      ...BOT_NODE_ENV,
    };
    say(
      `starting the bot: ${BOT_NODE_ENV_WORDS.join(' ')} node ${BOT_NODE_FLAGS.join(' ')} ` +
        `${path.relative(root, botMain)} --config ${configPath}`,
    );
    // Own process group: Ctrl-C reaches the demo only, which stops the bot with SIGTERM.
    const child = spawn(process.execPath, [...BOT_NODE_FLAGS, botMain, '--config', configPath], {
      stdio: 'inherit',
      env,
      detached: true,
    });
    bot = child;
    const botExit = new Promise<number>((resolve) => {
      child.once('exit', (code, signal) => {
        if (!stopping) say(`the bot exited on its own (${signal ?? `exit code ${code}`})`);
        resolve(stopping ? 0 : code || 1);
      });
    });
    const baseUrl = `http://127.0.0.1:${httpPort}`;
    await Promise.race([waitForHttp(`${baseUrl}/api/irc/stats/`, child, 60000), botExit]);
    if (child.exitCode !== null || child.signalCode !== null) return botExit;

    const banner = [
      '',
      '================================================================================',
      ` IRC network data service demo is running. Ctrl-C stops everything.`,
      '',
      ` Website:    ${baseUrl}/network/  (live events: ${baseUrl}/network/live/)`,
      ` Account:    ${baseUrl}/network/account/ (sign in as ${adminAccount}; admin panel ${baseUrl}/network/admin/)`,
      ` HTTP API:   ${baseUrl}/`,
      `   curl -s ${baseUrl}/api/irc/stats/`,
      `   curl -si ${baseUrl}/api/irc/stats/          # with headers`,
      `   curl -s ${baseUrl}/api/irc/stats/ | python3 -m json.tool`,
      `   curl -N ${baseUrl}/api/irc/events/        # the network's events as they happen`,
      ` Operations: ${baseUrl}/healthz  ${baseUrl}/readyz  ${baseUrl}/metrics`,
      '',
      ` IRC:        127.0.0.1:${network.hubPort} (hub.test.net), 127.0.0.1:${network.leafPort} (leaf.test.net), no TLS`,
      ` Bot:        ${botAccount} (NickServ account ${botAccount}; oper ${operName})`,
      ` Admin:      account ${adminAccount}, password ${adminPassword}`,
      `   any client: /connect 127.0.0.1 ${network.hubPort}, then /msg NickServ IDENTIFY ${adminAccount} ${adminPassword}`,
      `   weechat:  /server add demo 127.0.0.1/${network.hubPort} -notls -sasl_username=${adminAccount} -sasl_password=${adminPassword}; /connect demo`,
      `   then:     /msg ${botAccount} HELP`,
      ` Services:   JSON-RPC ${network.rpcUrl}, InspIRCd stats ${network.statsUrl}`,
      ` Crowd:      ${crowd.clients.length} clients in ${[...new Set(crowd.clients.flatMap((member) => member.channels))].join(' ')}`,
      ` Files:      config ${configPath}, logs ${network.runDir}/{hub,leaf,atheme}/`,
      '================================================================================',
      '',
    ];
    process.stdout.write(`${banner.join('\n')}\n`);
    return Promise.race([botExit, interruption]);
  };

  let code: number;
  try {
    code = await Promise.race([setup(), interruption]);
  } catch (error) {
    say(`failed: ${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  }
  await stopAll();
  say(code === 0 ? 'stopped' : `stopped (exit code ${code})`);
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
