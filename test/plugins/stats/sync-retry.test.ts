/**
 * A sync that fails while the bot stays connected is tried again before the next refresh (plugins/stats/sync-schedule.ts):
 * until the first sync completes the API answers 503, and with a long refresh that would last for minutes.
 */
import t, { type Test } from 'tap';
import type { TransportOptions } from '../../../lib/irc/transport.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import { SYNC_RETRY_FIRST_MS, syncRetryDelayMs } from '../../../plugins/stats/sync-schedule.js';
import { eventually } from '../../support/bot.js';
import { startHarness, type Harness } from '../../support/harness.js';
import { ScriptedTransport } from './fixtures/scripted-irc.js';

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
 * The collector alone on a fake server with two users in one channel, a refresh 600 s away, and a lane that
 * gives up on a command refused twice within 10 ms.
 */
async function botOn(t: Test, server: Server, oper = false): Promise<Harness & { irc: ScriptedTransport }> {
  let scripted: ScriptedTransport | undefined;
  const bot = await startHarness(t, {
    registry: [stats as PluginDefinition<never>],
    plugins: { stats: { refresh_seconds: 600, version_requests_per_second: 0, whois_per_second: 0 } },
    ...(oper ? { config: { irc: { oper: { name: 'bot', password: 'secret' } } } } : {}),
    transport: (options: Partial<TransportOptions>) => {
      scripted = new ScriptedTransport({ ...options, tryAgain: { firstWaitMs: 10, times: 1 } });
      return answerAsServer(scripted, server);
    },
  });
  return { ...bot, irc: scripted! };
}

function answerAsServer(irc: ScriptedTransport, server: Server): ScriptedTransport {
  return irc
    .answer(/^LUSERS$/, () =>
      server.refusing
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
    .answer(/^MAP$/, [':irc.test 006 DataBot :irc.test', ':irc.test 007 DataBot :End of /MAP'])
    .answer(/^LIST$/, () => [
      `:irc.test 322 DataBot #chat 2 :${server.listModes ? '[+nt] ' : ''}hello`,
      ':irc.test 323 DataBot :End of /LIST',
    ])
    .answer(/^MODE #chat$/, [':irc.test 263 DataBot MODE :Server load is temporarily too heavy.'])
    .answer(/^STATS P$/, [':irc.test 219 DataBot P :End of /STATS report'])
    .answer(/^WHOIS (\S+)$/, (match) => [
      `:irc.test 401 DataBot ${match[1]} :No such nick`,
      `:irc.test 318 DataBot ${match[1]} :End of /WHOIS list.`,
    ])
    .answer(/^OPER /, [':irc.test 381 DataBot :You are now an IRC operator'])
    .answer(/^WHO (\S+) %(\w+),(\d+)$/, (match) => [
      ...['alice', 'bob'].map((nick) => `:irc.test 354 DataBot ${whoxFields(match[2]!, match[3]!, nick)}`),
      `:irc.test 315 DataBot ${match[1]} :End of /WHO list.`,
    ]);
}

/** A WHOX row of `nick` with the fields `letters` asks for, in the order the server sends them. */
function whoxFields(letters: string, token: string, nick: string): string {
  const values: Record<string, string> = {
    t: token,
    c: '*',
    u: `~${nick}`,
    i: '127.0.0.1',
    h: `${nick}.host`,
    s: 'irc.test',
    n: nick,
    f: 'H',
    a: '0',
    r: `:${nick}`,
  };
  return [...'tcuihsnfar']
    .filter((letter) => letters.includes(letter))
    .map((letter) => values[letter])
    .join(' ');
}

const count = (lines: readonly string[], pattern: RegExp): number => lines.filter((line) => pattern.test(line)).length;

t.test('a first sync the server refused is tried again 5 s later, and the model gets ready', async (t) => {
  const server = { refusing: true, listModes: true };
  const bot = await botOn(t, server);
  await eventually(() => count(bot.logs, /\[stats\] sync failed/) === 1, 'the failure');
  const failedAt = Date.now();
  t.match(bot.logs.join('\n'), /sync failed error="the server rate-limits LUSERS/);
  t.match(bot.logs.join('\n'), /sync to be retried in_ms=5000 failures=1/);
  t.notOk(bot.host.model.ready, 'not ready after the failure');
  server.refusing = false;
  await eventually(() => bot.host.model.ready, 'the retried sync', SYNC_RETRY_FIRST_MS + 5000);
  const readyAt = Date.now();
  const waited = readyAt - failedAt;
  t.ok(
    waited >= SYNC_RETRY_FIRST_MS - 50 && waited < SYNC_RETRY_FIRST_MS + 2000,
    `ready ${waited} ms after the failure`,
  );
  t.same([...bot.host.model.users.entries()].map(([, user]) => user.nick).sort(), ['alice', 'bob'], 'the users of WHO');
  t.equal(bot.host.model.stats.users, 2, 'the counts of LUSERS');
  t.ok(bot.irc.sentMatching(/^LUSERS$/).length >= 3, 'LUSERS: refused, sent again and refused, then answered');
  t.equal(count(bot.logs, /sync to be retried/), 1, 'retried once');
});

t.test('a sync that failed after the model was synced is not tried again at once', async (t) => {
  // An operator whose LIST shows no modes: after the sync, the channel's modes are asked, and the server refuses.
  const bot = await botOn(t, { refusing: false, listModes: false }, true);
  await eventually(() => count(bot.logs, /\[stats\] sync failed/) === 1, 'the failure after the sync');
  t.match(bot.logs.join('\n'), /sync failed error="the server rate-limits MODE/);
  t.ok(bot.host.model.ready, 'synced');
  t.ok(bot.host.irc.state.isOperator, 'as an operator');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(count(bot.logs, /sync to be retried/), 0, 'the next refresh asks again');
});

t.test('a sync cut short by a lost connection is not retried: the next connection syncs', async (t) => {
  const server = { refusing: false, listModes: true };
  const bot = await botOn(t, server);
  bot.irc.answer(/^LUSERS$/, []);
  await eventually(() => bot.irc.sentMatching(/^LUSERS$/).length === 1, 'LUSERS sent');
  bot.irc.drop();
  await eventually(() => count(bot.logs, /\[stats\] sync interrupted/) === 1, 'the interrupted sync');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notMatch(bot.logs.join('\n'), /sync to be retried|sync failed/);
});

t.test('a retry waiting when the connection is lost is dropped; the new connection retries its own', async (t) => {
  const server = { refusing: true, listModes: true };
  const bot = await botOn(t, server);
  await eventually(() => count(bot.logs, /sync to be retried in_ms=5000 failures=1/) === 1, 'the first retry planned');
  bot.irc.drop();
  await eventually(() => bot.irc.opened === 2, 'the reconnect');
  const reconnectedAt = Date.now();
  bot.irc.register();
  // The new connection's first sync is refused too: its own retry, 5 s later, not the old one's.
  await eventually(
    () => count(bot.logs, /sync to be retried in_ms=5000 failures=1/) === 2,
    'the new connection’s retry planned',
  );
  server.refusing = false;
  await eventually(() => bot.host.model.ready, 'the new connection’s retried sync', SYNC_RETRY_FIRST_MS + 5000);
  t.ok(Date.now() - reconnectedAt >= SYNC_RETRY_FIRST_MS - 50, 'ready after the new connection’s retry');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(count(bot.logs, /\[stats\] synced/), 1, 'one sync completed: the first connection’s retry never ran');
});
