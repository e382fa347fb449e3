/**
 * A sync that fails while the bot stays connected is tried again before the next refresh (plugins/stats/sync-schedule.ts):
 * until the first sync completes the API answers 503, and with a long refresh that would last for minutes.
 */
import t, { type Test } from 'tap';
import { SYNC_RETRY_FIRST_MS, syncRetryDelayMs } from '../../../plugins/stats/sync-schedule.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import type { Harness } from '../../../testing/harness.js';
import { startCollector } from './support.js';

t.test('the wait before a failed sync is tried again doubles, up to the refresh', async (t) => {
  t.same(
    [1, 2, 3, 4, 5].map((failures) => syncRetryDelayMs(failures, 60_000)),
    [5000, 10_000, 20_000, 40_000, 60_000],
  );
  t.equal(syncRetryDelayMs(1, 3000), 3000, 'a refresh sooner than the first retry');
  t.equal(syncRetryDelayMs(1000, 86_400_000), 86_400_000, 'many failures: the refresh');
});

/** What the fake server does: refuse LUSERS (RPL_TRYAGAIN), and show LIST's rows with or without modes. */
interface Server {
  refusing: boolean;
  listModes: boolean;
}

/**
 * The collector alone on a server with two users in one channel, a refresh 600 s away, and a connection that
 * gives up on a command refused twice within 10 ms. The server refuses a channel's MODE.
 */
async function botOn(t: Test, server: Server, operator = false): Promise<Harness> {
  const bot = await startCollector(t, {
    stats: { refresh_seconds: 600, version_requests_per_second: 0, whois_per_second: 0 },
    network: fakeNetwork({
      servers: [{ name: 'irc.test', description: 'Test' }],
      users: ['alice', 'bob'].map((nick) => ({ nick, ident: `~${nick}`, host: `${nick}.host`, server: 'irc.test' })),
      channels: [{ name: '#chat', users: 2, topic: 'hello', modes: '+nt' }],
      listModes: server.listModes,
    }),
    operator,
    tryAgain: { firstWaitMs: 10, times: 1 },
    // The server's answers wait for the test's rules below, set before the connection registers.
    register: false,
  });
  bot.server
    .answer(/^LUSERS$/, () =>
      server.refusing
        ? [':irc.test 263 DataBot LUSERS :Server load is temporarily too heavy. Please wait a while and try again.']
        : null,
    )
    .answer(/^MODE #chat$/, [':irc.test 263 DataBot MODE :Server load is temporarily too heavy.']);
  await bot.register();
  return bot;
}

const count = (lines: readonly string[], pattern: RegExp): number => lines.filter((line) => pattern.test(line)).length;

/** Waits for the `times`th log line that matches `pattern`. */
const logged = (bot: Harness, pattern: RegExp, times = 1): Promise<void> =>
  bot.until(() => count(bot.logs, pattern) >= times, `log line ${times} matching ${pattern}`);

t.test('a first sync the server refused is tried again 5 s later, and the model gets ready', async (t) => {
  const server = { refusing: true, listModes: true };
  const bot = await botOn(t, server);
  await logged(bot, /\[stats\] sync failed/);
  t.match(bot.logs.join('\n'), /sync failed error="the server rate-limits LUSERS/);
  t.match(bot.logs.join('\n'), /sync to be retried in_ms=5000 failures=1/);
  t.notOk(bot.host.model.ready, 'not ready after the failure');
  server.refusing = false;
  await bot.clock.advance(SYNC_RETRY_FIRST_MS - 1);
  t.notOk(bot.host.model.ready, 'not before the 5 s are over');
  await bot.clock.advance(1);
  await bot.synced();
  t.ok(bot.host.model.ready, 'ready 5 s after the failure');
  const { model } = bot.host;
  t.same([...model.users.entries()].map(([, user]) => user.nick).sort(), ['alice', 'bob'], 'the users of WHO');
  t.equal(model.stats.users, 2, 'the counts of LUSERS');
  t.ok(bot.irc.sentMatching(/^LUSERS$/).length >= 3, 'LUSERS: refused, sent again and refused, then answered');
  t.equal(count(bot.logs, /sync to be retried/), 1, 'retried once');
});

t.test('a sync that failed after the model was synced is not tried again at once', async (t) => {
  // An operator whose LIST shows no modes: after the sync, the channel's modes are asked, and the server refuses.
  const bot = await botOn(t, { refusing: false, listModes: false }, true);
  await logged(bot, /\[stats\] sync failed/);
  t.match(bot.logs.join('\n'), /sync failed error="the server rate-limits MODE/);
  t.ok(bot.host.model.ready, 'synced');
  t.ok(bot.host.irc.state.isOperator, 'as an operator');
  t.equal(count(bot.logs, /sync to be retried/), 0, 'the next refresh asks again');
  await bot.clock.advance(SYNC_RETRY_FIRST_MS);
  t.equal(count(bot.logs, /\[stats\] synced/), 1, 'and no sync before it');
});

t.test('a sync cut short by a lost connection is not retried: the next connection syncs', async (t) => {
  const bot = await botOn(t, { refusing: false, listModes: true });
  bot.server.answer(/^LUSERS$/, []);
  await bot.until(() => bot.irc.sentMatching(/^LUSERS$/).length === 1, 'LUSERS sent');
  bot.irc.drop();
  await logged(bot, /\[stats\] sync interrupted/);
  await bot.clock.advance(SYNC_RETRY_FIRST_MS);
  t.notMatch(bot.logs.join('\n'), /sync to be retried|sync failed/);
});

t.test('a retry waiting when the connection is lost is dropped; the new connection retries its own', async (t) => {
  const server = { refusing: true, listModes: true };
  const bot = await botOn(t, server);
  await logged(bot, /sync to be retried in_ms=5000 failures=1/);
  await bot.clock.advance(SYNC_RETRY_FIRST_MS / 2);
  await bot.reconnect();
  // The new connection's first sync is refused too: its own retry, 5 s later, not the old one's.
  await logged(bot, /sync to be retried in_ms=5000 failures=1/, 2);
  server.refusing = false;
  await bot.clock.advance(SYNC_RETRY_FIRST_MS / 2);
  t.notOk(bot.host.model.ready, 'when the first connection’s retry was due, nothing');
  await bot.clock.advance(SYNC_RETRY_FIRST_MS / 2);
  await bot.synced();
  t.ok(bot.host.model.ready, 'ready after the new connection’s retry');
  t.equal(count(bot.logs, /\[stats\] synced/), 1, 'one sync completed: the first connection’s retry never ran');
});
