/**
 * Accounts on the website in a real browser (headless chromium) against the bot on the real test network,
 * with real Atheme accounts checked over SASL: a wrong password is refused and the right one signs in; a
 * token created on the page is read from it, refused (403) until an administrator, signed in in a second
 * browser context, approves its endpoint (200), and dead once revoked (401); a forged form from another
 * origin is refused; a non-administrator gets 403 from the admin panel; sessions survive a restart of the
 * bot; the brute-force limit engages after repeated wrong passwords (in a browser with JavaScript off); and
 * axe-core finds no serious or critical violation on these pages. Screenshots of the account and admin
 * pages go to `.test-output/accounts/` (ACCOUNT_SHOTS names another folder).
 *
 * One network, one bot (restarted once) and one browser serve every step, in order. The bot is started
 * through test/support/website.ts, so this file runs once, on the default IRC client library.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { Browser, BrowserContext, HTTPResponse, Page } from 'puppeteer-core';
import { axeViolations } from '../support/axe.js';
import { launchBrowser } from '../support/browser.js';
import { findRepoRoot, registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';
import { eventually, startWebsiteBot, type TestBot } from '../support/website.js';

const tag = Math.random().toString(36).slice(2, 6);
const userAccount = `wuser${tag}`;
const adminAccount = `wadmin${tag}`;
const password = 'web-sign-in-pass';
const shots = process.env.ACCOUNT_SHOTS ?? path.join(findRepoRoot(), '.test-output', 'accounts');

let network: TestNetwork;
let bot: TestBot;
let storeDir: string;
let browser: Browser;
let forge: http.Server;
let forgeUrl: string;
let user: { context: BrowserContext; page: Page };
let admin: { context: BrowserContext; page: Page };
/** The token the user makes, as the page showed it. */
let token: { id: number; secret: string };

async function launch(): Promise<void> {
  bot = await startWebsiteBot(network, {
    admins: [adminAccount],
    storeDir,
    plugins: {
      stats: { refresh_seconds: 600 },
      api: {},
      // Every step below comes from 127.0.0.1: room for all of them in the public bucket.
      tokens: { rate_limit: { public: { capacity: 500, refill_per_second: 50 } } },
      // The default nickserv backend: SASL against the bot's own IRC server.
      nickserv: { rate_limit: { max_failures_per_nick: 3 } },
      web: { cache_seconds: 1 },
      account: {},
    },
  });
}

t.before(async () => {
  network = await startTestNetwork();
  for (const account of [userAccount, adminAccount]) await registerAccount(network, { account, password });
  storeDir = mkdtempSync(path.join(tmpdir(), 'accounts-integration-'));
  await launch();
  browser = await launchBrowser();
  fs.mkdirSync(shots, { recursive: true });
  // Another origin (the same host, another port: same-site, so a SameSite=Lax cookie goes along) whose page
  // posts a form to the bot as soon as it loads, without the CSRF token it cannot know.
  forge = http.createServer((request, response) => {
    const target = new URL(request.url ?? '/', 'http://forge').searchParams.get('target') ?? '';
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html lang="en"><head><title>A prize</title></head><body>` +
        `<form id="forged" method="post" action="${target.replace(/"/g, '&quot;')}">` +
        `<input name="label" value="forged"></form>` +
        `<script>document.getElementById('forged').submit()</script></body></html>`,
    );
  });
  await new Promise<void>((resolve) => forge.listen(0, '127.0.0.1', resolve));
  forgeUrl = `http://127.0.0.1:${(forge.address() as AddressInfo).port}/`;
});

t.teardown(async () => {
  await browser?.close();
  await new Promise((resolve) => (forge ? forge.close(resolve) : resolve(undefined)));
  await bot?.stop();
  await network?.stop();
  if (storeDir) rmSync(storeDir, { recursive: true, force: true });
});

/**
 * Console errors and page errors of every page a person opened, by page URL. The browser reports each
 * refused document (a 403 or 429 this test provokes) as "Failed to load resource"; those are the point.
 */
const consoleErrors: string[] = [];
function watch(page: Page): void {
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    if (/^Failed to load resource: the server responded with a status of (403|429)\b/.test(message.text())) return;
    consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${String(error)}`));
  page.on('response', (response) => {
    if (response.status() === 404) consoleErrors.push(`${page.url()}: 404 for ${response.url()}`);
  });
}

/**
 * A browser context of its own (its own cookies), with one page; JavaScript on unless told (axe-core needs
 * it: run it only in a page with JavaScript on).
 */
async function person(javascript = true): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  watch(page);
  await page.setJavaScriptEnabled(javascript);
  await page.setViewport({ width: 1280, height: 900 });
  return { context, page };
}

/** Click `selector` and wait for the page it leads to; the answer of the last request (after redirects). */
async function submit(page: Page, selector: string): Promise<HTTPResponse> {
  const [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(selector)]);
  if (!response) throw new Error(`clicking ${selector} loaded no page`);
  return response;
}

async function signIn(page: Page, account: string, secret: string): Promise<HTTPResponse> {
  await page.goto(`${bot.url}/network/account/`);
  await page.$eval('#account', (field, value) => ((field as unknown as { value: string }).value = value), account);
  await page.$eval('#password', (field, value) => ((field as unknown as { value: string }).value = value), secret);
  return submit(page, 'form[action="/network/account/sign-in/"] button[type="submit"]');
}

const heading = (page: Page): Promise<string> => page.$eval('h1', (element) => element.textContent ?? '');
const notice = (page: Page): Promise<string> =>
  page.$eval('.notice', (element) => element.textContent ?? '').catch(() => '');

async function shoot(page: Page, name: string, t: Test): Promise<void> {
  await page.screenshot({ path: path.join(shots, `${name}-1280.png`), fullPage: true });
  await page.setViewport({ width: 375, height: 800 });
  await page.screenshot({ path: path.join(shots, `${name}-375.png`), fullPage: true });
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
  t.ok(overflow <= 1, `${name}: nothing wider than a 375 px screen (${overflow} px over)`);
  await page.setViewport({ width: 1280, height: 900 });
}

/** A token endpoint called with the token, as a program would. */
async function callApi(secret: string): Promise<number> {
  const response = await fetch(`${bot.url}/api/irc/users/`, { headers: { Authorization: `Token ${secret}` } });
  await response.arrayBuffer();
  return response.status;
}

t.test('sign in: a wrong password is refused, the right one signs in', async (t) => {
  user = await person();
  const { page } = user;
  const wrong = await signIn(page, userAccount, 'not-the-password');
  t.equal(wrong.status(), 403, 'refused');
  t.equal(await notice(page), 'The account or the password is wrong.');
  t.equal(await heading(page), 'Sign in');
  t.same(await axeViolations(page), [], 'the sign-in page: axe-core finds nothing serious or critical');

  const right = await signIn(page, userAccount, password);
  t.equal(right.status(), 200);
  t.equal(new URL(page.url()).pathname, '/network/account/', 'back on the account page after the 303');
  t.equal(await heading(page), 'Your API tokens');
  t.match(await page.$eval('nav.bar', (element) => element.textContent), `Signed in as ${userAccount}`);
  t.equal(right.headers()['cache-control'], 'no-store');
  const cookies = await user.context.cookies();
  const session = cookies.find((cookie) => cookie.name === 'network_session');
  t.match(session, { httpOnly: true, sameSite: 'Lax', path: '/network/' }, 'the session cookie');
});

t.test('create a token and read it from the page; its endpoint answers 403', async (t) => {
  const { page } = user;
  await page.$eval('#label', (field) => ((field as unknown as { value: string }).value = 'browser test'));
  const created = await submit(page, 'form[action="/network/account/tokens/"] button[type="submit"]');
  t.equal(created.status(), 200, 'the answer to the form is the page with the token');
  t.equal(await heading(page), 'Token created');
  const secret = await page.$eval('#token-secret', (field) => (field as unknown as { value: string }).value);
  t.match(secret, /^ntd_[A-Za-z0-9_-]{43}$/);
  const id = Number(/Token #(\d+)/.exec(await notice(page))?.[1]);
  token = { id, secret };
  t.ok(id > 0, `token #${id}`);
  t.equal(
    await page.$eval('[data-copy]', (button) => (button as unknown as { hidden: boolean }).hidden),
    false,
    'a Copy button',
  );
  await user.context.overridePermissions(new URL(bot.url).origin, ['clipboard-read', 'clipboard-sanitized-write']);
  await page.bringToFront();
  await page.click('[data-copy]');
  await page.waitForFunction(`document.getElementById('copy-status').textContent !== ''`);
  t.equal(await page.$eval('#copy-status', (element) => element.textContent), 'Copied.');
  t.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'it copies the token');
  t.same(await axeViolations(page), [], 'the new token’s page: nothing serious or critical');
  t.notOk(
    bot.logs.some((line) => line.includes(secret)),
    'the token is not in the log',
  );

  t.equal(await callApi(secret), 403, 'a new token reaches no endpoint');

  await page.goto(`${bot.url}/network/account/`);
  t.notOk((await page.content()).includes(secret), 'never shown again');
  await page.select(`#request-${id}`, 'irc.users');
  await submit(page, `form[action="/network/account/tokens/${id}/request/"] button`);
  t.match(await notice(page), `Requested irc.users for token #${id}: an administrator must approve it.`);
  t.same(await axeViolations(page), [], 'the account page: nothing serious or critical');
  await shoot(page, 'account', t);
});

t.test('an administrator, in a second browser context, approves the endpoint: 200', async (t) => {
  admin = await person();
  const { page } = admin;
  await signIn(page, adminAccount, password);
  const panel = await page.goto(`${bot.url}/network/admin/`);
  t.equal(panel?.status(), 200);
  t.equal(await heading(page), 'Admin panel');
  const pending = await page.$$eval('table', (tables) => tables[0]?.querySelector('tbody')?.textContent ?? '');
  t.match(pending, new RegExp(`#${token.id} “browser test”${userAccount}irc\\.users`), 'the request is there');
  t.same(await axeViolations(page), [], 'the admin panel: nothing serious or critical');
  await shoot(page, 'admin', t);
  await submit(page, `form[action="/network/admin/tokens/${token.id}/grant/"]:has(input[value="irc.users"]) button`);
  t.match(await notice(page), `Token #${token.id} may now call irc.users.`);
  await eventually(
    () => bot.host.model.ready,
    () =>
      `the bot’s first sync; its log said:\n` +
      bot.logs.filter((line) => /\b(INFO|WARN|ERROR)\s+\[(stats|irc)\]/.test(line)).join('\n'),
    30000,
  );
  t.equal(await callApi(token.secret), 200, 'approved: the endpoint answers');

  await page.goto(`${bot.url}/network/admin/audit/`);
  const audit = await page.$eval('tbody', (element) => element.textContent ?? '');
  t.match(audit, new RegExp(`#${token.id}grantirc\\.users${adminAccount}website`), 'the approval is in the audit log');
  t.same(await axeViolations(page), [], 'the audit log: nothing serious or critical');
  await shoot(page, 'audit', t);
});

t.test('the owner revokes the token: 401', async (t) => {
  const { page } = user;
  await page.goto(`${bot.url}/network/account/`);
  await submit(page, `form[action="/network/account/tokens/${token.id}/revoke/"] button`);
  t.match(await notice(page), `Token #${token.id} is revoked: every request with it now gets 401.`);
  t.equal(await callApi(token.secret), 401);
});

t.test('a forged cross-site form (another origin, no CSRF token) is refused', async (t) => {
  const page = await user.context.newPage();
  const answered = page.waitForResponse((response) => response.url() === `${bot.url}/network/account/tokens/`);
  await page.goto(`${forgeUrl}?target=${encodeURIComponent(`${bot.url}/network/account/tokens/`)}`);
  const response = await answered;
  t.equal(response.request().method(), 'POST', 'the other site’s page posted the form, with the user’s cookie');
  t.equal(response.status(), 403, 'refused');
  await page.waitForSelector('h1');
  t.equal(await heading(page), 'Form refused');
  t.match(bot.logs.join('\n'), /form refused path=\/network\/account\/tokens\/ why=foreign-origin/);
  await page.close();
  await user.page.goto(`${bot.url}/network/account/`);
  t.notMatch(await user.page.$eval('table', (element) => element.textContent), /forged/, 'no token was made');
});

t.test('a signed-in account that is not an administrator gets 403 from the admin panel', async (t) => {
  const { page } = user;
  const response = await page.goto(`${bot.url}/network/admin/`);
  t.equal(response?.status(), 403);
  t.equal(await heading(page), 'Administrators only');
  t.match(await notice(page), `The account ${userAccount} is not an administrator`);
  t.same(await axeViolations(page), [], 'the refusal: nothing serious or critical');
});

t.test('a double click on "Create a token" sends the form once: one token, its value on the page', async (t) => {
  const { page } = user;
  await page.goto(`${bot.url}/network/account/`);
  await page.$eval('#label', (field) => ((field as unknown as { value: string }).value = 'double click'));
  const posts: string[] = [];
  const onRequest = (request: { method(): string; url(): string }): void => {
    if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
  };
  page.on('request', onRequest);
  const [created] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'load' }),
    page.click('form[action="/network/account/tokens/"] button[type="submit"]', { count: 2 }),
  ]);
  page.off('request', onRequest);
  t.same(posts, ['/network/account/tokens/'], 'one POST');
  t.equal(created?.status(), 200);
  t.equal(await heading(page), 'Token created', 'the answer shows the value');
  t.match(await page.$eval('#token-secret', (field) => (field as unknown as { value: string }).value), /^ntd_/);
  await page.goto(`${bot.url}/network/account/`);
  const rows = await page.$eval('tbody', (element) => element.textContent ?? '');
  t.equal(rows.split('“double click”').length - 1, 1, 'one token made');
});

t.test('sessions survive a restart of the bot', async (t) => {
  await bot.stop();
  await launch();
  // A cookie belongs to the host, not the port: the browsers send theirs to the restarted bot.
  await user.page.goto(`${bot.url}/network/account/`);
  t.equal(await heading(user.page), 'Your API tokens', 'the user is still signed in');
  t.match(await user.page.$eval('tbody', (element) => element.textContent), `#${token.id} “browser test”`);
  const panel = await admin.page.goto(`${bot.url}/network/admin/`);
  t.equal(panel?.status(), 200, 'so is the administrator');
});

t.test("the site's script runs on the account pages: their tables sort, and no console error anywhere", async (t) => {
  const { page } = admin;
  await page.goto(`${bot.url}/network/admin/audit/`);
  t.ok((await page.$$('table[data-sortable] th button.sort')).length > 0, "the audit log's headings are sort buttons");
  t.same(consoleErrors, [], 'no console error or page error on any page a person opened');
});

t.test('the limit engages after repeated wrong passwords, and says when to retry', async (t) => {
  const { page, context } = await person(false);
  for (let attempt = 1; attempt <= 3; attempt++) {
    const refused = await signIn(page, userAccount, `guess-${attempt}`);
    t.equal(refused.status(), 403, `wrong password ${attempt}`);
  }
  const limited = await signIn(page, userAccount, password);
  t.equal(limited.status(), 429, 'even the right password, now');
  const wait = Number(limited.headers()['retry-after']);
  t.ok(wait > 0 && wait <= 900, `Retry-After: ${wait}`);
  t.match(await notice(page), /^Too many failed sign-ins for this account or from your address\. Try again in \d+ s/);
  await context.close();
});
