/** Cookies: what a `Cookie` header sends, and a `Set-Cookie` value a browser takes back as it was given. */
import t from 'tap';
import { parseCookies, serializeCookie } from '../../../plugins/account/cookies.js';

t.test('parseCookies reads the pairs, keeps the first of a name twice, skips what is not a cookie', async (t) => {
  t.same([...parseCookies(undefined)], []);
  t.same([...parseCookies('')], []);
  t.same(
    [...parseCookies('session=abc_-123; theme="dark";other=1; session=second')],
    [
      ['session', 'abc_-123'],
      ['theme', 'dark'],
      ['other', '1'],
    ],
    'quotes taken off, spaces around pairs ignored, the first session wins',
  );
  t.same(
    [...parseCookies('novalue; =nameless; bad name=1; ok=2; comma=a,b; space=a b')],
    [['ok', '2']],
    'pairs without a name, with a bad name or with characters a cookie value cannot hold are skipped',
  );
});

t.test('serializeCookie writes the attributes, with safe defaults', async (t) => {
  t.equal(serializeCookie('session', 'abc'), 'session=abc; Path=/; HttpOnly; SameSite=Lax');
  t.equal(
    serializeCookie('session', 'abc', { path: '/network/', maxAge: 3600, secure: true }),
    'session=abc; Path=/network/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure',
  );
  t.equal(
    serializeCookie('session', '', { path: '/network/', maxAge: 0 }),
    'session=; Path=/network/; Max-Age=0; HttpOnly; SameSite=Lax',
    'an empty value with Max-Age=0 drops the cookie',
  );
  t.equal(
    serializeCookie('pref', 'x', { httpOnly: false, sameSite: 'Strict' }),
    'pref=x; Path=/; SameSite=Strict',
    'readable by scripts only when asked',
  );
  const value = serializeCookie('session', 'ntd-Session_42');
  t.same([...parseCookies(value.split(';')[0])], [['session', 'ntd-Session_42']], 'it reads back as it was given');
});

t.test('serializeCookie refuses what a browser would not give back unchanged', async (t) => {
  t.throws(() => serializeCookie('bad name', 'x'), /must be an RFC 6265 token/);
  t.throws(() => serializeCookie('session', 'a;b'), /character a cookie cannot carry/);
  t.throws(() => serializeCookie('session', 'a b'), /character a cookie cannot carry/);
  t.throws(() => serializeCookie('session', 'x', { path: 'network' }), /must start with "\/"/);
  t.throws(() => serializeCookie('session', 'x', { path: '/a;Domain=evil' }), /must start with "\/"/);
  t.throws(() => serializeCookie('session', 'x', { maxAge: -1 }), /Max-Age/);
  t.throws(() => serializeCookie('session', 'x', { maxAge: 1.5 }), /Max-Age/);
  t.throws(() => serializeCookie('session', 'x', { sameSite: 'None' }), /SameSite=None needs Secure/);
});
