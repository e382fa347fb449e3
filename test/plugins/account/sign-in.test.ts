/**
 * Signing in and out on the website, in the real host with a fake Anope RPC server: the cookie and its
 * attributes, one answer for a wrong password and an unknown account, the brute-force limit shared with
 * the credential check, services down, sessions kept hashed in the store across a restart, idle and
 * absolute expiry, sign-out at once, and nothing secret in the log.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { storedText } from '../../support/stored.js';
import { csrfToken } from '../../../plugins/account/csrf.js';
import { PASSWORD, startSite, textOf } from './support.js';

t.test('the sign-in page: a form in the site’s frame, a cookie for it, nothing a cache may keep', async (t) => {
  const { browser } = await startSite(t);
  const visitor = browser();
  const page = await visitor.get('/network/account/');
  t.equal(page.status, 200);
  t.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  t.equal(page.headers['cache-control'], 'no-store');
  t.equal(page.headers['x-frame-options'], 'DENY');
  t.match(page.headers['content-security-policy'], /frame-ancestors 'none'/);
  t.match(page.headers['content-security-policy'], /form-action 'self'/);
  t.match(page.text, /<a class="name" href="\/network\/">TestNet<\/a>/, 'in the website’s frame');
  t.match(page.text, /<h1>Sign in<\/h1>/);
  t.match(page.text, /<form class="stack" method="post" action="\/network\/account\/sign-in\/">/);
  t.match(page.text, /<label for="account">NickServ account or nick<\/label><input id="account" name="account"/);
  t.match(page.text, /<input id="password" name="password" type="password" autocomplete="current-password"/);
  t.match(
    page.headers['set-cookie'],
    /^network_session=[A-Za-z0-9_-]{43}; Path=\/network\/; HttpOnly; SameSite=Lax$/,
    'a cookie of the sign-in form: HttpOnly, SameSite=Lax, not Secure over plain HTTP',
  );
  t.equal(page.csrf, csrfToken(visitor.cookie!), "the form's token is made from the cookie");
  t.not(page.csrf, visitor.cookie, 'and is not the cookie');
  const again = await visitor.get('/network/account/');
  t.equal(again.headers['set-cookie'], undefined, 'a browser that has the cookie keeps it');
  t.equal(again.csrf, page.csrf);

  // A site served over HTTPS: the cookie takes the __Host- prefix, which no other host can set.
  const overTls = browser();
  overTls.secure = true;
  const tlsPage = await overTls.get('/network/account/');
  t.match(
    tlsPage.headers['set-cookie'],
    /^__Host-network_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/,
    'over HTTPS: __Host-, Path=/, Secure',
  );
  const tlsSignIn = await overTls.post(
    '/network/account/sign-in/',
    { account: 'alice', password: PASSWORD },
    { Origin: 'https://localhost' },
  );
  t.equal(tlsSignIn.status, 303, 'signed in over TLS (its origin is https://)');
  t.match(tlsSignIn.headers['set-cookie'], /^__Host-network_session=.*; Path=\/; .*; Secure$/, 'Secure over HTTPS');
  t.match((await overTls.get('/network/account/')).text, /Signed in as <strong>alice<\/strong>/);
  // A cookie of the plain name over HTTPS (one a sibling subdomain could have planted) is not read there.
  const planted = browser();
  planted.secure = true;
  planted.cookie = overTls.cookie;
  planted.cookieName = 'network_session';
  t.match((await planted.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'a planted network_session is ignored');
  const opened = await browser().get('/network/account/sign-in/');
  t.equal(opened.status, 303, 'the form’s address, opened, leads to the form');
  t.equal(opened.headers.location, '/network/account/');
});

t.test('a wrong password and an unknown account get the same answer; the right one signs in', async (t) => {
  // On disk: the test reads the store's file.
  const { bot, browser } = await startSite(t, { store: 'files' });
  const visitor = browser();
  const wrong = await visitor.signIn('alice', 'not-the-password');
  t.equal(wrong.status, 403);
  t.match(textOf(wrong.text), /The account or the password is wrong\./);
  t.match(wrong.text, /value="alice"/, 'the account is filled in again');
  const unknown = await visitor.signIn('nobody', 'not-the-password');
  t.equal(unknown.status, 403);
  t.equal(
    unknown.text.replace('value="nobody"', 'value="x"'),
    wrong.text.replace('value="alice"', 'value="x"'),
    'nothing tells an unknown account from a wrong password',
  );
  t.notOk(wrong.text.includes('not-the-password'), 'the password is not sent back');
  t.match((await visitor.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'not signed in');

  const nonce = visitor.cookie;
  const signedIn = await visitor.signIn('AliceAlt');
  t.equal(signedIn.status, 303);
  t.equal(signedIn.headers.location, '/network/account/');
  t.match(
    signedIn.headers['set-cookie'],
    /^network_session=[A-Za-z0-9_-]{43}; Path=\/network\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    'the session cookie lasts as long as the session may',
  );
  t.not(visitor.cookie, nonce, 'a sign-in starts a new id, never the one the browser had');
  const settings = await visitor.get('/network/account/');
  t.match(
    textOf(settings.text),
    /Signed in as alice Your API tokens Sign out Signed in as alice\./,
    'the account, not the nick typed',
  );
  t.match(settings.text, /<h1>Your API tokens<\/h1>/);
  t.equal(settings.headers['cache-control'], 'no-store', 'a signed-in page is never stored');
  t.notMatch(textOf((await visitor.get('/network/account/')).text), /Signed in as alice\./, 'shown once');

  const empty = await browser().signIn('alice', '');
  t.equal(empty.status, 400);
  t.match(textOf(empty.text), /Enter your NickServ account \(or nick\) and your password\./);

  await bot.host.store.persisted();
  const stored = storedText(bot.config.store.path);
  const id = visitor.cookie!;
  t.match(stored, createHash('sha256').update(id).digest('hex'), 'the store keeps the SHA-256 of the id');
  t.notOk(stored.includes(id), 'never the id');
  const log = bot.logs.join('\n');
  t.notOk(log.includes(id) || log.includes(nonce!), 'no cookie value in the log');
  t.notOk(log.includes(PASSWORD) || log.includes('not-the-password'), 'no password in the log');
  t.match(log, /signed in account=alice ip=127\.0\.0\.1/);
});

t.test('sign-in attempts count against the credential check’s limits, and say when to retry', async (t) => {
  const { bot, browser } = await startSite(t, { nickserv: { rate_limit: { max_failures_per_nick: 3 } } });
  const visitor = browser();
  for (let attempt = 1; attempt <= 3; attempt++) {
    t.equal((await visitor.signIn('bob', `guess-${attempt}`)).status, 403, `failure ${attempt}`);
  }
  const limited = await visitor.signIn('bob', PASSWORD);
  t.equal(limited.status, 429, 'the right password too, once the limit engaged');
  const wait = Number(limited.headers['retry-after']);
  t.ok(wait > 800 && wait <= 900, `Retry-After: ${wait}`);
  t.match(
    textOf(limited.text),
    new RegExp(
      `Too many failed sign-ins for this account or from your address\\. Try again in ${wait} s \\(about 15 minutes\\)\\.`,
    ),
  );
  t.equal((await browser().signIn('alice')).status, 303, 'another account is not limited');
  t.match(bot.logs.join('\n'), /credential check refused: too many failed checks for the nick nick=bob via=sign-in/);
});

t.test('services down: a clear 503 page, never a sign-in', async (t) => {
  const { rpc, browser } = await startSite(t);
  await rpc.close();
  const visitor = browser();
  const down = await visitor.signIn('alice');
  t.equal(down.status, 503);
  t.match(down.text, /<h1>Cannot check passwords right now<\/h1>/);
  t.match(textOf(down.text), /The bot cannot check passwords right now: the network's NickServ does not answer it\./);
  t.equal(down.headers['set-cookie'], undefined, 'no session');
  t.match((await visitor.get('/network/account/')).text, /<h1>Sign in<\/h1>/);
});

t.test('sign-out ends the session at once; an old cookie opens nothing', async (t) => {
  const { browser } = await startSite(t);
  const visitor = browser();
  await visitor.signIn('alice');
  const id = visitor.cookie!;
  await visitor.get('/network/account/');
  const out = await visitor.post('/network/account/sign-out/');
  t.equal(out.status, 303);
  t.equal(out.headers.location, '/network/account/?signed_out');
  t.equal(out.headers['set-cookie'], 'network_session=; Path=/network/; Max-Age=0; HttpOnly; SameSite=Lax');
  t.match(textOf((await visitor.get(out.headers.location!)).text), /You are signed out\./);
  const replay = browser();
  replay.cookie = id;
  t.match((await replay.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'the old id signs nobody in');
  replay.csrf = csrfToken(id);
  const posted = await replay.post('/network/account/tokens/', { label: 'after sign-out' });
  t.equal(posted.status, 403);
  t.match(textOf(posted.text), /You are not signed in: your session ended/);
});

t.test('idle for too long, or too old however busy: the session ends', async (t) => {
  let now = Date.parse('2026-11-21T10:00:00Z');
  const { browser, bot } = await startSite(t, {
    now: () => now,
    account: { session: { idle_seconds: 600, lifetime_seconds: 3600 } },
  });
  const idle = browser();
  await idle.signIn('alice');
  now += 599_000;
  t.match((await idle.get('/network/account/')).text, /Signed in as/, 'used within the idle time');
  now += 599_000;
  t.match((await idle.get('/network/account/')).text, /Signed in as/, 'each use starts the idle time again');
  now += 600_000;
  t.match((await idle.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'idle 10 minutes: ended');

  const busy = browser();
  await busy.signIn('bob');
  for (let minute = 1; minute < 60; minute += 5) {
    now += 5 * 60_000;
    const page = await busy.get('/network/account/');
    if (minute + 5 < 60) t.match(page.text, /Signed in as/, `${minute + 5} minutes after the sign-in`);
    else t.match(page.text, /<h1>Sign in<\/h1>/, 'an hour after the sign-in: ended, used or not');
  }
  t.match(bot.logs.join('\n'), /signed in account=bob/);
});

t.test('sessions survive a restart of the bot; the oldest goes past max_per_account', async (t) => {
  const first = await startSite(t, { account: { session: { max_per_account: 2 } }, store: 'files' });
  const [one, two, three] = [first.browser(), first.browser(), first.browser()];
  await one.signIn('alice');
  await two.signIn('alice');
  await three.signIn('alice');
  t.match((await one.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'the oldest of three ended');
  t.match((await two.get('/network/account/')).text, /Signed in as/);
  const form = /<input type="hidden" name="form" value="([A-Za-z0-9_-]{22})">/;
  const before = form.exec((await three.get('/network/account/')).text)?.[1];
  await first.bot.stop();

  const second = await startSite(t, { storeDir: first.bot.storeDir, rpc: first.rpc });
  const restored = second.browser();
  restored.cookie = three.cookie;
  const page = await restored.get('/network/account/');
  t.match(page.text, /Signed in as <strong>alice<\/strong>/, 'signed in after the restart');
  t.equal(page.csrf, csrfToken(three.cookie!), 'with the same forms');
  // The create form of a page shown before the restart has expired, and says so; the page's new one works.
  const expired = await restored.post('/network/account/tokens/', { label: 'after restart', form: before! });
  t.equal(expired.status, 303, 'a form shown before the restart makes no token');
  t.match(
    (await restored.get('/network/account/')).text,
    /That form has expired \(the bot restarted since the page was shown, or the page was too old\): no token was made\./,
    'and the page says plainly why',
  );
  const fresh = form.exec((await restored.get('/network/account/')).text)?.[1];
  const created = await restored.post('/network/account/tokens/', { label: 'after restart', form: fresh! });
  t.equal(created.status, 200, 'and the forms work');
});

t.test('a sign-in the store cannot save is refused, with no cookie', async (t) => {
  const { bot, browser } = await startSite(t);
  bot.durableWrites.fail(new Error('read-only file system'));
  const visitor = browser();
  const refused = await visitor.signIn('alice');
  t.equal(refused.status, 503);
  t.match(textOf(refused.text), /Your password is right, but the bot could not save your sign-in/);
  t.equal(refused.headers['set-cookie'], undefined);
  bot.durableWrites.fail(null);
  t.match((await visitor.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'not signed in');
});

t.test(
  'behind a trusted proxy: HTTPS as the proxy says makes the cookie Secure; the client it names is who tries',
  async (t) => {
    const { browser, bot } = await startSite(t, { http: { trust_proxy: '127.0.0.1' } });
    const visitor = browser();
    const forwarded = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '203.0.113.50' };
    await visitor.get('/network/account/', forwarded);
    const proxied = { Origin: 'https://localhost', ...forwarded };
    const signedIn = await visitor.post('/network/account/sign-in/', { account: 'alice', password: PASSWORD }, proxied);
    t.equal(signedIn.status, 303, 'signed in through the proxy');
    t.match(signedIn.headers['set-cookie'], /; Secure$/, 'Secure: the client came over HTTPS to the proxy');
    t.ok(
      bot.logs.some((line) => /credential check answered .*ip=203\.0\.113\.50/.test(line)),
      'the check names the client behind the proxy',
    );
    // Not from a trusted proxy: the same headers are the client's own words, and believed in nothing.
    const spoofer = browser();
    await spoofer.get('/network/account/');
    const direct = await bot.host.http.inject({
      method: 'POST',
      path: '/network/account/sign-in/',
      ip: '198.51.100.3',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Cookie: `${spoofer.cookieName}=${spoofer.cookie}`,
        ...proxied,
      },
      body: new URLSearchParams({ csrf: spoofer.csrf!, account: 'alice', password: PASSWORD }).toString(),
    });
    t.equal(direct.status, 403, 'an https Origin over plain HTTP from an untrusted peer is refused');
  },
);
