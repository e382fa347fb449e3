/**
 * Against the IRCd: on the real test network with a crowd, the bot's
 * /api/irc/channels/ versus InspIRCd's own httpd_stats page (`/stats` on a
 * loopback port) for the same channels, interleaved rounds of autocannon.
 */
import { startTestNetwork } from '../test/support/testnet.js';
import { formatCount, formatMs, formatRatio, isSmoke, load, median, runBench } from './common.js';
import { startBotProcess, startCrowdProcess } from './network.js';

async function main() {
  const smoke = isSmoke();
  const clients = smoke ? 100 : 2000;
  const channels = smoke ? 10 : 100;
  const rounds = smoke ? 1 : 5;
  const seconds = smoke ? 1 : 4;
  const connections = 10;
  const network = await startTestNetwork();
  try {
    const crowd = await startCrowdProcess(network, clients, channels);
    try {
      const bot = await startBotProcess(network);
      try {
        const ours = `${bot.ready.url}/api/irc/channels/`;
        const theirs = network.statsUrl;
        await load(theirs, {}, 1, connections);
        await load(ours, {}, 1, connections);
        const oursRps: number[] = [];
        const theirRps: number[] = [];
        const oursP99: number[] = [];
        const theirP99: number[] = [];
        for (let round = 0; round < rounds; round++) {
          const inspircd = await load(theirs, {}, seconds, connections);
          const bots = await load(ours, {}, seconds, connections);
          theirRps.push(inspircd.requests.average);
          oursRps.push(bots.requests.average);
          theirP99.push(inspircd.latency.p99);
          oursP99.push(bots.latency.p99);
        }
        const ratio = median(oursRps.map((value, index) => value / theirRps[index]!));
        return {
          title: 'Against the IRCd',
          setup:
            `Test network (InspIRCd hub + leaf, Atheme) with ${formatCount(clients)} silent clients in ${channels} channels ` +
            `(the bot sees ${formatCount(bot.ready.users)} users, ${formatCount(bot.ready.channels)} channels); ` +
            `autocannon, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s: the bot's ` +
            "/api/irc/channels/ versus the hub's httpd_stats /stats. The bot, the crowd and the load generator each " +
            'run in their own process.',
          figures: [
            {
              name: 'bot /api/irc/channels/: req/s, p99',
              value: `${formatCount(median(oursRps))}, ${formatMs(median(oursP99))}`,
            },
            {
              name: 'InspIRCd /stats: req/s, p99',
              value: `${formatCount(median(theirRps))}, ${formatMs(median(theirP99))}`,
            },
            { name: 'ratio bot ÷ InspIRCd', value: formatRatio(ratio), target: '≥ 2×', pass: ratio >= 2 },
          ],
        };
      } finally {
        await bot.stop();
      }
    } finally {
      await crowd.stop();
    }
  } finally {
    await network.stop();
  }
}

runBench('Against the IRCd', main);
