/**
 * The request lane and RPL_TRYAGAIN (263): ircd-hybrid refuses a LINKS, WHO of a mask, STATS, LUSERS, ...
 * asked again within its `pace_wait` (or `pace_wait_simple`) of anyone's last one, unless the asker is an
 * operator, with `:server 263 <nick> <command> :Server load is temporarily too heavy. Please wait a while
 * and try again.` (8.2.43's text) and nothing else, but for a WHO, which it ends with an empty 315.
 */
import IrcFramework from 'irc-framework';
import t from 'tap';
import { toIrcMessage } from '../../../lib/irc/irc-framework.js';
import type { IrcRequest } from '../../../lib/irc/port.js';
import {
  RequestLane,
  PENALISED_LIMITS,
  REQUESTS_IN_FLIGHT,
  requestLimitsFor,
  TRY_AGAIN,
  type RequestLimits,
  type TryAgainOptions,
} from '../../../lib/irc/requests.js';
import { buildServerProfile } from '../../../lib/irc/server-profile.js';
import { FakeTransport } from '../../../testing/fake-irc.js';

const TRY_AGAIN_TEXT = 'Server load is temporarily too heavy. Please wait a while and try again.';
const tryAgain = (command: string) => `:hub.test.net 263 DataBot ${command} :${TRY_AGAIN_TEXT}`;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The profile of the test network's ircd-hybrid, from its RPL_MYINFO version. */
const hybrid = buildServerProfile({
  version: 'ircd-hybrid-1:8.2.43+dfsg.1-1',
  isupport: new Map(),
  caps: new Set(),
  offeredCaps: new Set(),
});

/** A lane writing to an array, fed server lines as a connection would; short waits unless told. */
function lane(
  options: TryAgainOptions = { firstWaitMs: 20, times: 3 },
  advice = hybrid.tryAgainText,
  limits: RequestLimits = { inFlight: REQUESTS_IN_FLIGHT, defaultTimeoutMs: 15_000 },
) {
  const sent: string[] = [];
  let open = true;
  const requests = new RequestLane(
    (line) => sent.push(line),
    () => open,
    options,
    () => advice,
    () => limits,
  );
  return {
    requests,
    sent,
    receive: (...lines: string[]) => {
      for (const line of lines) requests.match(toIrcMessage(IrcFramework.ircLineParser(line)));
    },
    close: (reason: string) => {
      open = false;
      requests.rejectAll(reason);
    },
  };
}

const links = (mask: string, extra: Partial<IrcRequest> = {}): IrcRequest => ({
  send: ['LINKS', mask],
  reply: (message) => message.command === '364',
  end: (message) => message.command === '365' && message.params[1] === mask,
  ...extra,
});

/** Resolves when `sent` has `count` lines, or rejects after `ms`. */
async function sentCount(sent: readonly string[], count: number, ms = 2000): Promise<void> {
  const started = Date.now();
  while (sent.length < count) {
    if (Date.now() - started > ms) throw new Error(`${sent.length} lines sent, not ${count}, after ${ms} ms`);
    await wait(2);
  }
}

t.test('a request the server refuses with 263 is sent again after a wait, and resolves with the answer', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 40, times: 3 });
  let settled = false;
  const answer = requests.add(links('*')).finally(() => (settled = true));
  t.same(sent, ['LINKS *']);
  receive(tryAgain('LINKS'));
  await wait(15);
  t.same(sent, ['LINKS *'], 'not again at once');
  t.notOk(settled, 'the refusal neither resolves nor rejects it');
  await sentCount(sent, 2);
  t.same(sent, ['LINKS *', 'LINKS *'], 'sent again');
  receive(
    ':hub.test.net 364 DataBot hub.test.net hub.test.net :0 Hub',
    ':hub.test.net 365 DataBot * :End of /LINKS list.',
  );
  const lines = await answer;
  t.same(
    lines.map((line) => line.command),
    ['364', '365'],
    'the answer to the new try, without the 263',
  );
});

t.test("a refused WHO's empty 315 (ircd-hybrid sends one after the 263) does not end it", async (t) => {
  const { requests, sent, receive } = lane();
  const who = requests.add({
    send: ['WHO', 'a*', '%tnuhiar,1'],
    reply: (message) => message.command === '354',
    end: (message) => message.command === '315' && message.params[1] === 'a*',
  });
  receive(tryAgain('WHO'), ':hub.test.net 315 DataBot a* :End of /WHO list.');
  await sentCount(sent, 2);
  t.equal(sent[1], 'WHO a* %tnuhiar,1', 'the same line again');
  receive(
    ':hub.test.net 354 DataBot 1 alice a.example 192.0.2.1 alice 0 Alice',
    ':hub.test.net 315 DataBot a* :End of /WHO list.',
  );
  const lines = await who;
  t.same(
    lines.map((line) => line.command),
    ['354', '315'],
    'the users of the new try, not an empty list',
  );
});

t.test('a 263 goes to the oldest request of its command only, whatever the case', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 30, times: 3 });
  const first = requests.add(links('first'));
  const second = requests.add(links('second'));
  t.same(sent, ['LINKS first', 'LINKS second'], 'both out (two requests at a time at least)');
  receive(tryAgain('STATS'));
  receive(tryAgain('links'));
  receive(':hub.test.net 365 DataBot second :End of /LINKS list.');
  t.equal((await second).length, 1, 'the second, answered, is not taken for refused');
  await sentCount(sent, 3);
  t.equal(sent[2], 'LINKS first', 'the oldest was the refused one');
  receive(':hub.test.net 365 DataBot first :End of /LINKS list.');
  t.equal((await first).length, 1);
  t.same(sent, ['LINKS first', 'LINKS second', 'LINKS first'], 'a 263 of another command did not touch LINKS');
});

t.test('a 263 for a command with no request out is left to the others', async (t) => {
  const { requests, receive } = lane();
  const anything = requests.add({ send: ['VERSION'], reply: () => true, end: (message) => message.command === '351' });
  receive(tryAgain('LINKS'), ':hub.test.net 351 DataBot hybrid-8.2.43. hub.test.net :TS6');
  t.same(
    (await anything).map((line) => line.command),
    ['263', '351'],
    'collected as any line is',
  );
});

t.test('the waits double; after the last try a 263 rejects, naming the command and RPL_TRYAGAIN', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 20, times: 3 });
  const sentAt: number[] = [];
  const started = Date.now();
  const refused = requests.add(links('*'));
  const outcome = refused.then(
    () => null,
    (error: unknown) => error,
  );
  for (let tries = 1; tries <= 3; tries++) {
    receive(tryAgain('LINKS'));
    await sentCount(sent, tries + 1);
    sentAt.push(Date.now() - started);
  }
  // Timers may fire a millisecond early; the waits are 20, 40 and 80 ms.
  t.ok(sentAt[0]! >= 19, `first new try after ${sentAt[0]} ms`);
  t.ok(sentAt[1]! - sentAt[0]! >= 39, `second ${sentAt[1]! - sentAt[0]!} ms later`);
  t.ok(sentAt[2]! - sentAt[1]! >= 79, `third ${sentAt[2]! - sentAt[1]!} ms later`);
  receive(tryAgain('LINKS'));
  const error = await outcome;
  t.ok(error instanceof Error);
  t.match((error as Error).message, /rate-limits LINKS \(RPL_TRYAGAIN, 263\).*4 times over 0\.14 s/);
  t.match((error as Error).message, /pace_wait/, 'says what to set');
  t.match((error as Error).message, /on ircd-hybrid, oper the bot or set pace_wait and pace_wait_simple to 0$/);
  await wait(200);
  t.equal(sent.length, 4, 'never sent again after it was rejected');
});

t.test("on a server the profile does not know, the advice names no server's settings", async (t) => {
  const { requests, receive } = lane(
    { firstWaitMs: 1, times: 0 },
    buildServerProfile({
      version: 'MysteryIRCd-1.0',
      isupport: new Map(),
      caps: new Set(),
      offeredCaps: new Set(),
    }).tryAgainText,
  );
  const refused = requests.add(links('*')).then(
    () => null,
    (error: unknown) => error,
  );
  receive(tryAgain('LINKS'));
  const error = await refused;
  t.ok(error instanceof Error);
  t.match(
    (error as Error).message,
    /rate-limits LINKS \(RPL_TRYAGAIN, 263\).*; oper the bot, or have the server's limit/,
  );
  t.notMatch((error as Error).message, /pace_wait|hybrid/);
});

t.test("a request's turn is free while it waits to be sent again", async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 60_000, times: 1 });
  // Fill every turn (REQUESTS_IN_FLIGHT), then one more waits.
  const busy: Promise<unknown>[] = [];
  while (sent.length === busy.length) busy.push(requests.add(links(`busy${busy.length}`)).catch(() => undefined));
  t.equal(sent.at(-1), `LINKS busy${busy.length - 2}`, 'the last one waits its turn');
  receive(tryAgain('LINKS'));
  t.equal(sent.at(-1), `LINKS busy${busy.length - 1}`, 'the refused one gave its turn to the one waiting');
  t.equal(sent.filter((line) => line === 'LINKS busy0').length, 1, 'the refused one waits a minute');
  requests.rejectAll('done');
  await Promise.all(busy);
});

t.test('a request waiting to be sent again is rejected on disconnect, and never sent', async (t) => {
  const { requests, sent, receive, close } = lane({ firstWaitMs: 30, times: 3 });
  const refused = requests.add(links('*'));
  receive(tryAgain('LINKS'));
  close('gone');
  await t.rejects(refused, /disconnected before the reply to LINKS: gone/);
  await wait(60);
  t.same(sent, ['LINKS *'], 'not sent on a closed connection');
});

t.test('the timeout runs from each new try, not from the first', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 50, times: 3 });
  const request = requests.add(links('*', { timeoutMs: 40 }));
  receive(tryAgain('LINKS'));
  await sentCount(sent, 2);
  receive(':hub.test.net 365 DataBot * :End of /LINKS list.');
  t.equal((await request).length, 1, 'answered, though the first try was longer ago than its timeout');
});

t.test('the transport routes 263 to its requests: the default wait is 2 s, then 4, 8, 16', async (t) => {
  t.same(TRY_AGAIN, { firstWaitMs: 2000, times: 4 });
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  const request = irc.request(links('*'));
  irc.receive(tryAgain('LINKS'));
  t.equal(irc.sent.filter((line) => line === 'LINKS *').length, 1, 'not sent again at once');
  await wait(1900);
  t.equal(irc.sent.filter((line) => line === 'LINKS *').length, 1, 'nor within 1.9 s');
  await wait(400);
  t.equal(irc.sent.filter((line) => line === 'LINKS *').length, 2, 'sent again after 2 s');
  irc.receive(':hub.test.net 364 DataBot hub.test.net hub.test.net :0 Hub', ':hub.test.net 365 DataBot * :End');
  t.same(
    (await request).map((line) => line.command),
    ['364', '365'],
  );
});

/** LIST as the stats plugin asks it: its rows and its end name no request. */
const list = (mask: string, serial: boolean): IrcRequest => ({
  send: mask ? ['LIST', mask] : ['LIST'],
  serial,
  reply: (message) => message.command === '322',
  end: (message) => message.command === '323',
});

const listReply = (...channels: string[]) => [
  ':hub.test.net 321 DataBot Channel :Users Name',
  ...channels.map((channel) => `:hub.test.net 322 DataBot ${channel} 3 :topic`),
  ':hub.test.net 323 DataBot :End of channel list.',
];

const channelsOf = (lines: readonly { command: string; params: string[] }[]) =>
  lines.filter((line) => line.command === '322').map((line) => line.params[1]);

t.test('two serial LISTs: the second goes out when the first has ended, and each gets its own rows', async (t) => {
  const { requests, sent, receive } = lane();
  const fresh = requests.add(list('C<1', true));
  const whole = requests.add(list('', true));
  const other = requests.add(links('*'));
  t.same(sent, ['LIST C<1', 'LINKS *'], 'the second LIST waits; a request of another command passes it');
  receive(...listReply('#new'));
  t.same(sent, ['LIST C<1', 'LINKS *', 'LIST'], 'sent once the first reply ended');
  receive(...listReply('#new', '#old', '#older'));
  receive(':hub.test.net 365 DataBot * :End of /LINKS list.');
  t.same(channelsOf(await fresh), ['#new']);
  t.same(channelsOf(await whole), ['#new', '#old', '#older'], 'the whole LIST, not the first reply');
  t.equal((await other).length, 1);
});

t.test('without serial, two LISTs out at once take each other’s rows (why LIST is serial)', async (t) => {
  const { requests, sent, receive } = lane();
  const fresh = requests.add(list('C<1', false));
  const whole = requests.add(list('', false));
  t.same(sent, ['LIST C<1', 'LIST']);
  receive(...listReply('#new'));
  t.same(channelsOf(await whole), ['#new'], 'the whole LIST ended on the first reply: the rest would be taken as gone');
  t.same(channelsOf(await fresh), ['#new']);
});

t.test('a serial request refused with 263 keeps the next of its command waiting until it is answered', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 30, times: 3 });
  const first = requests.add(list('', true));
  const second = requests.add(list('>10', true));
  receive(tryAgain('LIST'));
  await wait(10);
  t.same(sent, ['LIST'], 'the second does not take the refused one’s turn');
  await sentCount(sent, 2);
  t.same(sent, ['LIST', 'LIST'], 'the refused one again');
  receive(...listReply('#a'));
  t.same(sent, ['LIST', 'LIST', 'LIST >10']);
  receive(...listReply('#b'));
  t.same(channelsOf(await first), ['#a']);
  t.same(channelsOf(await second), ['#b']);
});

t.test('a request with more lines writes them all at once and ends where its end says', async (t) => {
  const { requests, sent, receive } = lane();
  let ended = 0;
  const answer = requests.add({
    ...list('#a', true),
    more: [
      ['LIST', '#b'],
      ['LIST', '#c'],
    ],
    end: (message) => message.command === '323' && ++ended === 3,
  });
  t.same(sent, ['LIST #a', 'LIST #b', 'LIST #c']);
  receive(...listReply('#a'), ...listReply('#b'));
  const before = await Promise.race([answer.then(() => 'ended'), wait(10).then(() => 'waiting')]);
  t.equal(before, 'waiting', 'not ended by the first two ends');
  receive(...listReply('#c'));
  t.same(channelsOf(await answer), ['#a', '#b', '#c']);
});

t.test('a serial request that timed out keeps its turn until its late end, and its lines go to nobody', async (t) => {
  const { requests, sent, receive } = lane();
  const late = requests.add({ ...list('', true), timeoutMs: 30 });
  const next = requests.add(list('C<1', true));
  await t.rejects(late, { message: /no complete reply to LIST within 30 ms/ });
  t.same(sent, ['LIST'], 'the next LIST waits for the late reply');
  receive(...listReply('#old', '#older'));
  t.same(sent, ['LIST', 'LIST C<1'], 'sent once the late reply ended');
  receive(...listReply('#new'));
  t.same(channelsOf(await next), ['#new'], 'only its own rows');
});

t.test('a serial request whose late reply never comes frees its turn after as long again', async (t) => {
  const { requests, sent } = lane();
  const late = requests.add({ ...list('', true), timeoutMs: 20 });
  const next = requests.add({ ...list('C<1', true), timeoutMs: 5000 });
  await t.rejects(late);
  t.same(sent, ['LIST']);
  await sentCount(sent, 2);
  t.same(sent, ['LIST', 'LIST C<1']);
  requests.rejectAll('done');
  await t.rejects(next);
});

t.test('a request with more lines refused by 263 counts its ends again when written again', async (t) => {
  const { requests, sent, receive } = lane({ firstWaitMs: 10, times: 3 });
  let ended = 0;
  const answer = requests.add({
    ...list('#a', true),
    more: [['LIST', '#b']],
    onSent: () => (ended = 0),
    end: (message) => message.command === '323' && ++ended === 2,
  });
  // The first line answered, the second refused.
  receive(...listReply('#a'), tryAgain('LIST'));
  await sentCount(sent, 4);
  t.same(sent, ['LIST #a', 'LIST #b', 'LIST #a', 'LIST #b'], 'both lines again');
  receive(...listReply('#a'));
  const early = await Promise.race([answer.then(() => 'ended'), wait(10).then(() => 'waiting')]);
  t.equal(early, 'waiting', 'not ended by the first end of the new try');
  receive(...listReply('#b'));
  t.same(channelsOf(await answer), ['#a', '#b']);
});

t.test(
  'on a server that penalises commands (ISUPPORT PENALTY, ircd 2.11): one at a time, 45 s by default',
  async (t) => {
    const irc2 = buildServerProfile({
      version: '2.11.2p3',
      isupport: new Map([['PENALTY', '']]),
      caps: new Set(),
      offeredCaps: new Set(),
    });
    t.same(requestLimitsFor(irc2), { inFlight: 1, defaultTimeoutMs: 45_000 });
    t.same(requestLimitsFor(hybrid), { inFlight: REQUESTS_IN_FLIGHT, defaultTimeoutMs: 15_000 }, 'elsewhere as ever');
    const { requests, sent, receive } = lane(undefined, undefined, { ...PENALISED_LIMITS, defaultTimeoutMs: 100 });
    const first = requests.add(links('a', { timeoutMs: 2000 }));
    const second = requests.add(links('b', { timeoutMs: 200 }));
    const third = requests.add(links('c'));
    t.same(sent, ['LINKS a'], 'the others wait for the answer to the first');
    // ircd 2.11 answers the first seconds later: the second's clock (200 ms) has not started meanwhile.
    await wait(300);
    receive(':hub.test.net 365 DataBot a :End of LINKS list.');
    t.equal((await first).length, 1);
    t.same(sent, ['LINKS a', 'LINKS b'], 'then the second goes out, its timeout counted from now');
    receive(':hub.test.net 365 DataBot b :End of LINKS list.');
    t.equal((await second).length, 1);
    await t.rejects(third, /no complete reply to LINKS within 100 ms/, "the lane's default timeout");
  },
);

t.test('a request written behind others is timed from the answer to the one before it (its turn)', async (t) => {
  const { requests, sent, receive } = lane();
  const turns: string[] = [];
  const first = requests.add(links('a', { timeoutMs: 2000, onTurn: () => turns.push('a') }));
  const second = requests.add(links('b', { timeoutMs: 100, onTurn: () => turns.push('b') }));
  const third = requests.add(links('c', { timeoutMs: 100, onTurn: () => turns.push('c') }));
  t.same(sent, ['LINKS a', 'LINKS b', 'LINKS c'], 'all three written at once');
  t.same(turns, ['a'], 'only the first has its turn');
  // The server holds the first 300 ms: the others' 100 ms have not started meanwhile.
  await wait(300);
  receive(':hub.test.net 365 DataBot a :End of LINKS list.');
  t.equal((await first).length, 1);
  t.same(turns, ['a', 'b'], "the second's turn comes with the first's answer");
  await wait(50);
  receive(':hub.test.net 365 DataBot b :End of LINKS list.');
  t.equal((await second).length, 1, 'answered 350 ms after it was written, 50 ms into its turn');
  const thirdTurn = Date.now();
  await t.rejects(third, /no complete reply to LINKS within 100 ms/);
  t.ok(Date.now() - thirdTurn >= 95, 'the third timed out 100 ms into its own turn');
});

t.test('a request given up on passes the turn to the one written after it', async (t) => {
  const { requests, receive } = lane();
  const started = Date.now();
  const first = requests.add(links('a', { timeoutMs: 50 }));
  const second = requests.add(links('b', { timeoutMs: 150 }));
  await t.rejects(first, /within 50 ms/);
  await wait(120);
  receive(':hub.test.net 365 DataBot b :End of LINKS list.');
  t.equal((await second).length, 1, 'answered 120 ms into its turn, which came with the first given up');
  t.ok(Date.now() - started >= 165, 'more than its 150 ms after it was written');
  // A request written behind a serial request given up on (still awaiting its late end, as long again) has its
  // turn at once.
  const late = requests.add({ ...list('', true), timeoutMs: 300 });
  await t.rejects(late);
  const written = Date.now();
  const after = requests.add(links('c', { timeoutMs: 30 }));
  await t.rejects(after, /within 30 ms/);
  t.ok(Date.now() - written < 200, 'timed out on its own clock, not 300 ms later when the late LIST is let go');
});

/**
 * A server that reads a client's lines as InspIRCd does for anyone without `users/flood/no-fakelag`, in ms
 * rather than seconds: it reads the next line only while the client's penalty is under a threshold, adds each
 * command's penalty as it answers it (10 ms a command, 50 for a LIST, 0.05 per WHO row), and takes off 1 ms of
 * penalty per ms.
 */
function fakeLagServer(receive: (...lines: string[]) => void, rowsPerWho: number) {
  const queue: string[] = [];
  let penalty = 0;
  let last = Date.now();
  const threshold = 100;
  const timer = setInterval(() => {
    const now = Date.now();
    penalty = Math.max(0, penalty - (now - last));
    last = now;
    while (queue.length > 0 && penalty < threshold) {
      const [command, mask] = queue.shift()!.split(' ');
      if (command === 'WHO') {
        const initial = mask!.charAt(0);
        const rows = Array.from(
          { length: rowsPerWho },
          (_, row) => `:hub 352 DataBot * i h hub ${initial}${row} H :0 r`,
        );
        receive(...rows, `:hub 315 DataBot ${mask} :End of /WHO list.`);
        penalty += 10 + rowsPerWho * 0.05 * 10;
      } else if (command === 'LUSERS') {
        receive(':hub 251 DataBot :There are 5 users and 0 invisible on 1 servers', ':hub 266 DataBot 5 5 :x');
        penalty += 10;
      }
    }
  }, 2);
  return { write: (line: string) => queue.push(line), stop: () => clearInterval(timer) };
}

t.test('behind a server that holds each line for the penalty of those before it, no request times out', async (t) => {
  const server = fakeLagServer((...lines) => {
    for (const line of lines) requests.match(toIrcMessage(IrcFramework.ircLineParser(line)));
  }, 100);
  const requests = new RequestLane(
    (line) => server.write(line),
    () => true,
  );
  t.teardown(() => server.stop());
  const who = (mask: string): IrcRequest => ({
    send: ['WHO', mask],
    reply: (message) => message.command === '352' && message.params[5]!.startsWith(mask.charAt(0)),
    end: (message) => message.command === '315' && message.params[1] === mask,
    timeoutMs: 200,
  });
  // Eight WHO masks of 100 rows (60 ms of penalty each) and a LUSERS written behind them: the server reads the
  // last WHO and the LUSERS some 400 ms after they were written, past their 200 and 150 ms.
  const started = Date.now();
  const masks = 'abcdefgh'.split('').map((initial) => requests.add(who(`${initial}*`)));
  const lusers = requests.add({
    send: ['LUSERS'],
    reply: (message) => message.command === '251',
    end: (message) => message.command === '266',
    timeoutMs: 150,
  });
  const answers = await Promise.all(masks);
  t.same(
    answers.map((lines) => lines.length),
    Array(8).fill(101),
  );
  t.equal((await lusers).length, 2, 'LUSERS answered');
  t.ok(Date.now() - started > 150, `LUSERS was answered ${Date.now() - started} ms after it was written`);
});

t.test('the flow is told how far the server read, and the hold of requests its own server answered', async (t) => {
  const heard: [number, number | null][] = [];
  let written = 0;
  let idle = 0;
  const requests = new RequestLane(
    () => written++,
    () => true,
    TRY_AGAIN,
    undefined,
    undefined,
    { written: () => written, heard: (seq, holdMs) => heard.push([seq, holdMs]), idle: () => idle++ },
  );
  const receive = (line: string) => requests.match(toIrcMessage(IrcFramework.ircLineParser(line)));
  const local = requests.add(links('a'));
  const remote = requests.add({
    send: ['TIME', 'leaf.test.net'],
    remote: true,
    reply: () => false,
    end: (message) => message.command === '391',
  });
  receive(':hub.test.net 365 DataBot a :End of LINKS list.');
  await local;
  t.equal(idle, 0, 'a request still out');
  receive(':leaf.test.net 391 DataBot leaf.test.net :Monday');
  await remote;
  t.equal(heard.length, 2);
  t.same(heard[0]![0], 1, 'read up to the first line');
  t.type(heard[0]![1], 'number', 'its own server: the hold counts');
  t.same(heard[1], [2, null], 'another server answered: no hold told');
  t.equal(idle, 1, 'then nothing is out');
});
