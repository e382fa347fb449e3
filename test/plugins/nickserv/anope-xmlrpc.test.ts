/**
 * The Anope 2.0 XML-RPC backend against a fake m_xmlrpc: an HTTP server that reads the request with Anope
 * 2.0's own scanner (a string ends at `<`, spaces after a tag dropped, then its unescaping, which knows
 * `&amp; &lt; &quot; &qt;` and numeric references but not `&gt;` or `&apos;`, as measured on Anope 2.0.12:
 * test/fixtures/networks/anope-2.0/xmlrpc-escapes.txt) and answers the way m_xmlrpc_main's
 * checkAuthentication does. The real Anope is checked in the integration tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import {
  anopeXmlRpcBackend,
  checkAuthenticationCall,
  escapeForAnope,
  readStruct,
} from '../../../plugins/nickserv/backends/anope-xmlrpc.js';

/** Anope 2.0.12's unescaping, as measured: named references it knows, numeric ones; others left as they are. */
function anopeUnescape(text: string): string {
  const known: Record<string, string> = { amp: '&', lt: '<', quot: '"', qt: '>' };
  return text.replace(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (/^#x/i.test(name)) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return known[name] ?? whole;
  });
}

const signal = new AbortController().signal;

/** Anope 2.0's m_xmlrpc GetData, step for step: (tag, text) pairs, the tag being the last one before the text. */
function anopeScan(body: string): { name: string; data: string[] } {
  let content = body;
  const request = { name: '', data: [] as string[] };
  const next = (): [string, string] | null => {
    if (content === '') return null;
    let previous: string;
    let current = '';
    let isTag: boolean;
    do {
      previous = current;
      current = '';
      let length = 0;
      isTag = false;
      if (content[0] === '<') {
        length = content.indexOf('>');
        isTag = true;
      } else if (content[0] !== '>') {
        length = content.indexOf('<');
      }
      if (length) {
        if (isTag) {
          current = content.slice(1, length);
          content = content.slice(length + 1);
          while (content.startsWith(' ')) content = content.slice(1);
        } else {
          current = length < 0 ? content : content.slice(0, length);
          content = length < 0 ? '' : content.slice(length);
        }
      }
    } while (isTag && content !== '');
    return !isTag && current !== '' ? [previous, current] : null;
  };
  for (let pair = next(); pair; pair = next()) {
    const [tag, data] = pair;
    if (tag === 'methodName') request.name = data;
    else if (tag === 'string') request.data.push(anopeUnescape(data));
  }
  return request;
}

/** What Anope 2.0 writes back: a struct of string members, `>` as `&qt;`. */
function anopeReply(members: Record<string, string>): string {
  const sanitize = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&qt;');
  const body = Object.entries(members)
    .map(
      ([name, value]) =>
        `<member>\n<name>${name}</name>\n<value>\n<string>${sanitize(value)}</string>\n</value>\n</member>\n`,
    )
    .join('');
  return `<?xml version="1.0" encoding="iso-8859-1"?>\n<methodCall>\n<methodName>checkAuthentication</methodName>\n<params>\n<param>\n<value>\n<struct>\n${body}</struct>\n</value>\n</param>\n</params>\n</methodCall>`;
}

const ACCOUNTS: Record<string, string> = { alice: 'pw-alice', bob: `a&b>c"d'e<f&amp;g`, carol: ' lead ing' };

type Behaviour = (request: { name: string; data: string[] }) => { status?: number; body: string } | null;

const anopeLike: Behaviour = ({ name, data: [nick = '', password = ''] }) => {
  if (name !== 'checkAuthentication') return { status: 404, body: 'Unrecognized query' };
  if (nick === '' || password === '') return { body: anopeReply({ error: 'Invalid parameters' }) };
  const right = ACCOUNTS[nick.toLowerCase()];
  if (right !== undefined && right === password) return { body: anopeReply({ result: 'Success', account: nick }) };
  return { body: anopeReply({ error: 'Invalid password' }) };
};

async function setup(t: Test, behaviour: Behaviour = anopeLike) {
  const bodies: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      bodies.push(body);
      const answer = behaviour(anopeScan(body));
      if (answer === null) return;
      response.writeHead(answer.status ?? 200, { 'Content-Type': 'text/xml' });
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  server.unref();
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/xmlrpc`);
  const backend = anopeXmlRpcBackend({ url, timeoutMs: 500 });
  const check = (nick: string, password: string) => backend.check({ nick, password, sourceIp: '127.0.0.1', signal });
  return { bodies, check, backend };
}

t.test(
  'checkAuthentication: Success names the account; a wrong password and an unknown account are invalid',
  async (t) => {
    const { check, bodies, backend } = await setup(t);
    t.same(await check('alice', 'pw-alice'), { valid: true, account: 'alice' });
    t.same(await check('alice', 'wrong'), { valid: false, reason: null });
    t.same(await check('nobody', 'pw-alice'), { valid: false, reason: null });
    t.notMatch(bodies[0], /\n|> </, 'one line, no spaces between tags');
    t.equal(backend.name, 'anope-xmlrpc');
    t.notOk(backend.throughIrc, 'talks to Anope directly');
  },
);

t.test('a password with & < > quotes and spaces reaches Anope whole, escaped the way it undoes', async (t) => {
  const { check, bodies } = await setup(t);
  t.same(await check('bob', `a&b>c"d'e<f&amp;g`), { valid: true, account: 'bob' });
  t.same(await check('carol', ' lead ing'), { valid: true, account: 'carol' }, 'a leading space survives too');
  t.notMatch(bodies[0]!, /&(gt|apos);/, 'never an entity Anope 2.0 leaves as it is');
  t.equal(escapeForAnope(`<&>"' x`), '&#60;&#38;&#62;&#34;&#39;&#32;x');
  t.same(anopeScan(checkAuthenticationCall('carol', ' lead ing')).data, ['carol', ' lead ing']);
  // What the old, unescaped request did: Anope's unescaping turned "&amp;" into "&", a right password wrong.
  const raw = `<?xml version="1.0"?><methodCall><methodName>checkAuthentication</methodName><params><param><value><string>bob</string></value></param><param><value><string>a&b>c"d'e<f&amp;g</string></value></param></params></methodCall>`;
  t.not(anopeScan(raw).data[1], ACCOUNTS.bob, 'sent unescaped, the password would not arrive whole');
});

t.test("the answer's entities are read, Anope's &qt; among them", async (t) => {
  t.same(
    [...readStruct(anopeReply({ result: 'Success', account: 'a<b>&"c' })).entries()],
    [
      ['result', 'Success'],
      ['account', 'a<b>&"c'],
    ],
  );
});

const unavailableCases: [string, Behaviour, RegExp][] = [
  ['m_xmlrpc_main not loaded (404)', () => ({ status: 404, body: 'Unrecognized query' }), /HTTP 404/],
  ['another error', () => ({ body: anopeReply({ error: 'Invalid parameters' }) }), /error "Invalid parameters"/],
  ['neither result nor error', () => ({ body: anopeReply({ uptime: '5' }) }), /without a result or an error/],
  ['not XML at all', () => ({ body: 'hello' }), /without a result or an error/],
  ['no answer in time', () => null, /within 500 ms/],
];

for (const [name, behaviour, message] of unavailableCases) {
  t.test(`unavailable, never invalid: ${name}`, async (t) => {
    const { check } = await setup(t, behaviour);
    await t.rejects(check('alice', 'pw-alice'), { name: 'ServiceUnavailableError', message });
  });
}
