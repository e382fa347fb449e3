/**
 * API tokens on the real test network: created over IRC by a logged-in account,
 * approved per endpoint by an administrator, used over HTTP, revoked; refused to
 * non-admins and nick-spoofers; kept across a restart of the bot; never written
 * to the log or the store; rate limited. The real token guard also stands in
 * front of the credential check. Every HTTP answer is checked against the
 * OpenAPI document the bot serves.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { IrcClient } from '../support/irc-client.js';
import { askBot, eventually, startBot, type TestBot } from '../support/bot.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { OpenApiValidator } from '../plugins/api/fixtures/openapi-validator.js';
import { durablePathOf } from '../../lib/store/store.js';
import { storedText } from '../support/stored.js';

const tag = Math.random().toString(36).slice(2, 6);
const botAccount = `tokbot${tag}`;
const adminAccount = `tadmin${tag}`;
const userAccount = `tuser${tag}`;
const otherAccount = `tother${tag}`;
const password = 'token-test-pass';
/** A wrong password for the credential check: it must not reach any log line either. */
const wrongPassword = `wrong-${tag}-guess`;
const userNick = `tu${tag}`;

let network: TestNetwork;
let bot: TestBot;
let storeDir: string;
/** Built from the running bot's /api/openapi.json at each launch. */
let validator: OpenApiValidator;
/** The status of every answer checked against the OpenAPI document. */
const checkedStatuses: number[] = [];
const clients: IrcClient[] = [];
/** Every secret handed out, to look for in logs and the store. */
const secrets: string[] = [];
/** Log lines of bots that were stopped. */
const earlierLogs: string[] = [];

interface Created {
  id: number;
  secret: string;
}
let userToken: Created;
let secondToken: Created;

async function client(nick: string, account?: string): Promise<IrcClient> {
  const irc = new IrcClient({
    port: network.leafPort,
    nick,
    ...(account ? { sasl: { account, password } } : {}),
  });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  if (account && result.sasl !== '903') throw new Error(`${nick} could not log in as ${account}: ${result.saslText}`);
  return irc;
}

const ask = (irc: IrcClient, text: string, last: RegExp): Promise<string[]> => askBot(irc, bot, text, last);

const ANSWERED = /Copy it now|already holds|not logged in|Permission denied/;

async function createToken(irc: IrcClient, label: string): Promise<Created> {
  const replies = await ask(irc, `TOKEN CREATE ${label}`, ANSWERED);
  const match = /^Token #(\d+) .*created: (ntd_[A-Za-z0-9_-]{43})$/.exec(replies[0] ?? '');
  if (!match) throw new Error(`TOKEN CREATE answered ${JSON.stringify(replies)}`);
  secrets.push(match[2]!);
  return { id: Number(match[1]), secret: match[2]! };
}

/** One request to the bot's API; the answer, headers included, must match the OpenAPI document. */
async function api(pathname: string, authorization?: string, init: RequestInit = {}) {
  const response = await fetch(bot.url + pathname, {
    ...init,
    headers: {
      ...(authorization === undefined ? {} : { Authorization: authorization }),
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
  });
  const text = await response.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  const problems = validator.check(init.method ?? 'GET', pathname, response.status, parsed, response.headers);
  if (problems.length > 0) throw new Error(`the answer does not match the OpenAPI document: ${problems.join('; ')}`);
  checkedStatuses.push(response.status);
  const body = parsed as Record<string, unknown> & { error?: { code: string; message: string } };
  return { status: response.status, headers: response.headers, body };
}

const withToken = (created: Created) => `Token ${created.secret}`;

/** The text of every store file: the tokens live in the durable one and its journal. */
const storeFiles = (): string => storedText(bot.config.store.path);

async function whenSynced(): Promise<void> {
  await eventually(() => bot.host.model.ready, 'the bot to finish its first sync', 30000);
}

async function launch(tokens: Record<string, unknown>): Promise<void> {
  bot = await startBot(network, {
    nick: botAccount,
    sasl: { account: botAccount, password },
    admins: [adminAccount],
    storeDir,
    plugins: { stats: { refresh_seconds: 600 }, api: {}, tokens, nickserv: {} },
  });
  const document = await fetch(`${bot.url}/api/openapi.json`);
  if (document.status !== 200) throw new Error(`GET /api/openapi.json answered ${document.status}`);
  validator = new OpenApiValidator((await document.json()) as Record<string, unknown>);
  await whenSynced();
}

const tokenPaths = () => [
  '/api/irc/users/',
  `/api/irc/users/${userNick}/`,
  '/api/irc/opers/',
  `/api/irc/opers/${bot.host.irc.state.nick}/`,
];

t.before(async () => {
  network = await startTestNetwork();
  for (const account of [botAccount, adminAccount, userAccount, otherAccount]) {
    await registerAccount(network, { account, password });
  }
  storeDir = mkdtempSync(path.join(tmpdir(), 'tokens-integration-'));
  // Online before the bot's first sync, so the bot's WHO sees them.
  await client(userNick, userAccount);
  await launch({});
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await bot?.stop();
  await network?.stop();
  if (storeDir) rmSync(storeDir, { recursive: true, force: true });
});

t.test(
  'the state table end to end: create → 403 → grant irc.users → 200 there, 403 elsewhere → revoke → 401',
  async (t) => {
    const user = clients[0]!;
    const admin = await client(`ta${tag}`, adminAccount);

    const replies = await ask(user, 'TOKEN CREATE integration', ANSWERED);
    t.match(replies[0], /#\d+ .*ntd_/, 'the reply carries the id and the full secret');
    t.match(replies[1], /shown only this once/);
    t.match(replies[1], /reaches no endpoint until an administrator approves it/);
    const match = /^Token #(\d+) "integration" created: (ntd_[A-Za-z0-9_-]{43})$/.exec(replies[0] ?? '');
    t.ok(match, 'the reply names the token #<id>');
    userToken = { id: Number(match![1]), secret: match![2]! };
    secrets.push(userToken.secret);

    for (const pathname of [...tokenPaths(), '/api/staff/tokens/']) {
      const { status, body } = await api(pathname, withToken(userToken));
      t.equal(status, 403, `${pathname}: 403 before any grant`);
      t.equal(body.error?.code, 'forbidden');
    }

    const granted = await ask(admin, `TOKEN GRANT #${userToken.id} irc.users`, /may now call|Permission|Nothing/);
    t.match(granted.at(-1), new RegExp(`Token #${userToken.id} may now call irc.users`));

    const list = await api('/api/irc/users/', withToken(userToken));
    t.equal(list.status, 200, 'irc.users is approved');
    t.equal(list.headers.get('cache-control'), 'private, no-store');
    const results = list.body.results as Record<string, unknown>[];
    const entry = results.find((item) => item.nick === userNick);
    t.ok(entry, 'the user is listed');
    t.equal(entry?.account, userAccount, 'with the account the collector saw');
    t.match(entry?.hostmask, new RegExp(`^${userNick}!~?tester@`), 'and the hostmask');
    t.equal(entry?.ip, '127.0.0.1', 'an operator bot sees the IP');
    const searched = await api(`/api/irc/users/?search=${userAccount}`, withToken(userToken));
    t.same(
      (searched.body.results as { nick: string }[]).map((item) => item.nick),
      [userNick],
      'search matches the account',
    );

    const detail = await api(`/api/irc/users/${userNick}/`, withToken(userToken));
    t.equal(detail.status, 403, '/api/irc/users/{nick}/ is still not approved');
    t.match(detail.body.error?.message, /not approved for irc.user/);
    for (const pathname of tokenPaths().slice(2))
      t.equal((await api(pathname, withToken(userToken))).status, 403, pathname);

    const info = await ask(user, `TOKEN INFO ${userToken.id}`, /uses:/);
    t.match(info.join('\n'), /uses: irc.users 2/, 'uses are counted per endpoint');

    const revoked = await ask(user, `TOKEN REVOKE #${userToken.id}`, /revoked/);
    t.match(revoked.at(-1), /is revoked: every request with it now gets 401/);
    for (const pathname of [...tokenPaths(), '/api/staff/tokens/']) {
      const { status, headers, body } = await api(pathname, withToken(userToken));
      t.equal(status, 401, `${pathname}: 401 once revoked`);
      t.equal(headers.get('www-authenticate'), 'Token');
      t.equal(body.error?.code, 'unauthorized');
    }
    // Every use of a revoked token is a 401, on a path that needs none too (as DRF's TokenAuthentication does).
    const publicWithRevoked = await api('/api/irc/stats/', withToken(userToken));
    t.equal(publicWithRevoked.status, 401, 'a public path presented the revoked token: 401');
    t.equal((await api('/api/irc/stats/')).status, 200, 'the same path without it: 200');
  },
);

t.test('missing and malformed Authorization headers are 401', async (t) => {
  for (const [what, header] of [
    ['missing', undefined],
    ['another scheme', 'Bearer abc'],
    ['Token with nothing', 'Token'],
    ['malformed token', 'Token ntd_short'],
    ['unknown token', `Token ntd_${'x'.repeat(43)}`],
  ] as const) {
    const { status, headers, body } = await api('/api/irc/users/', header);
    t.equal(status, 401, what);
    t.equal(headers.get('www-authenticate'), 'Token', `${what}: WWW-Authenticate`);
    t.equal(body.error?.code, 'unauthorized');
  }
});

t.test('a non-admin cannot grant; a nick-spoofer cannot grant', async (t) => {
  const user = clients[0]!;
  secondToken = await createToken(user, 'second');
  const other = await client(`to${tag}`, otherAccount);
  const refused = await ask(other, `TOKEN GRANT ${secondToken.id} irc.*`, ANSWERED);
  t.match(
    refused.at(-1),
    new RegExp(`Permission denied: TOKEN GRANT is for administrators, and the account ${otherAccount}`),
  );
  const own = await ask(user, `TOKEN GRANT ${secondToken.id} irc.*`, ANSWERED);
  t.match(own.at(-1), /Permission denied/, 'nor may the owner approve their own token');
  const notTheirs = await ask(other, `TOKEN REVOKE ${secondToken.id}`, /no token|revoked/);
  t.match(notTheirs.at(-1), new RegExp(`account ${otherAccount} has no token #${secondToken.id}`));

  // The administrator's account name as a nick, without logging in to it.
  const spoofer = await client(adminAccount);
  const spoofed = await ask(spoofer, `TOKEN GRANT ${secondToken.id} irc.*`, ANSWERED);
  t.match(spoofed.at(-1), /not logged in/, 'a spoofer is told to identify first');
  const spoofedList = await ask(spoofer, 'TOKEN LIST ALL', ANSWERED);
  t.match(spoofedList.at(-1), /not logged in/);

  t.equal((await api('/api/irc/users/', withToken(secondToken))).status, 403, 'still approved for nothing');
});

t.test('a staff token manages tokens over HTTP, in the same audit log', async (t) => {
  const admin = await client(`tb${tag}`, adminAccount);
  const staffToken = await createToken(admin, 'staff');
  const marked = await ask(admin, `TOKEN STAFF ${staffToken.id} ON`, /staff token|Permission/);
  t.match(marked.at(-1), /is now a staff token/);
  const patched = await api(`/api/staff/tokens/${secondToken.id}/`, withToken(staffToken), {
    method: 'PATCH',
    body: JSON.stringify({ grant: ['irc.users', 'irc.user'] }),
  });
  t.equal(patched.status, 200);
  t.same(patched.body.endpoints, ['irc.users', 'irc.user']);
  const detail = await api(`/api/irc/users/${userNick}/`, withToken(secondToken));
  t.equal(detail.status, 200, 'the staff grant took effect');
  t.equal(detail.body.nick, userNick);
  t.equal(detail.body.account, userAccount);
  const audit = await ask(admin, `TOKEN AUDIT ${secondToken.id}`, /grant/);
  t.match(
    audit.join('\n'),
    new RegExp(`#${secondToken.id} grant irc.users, irc.user by ${adminAccount} with staff token #${staffToken.id}`),
  );
  const list = await api('/api/staff/tokens/?ordering=-id', withToken(staffToken));
  t.equal(list.status, 200, 'the staff token lists every token');
  t.same(
    (list.body.results as { id: number }[]).map((item) => item.id).filter((id) => id === secondToken.id),
    [secondToken.id],
  );
  t.notOk(JSON.stringify(list.body).includes('ntd_'), 'never with a secret');
  const one = await api(`/api/staff/tokens/${secondToken.id}/`, withToken(staffToken));
  t.equal(one.status, 200);
  t.match(one.body, { id: secondToken.id, owner: userAccount, endpoints: ['irc.users', 'irc.user'] });
  t.ok((one.body.audit as unknown[]).length >= 2, 'with its audit log');
  const unknown = await api('/api/staff/tokens/999999/', withToken(staffToken));
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error?.code, 'token_not_found');
  const badGrant = await api(`/api/staff/tokens/${secondToken.id}/`, withToken(staffToken), {
    method: 'PATCH',
    body: JSON.stringify({ grant: ['irc.nothing'] }),
  });
  t.equal(badGrant.status, 400, 'an unknown endpoint name is refused');
  t.equal(badGrant.body.error?.code, 'invalid_body');

  const doomed = await createToken(admin, 'doomed');
  const deleted = await api(`/api/staff/tokens/${doomed.id}/`, withToken(staffToken), { method: 'DELETE' });
  t.equal(deleted.status, 200, 'DELETE revokes and answers the token');
  t.match(deleted.body, { id: doomed.id, is_active: false, revoked_at: String });
  t.equal((await api('/api/irc/users/', withToken(doomed))).status, 401, 'the revoked token is refused');
});

t.test(
  'the token guard in front of the credential check: 403 → grant irc.check_credentials → valid and invalid → revoke → 401',
  async (t) => {
    const owner = await client(`tk${tag}`, otherAccount);
    const admin = await client(`td${tag}`, adminAccount);
    const checker = await createToken(owner, 'checker');
    const checkWith = (secret: Created, guess: string) =>
      api('/api/irc/check-credentials/', withToken(secret), {
        method: 'POST',
        body: JSON.stringify({ nick: userAccount, password: guess }),
      });
    const asked = () => bot.logs.filter((line) => /credential check (answered|refused|unavailable)/.test(line));

    const refused = await checkWith(checker, password);
    t.equal(refused.status, 403, 'a live token without the grant is refused');
    t.equal(refused.body.error?.code, 'forbidden');
    t.match(refused.body.error?.message, new RegExp(`Token #${checker.id} is not approved for irc.check_credentials`));
    t.same(asked(), [], 'the guard refused it before services were asked');

    const granted = await ask(
      admin,
      `TOKEN GRANT ${checker.id} irc.check_credentials`,
      /may now call|Permission|Nothing|unknown/i,
    );
    t.match(granted.at(-1), new RegExp(`Token #${checker.id} may now call irc.check_credentials`));

    const right = await checkWith(checker, password);
    t.equal(right.status, 200, 'granted: the check is answered');
    t.equal(right.headers.get('cache-control'), 'private, no-store');
    t.same(right.body, { nick: userAccount, valid: true, account: userAccount, reason: null }, 'right password');
    const wrong = await checkWith(checker, wrongPassword);
    t.equal(wrong.status, 200);
    t.same(wrong.body, { nick: userAccount, valid: false, account: null, reason: null }, 'wrong password');
    t.equal(asked().length, 2, 'services were asked twice');
    t.equal(
      (await api('/api/irc/users/', withToken(checker))).status,
      403,
      'the grant covers irc.check_credentials only',
    );

    const revoked = await ask(owner, `TOKEN REVOKE #${checker.id}`, /revoked|no token/);
    t.match(revoked.at(-1), /is revoked/);
    const after = await checkWith(checker, password);
    t.equal(after.status, 401, 'revoked: 401');
    t.equal(after.headers.get('www-authenticate'), 'Token');
    t.equal(after.body.error?.code, 'unauthorized');
    t.equal(asked().length, 2, 'and services were not asked again');
  },
);

t.test('tokens, grants and the audit log survive a restart; no secret in the store or the log', async (t) => {
  earlierLogs.push(...bot.logs);
  await bot.stop();
  const stored = storeFiles();
  for (const secret of secrets) t.notOk(stored.includes(secret), `the store files do not hold ${secret.slice(0, 8)}…`);
  t.match(
    readFileSync(durablePathOf(bot.config.store.path), 'utf8'),
    /"secret_sha256"/,
    'the durable file holds hashes',
  );

  await launch({
    opers_are_admins: true,
    rate_limit: { public: { capacity: 8, refill_per_second: 0.05 }, token: { capacity: 10, refill_per_second: 0.05 } },
  });
  t.equal(
    (await api(`/api/irc/users/${userNick}/`, withToken(secondToken))).status,
    200,
    'a granted endpoint still answers',
  );
  t.equal((await api('/api/irc/opers/', withToken(secondToken))).status, 403, 'an ungranted one is still refused');
  t.equal((await api('/api/irc/users/', withToken(userToken))).status, 401, 'the revoked token stays revoked');

  const admin = await client(`tc${tag}`, adminAccount);
  const list = await ask(admin, 'TOKEN LIST ALL', new RegExp(`#${userToken.id} "integration"|no tokens|Permission`));
  const all = list.join('\n') + (await ask(admin, `TOKEN INFO ${secondToken.id}`, /uses:/)).join('\n');
  t.match(all, new RegExp(`#${secondToken.id} "second" of ${userAccount}: active; endpoints: irc.users, irc.user`));
  const audit = (await ask(admin, 'TOKEN AUDIT', new RegExp(`#${secondToken.id} grant`))).join('\n');
  t.match(audit, new RegExp(`#${userToken.id} grant irc.users by ${adminAccount}`), 'the audit log was kept');
  t.match(audit, new RegExp(`#${userToken.id} revoke by ${userAccount}`));
  const next = await createToken(clients[0]!, 'after restart');
  t.ok(next.id > secondToken.id + 1, 'ids are never reused');
});

t.test(
  'opers_are_admins: an IRC operator logged in to an account may grant; one without an account may not',
  async (t) => {
    const oper = await client(`top${tag}`, otherAccount);
    const opered = oper.waitFor('381', { what: 'RPL_YOUREOPER' });
    oper.send(`OPER ${network.operName} ${network.operPass}`);
    await opered;
    const granted = await ask(
      oper,
      `TOKEN GRANT ${secondToken.id} irc.opers`,
      /may now call|Permission|not logged in|Nothing/,
    );
    t.match(granted.at(-1), /may now call irc.opers/, 'an operator with an account is an administrator');
    t.equal((await api('/api/irc/opers/', withToken(secondToken))).status, 200);

    const anonymous = await client(`tan${tag}`);
    const anonymousOpered = anonymous.waitFor('381', { what: 'RPL_YOUREOPER' });
    anonymous.send(`OPER ${network.operName} ${network.operPass}`);
    await anonymousOpered;
    const refused = await ask(anonymous, `TOKEN DENY ${secondToken.id} irc.opers`, ANSWERED);
    t.match(refused.at(-1), /not logged in/, 'an operator without an account is not');
    const other = await client(`tnop${tag}`, otherAccount);
    const notOper = await ask(other, `TOKEN DENY ${secondToken.id} irc.opers`, ANSWERED);
    t.match(notOper.at(-1), /Permission denied/, 'the same account without operator status is not either');
  },
);

t.test('rate limits answer 429 with Retry-After', async (t) => {
  let limited: Awaited<ReturnType<typeof api>> | undefined;
  for (let attempt = 0; attempt < 12 && !limited; attempt++) {
    const answer = await api(`/api/irc/users/${userNick}/`, withToken(secondToken));
    if (answer.status === 429) limited = answer;
    else {
      t.equal(answer.status, 200);
      t.equal(answer.headers.get('ratelimit-limit'), '10');
    }
  }
  t.ok(limited, 'the token bucket (10) ran out');
  t.equal(limited?.body.error?.code, 'rate_limited');
  t.match(limited?.headers.get('retry-after'), /^\d+$/);
  t.ok(Number(limited?.headers.get('retry-after')) >= 1);
  t.equal(limited?.headers.get('ratelimit-remaining'), '0');

  let publicLimited: Awaited<ReturnType<typeof api>> | undefined;
  for (let attempt = 0; attempt < 10 && !publicLimited; attempt++) {
    const answer = await api('/api/irc/stats/');
    if (answer.status === 429) publicLimited = answer;
  }
  t.ok(publicLimited, 'the public bucket (8 per IP) ran out');
  t.ok(Number(publicLimited?.headers.get('retry-after')) >= 1, 'with Retry-After');
});

t.test('no secret appears in any log line or in the store file', async (t) => {
  await bot.host.store.flush();
  const stored = storeFiles();
  const logs = [...earlierLogs, ...bot.logs];
  t.ok(logs.length > 50, 'there are log lines to look at');
  t.ok(secrets.length >= 4);
  for (const secret of secrets) {
    t.notOk(
      logs.some((line) => line.includes(secret)),
      `no log line holds ${secret.slice(0, 8)}…`,
    );
    t.notOk(stored.includes(secret), `the store files do not hold ${secret.slice(0, 8)}…`);
  }
  // The logger masks anything shaped like a token (and the bot's own passwords), so the checks above
  // would pass even if code logged a secret: nothing may have been masked at all.
  t.same(
    logs.filter((line) => line.includes('[redacted]')),
    [],
    'no log line is masked: nothing tried to log a secret',
  );
  for (const word of [password, wrongPassword]) {
    t.notOk(
      logs.some((line) => line.includes(word)) || stored.includes(word),
      `no log line and not the store holds the password ${word.slice(0, 6)}…`,
    );
  }
});

t.test('every answer matched the OpenAPI document, errors included', async (t) => {
  const statuses = new Set(checkedStatuses);
  for (const status of [200, 401, 403, 429]) t.ok(statuses.has(status), `${status} answers were checked`);
  t.ok(checkedStatuses.length > 40, `${checkedStatuses.length} answers checked`);
});
