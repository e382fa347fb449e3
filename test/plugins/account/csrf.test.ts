/** The cross-site rule of a form POST, on its own: origin first, then the cookie's token. */
import t from 'tap';
import { csrfToken, forgery, ownOrigin } from '../../../plugins/account/csrf.js';
import type { ApiRequest } from '../../../lib/sdk.js';

function request(headers: Record<string, string>, secure = false): ApiRequest {
  return {
    method: 'POST',
    path: '/network/account/tokens/',
    params: {},
    search: '',
    query: new URLSearchParams(),
    headers: { host: 'irc.example.net:8080', ...headers },
    ip: '192.0.2.1',
    secure,
    body: undefined,
  };
}

const cookie = 'c'.repeat(43);
const token = csrfToken(cookie);

t.test('the token is a one-way function of the cookie, the same every time', async (t) => {
  t.equal(csrfToken(cookie), token);
  t.match(token, /^[A-Za-z0-9_-]{43}$/);
  t.not(token, cookie);
  t.not(csrfToken('d'.repeat(43)), token);
});

t.test("the site's own origin: configured, else the request's scheme and Host", async (t) => {
  t.equal(ownOrigin(request({}), null), 'http://irc.example.net:8080');
  t.equal(ownOrigin(request({}, true), null), 'https://irc.example.net:8080');
  t.equal(ownOrigin(request({}), 'https://IRC.example.net'), 'https://irc.example.net');
});

t.test('what is refused, and why', async (t) => {
  const cases: [string, Record<string, string>, string | undefined, string | null, string | null][] = [
    ['same origin, right token', { origin: 'http://irc.example.net:8080' }, cookie, token, null],
    ['origin in other case', { origin: 'HTTP://IRC.example.net:8080' }, cookie, token, null],
    ['no Origin, right token (an old browser)', {}, cookie, token, null],
    ['foreign Origin, right token', { origin: 'http://evil.example' }, cookie, token, 'foreign-origin'],
    ['another port is another origin', { origin: 'http://irc.example.net:8081' }, cookie, token, 'foreign-origin'],
    ['Origin: null', { origin: 'null' }, cookie, token, 'foreign-origin'],
    ['cross-site fetch', { 'sec-fetch-site': 'cross-site' }, cookie, token, 'foreign-origin'],
    ['same-site fetch, right token', { 'sec-fetch-site': 'same-origin' }, cookie, token, null],
    ['no cookie', { origin: 'http://irc.example.net:8080' }, undefined, token, 'no-cookie'],
    ['no token', { origin: 'http://irc.example.net:8080' }, cookie, null, 'bad-token'],
    ['no Origin, no token', {}, cookie, null, 'bad-token'],
    ['a wrong token', {}, cookie, csrfToken('x'.repeat(43)), 'bad-token'],
    ['the cookie itself as the token', {}, cookie, cookie, 'bad-token'],
    ['a token of another length', {}, cookie, token.slice(1), 'bad-token'],
  ];
  for (const [what, headers, sentCookie, sentToken, expected] of cases) {
    t.equal(forgery(request(headers), sentCookie, sentToken, null), expected, what);
  }
  t.equal(
    forgery(request({ origin: 'http://irc.example.net:8080' }), cookie, token, 'https://irc.example.net'),
    'foreign-origin',
    'with public_origin, the Host no longer counts',
  );
  t.equal(forgery(request({ origin: 'https://irc.example.net' }), cookie, token, 'https://irc.example.net'), null);
});
