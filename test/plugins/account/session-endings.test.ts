/**
 * Sessions you can see and end: the account page lists where the account is signed in, "sign out everywhere"
 * ends them all, an administrator ends an account's sessions, and the sessions of an account the nickname
 * service no longer has end at the next check.
 */
import t from 'tap';
import { ACCOUNT_CHECK_MS } from '../../../plugins/account/index.js';
import { startSite, textOf } from './support.js';

t.test('the account page lists your sessions; sign out everywhere ends them all', async (t) => {
  const { bot, browser } = await startSite(t);
  const laptop = browser();
  laptop.ip = '198.51.100.10';
  await laptop.signIn('alice');
  const phone = browser();
  phone.ip = '2001:db8::20';
  await phone.signIn('alice');
  const bob = browser();
  await bob.signIn('bob');

  const page = textOf((await laptop.get('/network/account/')).text);
  t.match(page, /Where you are signed in 2 sessions, newest first/);
  t.match(page, /\d{4}-\d\d-\d\d \d\d:\d\d \d{4}-\d\d-\d\d \d\d:\d\d 2001:db8::20 /, "the phone's, newest first");
  t.match(page, /198\.51\.100\.10 this browser/, 'this one marked');
  t.notMatch(page, /127\.0\.0\.1/, "not bob's session");

  // The page that shows the button, and its form's token.
  t.match(
    (await phone.get('/network/account/')).text,
    /a password you just changed at NickServ .*Sign out everywhere/s,
  );
  const ended = await phone.post('/network/account/sessions/sign-out-everywhere/');
  t.equal(ended.status, 303);
  t.equal(ended.headers.location, '/network/account/?signed_out');
  t.match(ended.headers['set-cookie'], /Max-Age=0/, 'this browser drops its cookie');
  t.match((await laptop.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'the laptop is signed out too');
  t.match((await bob.get('/network/account/')).text, /Signed in as <strong>bob<\/strong>/, 'bob is not');
  t.ok(
    bot.logs.some((line) => /signed out everywhere account=alice sessions=2/.test(line)),
    'logged',
  );
});

t.test("an administrator ends an account's sessions; nobody else can", async (t) => {
  const { browser } = await startSite(t);
  const alice = browser();
  await alice.signIn('alice');
  const bob = browser();
  await bob.signIn('bob');
  const refused = await bob.post('/network/admin/sessions/end/', { account: 'alice' });
  t.equal(refused.status, 403, 'not an administrator');
  t.match((await alice.get('/network/account/')).text, /Signed in as/, 'alice still is');

  const boss = browser();
  await boss.signIn('boss');
  t.match((await boss.get('/network/admin/')).text, /End every session of the account/, 'the form on the panel');
  const done = await boss.post('/network/admin/sessions/end/', { account: 'ALICE' });
  t.equal(done.status, 303);
  t.equal(done.headers.location, '/network/admin/');
  t.match(textOf((await boss.get('/network/admin/')).text), /Ended 1 session of ALICE\./);
  t.match((await alice.get('/network/account/')).text, /<h1>Sign in<\/h1>/, 'alice is signed out');
  t.match((await bob.get('/network/account/')).text, /Signed in as <strong>bob<\/strong>/);
});

t.test('an account the nickname service no longer has: its sessions end at the next check', async (t) => {
  const { bot, browser } = await startSite(t);
  const alice = browser();
  await alice.signIn('alice');
  const bob = browser();
  await bob.signIn('bob');
  // Anope's words for a dropped account, and what it says of one it has.
  bot.server.answer(/^PRIVMSG NickServ :INFO alice$/i, [
    ":NickServ!services@services.test.net NOTICE DataBot :Nick \x02alice\x02 isn't registered.",
  ]);
  // A late answer about another name, while bob is asked about, ends nobody's sessions.
  bot.server.answer(/^PRIVMSG NickServ :INFO bob$/i, [
    ':NickServ!services@services.test.net NOTICE DataBot :\x02DataBot\x02 is not registered.',
    ':NickServ!services@services.test.net NOTICE DataBot :bob is bob',
    ':NickServ!services@services.test.net NOTICE DataBot :   Registered : Nov 01 2026',
  ]);
  await bot.clock.advance(ACCOUNT_CHECK_MS);
  await bot.until(
    () => bot.logs.some((line) => /sessions ended: the nickname service says the account is not registered/.test(line)),
    'the check',
  );
  t.match((await alice.get('/network/account/')).text, /<h1>Sign in<\/h1>/, "the dropped account's session ended");
  t.match((await bob.get('/network/account/')).text, /Signed in as <strong>bob<\/strong>/, "bob's did not");
});
