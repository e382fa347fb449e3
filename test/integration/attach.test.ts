/**
 * Embedding: a bot that connected its own matrix-org-irc or irc-framework
 * client hands it to the host, which syncs the real network over it and serves
 * /api/irc/stats/; stopping the host leaves the client connected. Both
 * libraries are named here, so the runner runs this file once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import IrcFramework from 'irc-framework';
import { Client } from 'matrix-org-irc';
import t, { type Test } from 'tap';
import { parseConfig } from '../../lib/config.js';
import { Host } from '../../lib/host.js';
import { transportOptions } from '../../lib/irc/create-transport.js';
import { IrcFrameworkTransport } from '../../lib/irc/irc-framework.js';
import { MatrixIrcTransport } from '../../lib/irc/matrix-org-irc.js';
import type { IrcTransport } from '../../lib/irc/port.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { builtinPlugins } from '../../app/builtin-plugins.js';
import { startTestNetwork, type TestNetwork } from '../support/testnet.js';

const tag = Math.random().toString(36).slice(2, 6);
let network: TestNetwork;

t.before(async () => {
  network = await startTestNetwork();
});
t.teardown(() => network?.stop());

/** Start a host on an attached transport; resolves when the collector has synced. */
async function hostOn(
  t: Test,
  makeTransport: (options: ReturnType<typeof transportOptions>, logger: Logger) => IrcTransport,
  nick: string,
  client: 'irc-framework' | 'matrix-org-irc',
): Promise<{ host: Host; transport: IrcTransport; logs: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'attach-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = parseConfig(
    JSON.stringify({
      irc: {
        host: network.host,
        port: network.hubPort,
        nick,
        client,
        oper: { name: network.operName, password: network.operPass },
      },
      http: { host: '127.0.0.1', port: 0 },
      store: { path: path.join(dir, 'store.json') },
      plugins: { stats: { refresh_seconds: 600 }, api: {} },
    }),
    'attach test config',
    {},
  );
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', sink: (line) => logs.push(line) });
  const transport = makeTransport(transportOptions(config), logger.child('irc'));
  const host = new Host({ config, logger, plugins: builtinPlugins, transport });
  const synced = new Promise<void>((resolve) => {
    const off = host.model.on('change', (change) => {
      if (change.kind === 'synced') {
        off();
        resolve();
      }
    });
  });
  await host.start();
  const timeout = setTimeout(() => t.fail('no sync within 30 s'), 30000);
  await synced;
  clearTimeout(timeout);
  return { host, transport, logs };
}

async function checkServed(t: Test, host: Host, transport: IrcTransport, nick: string): Promise<void> {
  t.equal(transport.state.nick, nick, "the client's nick");
  t.equal(transport.state.server, 'hub.test.net', 'the server, asked again');
  t.match(transport.state.serverVersion, /^InspIRCd-3/, "the server's software, from its VERSION answer");
  t.equal(transport.state.casemapping, 'rfc1459', 'ISUPPORT, asked again');
  t.ok(transport.state.isOperator, 'OPER after attaching, as configured');
  const response = await fetch(`${host.url}/api/irc/stats/`);
  t.equal(response.status, 200, '/api/irc/stats/ answers');
  const body = (await response.json()) as { users: number; servers: number; synced_as_operator: boolean };
  t.ok(body.users >= 1, `users counted (${body.users})`);
  t.equal(body.servers, 3, 'hub, leaf and services');
  t.equal(body.synced_as_operator, true);
}

t.test('a connected matrix-org-irc client handed to the host', async (t) => {
  const nick = `mx${tag}`;
  const client = new Client(network.host, nick, {
    port: network.hubPort,
    userName: 'embedder',
    autoConnect: false,
    retryCount: 0,
  });
  client.on('error', () => undefined);
  const registered = new Promise<void>((resolve) => client.once('registered', resolve));
  client.connect();
  await registered;

  const { host, transport } = await hostOn(
    t,
    (options, logger) => MatrixIrcTransport.attach(client, options, logger),
    nick,
    'matrix-org-irc',
  );
  await checkServed(t, host, transport, nick);

  await host.stop('embedding test over');
  const pong = new Promise<void>((resolve) => client.once('pong', () => resolve()));
  await client.send('PING', 'still-connected');
  await pong;
  t.pass('the client is still connected after the host stopped');
  const closed = new Promise<void>((resolve) => client.conn!.once('close', () => resolve()));
  client.disconnect('bye');
  await closed;
});

t.test('a connected irc-framework client handed to the host', async (t) => {
  const nick = `fw${tag}`;
  const client = new IrcFramework.Client();
  // As docs/transports.md says: the host is made and started in the client's `registered` event, the
  // transport attached there synchronously.
  const served = new Promise<Awaited<ReturnType<typeof hostOn>>>((resolve, reject) => {
    client.on('registered', () => {
      hostOn(t, (options, logger) => IrcFrameworkTransport.attach(client, options, logger), nick, 'irc-framework').then(
        resolve,
        reject,
      );
    });
  });
  client.connect({ host: network.host, port: network.hubPort, nick, auto_reconnect: false });
  const { host, transport } = await served;
  await checkServed(t, host, transport, nick);

  await host.stop('embedding test over');
  t.ok(client.connected, 'the client is still connected after the host stopped');
  const closed = new Promise<void>((resolve) => client.on('socket close', () => resolve()));
  client.quit('bye');
  await closed;
});
