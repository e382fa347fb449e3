import t from 'tap';
import { REQUESTS_IN_FLIGHT } from '../../../lib/irc/requests.js';
import { casefold } from '../../../lib/irc/casemapping.js';
import { Pacer } from '../../../lib/irc/pacer.js';
import { formatLine, splitText } from '../../../lib/irc/text.js';
import {
  CTCP_ANSWERS_IN_ALL,
  CTCP_ANSWERS_PER_CLIENT,
  CTCP_DEADLINE_MS,
  installBotPolicy,
} from '../../../lib/irc/bot-policy.js';
import { createLogger } from '../../../lib/logger.js';
import { FakeTransport } from '../../../testing/fake-irc.js';

t.test('formatLine protects the last parameter only when it must', async (t) => {
  t.equal(formatLine('PRIVMSG', ['#chan', 'hello world']), 'PRIVMSG #chan :hello world');
  t.equal(formatLine('JOIN', ['#a,#b']), 'JOIN #a,#b');
  t.equal(formatLine('PRIVMSG', ['x', ':smile']), 'PRIVMSG x ::smile');
  t.equal(formatLine('AWAY', ['']), 'AWAY :');
  t.equal(formatLine('PRIVMSG', ['x', 'a\r\nQUIT']), 'PRIVMSG x :a  QUIT', 'no line breaks can be injected');
});

t.test('splitText keeps pieces under the byte limit, at spaces', async (t) => {
  const text = 'word '.repeat(200).trim();
  const pieces = splitText(text, 100);
  t.ok(pieces.length > 1);
  for (const piece of pieces) t.ok(Buffer.byteLength(piece) <= 100, `piece of ${Buffer.byteLength(piece)} bytes`);
  t.equal(pieces.join(' '), text, 'nothing lost');
  const wide = splitText('é'.repeat(300), 100);
  for (const piece of wide) t.ok(Buffer.byteLength(piece) <= 100);
  t.equal(wide.join(''), 'é'.repeat(300));
});

t.test('casefold follows CASEMAPPING', async (t) => {
  t.equal(casefold('Nick[]\\~', 'rfc1459'), 'nick{}|^');
  t.equal(casefold('Nick[]\\~', 'strict-rfc1459'), 'nick{}|~');
  t.equal(casefold('a^', 'rfc1459'), casefold('A~', 'rfc1459'), '^ and ~ are one letter');
  t.equal(casefold('Nick[]\\~', 'ascii'), 'nick[]\\~');
});

t.test('the pacer lets a burst through, then waits', async (t) => {
  const now = 0;
  const written: string[] = [];
  const pacer = new Pacer({ burst: 3, intervalMs: 1000, write: (line) => written.push(line), now: () => now });
  for (let index = 0; index < 6; index++) pacer.enqueue(`line ${index}`);
  t.equal(written.length, 3, 'the burst');
  t.equal(pacer.pending, 3, 'the rest waits');
  pacer.clear();
  t.equal(pacer.pending, 0, 'clear drops the queue');
});

t.test('the pacer drains on its timer, in order', async (t) => {
  const written: string[] = [];
  const pacer = new Pacer({ burst: 1, intervalMs: 20, write: (line) => written.push(line) });
  const started = Date.now();
  for (let index = 0; index < 4; index++) pacer.enqueue(`line ${index}`);
  t.equal(written.length, 1);
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (written.length === 4) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  t.ok(Date.now() - started >= 55, 'three more lines took at least three intervals');
  t.same(written, ['line 0', 'line 1', 'line 2', 'line 3']);
});

t.test('session state comes from the server lines', async (t) => {
  const irc = new FakeTransport();
  irc.connect();
  irc.register('DataBot', 'CASEMAPPING=ascii PREFIX=(ov)@+ WHOX BOT=B');
  t.ok(irc.state.registered);
  t.equal(irc.state.server, 'irc.test');
  t.equal(irc.state.serverVersion, '', 'no RPL_MYINFO yet');
  irc.receive(':irc.test 004 DataBot irc.test InspIRCd-3 iosw biklmnopstv :bklov');
  t.equal(irc.state.serverVersion, 'InspIRCd-3', 'the software RPL_MYINFO names');
  t.equal(irc.state.casemapping, 'ascii');
  t.same(irc.state.prefixes, [
    { mode: 'o', symbol: '@' },
    { mode: 'v', symbol: '+' },
  ]);
  t.ok(irc.state.isupport.has('WHOX'));
  irc.receive(':irc.test CAP DataBot ACK :account-tag multi-prefix');
  t.ok(irc.state.caps.has('account-tag'));
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  t.equal(irc.state.account, 'databot');
  irc.receive(':DataBot MODE DataBot :+o');
  t.ok(irc.state.isOperator);
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(irc.sent.includes('MODE DataBot +B'), 'bot mode requested because ISUPPORT has BOT');
  irc.receive(':DataBot!d@h NICK :DataBot2');
  t.equal(irc.state.nick, 'DataBot2');
  irc.drop();
  t.equal(irc.state.serverVersion, '', 'forgotten with the connection');
});

t.test("without 004 (an attached client's went by), the server's own VERSION answer names the software", async (t) => {
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  irc.receive(':services.test 351 DataBot atheme-7.2.12. services.test :eAR TS6ow');
  t.equal(irc.state.serverVersion, '', "another server's answer (a latency probe's) is not ours");
  irc.receive(':irc.test 351 DataBot InspIRCd-3. irc.test :irc.test');
  t.equal(irc.state.serverVersion, 'InspIRCd-3');
  irc.receive(':irc.test 351 DataBot Other-1. irc.test :again');
  t.equal(irc.state.serverVersion, 'InspIRCd-3', 'a known version is kept');
});

t.test('after registration: OPER, then ready', async (t) => {
  const irc = new FakeTransport({ oper: { name: 'op', password: 'pw' } });
  let ready = 0;
  irc.on('ready', () => ready++);
  irc.connect();
  irc.register();
  t.ok(irc.sent.includes('OPER op pw'));
  t.equal(ready, 0, 'not ready before the OPER answer');
  irc.receive(':irc.test 381 DataBot :You are now an IRC operator');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(ready, 1);
  t.ok(irc.state.isOperator);
});

t.test('request collects the reply up to its end and rejects on disconnect', async (t) => {
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  const links = irc.request({
    send: ['LINKS'],
    reply: (message) => message.command === '364',
    end: (message) => message.command === '365',
  });
  irc.receive(
    ':irc.test 364 DataBot a.test a.test :0 A',
    ':irc.test 372 DataBot :noise',
    ':irc.test 365 DataBot * :End',
  );
  const lines = await links;
  t.same(
    lines.map((line) => line.command),
    ['364', '365'],
  );
  const pending = irc.request({ send: ['LUSERS'], reply: () => true, end: (message) => message.command === '266' });
  irc.drop('gone');
  await t.rejects(pending, /disconnected/);
});

t.test('a dropped connection is reopened with backoff, not after quit', async (t) => {
  const irc = new FakeTransport();
  const disconnected: string[] = [];
  irc.on('disconnected', (reason) => disconnected.push(reason));
  irc.connect();
  irc.register();
  irc.drop('ping timeout');
  t.same(disconnected, ['ping timeout']);
  t.notOk(irc.state.registered, 'state is reset');
  await new Promise((resolve) => setTimeout(resolve, 120));
  t.equal(irc.opened, 2, 'reconnected');
  await irc.quit('bye');
  await new Promise((resolve) => setTimeout(resolve, 120));
  t.equal(irc.opened, 2, 'no reconnect after quit');
});

t.test('requests take turns, a few unanswered at a time, and time out from when their line is sent', async (t) => {
  const irc = new FakeTransport({ pacing: { burst: 1, intervalMs: 60_000 } });
  irc.connect();
  irc.register();
  irc.send('PRIVMSG', '#a', 'takes the only token');
  irc.send('PRIVMSG', '#a', 'waits a minute for the next');
  const links = (id: number, timeoutMs: number) =>
    irc.request({
      send: ['LINKS', `${id}`],
      reply: (message) => message.command === '364',
      end: (message) => message.command === '365' && message.params[1] === `${id}`,
      timeoutMs,
    });
  const first = Array.from({ length: REQUESTS_IN_FLIGHT }, (_, index) => links(index, 5000));
  t.same(
    irc.sent.filter((line) => line.startsWith('LINKS')),
    first.map((_, index) => `LINKS ${index}`),
    'requests are not held back by the paced lines',
  );
  let settled = false;
  const late = links(99, 40).finally(() => (settled = true));
  t.notOk(irc.sent.includes('LINKS 99'), 'one more waits while the others are unanswered');
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.notOk(irc.sent.includes('LINKS 99'), 'still waiting, longer than its timeout');
  t.notOk(settled, 'and not timed out');
  irc.receive(':irc.test 365 DataBot 0 :End');
  t.ok(irc.sent.includes('LINKS 99'), 'sent once a turn was free');
  irc.receive(':irc.test 365 DataBot 99 :End');
  t.equal((await late).length, 1, 'answered, not timed out');
  t.equal(irc.sent.at(-1), 'LINKS 99', 'the paced line still waits for its token');
  irc.drop('done');
  await Promise.allSettled(first);
});

t.test('an urgent request goes before the others waiting', async (t) => {
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  const ask = (command: string, urgent = false) =>
    irc
      .request({ send: [command], reply: () => false, end: (message) => message.command === command, urgent })
      .catch(() => undefined);
  for (let i = 0; i < REQUESTS_IN_FLIGHT; i++) void ask(`BUSY${i}`);
  void ask('LATER');
  void ask('LOOKUP', true);
  irc.receive(':irc.test BUSY0 DataBot');
  t.equal(irc.sent.at(-1), 'LOOKUP', 'the lookup a person waits for went first');
  irc.drop('done');
});

t.test('requests sent or still waiting their turn are rejected on disconnect', async (t) => {
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  const ask = () => irc.request({ send: ['LUSERS'], reply: () => true, end: (message) => message.command === '266' });
  const asked = Array.from({ length: REQUESTS_IN_FLIGHT + 1 }, ask);
  irc.drop('gone');
  for (const request of asked) await t.rejects(request, /disconnected before the reply to LUSERS/);
});

t.test(
  "a CTCP request's onSent runs when its line leaves the send queue, never for one the connection drops",
  async (t) => {
    const irc = new FakeTransport({ pacing: { burst: 1, intervalMs: 20 } });
    irc.connect();
    irc.register();
    irc.send('PRIVMSG', '#a', 'one');
    irc.send('PRIVMSG', '#a', 'two');
    let queued = true;
    const lastWritten = await new Promise<string | undefined>((resolve, reject) => {
      // Also keeps the process alive for the send queue's timer, which does not.
      const deadline = setTimeout(() => reject(new Error('the CTCP request was not sent within 1 s')), 1000);
      irc.ctcpRequest('alice', 'VERSION', '', () => {
        clearTimeout(deadline);
        resolve(irc.sent.at(-1));
      });
      queued = !irc.sent.some((line) => line.includes('VERSION'));
    });
    t.ok(queued, 'not at once: two lines wait before it');
    t.equal(lastWritten, 'PRIVMSG alice \x01VERSION\x01', 'when its line has just been written');

    let dropped = true;
    irc.send('PRIVMSG', '#a', 'three');
    irc.send('PRIVMSG', '#a', 'four');
    irc.ctcpRequest('bob', 'VERSION', '', () => (dropped = false));
    irc.drop('gone');
    t.ok(dropped, 'a line dropped with the connection runs nothing');
    t.notOk(irc.sent.some((line) => line.startsWith('PRIVMSG bob ')));
  },
);

t.test('casefold leaves non-ASCII letters alone, as IRC does', async (t) => {
  t.equal(casefold('Ärger[X]', 'rfc1459'), 'Ärger{x}');
  t.equal(casefold('ÄRGER', 'ascii'), 'Ärger');
});

t.test('a connection that never registers is dropped and retried', async (t) => {
  /** The server sits on the first connection's SASL; the second registers at once. */
  class StuckOnce extends FakeTransport {
    protected override openConnection(): void {
      super.openConnection();
      if (this.opened > 1) this.register();
    }
  }
  const irc = new StuckOnce({ registrationTimeoutMs: 30, reconnect: { minMs: 20, maxMs: 20 } });
  irc.connect();
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.ok(irc.sent.includes('QUIT :Registration timed out'), 'gave up on the stuck connection');
  t.equal(irc.opened, 2, 'connected again, once');
  t.ok(irc.state.connected && irc.state.registered, 'the registered connection is left alone');
  t.equal(irc.sent.filter((line) => line.startsWith('QUIT')).length, 1);
  await irc.quit('bye');
});

t.test('CTCP PING (the payload echoed) and VERSION are answered by NOTICE; other CTCP is not', async (t) => {
  const irc = new FakeTransport();
  installBotPolicy(irc, { version: 'irc-network-data 9.9' }, createLogger({ sink: () => undefined }));
  irc.connect();
  irc.register();
  const from = irc.sent.length;
  irc.receive(
    ':alice!a@h PRIVMSG DataBot :\x01PING 1700000000 123\x01',
    ':bob!b@h PRIVMSG #chan :\x01ping\x01',
    ':carol!c@h PRIVMSG DataBot :\x01VERSION\x01',
    ':dave!d@h PRIVMSG DataBot :\x01TIME\x01',
    ':erin!e@h PRIVMSG DataBot :\x01PING unterminated',
    ':frank!f@h NOTICE DataBot :\x01PING 1\x01',
    ':DataBot!d@h PRIVMSG DataBot :\x01PING mine\x01',
    ':gina!g@h PRIVMSG DataBot :PING not ctcp',
  );
  t.same(irc.sent.slice(from), [
    'NOTICE alice :\x01PING 1700000000 123\x01',
    'NOTICE bob \x01PING\x01',
    'NOTICE carol :\x01VERSION irc-network-data 9.9\x01',
    'NOTICE erin :\x01PING unterminated\x01',
  ]);
});

t.test('CTCP answers are limited per client and for all clients, so a flood cannot fill the send queue', async (t) => {
  const logs: string[] = [];
  const logger = createLogger({ sink: (line) => logs.push(line) });
  const irc = new FakeTransport({}, logger);
  installBotPolicy(irc, { version: 'test' }, logger);
  irc.connect();
  irc.register();
  const answers = (): string[] => irc.sent.filter((line) => line.startsWith('NOTICE'));
  for (let index = 0; index < 20; index++)
    irc.receive(`:flood${index}!f@bad.example PRIVMSG DataBot :\x01PING ${index}\x01`);
  t.equal(answers().length, CTCP_ANSWERS_PER_CLIENT.capacity, 'one client, under any nick');
  t.equal(logs.filter((line) => line.includes('CTCP requests throttled')).length, 1, 'logged once');
  for (let index = 0; index < 20; index++)
    irc.receive(`:user${index}!u@host${index}.example PRIVMSG DataBot :\x01VERSION\x01`);
  t.equal(answers().length, CTCP_ANSWERS_IN_ALL.capacity, 'many clients together');
  t.equal(
    logs.filter((line) => line.includes('too many from all clients together')).length,
    1,
    'the limit of all clients is logged once, not once per host',
  );
  t.equal(logs.filter((line) => line.includes('CTCP requests throttled: not answered')).length, 1);
});

t.test('a CTCP answer that cannot leave within CTCP_DEADLINE_MS is dropped, not sent late', async (t) => {
  const realNow = Date.now;
  t.teardown(() => void (Date.now = realNow));
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (const late of [false, true]) {
    // One line at once, then one every 50 ms: the answer waits behind the line sent first.
    const irc = new FakeTransport({ pacing: { burst: 1, intervalMs: 50 } });
    installBotPolicy(irc, { version: 'test' }, createLogger({ sink: () => undefined }));
    irc.connect();
    irc.register();
    await wait(120);
    irc.send('LUSERS');
    irc.receive(':alice!a@h PRIVMSG DataBot :\x01PING 42\x01');
    if (late) Date.now = () => realNow() + CTCP_DEADLINE_MS + 1000;
    await wait(150);
    Date.now = realNow;
    t.equal(
      irc.sent.includes('NOTICE alice :\x01PING 42\x01'),
      !late,
      late ? 'past the deadline: dropped' : 'in time: sent',
    );
    await irc.quit('bye');
  }
});

t.test(
  "the session keeps the bot's folded nick, per connection, folded again when the nick or casemapping changes",
  async (t) => {
    const first = new FakeTransport();
    const second = new FakeTransport();
    first.register('Alpha[1]');
    second.register('Beta', 'CASEMAPPING=ascii');
    t.equal(first.state.nickKey, 'alpha{1}', 'rfc1459 folds brackets');
    t.equal(second.state.nickKey, 'beta');
    t.ok(first.state.isSelf('ALPHA{1}'));
    first.receive(':Alpha[1] NICK Gamma[2]');
    t.equal(first.state.nickKey, 'gamma{2}', 'a nick change is folded again');
    t.equal(second.state.nickKey, 'beta', 'the other connection keeps its own');
    first.receive(':irc.test 005 Gamma[2] CASEMAPPING=ascii :are supported by this server');
    t.equal(first.state.nickKey, 'gamma[2]', 'a new casemapping folds it again');
    t.notOk(first.state.isSelf('gamma{2}'));
  },
);
