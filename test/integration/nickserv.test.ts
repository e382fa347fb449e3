/**
 * The credential checker on the real test network (InspIRCd 3 + Atheme), with
 * both the `sasl` and the `atheme-jsonrpc` backend: right, wrong and unknown,
 * a grouped nick, 20 checks at once, services stopped, the brute-force limit,
 * secrecy of the password, and checker connections that never become users.
 * Every answer, errors included, is checked against the OpenAPI document the
 * answering bot serves.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ModelChange } from '../../lib/model/slice.js';
import { IrcClient, type IrcMessage } from '../support/irc-client.js';
import { startBot, type TestBot } from '../support/bot.js';
import { requestsReceived } from '../support/server-events.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { testGuardPlugin } from '../plugins/nickserv/fixtures/test-guard.js';
import { OpenApiValidator } from '../plugins/api/fixtures/openapi-validator.js';

const tag = Math.random().toString(36).slice(2, 6);
const alice = { account: `nsa${tag}`, password: `alice-${tag}-Correct-Horse` };
const bob = { account: `nsb${tag}`, password: `bob-${tag}-Battery-Staple` };
const carol = { account: `nsc${tag}`, password: `carol-${tag}-Tr0ub4dor` };
const dave = { account: `nsd${tag}`, password: `dave-${tag}-Hunter2-Long` };
const aliceAlt = `nsalt${tag}`;
const passwords = [alice.password, bob.password, carol.password, dave.password];

let network: TestNetwork;
let saslBot: TestBot;
let rpcBot: TestBot;
const storeDirs: string[] = [];
const clients: IrcClient[] = [];
/** Each bot's own /api/openapi.json. */
const validators = new Map<TestBot, OpenApiValidator>();
/** The status of every answer checked against the OpenAPI document. */
const checkedStatuses: number[] = [];

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | null;
}

const CHECK_PATH = '/api/irc/check-credentials/';

/** POST to the credential check as given; the answer, headers included, must match the bot's OpenAPI document. */
async function post(bot: TestBot, headers: Record<string, string>, body: string): Promise<Answer> {
  const response = await fetch(bot.url + CHECK_PATH, { method: 'POST', headers, body });
  const text = await response.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  const validator = validators.get(bot);
  if (!validator) throw new Error(`no OpenAPI document was loaded for ${bot.config.irc.nick}`);
  const problems = validator.check('POST', CHECK_PATH, response.status, parsed, response.headers);
  if (problems.length > 0) throw new Error(`the answer does not match the OpenAPI document: ${problems.join('; ')}`);
  checkedStatuses.push(response.status);
  return {
    status: response.status,
    body: parsed as Record<string, unknown>,
    retryAfter: response.headers.get('retry-after'),
  };
}

async function check(bot: TestBot, nick: string, password: string, token = 'default'): Promise<Answer> {
  return post(
    bot,
    { 'Content-Type': 'application/json', Authorization: `Token ${token}` },
    JSON.stringify({ nick, password }),
  );
}

interface Expected {
  status: number;
  body: Record<string, unknown>;
}

const valid = (nick: string, account: string): Expected => ({
  status: 200,
  body: { nick, valid: true, account, reason: null },
});
const invalid = (nick: string): Expected => ({
  status: 200,
  body: { nick, valid: false, account: null, reason: null },
});

async function client(nick: string, port = network.leafPort): Promise<IrcClient> {
  const irc = new IrcClient({ port, nick });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

/** NickServ's next notice to `irc` after sending `text`. */
async function nickserv(irc: IrcClient, text: string): Promise<string> {
  const notice = irc.waitFor((message) => message.command === 'NOTICE' && message.nick === 'NickServ', {
    timeout: 15000,
    what: `NickServ answer to ${text.split(' ')[0]}`,
  });
  irc.send(`PRIVMSG NickServ :${text}`);
  return (await notice).params.at(-1) ?? '';
}

function botStore(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nickserv-store-'));
  storeDirs.push(dir);
  return dir;
}

t.before(async () => {
  network = await startTestNetwork();
  for (const entry of [alice, bob, carol, dave]) await registerAccount(network, entry);
  // Group a second nick to alice's account: connect as it, identify to the account, GROUP.
  const alt = await client(aliceAlt);
  const identified = await nickserv(alt, `IDENTIFY ${alice.account} ${alice.password}`);
  if (!/You are now identified/.test(identified)) throw new Error(`IDENTIFY failed: ${identified}`);
  const grouped = await nickserv(alt, 'GROUP');
  if (!/is now registered to your account/.test(grouped)) throw new Error(`GROUP failed: ${grouped}`);
  await alt.quit('grouped');

  saslBot = await startBot(network, {
    nick: `nsbot${tag}`,
    storeDir: botStore(),
    extraPlugins: [testGuardPlugin],
    // A full sync every second, so the collector looks at the whole network while checks run.
    plugins: { stats: { refresh_seconds: 1 }, api: {}, testguard: {}, nickserv: {} },
  });
  rpcBot = await startBot(network, {
    nick: `nsrpc${tag}`,
    oper: false,
    storeDir: botStore(),
    extraPlugins: [testGuardPlugin],
    // The api plugin (which needs stats) serves the OpenAPI document the answers are checked against.
    plugins: {
      stats: { refresh_seconds: 600 },
      api: {},
      testguard: {},
      nickserv: { backend: 'atheme-jsonrpc', url: network.rpcUrl },
    },
  });
  for (const bot of [saslBot, rpcBot]) {
    const document = await fetch(`${bot.url}/api/openapi.json`);
    if (document.status !== 200) throw new Error(`${bot.config.irc.nick}: GET /api/openapi.json is ${document.status}`);
    validators.set(bot, new OpenApiValidator((await document.json()) as Record<string, unknown>));
  }
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await saslBot?.stop();
  await rpcBot?.stop();
  for (const dir of storeDirs) rmSync(dir, { recursive: true, force: true });
  await network?.stop();
});

const backends = (): [string, TestBot][] => [
  ['sasl', saslBot],
  ['atheme-jsonrpc', rpcBot],
];

t.test('right, wrong and unknown, and a grouped nick naming its account', async (t) => {
  for (const [name, bot] of backends()) {
    t.match(
      await check(bot, alice.account, alice.password),
      valid(alice.account, alice.account),
      `${name}: right password`,
    );
    t.match(
      await check(bot, alice.account.toUpperCase(), alice.password),
      valid(alice.account.toUpperCase(), alice.account),
      `${name}: any case`,
    );
    t.match(await check(bot, aliceAlt, alice.password), valid(aliceAlt, alice.account), `${name}: grouped nick`);
    t.match(await check(bot, bob.account, alice.password), invalid(bob.account), `${name}: wrong password`);
    t.match(await check(bot, `nobody${tag}`, 'whatever'), invalid(`nobody${tag}`), `${name}: unknown nick`);
  }
  t.match(saslBot.logs.join('\n'), /credential checks ready backend=sasl target=127\.0\.0\.1:\d+/);
  t.match(
    rpcBot.logs.join('\n'),
    /credential checks ready backend=atheme-jsonrpc target=http:\/\/127\.0\.0\.1:\d+\/jsonrpc/,
  );
});

t.test('bad requests: 401, 400, 413 and 415 as the contract says, the password never echoed', async (t) => {
  const servicesAsked = () =>
    [saslBot, rpcBot]
      .flatMap((bot) => bot.logs)
      .filter((line) => /credential check (answered|refused|unavailable)/.test(line)).length;
  const askedBefore = servicesAsked();
  for (const [name, bot] of backends()) {
    const json = { 'Content-Type': 'application/json', Authorization: 'Token bad-requests' };
    const noToken = await post(
      bot,
      { 'Content-Type': 'application/json' },
      JSON.stringify({ nick: alice.account, password: alice.password }),
    );
    t.equal(noToken.status, 401, `${name}: no token`);
    t.match(noToken.body, { error: { status: 401, code: 'unauthorized' } });

    const missing = await post(bot, json, JSON.stringify({ nick: alice.account }));
    t.equal(missing.status, 400, `${name}: no password`);
    t.match(missing.body, {
      error: { status: 400, code: 'invalid_body', details: [{ field: '/password', message: 'is required' }] },
    });
    const spaced = await post(bot, json, JSON.stringify({ nick: `bad nick${tag}`, password: alice.password }));
    t.equal(spaced.status, 400, `${name}: a nick with a space`);
    t.match(spaced.body, { error: { code: 'invalid_body', details: [{ field: '/nick' }] } });
    const broken = await post(bot, json, `{"nick": "${alice.account}", "password": "${alice.password}"`);
    t.equal(broken.status, 400, `${name}: not JSON`);
    t.match(broken.body, { error: { code: 'invalid_body', message: 'The body is not valid UTF-8 JSON' } });
    for (const answer of [spaced, broken]) {
      t.notOk(JSON.stringify(answer.body).includes(alice.password), `${name}: the 400 does not echo the password`);
    }

    const huge = await post(
      bot,
      json,
      JSON.stringify({ nick: alice.account, password: alice.password, padding: 'x'.repeat(20 * 1024) }),
    );
    t.equal(huge.status, 413, `${name}: over the body limit`);
    t.match(huge.body, { error: { status: 413, code: 'payload_too_large' } });

    const text = await post(
      bot,
      { 'Content-Type': 'text/plain', Authorization: 'Token bad-requests' },
      JSON.stringify({ nick: alice.account, password: alice.password }),
    );
    t.equal(text.status, 415, `${name}: not application/json`);
    t.match(text.body, { error: { status: 415, code: 'unsupported_media_type' } });
  }
  t.equal(servicesAsked(), askedBefore, 'none of them reached the handler, so services were not asked');
});

t.test('20 concurrent checks are all answered correctly', async (t) => {
  for (const [name, bot] of backends()) {
    const cases: { nick: string; password: string; expected: Expected }[] = [];
    for (let i = 0; i < 4; i++) {
      cases.push({ nick: alice.account, password: alice.password, expected: valid(alice.account, alice.account) });
      cases.push({ nick: bob.account, password: bob.password, expected: valid(bob.account, bob.account) });
      cases.push({ nick: aliceAlt, password: alice.password, expected: valid(aliceAlt, alice.account) });
      cases.push({ nick: carol.account, password: `${carol.password}-${i}`, expected: invalid(carol.account) });
      cases.push({ nick: `ghost${i}${tag}`, password: 'nothing', expected: invalid(`ghost${i}${tag}`) });
    }
    const started = Date.now();
    const answers = await Promise.all(cases.map(({ nick, password }) => check(bot, nick, password, `burst-${name}`)));
    answers.forEach((answer, index) => t.match(answer, cases[index]!.expected, `${name}: check ${index + 1}`));
    t.comment(`${name}: 20 checks in ${Date.now() - started} ms`);
  }
  // carol's four failures must not linger into the brute-force test.
  for (const [, bot] of backends())
    t.match(await check(bot, carol.account, carol.password), valid(carol.account, carol.account));
});

t.test('16 concurrent right passwords for one nick are all valid', async (t) => {
  for (const [name, bot] of backends()) {
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => check(bot, alice.account, alice.password, `same-nick-${name}`)),
    );
    answers.forEach((answer, index) =>
      t.match(answer, valid(alice.account, alice.account), `${name}: check ${index + 1}`),
    );
  }
});

t.test('10 right and 10 wrong at once for one nick: the right ones valid, then the limit engages', async (t) => {
  for (const [name, bot] of backends()) {
    // The right ones reach the bot first: the wrong ones are sent once it has all ten.
    const rightReceived = requestsReceived(10);
    const right = Array.from({ length: 10 }, () => check(bot, dave.account, dave.password, `mixed-${name}`));
    await rightReceived;
    const wrongSent = Array.from({ length: 10 }, (_, i) =>
      check(bot, dave.account, `wrong-${i}-${name}`, `mixed-${name}`),
    );
    const answers = await Promise.all([...right, ...wrongSent]);
    answers
      .slice(0, 10)
      .forEach((answer, index) => t.match(answer, valid(dave.account, dave.account), `${name}: right ${index + 1}`));
    const wrong = answers.slice(10);
    const judged = wrong.filter((answer) => answer.status === 200);
    const refused = wrong.filter((answer) => answer.status === 429);
    t.equal(judged.length + refused.length, 10, `${name}: each wrong one is judged or refused`);
    judged.forEach((answer) => t.match(answer, invalid(dave.account)));
    t.ok(judged.length >= 5, `${name}: at least five judged (${judged.length})`);
    t.ok(refused.length >= 1, `${name}: the limit engaged (${refused.length} refused)`);
    refused.forEach((answer) => t.match(answer.body, { error: { code: 'rate_limited' } }));
    const after = await check(bot, dave.account, dave.password, `mixed-${name}`);
    t.equal(after.status, 429, `${name}: and it holds for the right password too, from that caller`);
    t.match(
      await check(bot, dave.account, dave.password, `after-${name}`),
      valid(dave.account, dave.account),
      `${name}: another token still checks it: the guesser did not lock the owner out`,
    );
  }
});

t.test('the checker’s connections never become users: not in the collector, not in connect notices', async (t) => {
  const observer = await client(`nsobs${tag}`, network.hubPort);
  const opered = observer.waitFor('381', { timeout: 10000, what: 'OPER' });
  observer.send(`OPER ${network.operName} ${network.operPass}`);
  await opered;
  observer.send(`MODE ${observer.nick} +s +cC`);
  await observer.request('PING snomask', 'PONG');
  const notices: string[] = [];
  observer.onLine = (message: IrcMessage) => {
    if (message.command === 'NOTICE' && /CONNECT:/.test(message.params.at(-1) ?? ''))
      notices.push(message.params.at(-1)!);
  };

  // Everyone who is or was on the network besides the checker: the model so far, both bots, our clients.
  const known = new Set(
    [...[...saslBot.host.model.users.all()].map((user) => user.nick), rpcBot.host.irc.state.nick, observer.nick].map(
      (nick) => saslBot.host.model.fold(nick),
    ),
  );
  const seen = new Set<string>();
  let syncs = 0;
  let onSync: (() => void) | null = null;
  const off = saslBot.host.model.on('change', (change: ModelChange) => {
    if (change.slice === 'users' && change.name) seen.add(saslBot.host.model.fold(change.name));
    if (change.kind === 'synced') {
      syncs++;
      onSync?.();
    }
  });
  t.teardown(off);

  // Checks in waves until the collector has synced twice while they ran; a control user joins meanwhile.
  // How many waves fit in two syncs depends on timing, so the answers are judged once, all together:
  // the number of assertions must not depend on the speed of the machine.
  const control = `nsctl${tag}`;
  const wrong: { nick: string; status: number; body: Record<string, unknown> }[] = [];
  let checks = 0;
  let controlClient: Promise<IrcClient> | null = null;
  const syncsBefore = syncs;
  const wavesUntil = Date.now() + 60_000;
  while (syncs < syncsBefore + 2) {
    if (Date.now() > wavesUntil) throw new Error(`the collector synced ${syncs - syncsBefore} times in 60 s, not 2`);
    const asked = [
      [alice.account, alice.password],
      [bob.account, bob.password],
      [aliceAlt, alice.password],
      [carol.account, carol.password],
    ] as const;
    const wave = await Promise.all(asked.map(([nick, password]) => check(saslBot, nick, password, 'collector')));
    wave.forEach((answer, index) => {
      if (answer.body.valid !== true) wrong.push({ nick: asked[index]![0], status: answer.status, body: answer.body });
    });
    checks += wave.length;
    controlClient ??= client(control, network.hubPort);
  }
  t.same(wrong, [], `all ${checks} checks made while the collector synced were answered valid`);
  await controlClient;
  // One more sync after the control user is surely registered.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no sync within 15 s after the control user registered')), 15000);
    onSync = () => {
      clearTimeout(timer);
      onSync = null;
      resolve();
    };
  });
  t.comment(`${checks} checks during ${syncs - syncsBefore} syncs`);

  const fold = (nick: string) => saslBot.host.model.fold(nick);
  t.ok(saslBot.host.model.users.get(control), 'the control user is in the model: the collector does see new users');
  const strangers = [...seen].filter((nick) => !known.has(nick) && nick !== fold(control));
  t.same(strangers, [], 'no other user entered the model while the checks ran');
  t.same(
    notices.filter((notice) => !notice.includes(`${control}!`)),
    [],
    'no connect notice other than the control user’s',
  );
  t.ok(
    notices.some((notice) => notice.includes(`${control}!`)),
    'the control user’s connect notice arrived: the oracle works',
  );
  const lusers = await observer.request('LUSERS', '266');
  const users = lusers.find((line) => line.command === '251')?.params.at(-1) ?? '';
  t.match(users, /There are \d+ users/, 'LUSERS answers');
});

t.test('the sixth failure for one nick is 429 for that caller, while another caller and nick still work', async (t) => {
  for (const [name, bot] of backends()) {
    for (let i = 1; i <= 5; i++) {
      t.match(
        await check(bot, carol.account, `guess-${i}`, `brute-${name}`),
        invalid(carol.account),
        `${name}: failure ${i}`,
      );
    }
    const refused = await check(bot, carol.account, carol.password, `brute-${name}`);
    t.equal(refused.status, 429, `${name}: the sixth is refused, even with the right password`);
    t.match(refused.body, { error: { code: 'rate_limited' } });
    t.ok(
      Number(refused.retryAfter) > 0 && Number(refused.retryAfter) <= 900,
      `${name}: Retry-After ${refused.retryAfter}`,
    );
    t.match(
      await check(bot, carol.account, carol.password, `other-${name}`),
      valid(carol.account, carol.account),
      `${name}: not for another token`,
    );
    t.match(
      await check(bot, bob.account, bob.password, `brute-${name}`),
      valid(bob.account, bob.account),
      `${name}: bob still works`,
    );
  }
});

t.test('services stopped: 503 unavailable, never "valid: false"; back when they return', async (t) => {
  await network.stopServer('atheme');
  try {
    for (const [name, bot] of backends()) {
      for (const [nick, password] of [
        [alice.account, alice.password],
        [bob.account, 'wrong'],
      ] as const) {
        const answer = await check(bot, nick, password, `down-${name}`);
        t.equal(answer.status, 503, `${name}: ${nick} is 503`);
        t.match(answer.body, { error: { code: 'unavailable', message: /^The nickname service cannot answer: / } });
      }
    }
    t.match(
      saslBot.logs.join('\n'),
      /credential check unavailable: services split .*servers=services\.test\.net/,
      'the collector saw the services server split off, so the sasl checks did not even try',
    );
  } finally {
    await network.startServer('atheme');
  }
  for (const [name, bot] of backends()) {
    t.match(
      await check(bot, alice.account, alice.password, `back-${name}`),
      valid(alice.account, alice.account),
      `${name}: back`,
    );
  }
});

t.test('the passwords appear in no log line and not in the store file', async (t) => {
  const bots = [saslBot, rpcBot];
  for (const bot of bots) await bot.stop();
  for (const bot of bots) {
    const lines = bot.logs.filter((line) => passwords.some((password) => line.includes(password)));
    t.same(lines, [], `${bot.config.irc.nick}: no log line holds a password`);
    t.notOk(
      bot.logs.some((line) => line.includes('[redacted]')),
      'not even masked: never written',
    );
    // The plugin persists nothing, so with these plugins the store may not write a file at all;
    // whatever the store directory holds (file, backup, temporary) is searched.
    const dir = path.dirname(bot.config.store.path);
    const stored = readdirSync(dir).map((name) => readFileSync(path.join(dir, name), 'utf8'));
    t.notOk(
      stored.some((text) => passwords.some((password) => text.includes(password))),
      `${bot.config.irc.nick}: no file of the store (${stored.length} files) holds a password`,
    );
  }
});

t.test('every answer matched the OpenAPI document, errors included', async (t) => {
  const statuses = new Set(checkedStatuses);
  for (const status of [200, 400, 401, 413, 415, 429, 503])
    t.ok(statuses.has(status), `${status} answers were checked`);
  t.comment(`${checkedStatuses.length} answers checked`);
});
