/**
 * The account's API tokens and the admin panel, in the real host with a fake Anope RPC server: a token
 * made on the web is the one over IRC (and back), its value is shown once, requests reach the admin panel,
 * approvals and revocations take effect on the API at once and are in the one audit log with where they
 * came from; forged forms are refused; the admin panel is for administrators only; public pages do not
 * change.
 */
import t from 'tap';
import { storedText } from '../../support/stored.js';
import { ORIGIN, PASSWORD, startSite, textOf, type Browser, type Visit } from './support.js';

/** The new token's value on the page right after its creation. */
function secretOf(page: Visit): string {
  const secret = /<input id="token-secret" class="secret" readonly value="(ntd_[A-Za-z0-9_-]{43})"/.exec(
    page.text,
  )?.[1];
  if (!secret) throw new Error(`no token on the page: ${textOf(page.text).slice(0, 300)}`);
  return secret;
}

/** The create form's one-time id on the account page. */
function formIdOf(page: Visit): string {
  const id = /<input type="hidden" name="form" value="([A-Za-z0-9_-]{22})">/.exec(page.text)?.[1];
  if (!id) throw new Error(`no form id on the page: ${textOf(page.text).slice(0, 300)}`);
  return id;
}

async function createToken(browser: Browser, label: string): Promise<{ id: number; secret: string; page: Visit }> {
  const form = formIdOf(await browser.get('/network/account/'));
  const page = await browser.post('/network/account/tokens/', { label, form });
  const id = Number(/Token #(\d+)/.exec(textOf(page.text))?.[1]);
  return { id, secret: secretOf(page), page };
}

t.test('a token from creation to revocation: web and IRC, owner and administrator', async (t) => {
  // On disk: the test reads the store's file at the end.
  const { bot, browser } = await startSite(t, { store: 'files' });
  const alice = browser();
  await alice.signIn('alice');
  const { id, secret, page } = await createToken(alice, 'ci <bot>');
  t.equal(page.status, 200, 'the value is on the answer to the form, not behind a redirect');
  t.equal(page.headers['cache-control'], 'no-store');
  t.match(page.text, /<h1>Token created<\/h1>/);
  t.match(textOf(page.text), /Token #1 “ci <bot>” is created\./, 'the label, escaped');
  t.match(page.text, /“ci &lt;bot&gt;”/);
  t.match(textOf(page.text), /Copy it now: it is shown only this once\./);
  t.match(textOf(page.text), /an administrator must approve each one/);
  t.match(page.text, /<button type="button" data-copy="token-secret" hidden>Copy<\/button>/, 'a copy button for JS');
  const settings = await alice.get('/network/account/');
  t.notOk(settings.text.includes(secret), 'never shown again');
  t.match(settings.text, /<td>#1 “ci &lt;bot&gt;”<\/td>/);
  t.match(textOf(settings.text), /#1 “ci <bot>” \d{4}-\d\d-\d\d \d\d:\d\d never none none active/);

  const asToken = { Authorization: `Token ${secret}` };
  t.equal((await bot.inject('GET', '/api/irc/users/', asToken)).status, 403, 'a new token reaches no endpoint');

  const listed = await bot.say('alice', 'alice', 'TOKEN LIST');
  t.match(listed.join('\n'), /#1 "ci <bot>" of alice: active; endpoints: none/, 'the web token over IRC');
  await bot.say('alice', 'alice', 'TOKEN CREATE from-irc');
  t.match((await alice.get('/network/account/')).text, /<td>#2 “from-irc”<\/td>/, 'the IRC token on the web');

  const requested = await alice.post(`/network/account/tokens/${id}/request/`, { endpoint: 'irc.users' });
  t.equal(requested.status, 303);
  t.equal(requested.headers.location, '/network/account/');
  const after = await alice.get('/network/account/');
  t.match(textOf(after.text), /Requested irc\.users for token #1: an administrator must approve it\./);
  const choices = /<select id="request-1" name="endpoint">(.*?)<\/select>/.exec(after.text)?.[1] ?? '';
  t.match(choices, /<option value="irc\.opers">/, 'the other endpoints may be requested');
  t.notMatch(choices, /value="irc\.users"/, 'not the one waiting already');

  const boss = browser();
  t.equal((await boss.signIn('boss', PASSWORD, { next: '/network/admin/' })).headers.location, '/network/admin/');
  const panel = await boss.get('/network/admin/');
  t.equal(panel.status, 200);
  t.equal(panel.headers['cache-control'], 'no-store');
  t.match(
    textOf(panel.text),
    /Endpoints owners asked for \(1\) .* #1 “ci <bot>” alice irc\.users List of connected users, including hostmasks Approve irc\.users for token #1 Decline/,
  );
  const approved = await boss.post(`/network/admin/tokens/${id}/grant/`, { endpoint: 'irc.users' });
  t.equal(approved.status, 303);
  t.equal(approved.headers.location, '/network/admin/');
  t.match(textOf((await boss.get('/network/admin/')).text), /Token #1 may now call irc\.users\./);
  const users = await bot.inject('GET', '/api/irc/users/', asToken);
  t.equal(users.status, 200, 'approved on the API at once');
  t.match(textOf((await alice.get('/network/account/')).text), /#1 “ci <bot>” .* irc\.users none active/);

  const withdrawn = await boss.post(`/network/admin/tokens/${id}/withdraw/`, { endpoint: 'irc.users' });
  t.equal(withdrawn.status, 303);
  t.equal((await bot.inject('GET', '/api/irc/users/', asToken)).status, 403, 'withdrawn at once');
  await boss.post(`/network/admin/tokens/${id}/grant/`, { endpoint: 'irc.users' });

  const revoked = await alice.post(`/network/account/tokens/${id}/revoke/`);
  t.equal(revoked.status, 303);
  t.match(
    textOf((await alice.get('/network/account/')).text),
    /Token #1 is revoked: every request with it now gets 401\./,
  );
  t.equal((await bot.inject('GET', '/api/irc/users/', asToken)).status, 401, 'revoked at once');

  await boss.get('/network/admin/');
  await boss.post('/network/admin/tokens/2/revoke/');
  t.match(
    textOf((await boss.get('/network/admin/')).text),
    /Token #2 is revoked/,
    'an administrator revokes any token',
  );

  const audit = await boss.get('/network/admin/audit/');
  t.equal(audit.status, 200);
  t.match(
    textOf(audit.text),
    new RegExp(
      [
        '#2 revoke none Boss website',
        '#1 revoke none alice website',
        '#1 grant irc\\.users Boss website',
        '#1 deny irc\\.users Boss website',
        '#1 grant irc\\.users Boss website',
        '#1 request irc\\.users alice website',
        '#2 create none alice IRC',
        '#1 create none alice website',
      ].join('.*'),
    ),
    'the one audit log, newest first, who did it (the account as services name it) and from where',
  );
  const ircAudit = await bot.say('boss', 'boss', 'TOKEN AUDIT');
  t.match(ircAudit.join('\n'), /#1 grant irc\.users by Boss on the website/, 'the same log over IRC');

  await bot.host.store.persisted();
  const durable = storedText(bot.config.store.path);
  t.notOk(durable.includes(secret) || bot.logs.join('\n').includes(secret), 'the value is neither stored nor logged');
});

t.test("a staff token's changes over HTTP are in the admin panel's audit log", async (t) => {
  const { bot, browser } = await startSite(t);
  const [line] = await bot.say('carol', 'carol', 'TOKEN CREATE ops');
  const staffSecret = /created: (ntd_\S+)$/.exec(line ?? '')![1]!;
  await bot.say('alice', 'alice', 'TOKEN CREATE laptop');
  await bot.say('boss', 'boss', 'TOKEN STAFF 1 ON');
  const patched = await bot.inject(
    'PATCH',
    '/api/staff/tokens/2/',
    { Authorization: `Token ${staffSecret}` },
    { grant: ['netstats.*'] },
  );
  t.equal(patched.status, 200);
  const boss = browser();
  await boss.signIn('boss');
  const audit = await boss.get('/network/admin/audit/');
  t.match(
    textOf(audit.text),
    /#2 grant netstats\.\* carol staff API \(token #1\), 127\.0\.0\.1 .*#1 staff on boss IRC/,
  );
});

t.test('the audit log is paged, newest first', async (t) => {
  // 30 tokens in a day: more than a day allows by default.
  const { bot, browser } = await startSite(t, { tokens: { max_created_per_day: 30 } });
  for (let index = 1; index <= 30; index++) {
    await bot.say('alice', 'alice', `TOKEN CREATE t${index}`);
    await bot.say('alice', 'alice', `TOKEN REVOKE ${index}`);
  }
  const boss = browser();
  await boss.signIn('boss');
  const first = await boss.get('/network/admin/audit/');
  const rows = (html: string) => [...html.matchAll(/<tr><td>[^<]*<\/td><td>#(\d+)<\/td><td>(\w+)<\/td>/g)];
  t.equal(rows(first.text).length, 50);
  t.same(rows(first.text)[0]!.slice(1), ['30', 'revoke'], 'the newest first');
  t.match(first.text, /<a href="\/network\/admin\/audit\/\?offset=50" rel="next">Older<\/a>/);
  const second = await boss.get('/network/admin/audit/?offset=50');
  t.equal(rows(second.text).length, 10);
  t.same(rows(second.text).at(-1)!.slice(1), ['1', 'create'], 'the oldest last');
  t.match(second.text, /<a href="\/network\/admin\/audit\/" rel="prev">Newer<\/a>/);
  t.match(textOf(second.text), /The audit log: 60 entries/);
});

t.test('forged forms are refused: no CSRF token, a wrong one, a foreign Origin, a cross-site fetch', async (t) => {
  const { bot, browser } = await startSite(t);
  const alice = browser();
  await alice.signIn('alice');
  await alice.get('/network/account/');
  const forged: [string, Record<string, string | null>, Record<string, string>][] = [
    ['no CSRF token, a foreign Origin', { csrf: null }, { Origin: 'http://evil.example' }],
    ['no CSRF token, no Origin', { csrf: null }, {}],
    ['a wrong CSRF token', { csrf: 'A'.repeat(43) }, { Origin: ORIGIN }],
    ['the right token from another origin', {}, { Origin: 'http://localhost:8081' }],
    ['the right token, Origin: null', {}, { Origin: 'null' }],
    ['the right token, a cross-site fetch', {}, { 'Sec-Fetch-Site': 'cross-site' }],
    ['the cookie as the token', { csrf: alice.cookie }, { Origin: ORIGIN }],
  ];
  for (const [what, fields, headers] of forged) {
    const refused = await alice.post('/network/account/tokens/', { label: 'forged', ...fields }, headers);
    t.equal(refused.status, 403, what);
    t.match(refused.text, /<h1>Form refused<\/h1>/);
  }
  t.same(
    (await bot.say('alice', 'alice', 'TOKEN LIST'))[0],
    'The account alice has no tokens.',
    'none of them made a token',
  );
  t.equal(bot.logs.filter((line) => /form refused path=\/network\/account\/tokens\//.test(line)).length, forged.length);
  t.match(bot.logs.join('\n'), /form refused path=\/network\/account\/tokens\/ why=foreign-origin ip=127\.0\.0\.1/);
  const form = formIdOf(await alice.get('/network/account/'));
  const withoutOrigin = await alice.post('/network/account/tokens/', { label: 'old browser', form }, {});
  t.equal(withoutOrigin.status, 200, 'no Origin (an old browser), the right token: taken');
  const noCookie = browser();
  noCookie.csrf = alice.csrf;
  const cookieless = await noCookie.post('/network/account/sign-in/', { account: 'alice', password: PASSWORD });
  t.equal(cookieless.status, 403, 'a sign-in without the form’s cookie (login CSRF)');
  t.match(textOf(cookieless.text), /without the cookie of this site/);
});

t.test(
  'public_origin: forms must come from it; on https, the cookie is Secure even when the bot sees HTTP',
  async (t) => {
    const { browser } = await startSite(t, { account: { public_origin: 'https://irc.example.net' } });
    const visitor = browser();
    const page = await visitor.get('/network/account/');
    t.match(
      page.headers['set-cookie'],
      /^__Host-network_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
      'a proxy that did not say https (no trust_proxy): the public origin does',
    );
    const local = await visitor.post('/network/account/sign-in/', { account: 'alice', password: PASSWORD });
    t.equal(local.status, 403, 'the Host the bot sees is not the public origin');
    const right = await visitor.post(
      '/network/account/sign-in/',
      { account: 'alice', password: PASSWORD },
      { Origin: 'https://IRC.example.net' },
    );
    t.equal(right.status, 303);
  },
);

t.test('the admin panel is for administrators: anyone else gets 403 and changes nothing', async (t) => {
  const { bot, browser } = await startSite(t);
  await bot.say('bob', 'bob', 'TOKEN CREATE bobs');
  const anonymous = await browser().get('/network/admin/');
  t.equal(anonymous.status, 403);
  t.match(anonymous.text, /<h1>Administrators only<\/h1>/);
  t.match(anonymous.text, /href="\/network\/account\/\?next=%2Fnetwork%2Fadmin%2F"/, 'a way to sign in');
  t.equal(anonymous.headers['cache-control'], 'no-store');
  t.equal((await browser().get('/network/admin/audit/')).status, 403);

  const alice = browser();
  await alice.signIn('alice');
  const panel = await alice.get('/network/admin/');
  t.equal(panel.status, 403, 'signed in, not an administrator');
  t.match(textOf(panel.text), /The account alice is not an administrator/);
  t.notMatch(panel.text, /bobs|>bob</, "no owner's account shows");
  t.equal((await alice.get('/network/admin/audit/')).status, 403);
  const grant = await alice.post('/network/admin/tokens/1/grant/', { endpoint: 'irc.users' });
  t.equal(grant.status, 403);
  const revoke = await alice.post('/network/admin/tokens/1/revoke/');
  t.equal(revoke.status, 403);
  t.match((await bot.say('bob', 'bob', 'TOKEN LIST')).join('\n'), /#1 "bobs" of bob: active; endpoints: none/);
  t.notMatch((await alice.get('/network/account/')).text, /Admin panel/, 'no link to it either');
  t.match(bot.logs.join('\n'), /admin form refused path=\/network\/admin\/tokens\/1\/grant\/ account=alice/);

  const evil = await browser().signIn('alice', PASSWORD, { next: 'https://evil.example/' });
  t.equal(evil.headers.location, '/network/account/', 'a sign-in leads nowhere but the account pages');

  const boss = browser();
  await boss.signIn('boss');
  t.match((await boss.get('/network/account/')).text, /<a href="\/network\/admin\/">Admin panel<\/a>/);
  const bossPanel = await boss.get('/network/admin/');
  t.match(textOf(bossPanel.text), /#1 “bobs” bob /, 'owners show to administrators');
});

t.test('refusals of the rules come back as a notice on the page', async (t) => {
  const { bot, browser } = await startSite(t);
  const alice = browser();
  await alice.signIn('alice');
  await bot.say('bob', 'bob', 'TOKEN CREATE bobs');
  await alice.get('/network/account/');
  await alice.post('/network/account/tokens/1/revoke/');
  t.match(
    (await alice.get('/network/account/')).text,
    /<p class="notice problem" role="alert">The account alice has no token #1\.<\/p>/,
    "not alice's token",
  );
  const form = formIdOf(await alice.get('/network/account/'));
  await alice.post('/network/account/tokens/', { label: 'x'.repeat(65), form });
  t.match(textOf((await alice.get('/network/account/')).text), /A label has at most 64 characters; this one has 65\./);
  t.match((await bot.say('bob', 'bob', 'TOKEN LIST')).join('\n'), /#1 "bobs" of bob: active/);
});

t.test('the create form sent again makes no second token: a reload, a double click; a forged one none', async (t) => {
  const { bot, browser } = await startSite(t);
  const alice = browser();
  await alice.signIn('alice');
  const bob = browser();
  await bob.signIn('bob');
  const settings = await alice.get('/network/account/');
  const form = formIdOf(settings);
  t.not(formIdOf(await alice.get('/network/account/')), form, 'each page has a form id of its own');

  const first = await alice.post('/network/account/tokens/', { label: 'ci', form });
  t.equal(first.status, 200);
  t.match(textOf(first.text), /Token #1 “ci” is created\./);
  const reload = await alice.post('/network/account/tokens/', { label: 'ci', form });
  t.equal(reload.status, 303, 'a reload of the answer goes back to the account page');
  t.equal(reload.headers.location, '/network/account/');
  t.notMatch(reload.text, /ntd_/, 'no value on it');
  const after = textOf((await alice.get('/network/account/')).text);
  t.match(after, /This form was sent already, and made token #1: no second token was made\./);
  t.match(after, /if you did not copy it, revoke #1 and make another\./);
  t.notMatch(after, /#2/, 'one token');
  t.match((await bot.say('alice', 'alice', 'TOKEN LIST')).join('\n'), /#1 "ci" of alice: active/);

  // A double click: the two posts arrive together, and one token is made.
  const twice = formIdOf(await alice.get('/network/account/'));
  const answers = await Promise.all([
    alice.post('/network/account/tokens/', { label: 'twice', form: twice }),
    alice.post('/network/account/tokens/', { label: 'twice', form: twice }),
  ]);
  t.same(answers.map((answer) => answer.status).sort(), [200, 303], 'one made it, the other was sent back');
  const listed = (await bot.say('alice', 'alice', 'TOKEN LIST')).join('\n');
  t.match(listed, /#2 "twice" of alice: active/);
  t.notMatch(listed, /#3/, 'no third token');

  // A form that made no token may be sent again; one from another page makes its own.
  const refused = formIdOf(await alice.get('/network/account/'));
  await alice.post('/network/account/tokens/', { label: 'x'.repeat(65), form: refused });
  t.match(textOf((await alice.get('/network/account/')).text), /A label has at most 64 characters/);
  t.equal((await alice.post('/network/account/tokens/', { label: 'fixed', form: refused })).status, 200);
  const other = formIdOf(await alice.get('/network/account/'));
  t.equal((await alice.post('/network/account/tokens/', { label: 'other', form: other })).status, 200);
  t.match((await bot.say('alice', 'alice', 'TOKEN LIST')).join('\n'), /#3 "fixed" of alice[^]*#4 "other" of alice/);

  // A hand-made POST: without a form id, or with one this session was never shown, it makes no token.
  for (const [fields, why] of [
    [{ label: 'no id' }, /A token is made with the form on this page only: none was made\./],
    [{ label: 'bad id', form: 'not-an-id' }, /A token is made with the form on this page only/],
    [{ label: 'made up', form: 'A'.repeat(22) }, /That form has expired .*: no token was made\./],
    [{ label: "bob's", form: formIdOf(await bob.get('/network/account/')) }, /That form has expired/],
  ] as const) {
    const answer = await alice.post('/network/account/tokens/', fields);
    t.equal(answer.status, 303, `${fields.label}: sent back`);
    t.match(textOf((await alice.get('/network/account/')).text), why, `${fields.label}: and told why`);
  }
  t.notMatch((await bot.say('alice', 'alice', 'TOKEN LIST')).join('\n'), /#5/, 'none of them made a token');
});

t.test(
  'public pages: the same bytes signed in or not, and without the account plugin but for its menu entry',
  async (t) => {
    const withAccount = await startSite(t);
    const without = await startSite(t, { withoutAccount: true });
    const alice = withAccount.browser();
    await alice.signIn('alice');
    for (const path of ['/network/api/', '/network/servers/', '/network/channel/%23nosuch/']) {
      const plain = await without.bot.inject('GET', path);
      const anonymous = await withAccount.bot.inject('GET', path);
      const signedIn = await alice.get(path);
      const entry = '<li><a href="/network/account/">Account</a></li>';
      t.match(anonymous.text, `${entry}</ul></nav>`, `${path}: the menu ends with the account pages`);
      t.equal(anonymous.text.replace(entry, ''), plain.text, `${path}: else the same page with the account plugin`);
      t.equal(signedIn.text, anonymous.text, `${path}: the same page signed in (one answer for every reader)`);
      t.equal(signedIn.headers['cache-control'], plain.headers['cache-control'], 'cached alike');
      t.equal(signedIn.headers['set-cookie'], undefined, 'no cookie set by a public page');
    }
    t.notMatch(
      JSON.stringify((await withAccount.bot.inject('GET', '/api/openapi.json')).body),
      /\/network\/account|\/network\/admin/,
      'the pages are not in the OpenAPI document',
    );
  },
);
