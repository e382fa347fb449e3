/**
 * A sync that fails while the bot stays connected is tried again before the next refresh (plugins/stats/index.ts):
 * until the first sync completes the API answers 503, and with a long refresh that would last for minutes.
 */
import t from 'tap';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats, { SYNC_RETRY_FIRST_MS, syncRetryDelayMs } from '../../../plugins/stats/index.js';
import { startHarness } from '../../support/harness.js';
import { ScriptedTransport } from './fixtures/scripted-irc.js';

t.test('the wait before a failed sync is tried again doubles, and never passes the refresh', async (t) => {
  t.same(
    [1, 2, 3, 4, 5].map((failures) => syncRetryDelayMs(failures, 60_000)),
    [5000, 10_000, 20_000, 40_000, 60_000],
  );
  t.equal(syncRetryDelayMs(1, 3000), 3000, 'a refresh sooner than the first retry');
  t.equal(syncRetryDelayMs(1000, 86_400_000), 86_400_000, 'many failures: the refresh');
});

/** A network of two users in one channel, whose LUSERS the server refuses (RPL_TRYAGAIN) while `refusing`. */
function network(): { irc: ScriptedTransport; refusing: { on: boolean } } {
  const refusing = { on: true };
  const irc = new ScriptedTransport({ tryAgain: { firstWaitMs: 10, times: 1 } });
  irc
    .answer(/^LUSERS$/, () =>
      refusing.on
        ? [':irc.test 263 DataBot LUSERS :Server load is temporarily too heavy. Please wait a while and try again.']
        : [
            ':irc.test 251 DataBot :There are 2 users and 0 invisible on 1 servers',
            ':irc.test 254 DataBot 1 :channels formed',
            ':irc.test 266 DataBot :Current global users: 2  Max: 2',
          ],
    )
    .answer(/^LINKS$/, [
      ':irc.test 364 DataBot irc.test irc.test :0 Test',
      ':irc.test 365 DataBot * :End of /LINKS list.',
    ])
    .answer(/^LIST$/, [':irc.test 322 DataBot #chat 2 :[+nt] hello', ':irc.test 323 DataBot :End of /LIST'])
    .answer(/^MAP$/, [':irc.test 006 DataBot :irc.test', ':irc.test 007 DataBot :End of /MAP'])
    .answer(/^STATS P$/, [':irc.test 219 DataBot P :End of /STATS report'])
    .answer(/^WHOIS (\S+)$/, (match) => [
      `:irc.test 401 DataBot ${match[1]} :No such nick`,
      `:irc.test 318 DataBot ${match[1]} :End of /WHOIS list.`,
    ])
    .answer(/^WHO (\S+) %(\w+),(\d+)$/, (match) => [
      `:irc.test 354 DataBot ${match[3]} * ~alice a.host irc.test alice H 0 :Alice`,
      `:irc.test 354 DataBot ${match[3]} * ~bob b.host irc.test bob H 0 :Bob`,
      `:irc.test 315 DataBot ${match[1]} :End of /WHO list.`,
    ]);
  return { irc, refusing };
}

t.test('a first sync the server refused is tried again 5 s later, and the model gets ready', async (t) => {
  const { irc, refusing } = network();
  const bot = await startHarness(t, {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: { refresh_seconds: 600, version_requests_per_second: 0, whois_per_second: 0 } },
    transport: () => irc,
  });
  const failedAt = await until(() => bot.logs.some((line) => /\[stats\] sync failed/.test(line)));
  t.match(bot.logs.join('\n'), /sync failed error="the server rate-limits LUSERS/);
  t.match(bot.logs.join('\n'), /sync to be retried in_ms=5000 failures=1/);
  t.notOk(bot.host.model.ready, 'not ready after the failure');
  refusing.on = false;
  const readyAt = await until(() => bot.host.model.ready, SYNC_RETRY_FIRST_MS + 5000);
  const waited = readyAt - failedAt;
  t.ok(
    waited >= SYNC_RETRY_FIRST_MS - 50 && waited < SYNC_RETRY_FIRST_MS + 2000,
    `ready ${waited} ms after the failure`,
  );
  t.same([...bot.host.model.users.entries()].map(([, user]) => user.nick).sort(), ['alice', 'bob'], 'the users of WHO');
  t.equal(bot.host.model.stats.users, 2, 'the counts of LUSERS');
  t.equal(irc.sentMatching(/^LUSERS$/).length, 3, 'LUSERS: refused, sent again and refused, then answered');
  t.equal(bot.logs.filter((line) => /sync to be retried/.test(line)).length, 1, 'retried once');
});

t.test('a sync cut short by a lost connection is not retried: the next connection syncs', async (t) => {
  const { irc } = network();
  irc.answer(/^LUSERS$/, []);
  const bot = await startHarness(t, {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: { refresh_seconds: 600, version_requests_per_second: 0, whois_per_second: 0 } },
    transport: () => irc,
  });
  await until(() => irc.sentMatching(/^LUSERS$/).length === 1);
  irc.drop();
  await until(() => bot.logs.some((line) => /\[stats\] sync interrupted/.test(line)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notMatch(bot.logs.join('\n'), /sync to be retried|sync failed/);
});

/** Resolves with Date.now() once `check` holds; fails the test after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs = 5000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now();
}
