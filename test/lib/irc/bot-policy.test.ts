/**
 * The bot's behaviour the host installs on its connection: IDENTIFY to NickServ when SASL did not log
 * it in, once WHOIS finds NickServ, confirmed by a WHOIS of itself; nothing of it on a connection that
 * logged in, or once removed. (CTCP answers are tested in transport.test.ts and, over real sockets,
 * ctcp.test.ts.)
 */
import t from 'tap';
import { installBotPolicy } from '../../../lib/irc/bot-policy.js';
import { createLogger } from '../../../lib/logger.js';
import { FakeTransport } from '../../../testing/fake-irc.js';

const sasl = { account: 'databot', password: 'secret-pw' };

/** Waits around IDENTIFY, short enough for a test to see several rounds. */
const identifyTiming = { answerMs: 100, retryMs: 40, maxRetryMs: 80 };

function setup() {
  const logs: string[] = [];
  const logger = createLogger({ sink: (line) => logs.push(line) });
  const irc = new FakeTransport({}, logger);
  const remove = installBotPolicy(irc, { version: 'test', sasl, identifyTiming }, logger);
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

const whoisNickServ = [
  ':irc.test 311 DataBot NickServ NickServ services.test * :Nickname Services',
  ':irc.test 310 DataBot NickServ :is an IRC service',
  ':irc.test 318 DataBot NickServ :End of /WHOIS list.',
];
const whoisSelf = (account: string | null): string[] => [
  ':irc.test 311 DataBot DataBot databot 127.0.0.1 * :test',
  ...(account ? [`:irc.test 330 DataBot DataBot ${account} :is logged in as`] : []),
  ':irc.test 318 DataBot DataBot :End of /WHOIS list.',
];
const identifies = (irc: FakeTransport): number => irc.sent.filter((line) => /IDENTIFY/.test(line)).length;

t.test('not logged in after registration: WHOIS NickServ, then IDENTIFY once NickServ is online', async (t) => {
  const { irc, logs } = setup();
  irc.connect();
  irc.register();
  await written(irc, /^WHOIS NickServ$/);
  t.notOk(
    irc.sent.some((line) => line.includes('IDENTIFY')),
    'not before WHOIS answers',
  );
  irc.receive(':irc.test 401 DataBot NickServ :No such nick/channel');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(identifies(irc), 0, 'not while NickServ is away');
  // Asked again a second later; ngircd leaves services out of ISON, WHOIS shows them.
  irc.sent.length = 0;
  await written(irc, /^WHOIS NickServ$/);
  irc.receive(...whoisNickServ);
  t.equal(await written(irc, /IDENTIFY/), 'PRIVMSG NickServ :IDENTIFY databot secret-pw');
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  t.equal(irc.state.account, 'databot');
  t.ok(logs.some((line) => /will IDENTIFY to NickServ when it is online/.test(line)));
  t.notOk(logs.join('\n').includes('secret-pw'), 'the password is never logged');
});

t.test('a server without SASL never sends 900: a WHOIS of itself confirms the login, and it stops', async (t) => {
  const { irc, logs } = setup();
  irc.connect();
  irc.register();
  await written(irc, /^WHOIS NickServ$/);
  irc.receive(...whoisNickServ);
  await written(irc, /IDENTIFY/);
  // Anope on ircd-hybrid: a notice, no 900.
  irc.receive(':NickServ!services@services.test NOTICE DataBot :Password accepted - you are now recognized.');
  await written(irc, /^WHOIS DataBot$/);
  irc.receive(...whoisSelf('databot'));
  t.equal(irc.state.account, 'databot', 'the account comes from 330');
  // Several retry periods later: still the one IDENTIFY (the old loop sent one every few seconds forever).
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.equal(identifies(irc), 1, 'one IDENTIFY');
  t.ok(logs.some((line) => /logged in/.test(line) && /databot/.test(line)));
});

t.test('IDENTIFY refused: says what NickServ answered, tries again later, each time later', async (t) => {
  const { irc, logs } = setup();
  irc.connect();
  irc.register();
  // Every WHOIS answered at once: NickServ is there, the bot has no account.
  const answered = new Set<number>();
  const timer = setInterval(() => {
    irc.sent.forEach((line, index) => {
      if (answered.has(index)) return;
      if (line === 'WHOIS NickServ') irc.receive(...whoisNickServ);
      else if (line === 'WHOIS DataBot') irc.receive(...whoisSelf(null));
      else if (/IDENTIFY/.test(line)) {
        irc.receive(':NickServ!services@services.test NOTICE DataBot :Password incorrect.');
      }
      answered.add(index);
    });
  }, 2);
  t.teardown(() => clearInterval(timer));
  await new Promise((resolve) => setTimeout(resolve, 900));
  const count = identifies(irc);
  t.ok(count >= 2, `tried again (${count} IDENTIFYs)`);
  t.ok(count <= 6, `but not in a tight loop (${count} IDENTIFYs in 900 ms with 100 ms answers and 40–80 ms pauses)`);
  t.equal(irc.state.account, null);
  t.ok(
    logs.some((line) => /IDENTIFY did not log the bot in/.test(line) && /Password incorrect/.test(line)),
    'the log says what NickServ answered',
  );
  t.notOk(logs.join('\n').includes('secret-pw'), 'the password is never logged');
});

t.test(
  'a server that knows no accounts (ircd 2.11): said once, never tried, on this connection or the next',
  async (t) => {
    const { irc, logs } = setup();
    const registerAs211 = (): void => {
      irc.receive(
        ':irc.test 001 DataBot :Welcome',
        ':irc.test 004 DataBot irc.test 2.11.2p3 aoOirw abeiIklmnoOpqrRstv',
        ':irc.test 005 DataBot PREFIX=(ov)@+ CHANTYPES=#&!+ :are supported by this server',
        ':irc.test 376 DataBot :End of MOTD',
      );
    };
    irc.connect();
    registerAs211();
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.same(
      irc.sent.filter((line) => /NickServ|IDENTIFY/.test(line)),
      [],
      'neither WHOIS NickServ nor IDENTIFY',
    );
    const said = (): string[] => logs.filter((line) => /has no accounts/.test(line));
    t.match(said(), [/ircd 2\.11.*no account services to log in to.*Remove irc\.sasl/]);
    irc.drop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (!irc.state.connected) irc.connect();
    registerAs211();
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.equal(said().length, 1, 'once, not at every connection');
    t.same(
      irc.sent.filter((line) => /NickServ|IDENTIFY/.test(line)),
      [],
    );
  },
);

t.test('logged in by SASL: no IDENTIFY', async (t) => {
  const { irc } = setup();
  irc.connect();
  irc.receive(':irc.test 900 DataBot DataBot!d@h databot :You are now logged in as databot');
  irc.register();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(irc.sent.some((line) => /WHOIS|IDENTIFY/.test(line)));
});

t.test('removed: neither CTCP answers nor IDENTIFY', async (t) => {
  const { irc, remove } = setup();
  remove();
  irc.connect();
  irc.register();
  irc.receive(':alice!a@h PRIVMSG DataBot :\x01VERSION\x01');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(
    irc.sent.some((line) => /WHOIS|IDENTIFY|NOTICE/.test(line)),
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
