/**
 * The bot's behaviour the host installs on its connection: IDENTIFY to NickServ when SASL did not log
 * it in, once NickServ is there; nothing of it on a connection that logged in, or once removed. (CTCP
 * answers are tested in transport.test.ts and, over real sockets, ctcp.test.ts.)
 */
import t from 'tap';
import { installBotPolicy } from '../../../lib/irc/bot-policy.js';
import { createLogger } from '../../../lib/logger.js';
import { FakeTransport } from '../../support/fake-irc.js';

const sasl = { account: 'databot', password: 'secret-pw' };

function setup() {
  const logs: string[] = [];
  const logger = createLogger({ sink: (line) => logs.push(line) });
  const irc = new FakeTransport({}, logger);
  const remove = installBotPolicy(irc, { version: 'test', sasl }, logger);
  t.teardown(async () => {
    remove();
    await irc.quit('test over');
  });
  return { irc, logs, remove };
}

/** Resolves once `irc` has written a line matching `pattern`. */
async function written(irc: FakeTransport, pattern: RegExp): Promise<string> {
  for (let waited = 0; waited < 2000; waited += 5) {
    const line = irc.sent.find((sent) => pattern.test(sent));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`nothing written like ${pattern}`);
}

t.test('not logged in after registration: ISON NickServ, then IDENTIFY once NickServ is online', async (t) => {
  const { irc, logs } = setup();
  irc.connect();
  irc.register();
  await written(irc, /^ISON NickServ$/);
  t.notOk(
    irc.sent.some((line) => line.includes('IDENTIFY')),
    'not while NickServ is away',
  );
  irc.receive(':irc.test 303 DataBot :NickServ');
  t.equal(await written(irc, /IDENTIFY/), 'PRIVMSG NickServ :IDENTIFY databot secret-pw');
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  t.equal(irc.state.account, 'databot');
  t.ok(logs.some((line) => /will IDENTIFY to NickServ when it is online/.test(line)));
  t.notOk(logs.join('\n').includes('secret-pw'), 'the password is never logged');
});

t.test('logged in by SASL: no IDENTIFY', async (t) => {
  const { irc } = setup();
  irc.connect();
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  irc.register();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(irc.sent.some((line) => /ISON|IDENTIFY/.test(line)));
});

t.test('removed: neither CTCP answers nor IDENTIFY', async (t) => {
  const { irc, remove } = setup();
  remove();
  irc.connect();
  irc.register();
  irc.receive(':alice!a@h PRIVMSG DataBot :\x01VERSION\x01');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(
    irc.sent.some((line) => /ISON|IDENTIFY|NOTICE/.test(line)),
    irc.sent.join(' | '),
  );
});

t.test('a long CTCP PING is answered in one line, its payload whole', async (t) => {
  const { irc } = setup();
  irc.connect();
  irc.register();
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  const payload = 'x'.repeat(450);
  irc.receive(`:alice!a@h PRIVMSG DataBot :\x01PING ${payload}\x01`);
  const answers = irc.sent.filter((line) => line.startsWith('NOTICE alice'));
  t.same(answers, [`NOTICE alice :\x01PING ${payload}\x01`]);
});
