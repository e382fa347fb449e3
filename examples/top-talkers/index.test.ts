/**
 * The plugin's tests, on the package's test harness (`irc-network-data/testing`; `../../testing/index.js`
 * here) with node's own test runner: `node --test`. The harness runs the real host with the stats plugin and
 * this one on a fake IRC connection, and its fake server answers the collector's sync for a small network.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { builtinPlugins } from '../../app/index.js';
import { fakeNetwork, startHarness } from '../../testing/index.js';
import topTalkers from './index.js';

test("TOPTALKERS and the route list the day's talkers in public channels", async (t) => {
  const bot = await startHarness(t, {
    registry: [...builtinPlugins, topTalkers],
    plugins: { stats: {}, 'top-talkers': { count: 2 } },
    network: fakeNetwork({
      users: ['alice', 'bob', 'carol'].map((nick) => ({ nick, server: 'hub.test.net' })),
      channels: [{ name: '#lobby', users: 3, modes: '+nt' }],
    }),
  });
  assert.equal((await bot.inject('GET', '/network/data/top-talkers/')).status, 503, 'not before the first sync');
  await bot.synced();
  const [nobody] = await bot.say('alice', null, 'TOPTALKERS');
  assert.match(nobody ?? '', /^Nobody has spoken yet on \d{4}-\d\d-\d\d\.$/);

  bot.irc.receive(
    `:${bot.nick}!bot@bot.host JOIN #lobby`,
    `:hub.test.net 353 ${bot.nick} = #lobby :${bot.nick} alice bob carol`,
    `:hub.test.net 366 ${bot.nick} #lobby :End of /NAMES list.`,
    ':alice!a@a.host PRIVMSG #lobby :hello',
    ':bob!b@b.host PRIVMSG #lobby :hi alice',
    ':alice!a@a.host PRIVMSG #lobby :how are you?',
    ':carol!c@c.host PRIVMSG #lobby :hey',
  );
  const [listed] = await bot.say('carol', null, 'TOPTALKERS');
  assert.match(listed ?? '', /^Top talkers on \d{4}-\d\d-\d\d: 1\. alice \(2\), 2\. (bob|carol) \(1\)$/);
  const answer = await bot.inject('GET', '/network/data/top-talkers/');
  assert.equal(answer.status, 200);
  assert.deepEqual((answer.body as { results: unknown[] }).results[0], { nick: 'alice', lines: 2 });
});
