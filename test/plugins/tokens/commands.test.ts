/**
 * The TOKEN commands as conversations with the real host: the tokens plugin on the fake IRC connection
 * (private messages with the account tag), its store in memory, and the bot's NOTICE replies.
 */
import t from 'tap';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import type { TokensSlice } from '../../../plugins/tokens/model.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';

/** Stands in for the api plugin: the token routes an administrator may grant. */
const api = definePlugin({
  name: 'api',
  description: 'token routes to grant',
  configSchema: { type: 'object', properties: {} },
  start({ http }) {
    const routes: [name: string, path: string, summary: string][] = [
      ['irc.oper', '/api/irc/opers/:name/', 'Details of one operator'],
      ['irc.opers', '/api/irc/opers/', 'List of IRC operators'],
      ['irc.user', '/api/irc/users/:nick/', 'Details of one user'],
      ['irc.users', '/api/irc/users/', 'List of connected users'],
    ];
    for (const [name, path, summary] of routes) {
      http.route({ method: 'GET', path, name, summary, tier: 'token', handler: () => ({ body: {} }) });
    }
  },
});

/**
 * The tokens plugin with boss as administrator, at most `max` live tokens per account (`pacing`, the
 * config's `irc.pacing`, slows the bot's send queue).
 */
function withTokens(options: { max?: number; pacing?: { burst: number; interval_ms: number } } = {}): HarnessOptions {
  return {
    registry: [api, tokensPlugin] as PluginDefinition<never>[],
    plugins: { api: {}, tokens: { max_tokens_per_account: options.max ?? 10 } },
    admins: ['boss'],
    ...(options.pacing ? { config: { irc: { pacing: options.pacing } } } : {}),
  };
}

/** TOKEN CREATE as `account`, logged in to it: the new token's id and secret. */
async function create(bot: Harness, account: string, label = ''): Promise<{ id: number; secret: string }> {
  const replies = await bot.say(account, account, `TOKEN CREATE ${label}`);
  const match = /^Token #(\d+).* created: (ntd_\S+)$/.exec(replies[0] ?? '');
  if (!match) throw new Error(`no token in ${JSON.stringify(replies)}`);
  return { id: Number(match[1]), secret: match[2]! };
}

/** The bot's NOTICE answers to `nick` among the lines it wrote from line `from` on. */
function sentTo(bot: Harness, nick: string, from = 0): string[] {
  return bot.irc.sent
    .slice(from)
    .filter((line) => line.startsWith(`NOTICE ${nick} :`))
    .map((line) => line.slice(`NOTICE ${nick} :`.length));
}

t.test('every TOKEN command has usage and help text', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { host } = bot;
  const commands = host.commands.list().filter(({ plugin }) => plugin === 'tokens');
  t.ok(commands.length >= 10, 'the whole family is registered');
  for (const { definition } of commands) {
    t.type(definition.usage, 'string', `${definition.name} has usage text`);
    t.ok(definition.help.trim().length >= 20, `${definition.name} has help text`);
    t.match(definition.name, /^TOKEN( [A-Z]+)?$/);
    t.ok(Array.isArray(definition.args), `${definition.name} declares its arguments`);
  }
  // A command without them is refused at registration, so a plugin without them cannot start.
  t.throws(
    () => host.commands.register('tokens', { name: 'TOKEN FROB', usage: '', help: '', handle: () => undefined }),
    {
      message: /has no help text/,
    },
  );
});

t.test('TOKEN CREATE shows the secret once and says it reaches nothing yet', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say, logs } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  const replies = await say('alice', 'alice', 'TOKEN CREATE my laptop');
  t.match(replies[0], /#\d+ .*ntd_/);
  t.match(replies[0], /^Token #1 "my laptop" created: ntd_[A-Za-z0-9_-]{43}$/);
  t.match(replies[1], /shown only this once/);
  t.match(replies[1], /reaches no endpoint until an administrator approves it/);
  const secret = /ntd_\S+/.exec(replies[0]!)![0];
  t.equal(tokens.findBySecret(secret)?.owner, 'alice');
  t.notOk(logs.join('\n').includes(secret), 'the secret is not logged');
  const info = await say('alice', 'alice', 'TOKEN INFO #1');
  t.notOk(info.join('\n').includes(secret), 'nor shown again');
  t.match(info.join('\n'), /reaches no endpoint yet/);
});

t.test('labels: formatting is taken out, quotes cannot fake the rest of a listing, length in characters', async (t) => {
  const bot = await startHarness(t, withTokens({ max: 5 }));
  const { say } = bot;
  const tricky = await create(bot, 'alice', 'a" #7 of boss: active; endpoints: irc.*');
  const listed = (await say('alice', 'alice', `TOKEN INFO ${tricky.id}`)).join('\n');
  t.match(listed, /#1 "a\\" #7 of boss: active; endpoints: irc\.\*" of alice: active; endpoints: none/);
  const coloured = await say('alice', 'alice', 'TOKEN CREATE \x0304,01red\x03 \x02bold\x02 laptop');
  t.match(coloured[0], /^Token #2 "red bold laptop" created/, 'colours and bold are formatting, not text');
  t.match(
    (await say('alice', 'alice', '\x02TOKEN\x02 LIST'))[0],
    /alice has 2/i,
    'a command written in bold is the command',
  );
  t.match(
    (await say('alice', 'alice', `TOKEN CREATE ${'🔑'.repeat(64)}`))[0],
    /^Token #3 /,
    '64 emoji are 64 characters',
  );
  t.match((await say('alice', 'alice', `TOKEN CREATE ${'🔑'.repeat(65)}`))[0], /this one has 65/);
});

t.test('a secret that cannot reach its owner is revoked at once, never sent to the next holder', async (t) => {
  const bot = await startHarness(t, withTokens({ pacing: { burst: 1, interval_ms: 40 } }));
  const { irc, say, logs } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(alive));
  irc.send('PING', 'busy');
  await say('alice', 'alice', 'TOKEN CREATE laptop');
  // alice's nick goes to someone else while the answer waits in the queue.
  irc.receive(':alice!alice@users.test NICK :alice_away');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.notOk(
    irc.sent.some((line) => line.includes('ntd_')),
    'no secret was written',
  );
  const [token] = tokens.all();
  t.ok(token, 'the token was made');
  t.not(token!.revokedAt, null, 'and revoked');
  t.match(logs.join('\n'), /token revoked: its secret could not be delivered/);
  t.same(
    tokens.audit(token!.id).at(-1)!.actor,
    { account: null, via: 'system', reason: 'secret not delivered' },
    'by the bot, not by its owner',
  );
  await say('boss', 'boss', `TOKEN AUDIT ${token!.id}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.match(
    irc.sent.filter((line) => line.startsWith('NOTICE boss ')).at(-1),
    new RegExp(`#${token!.id} revoke by system \\(secret not delivered\\)$`),
    'TOKEN AUDIT shows so',
  );
});

t.test('an answer that confirms a change waits until the store has it on disk', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say, durableWrites } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  /** Send `command` with the store's write held: nothing may be answered until the write is done. */
  const heldUntilSaved = async (account: string, command: string): Promise<string[]> => {
    const write = durableWrites.hold();
    const asked = durableWrites.asked;
    const before = bot.irc.sent.length;
    const answers = say(account, account, command);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(durableWrites.asked, asked + 1, `${command} asked for a write`);
    t.same(sentTo(bot, account, before), [], `${command}: no answer while the write is under way`);
    write.release();
    return answers;
  };
  const created = await heldUntilSaved('alice', 'TOKEN CREATE held');
  t.equal(tokens.all().length, 1);
  t.match(created[0], /^Token #1 "held" created: ntd_/, 'the secret once the write is done');
  const changes: [string, string, RegExp][] = [
    ['boss', 'TOKEN GRANT 1 irc.users', /may now call irc\.users/],
    ['boss', 'TOKEN GRANT 1 irc.users', /already had irc\.users/],
    ['boss', 'TOKEN DENY 1 irc.users', /may no longer call irc\.users/],
    ['boss', 'TOKEN DENY 1 irc.users', /had none of irc\.users/],
    ['boss', 'TOKEN STAFF 1 ON', /is now a staff token/],
    ['boss', 'TOKEN STAFF 1 ON', /was already a staff token/],
    ['alice', 'TOKEN REVOKE 1', /is revoked/],
    ['alice', 'TOKEN REVOKE 1', /was already revoked/],
  ];
  for (const [account, command, answer] of changes) {
    t.match((await heldUntilSaved(account, command))[0], answer, `${command}: answered after the write`);
  }
  const asked = durableWrites.asked;
  for (const command of ['TOKEN INFO 1', 'TOKEN LIST', 'TOKEN GRANT 1 irc.nope', 'TOKEN AUDIT']) {
    await say('boss', 'boss', command);
  }
  t.equal(durableWrites.asked, asked, 'answers that neither change nor confirm a token do not wait for the store');
});

t.test('when the store cannot write: no secret, the new token revoked; other answers say NOT SAVED', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say, durableWrites, logs, irc } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  const { id } = await create(bot, 'alice');
  durableWrites.fail(new Error('ENOSPC: no space left on device'));

  const before = irc.sent.length;
  const created = await say('alice', 'alice', 'TOKEN CREATE doomed');
  t.match(created, [/^Your new token #2 could not be saved .* revoked at once and its secret is not shown/]);
  t.notOk(
    irc.sent.slice(before).some((line) => line.includes('ntd_')),
    'no secret was sent',
  );
  const doomed = tokens.get(2)!;
  t.not(doomed.revokedAt, null, 'the token that could not be saved is revoked in memory');
  t.same(tokens.audit(2).at(-1)!.actor, { account: null, via: 'system', reason: 'not saved' }, 'by the bot');
  t.match(logs.join('\n'), /a token change could not be saved command="?TOKEN CREATE"? token=#2 error="?ENOSPC/);

  const granted = await say('boss', 'boss', `TOKEN GRANT ${id} irc.users`);
  t.match(
    granted.join(' '),
    /^NOT SAVED: the bot could not write this to its store, so a restart may undo it\. Token #1 may now call irc\.users.* Send TOKEN GRANT again to save it/,
  );
  t.same(tokens.get(id)!.grants, ['irc.users'], 'the change holds in memory until a restart');
  const revoked = await say('alice', 'alice', `TOKEN REVOKE ${id}`);
  t.match(revoked.join(' '), /^NOT SAVED: .* Token #1 is revoked/);
  t.not(tokens.get(id)!.revokedAt, null, 'a revocation that could not be saved still holds: the token is refused');

  durableWrites.fail(null);
  t.match(
    await say('alice', 'alice', `TOKEN REVOKE ${id}`),
    [/^Token #1 was already revoked at /],
    'sent again once the store works, the command confirms what is now on disk',
  );
});

t.test('a client not logged in is told to identify first', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say } = bot;
  for (const command of ['TOKEN CREATE', 'TOKEN LIST', 'TOKEN INFO 1', 'TOKEN REVOKE 1', 'TOKEN GRANT 1 irc.users']) {
    t.match((await say('alice', null, command)).at(-1), /not logged in.*Identify to NickServ/, command);
  }
});

t.test(
  'where the IRC server knows no accounts (ircd 2.11), a TOKEN command says so, and who manages tokens',
  async (t) => {
    const bot = await startHarness(t, { ...withTokens(), version: '2.11.2p3', cap: false });
    t.equal(bot.host.irc.state.profile.accounts, false);
    for (const command of ['TOKEN CREATE', 'TOKEN LIST', 'TOKEN GRANT 1 irc.users']) {
      t.equal(
        (await bot.say('alice', null, command)).at(-1),
        `${command.split(' ').slice(0, 2).join(' ')} needs a NickServ account, and this network has no account services: ` +
          "its IRC server (ircd 2.11) knows no accounts. API tokens are managed by the bot's operator instead, on its " +
          'machine: irc-network-data token --help.',
        command,
      );
    }
    t.match(
      (await bot.say('alice', null, 'HELP')).at(-1),
      /need a NickServ account, and this network has no account services/,
    );
  },
);

t.test("TOKEN CREATE's refusals in words: the limit on live tokens, a label too long", async (t) => {
  const bot = await startHarness(t, withTokens({ max: 2 }));
  const { say } = bot;
  await create(bot, 'alice');
  await create(bot, 'alice');
  t.equal(
    (await say('alice', 'alice', 'TOKEN CREATE')).at(-1),
    'The account alice already holds 2 active tokens, the most allowed. Revoke one first (TOKEN LIST, then TOKEN REVOKE <id>).',
  );
  t.equal(
    (await say('bob', 'bob', `TOKEN CREATE ${'x'.repeat(65)}`))[0],
    'A label has at most 64 characters; this one has 65. Usage: TOKEN CREATE [label]',
  );
});

t.test('LIST, INFO and REVOKE: your own tokens only', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say } = bot;
  const mine = await create(bot, 'alice', 'a');
  const theirs = await create(bot, 'bob', 'b');
  const list = await say('alice', 'alice', 'TOKEN LIST');
  t.match(list[0], /account alice has 1 token \(1 active\)/);
  t.match(list[1], new RegExp(`#${mine.id} "a" of alice: active; endpoints: none; last used never`));
  t.notOk(list.join('\n').includes(`#${theirs.id}`));
  t.match((await say('alice', 'alice', `TOKEN INFO ${theirs.id}`))[0], /account alice has no token #2/);
  t.match((await say('alice', 'alice', `TOKEN REVOKE #${theirs.id}`))[0], /account alice has no token #2/);
  t.match(
    (await say('alice', 'alice', 'TOKEN LIST bob'))[0],
    /Permission denied: TOKEN LIST <account> is for administrators/,
  );
  t.match((await say('alice', 'alice', 'TOKEN LIST ALL'))[0], /Permission denied: TOKEN LIST ALL/);
  t.equal((await say('alice', 'alice', 'TOKEN LIST ALICE'))[0], 'The account alice has 1 token (1 active):');
  t.match((await say('alice', 'alice', 'TOKEN INFO'))[0], /Which token\? Usage: TOKEN INFO <id>/);
  t.match((await say('alice', 'alice', 'TOKEN INFO x1'))[0], /"x1" is not a token id/);
  const pasted = (await say('alice', 'alice', `TOKEN INFO ntd_${'a'.repeat(43)}`))[0];
  t.match(pasted, /^That is not a token id/);
  t.notOk(pasted?.includes('ntd_'), 'a pasted secret is not echoed');
  t.match(
    (await say('alice', 'alice', `TOKEN REVOKE ${mine.id}`))[0],
    /#1 is revoked: every request with it now gets 401/,
  );
  t.match((await say('alice', 'alice', `TOKEN REVOKE ${mine.id}`))[0], /#1 was already revoked/);
  t.match((await say('alice', 'alice', 'TOKEN LIST')).join('\n'), /#1 "a" of alice: revoked/);
});

t.test(
  'more arguments than a command takes are refused with its usage; a label takes the rest of the line',
  async (t) => {
    const bot = await startHarness(t, withTokens());
    const { say } = bot;
    const tokens = bot.slice<TokensSlice>('tokens');
    const first = await create(bot, 'alice');
    const second = await create(bot, 'alice');
    t.same(await say('alice', 'alice', `TOKEN REVOKE ${first.id} ${second.id}`), [
      'Too many arguments. Usage: TOKEN REVOKE <id>',
    ]);
    t.equal(tokens.get(first.id)!.revokedAt, null, 'nothing was revoked');
    t.equal(tokens.get(second.id)!.revokedAt, null);
    const refused: [string, string, string][] = [
      ['alice', `TOKEN INFO ${first.id} ${second.id}`, 'TOKEN INFO <id>'],
      ['alice', 'TOKEN LIST alice bob', 'TOKEN LIST [ALL|<account>]'],
      ['boss', `TOKEN STAFF ${first.id} ON now`, 'TOKEN STAFF <id> ON|OFF'],
      ['boss', 'TOKEN ENDPOINTS all', 'TOKEN ENDPOINTS'],
      ['boss', `TOKEN AUDIT ${first.id} ${second.id}`, 'TOKEN AUDIT [id]'],
    ];
    for (const [account, command, usage] of refused) {
      t.same(await say(account, account, command), [`Too many arguments. Usage: ${usage}`], command);
    }
    t.notOk(tokens.get(first.id)!.staff, 'nothing was marked staff');
    t.match((await say('alice', 'alice', 'TOKEN CREATE my old laptop'))[0], /^Token #3 "my old laptop" created/);
    t.match(
      (await say('boss', 'boss', `TOKEN GRANT ${first.id} irc.users irc.user`))[0],
      /may now call irc.users, irc.user/,
      'a list takes any number',
    );
  },
);

t.test('arguments are read in order before a command runs: the first one missing or refused is answered', async (t) => {
  const bot = await startHarness(t, withTokens());
  const tokens = bot.slice<TokensSlice>('tokens');
  const { id } = await create(bot, 'alice');
  const answers: [string, string][] = [
    ['TOKEN GRANT', 'Usage: TOKEN GRANT <id> <endpoint|irc.*|netstats.*>...'],
    ['TOKEN GRANT 99', 'Usage: TOKEN GRANT <id> <endpoint|irc.*|netstats.*>...'],
    ['TOKEN STAFF', 'Usage: TOKEN STAFF <id> ON|OFF'],
    [`TOKEN STAFF ${id}`, 'Usage: TOKEN STAFF <id> ON|OFF'],
    [`TOKEN STAFF ${id} maybe`, 'Usage: TOKEN STAFF <id> ON|OFF'],
    ['TOKEN STAFF 99 maybe', 'There is no token #99.'],
    ['TOKEN STAFF x1 maybe', '"x1" is not a token id. Usage: TOKEN STAFF <id> ON|OFF'],
    ['TOKEN AUDIT x1', '"x1" is not a token id. Usage: TOKEN AUDIT [id]'],
    ['TOKEN REVOKE', 'Which token? Usage: TOKEN REVOKE <id>'],
  ];
  for (const [command, answer] of answers) t.same(await bot.say('boss', 'boss', command), [answer], command);
  t.equal(tokens.audit().length, 1, 'nothing but the creation happened');
});

t.test('administrators grant, deny, mark staff, list all and revoke any token', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  const { id } = await create(bot, 'alice');
  t.match(
    (await say('boss', 'boss', `TOKEN GRANT #${id} irc.users`))[0],
    /#1 may now call irc.users; its endpoints: irc.users/,
  );
  t.same(tokens.get(id)!.grants, ['irc.users']);
  t.match((await say('boss', 'boss', `TOKEN GRANT ${id} irc.users`))[0], /already had irc.users/);
  t.match(
    (await say('boss', 'boss', `TOKEN GRANT ${id} irc.nope netstats.*`))[0],
    /Nothing granted: unknown endpoint irc.nope\. Valid names: irc.oper, irc.opers, irc.user, irc.users, irc.\*, netstats.\*/,
  );
  t.same(tokens.get(id)!.grants, ['irc.users'], 'all or nothing');
  t.match(
    (await say('boss', 'Boss', `TOKEN GRANT ${id} IRC.*`))[0],
    /may now call irc\.\*/,
    'names and accounts in any case',
  );
  t.match(
    (await say('boss', 'boss', `TOKEN DENY ${id} irc.user`))[0],
    /may no longer call irc.user \(irc.\* was replaced by the endpoints it covers now.*\); its endpoints: irc.users, irc.oper, irc.opers/,
  );
  t.match((await say('boss', 'boss', `TOKEN DENY ${id} irc.user`))[0], /had none of irc.user/);
  t.match((await say('boss', 'boss', `TOKEN DENY ${id} nope`))[0], /Nothing denied: unknown endpoint nope/);
  t.match(
    (await say('boss', 'boss', `TOKEN GRANT ${id}`))[0],
    /^Usage: TOKEN GRANT <id> <endpoint\|irc.\*\|netstats.\*>\.\.\.$/,
  );
  t.match((await say('boss', 'boss', 'TOKEN GRANT 99 irc.users'))[0], /There is no token #99/);
  t.match((await say('boss', 'boss', `TOKEN STAFF ${id} ON`))[0], /#1 is now a staff token/);
  t.match((await say('boss', 'boss', `TOKEN STAFF ${id} maybe`))[0], /Usage: TOKEN STAFF <id> ON\|OFF/);
  await create(bot, 'bob');
  const all = await say('boss', 'boss', 'TOKEN LIST ALL');
  t.match(all[0], /There are 2 tokens \(2 active\)/);
  t.match(all[1], /#1 of alice: active; endpoints: irc.users, irc.oper, irc.opers; staff/);
  const bobs = await say('boss', 'boss', 'TOKEN LIST BOB');
  t.equal(bobs[0], 'The account bob has 1 token (1 active):', 'the account as its tokens spell it, not as typed');
  t.match(bobs[1], /#2 of bob/);
  t.equal((await say('boss', 'boss', 'TOKEN LIST Nobody'))[0], 'The account Nobody has no tokens.');
  t.match((await say('boss', 'boss', `TOKEN INFO ${id}`))[0], /#1 of alice/);
  t.match((await say('boss', 'boss', 'TOKEN REVOKE 2'))[0], /#2 is revoked/);
  t.match((await say('boss', 'boss', 'TOKEN GRANT 2 irc.users'))[0], /#2 was revoked at .*cannot be changed/);
  const audit = await say('boss', 'boss', 'TOKEN AUDIT');
  t.match(audit[0], /^\d+ audit entries:/);
  t.match(audit.join('\n'), /#1 grant irc.users by boss/);
  t.match(audit.join('\n'), /#1 deny irc.user by boss/);
  t.match(audit.join('\n'), /#1 staff on by boss/);
  t.match(audit.join('\n'), /#2 revoke by boss/);
  const one = await say('boss', 'boss', 'TOKEN AUDIT #2');
  t.equal(one.length, 3, 'header, create, revoke');
  const endpoints = await say('boss', 'boss', 'TOKEN ENDPOINTS');
  t.match(endpoints.join('\n'), /irc.user — GET \/api\/irc\/users\/\{nick\}\/ — Details of one user/);
  t.match(endpoints.at(-1), /Wildcards: irc.\*, netstats.\*/);
});

t.test('a non-admin cannot grant, and neither can a nick-spoofer', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say, logs } = bot;
  const tokens = bot.slice<TokensSlice>('tokens');
  const { id } = await create(bot, 'alice');
  for (const command of [
    `TOKEN GRANT ${id} irc.users`,
    `TOKEN STAFF ${id} ON`,
    `TOKEN DENY ${id} irc.users`,
    'TOKEN AUDIT',
  ]) {
    t.match(
      (await say('alice', 'alice', command))[0],
      /Permission denied: TOKEN [A-Z]+ is for administrators/,
      command,
    );
  }
  // The administrator's nick, without being logged in to the administrator's account.
  t.match((await say('boss', null, `TOKEN GRANT ${id} irc.users`))[0], /not logged in/);
  t.match((await say('boss', 'mallory', `TOKEN GRANT ${id} irc.users`))[0], /Permission denied.*mallory/);
  t.same(tokens.get(id)!.grants, []);
  t.same(
    tokens.audit().map((entry) => entry.action),
    ['create'],
    'nothing but the creation was audited',
  );
  t.ok(logs.some((line) => /admin command refused/.test(line)));
  const before = logs.length;
  await say('alice', 'alice', 'TOKEN LIST whatever-Alice-typed');
  const refusal = logs.slice(before).join('\n');
  t.match(refusal, /admin command refused.*command="TOKEN LIST <account>".*account=alice/);
  t.notMatch(refusal, /whatever-Alice-typed/, 'what a non-administrator typed is not logged');
});

t.test('TOKEN alone, an unknown subcommand, and HELP TOKEN', async (t) => {
  const bot = await startHarness(t, withTokens());
  const { say } = bot;
  t.match((await say('alice', null, 'TOKEN'))[0], /TOKEN subcommands: CREATE, LIST/);
  t.match((await say('alice', null, 'token frob'))[0], /There is no subcommand TOKEN FROB/);
  const help = await say('alice', 'alice', 'HELP TOKEN');
  t.match(help[0], /^Usage: TOKEN <subcommand>/);
  t.ok(help.some((line) => /TOKEN CREATE \[label\]/.test(line)));
  t.notOk(
    help.some((line) => /TOKEN GRANT/.test(line)),
    'administrator commands are not offered to others',
  );
  const note =
    'You are not logged in: TOKEN CREATE, TOKEN LIST, TOKEN INFO and TOKEN REVOKE need a NickServ account. ' +
    'Identify to NickServ first (/msg NickServ IDENTIFY <account> <password>).';
  t.equal((await say('alice', null, 'HELP')).at(-1), note, 'HELP tells who is not logged in what needs an account');
  t.equal((await say('alice', null, 'HELP TOKEN')).at(-1), note, 'and so does HELP TOKEN');
  t.notOk(
    help.some((line) => line.includes('not logged in')),
    'not to who is logged in',
  );
  const grantHelp = await say('boss', 'boss', 'HELP TOKEN GRANT');
  t.match(grantHelp.join('\n'), /Usage: TOKEN GRANT <id>.*\nApproves endpoints.*\nOnly administrators/);
});
