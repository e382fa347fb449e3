import t from 'tap';
import { startCrowd, type CrowdOptions } from '../../scripts/crowd.js';
import { IrcClient } from '../support/irc-client.js';
import { isAlive, registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const wantServers = ['hub.test.net', 'leaf.test.net', 'services.test.net'];

async function connect(port: number, nick: string, sasl?: { account: string; password: string }) {
  const client = new IrcClient({ port, nick, sasl });
  await client.connect();
  const result = await client.register();
  return { client, result };
}

/** A silent crowd on both of `network`'s servers, with `options` laid over. */
function crowdOn(network: TestNetwork, options: Partial<CrowdOptions> & Pick<CrowdOptions, 'clients' | 'channels'>) {
  return startCrowd({ host: network.host, ports: [network.hubPort, network.leafPort], chatIntervalMs: 0, ...options });
}

async function links(port: number, nick: string): Promise<string[]> {
  const { client } = await connect(port, nick);
  const replies = await client.request('LINKS', '365');
  await client.quit();
  return replies.filter((message) => message.command === '364').map((message) => message.params[1] ?? '');
}

t.test('the harness runs a linked network with services, and restarts and stops it', async (t) => {
  const network: TestNetwork = await startTestNetwork();
  t.teardown(() => network.stop());

  const [fromHub, fromLeaf] = await Promise.all([
    links(network.hubPort, 'linksHub'),
    links(network.leafPort, 'linksLeaf'),
  ]);
  t.same(fromHub.sort(), wantServers, 'LINKS from the hub');
  t.same(fromLeaf.sort(), wantServers, 'LINKS from the leaf');

  await registerAccount(network, { account: 'alice', password: 's3cret-pass' });
  const good = await connect(network.hubPort, 'aliceGood', { account: 'alice', password: 's3cret-pass' });
  t.equal(good.result.sasl, '903', 'SASL PLAIN with the right password');
  t.ok(good.result.ok, 'registered after SASL');
  await good.client.quit();
  const bad = await connect(network.leafPort, 'aliceBad', { account: 'alice', password: 'wrong' });
  t.equal(bad.result.sasl, '904', 'SASL PLAIN with a wrong password');
  await bad.client.quit();

  const crowd = await crowdOn(network, {
    clients: 4,
    channels: ['#crowd'],
    webircEvery: 2,
    webircPass: network.webircPass,
  });
  const remote = crowd.clients.find((member) => member.ip !== null && member.port === network.leafPort);
  if (!remote) throw new Error('the crowd put no WEBIRC member on the leaf');
  const { client: observer } = await connect(network.hubPort, 'observer');
  const whois = await observer.request(`WHOIS ${remote.nick}`, '318');
  t.equal(
    whois.find((message) => message.command === '311')?.params[3],
    remote.ip,
    'a crowd member shows its WEBIRC IP',
  );
  const version = observer.waitFor((message) => message.command === 'NOTICE' && message.nick === remote.nick);
  observer.send(`PRIVMSG ${remote.nick} :\x01VERSION\x01`);
  t.equal((await version).params[1], `\x01VERSION ${remote.version}\x01`, 'a crowd member answers CTCP VERSION');
  await crowd.stop();

  // Comings and goings (the demo's): a member leaves its channel with a reason and joins it again, or goes away.
  observer.send('JOIN #moves');
  await observer.waitFor((message) => message.command === '366', { what: '366 #moves', timeout: 5000 });
  const movers = await crowdOn(network, { clients: 2, channels: ['#moves'], moveIntervalMs: 500, nickPrefix: 'mv' });
  const parted = await observer.waitFor((message) => message.command === 'PART', { what: 'a PART', timeout: 10_000 });
  t.match(parted.params[1], /\S/, `${parted.nick ?? '?'} left #moves with a reason`);
  await observer.waitFor((message) => message.command === 'JOIN' && message.nick === parted.nick, {
    what: `${parted.nick ?? '?'} joining again`,
    timeout: 10_000,
  });
  t.pass(`${parted.nick ?? '?'} joined #moves again`);
  let awayMessage: string | undefined;
  for (let attempt = 0; attempt < 40 && awayMessage === undefined; attempt++) {
    for (const member of movers.clients) {
      const replies = await observer.request(`WHOIS ${member.nick}`, '318');
      awayMessage ??= replies.find((message) => message.command === '301')?.params[2];
    }
    if (awayMessage === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  t.ok(awayMessage, `a member went away (${awayMessage ?? 'never'})`);
  await movers.stop();
  await observer.quit();

  const hubBefore = network.pids().hub;
  await network.restartServer('hub');
  t.not(network.pids().hub, hubBefore, 'the hub runs under a new PID');
  t.same((await links(network.leafPort, 'afterRestart')).sort(), wantServers, 'linked again after the restart');

  const pids = Object.values(network.pids());
  t.equal(pids.length, 3, 'three daemons');
  await network.stop();
  t.same(
    pids.filter((pid) => isAlive(pid)),
    [],
    'no daemon survives stop()',
  );
});
