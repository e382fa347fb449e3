/**
 * Cold sync: on the real test network with a crowd already connected, the
 * time from the bot's connect to a complete model (its first full sync done),
 * over several fresh bot processes.
 */
import { startTestNetwork } from '../test/support/testnet.js';
import { formatCount, formatMs, isSmoke, median, runBench } from './common.js';
import { startBotProcess, startCrowdProcess } from './network.js';

async function main() {
  const smoke = isSmoke();
  const clients = smoke ? 100 : 5000;
  const channels = smoke ? 10 : 100;
  const rounds = smoke ? 1 : 3;
  const network = await startTestNetwork();
  try {
    const crowd = await startCrowdProcess(network, clients, channels);
    try {
      const times: number[] = [];
      const realHostTimes: (number | null)[] = [];
      let users = 0;
      for (let round = 0; round < rounds; round++) {
        const bot = await startBotProcess(network);
        times.push(bot.ready.syncMs);
        realHostTimes.push(bot.ready.realHostsMs);
        users = bot.ready.users;
        await bot.stop();
      }
      const seconds = median(times) / 1000;
      return {
        title: 'Cold sync',
        setup:
          `Test network with ${formatCount(clients)} silent clients in ${channels} channels (connected in ` +
          `${formatMs(crowd.ready.ms)}); ${rounds} fresh bot processes (stats and api plugins, as an operator), ` +
          'each timed from host.start() to the end of its first full sync (the model complete), and to every ' +
          'user having a real host too (the WHO with flag x an operator bot asks after the sync).',
        figures: [
          {
            name: 'users in the model',
            value: formatCount(users),
            target: `≥ ${formatCount(clients)}`,
            pass: users >= clients,
          },
          {
            name: 'connect → complete model',
            value: `${seconds.toFixed(2)} s (rounds: ${times.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s)`,
            target: '≤ 5 s',
            pass: seconds <= 5,
          },
          {
            name: 'connect → real hosts too (asked after the sync)',
            value: realHostTimes.every((ms) => ms !== null)
              ? `${(median(realHostTimes) / 1000).toFixed(2)} s`
              : `not every user had one within 30 s in ${realHostTimes.filter((ms) => ms === null).length} of ${rounds} rounds`,
          },
        ],
      };
    } finally {
      await crowd.stop();
    }
  } finally {
    await network.stop();
  }
}

runBench('Cold sync', main);
