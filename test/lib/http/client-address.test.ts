import t from 'tap';
import { clientFacts, clientGroup, compileAddressList, compileTrustProxy } from '../../../lib/http/client-address.js';

const loopback = compileTrustProxy('loopback');

t.test('no proxy trusted (the default): the peer is the client, whatever the headers say', async (t) => {
  t.equal(compileTrustProxy([]), undefined);
  t.equal(compileTrustProxy(''), undefined);
  const facts = clientFacts('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' }, undefined);
  t.same(facts, { ip: '127.0.0.1', secure: false });
});

t.test('a trusted proxy names the client and its scheme', async (t) => {
  t.same(clientFacts('127.0.0.1', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' }, loopback), {
    ip: '203.0.113.9',
    secure: true,
  });
  t.same(clientFacts('::1', { 'x-forwarded-for': '2001:db8::7' }, loopback), { ip: '2001:db8::7', secure: false });
  t.same(clientFacts('127.0.0.1', {}, loopback), { ip: '127.0.0.1', secure: false }, 'no header: the proxy itself');
});

t.test('a spoofed X-Forwarded-For from an untrusted peer is ignored', async (t) => {
  t.same(clientFacts('198.51.100.4', { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'https' }, loopback), {
    ip: '198.51.100.4',
    secure: false,
  });
});

t.test('what a client wrote before the trusted proxy appended its address is not believed', async (t) => {
  // The client sent "X-Forwarded-For: 10.9.9.9"; nginx appended the address it saw.
  const facts = clientFacts('127.0.0.1', { 'x-forwarded-for': '10.9.9.9, 198.51.100.4' }, loopback);
  t.equal(facts.ip, '198.51.100.4');
});

t.test('a chain of trusted proxies is walked from the nearest', async (t) => {
  const trust = compileTrustProxy(['127.0.0.1', '10.0.0.0/8']);
  const facts = clientFacts(
    '127.0.0.1',
    { 'x-forwarded-for': '203.0.113.9, 10.1.2.3', 'x-forwarded-proto': 'https, http' },
    trust,
  );
  t.same(facts, { ip: '203.0.113.9', secure: true }, 'the scheme the client used, not the hop between proxies');
  t.equal(
    clientFacts('127.0.0.1', { 'x-forwarded-for': '10.1.2.3, 10.4.5.6' }, trust).ip,
    '10.1.2.3',
    'all trusted: the farthest',
  );
});

t.test('with proxy_header "forwarded", RFC 7239 Forwarded: ports, IPv6 in brackets, proto', async (t) => {
  const read = (forwarded: string) => clientFacts('127.0.0.1', { forwarded }, loopback, false, 'forwarded');
  t.same(read('for="192.0.2.60:4711";proto=https;by=203.0.113.43'), { ip: '192.0.2.60', secure: true });
  t.same(read('for="[2001:db8:cafe::17]:4711"'), { ip: '2001:db8:cafe::17', secure: false });
  t.same(read('for=198.51.100.17, for=127.0.0.2;proto=http'), { ip: '198.51.100.17', secure: false });
  t.same(read('for=this is not;;; valid'), { ip: '127.0.0.1', secure: false }, 'unreadable: the peer');
});

t.test('only the header the operator names is read: the other, forged by the client, changes nothing', async (t) => {
  // The proxy appends to its own header and passes the other on as the client wrote it.
  const forged = {
    xff: { 'x-forwarded-for': '198.51.100.4', 'x-forwarded-proto': 'http', forwarded: 'for=10.1.2.3;proto=https' },
    forwarded: {
      forwarded: 'for=198.51.100.4;proto=http',
      'x-forwarded-for': '10.1.2.3',
      'x-forwarded-proto': 'https',
    },
  };
  t.same(
    clientFacts('127.0.0.1', forged.xff, loopback),
    { ip: '198.51.100.4', secure: false },
    'x-forwarded-for (the default): a forged Forwarded is ignored',
  );
  t.same(
    clientFacts('127.0.0.1', forged.xff, loopback, false, 'x-forwarded-for'),
    { ip: '198.51.100.4', secure: false },
    'x-forwarded-for, named',
  );
  t.same(
    clientFacts('127.0.0.1', forged.forwarded, loopback, false, 'forwarded'),
    { ip: '198.51.100.4', secure: false },
    'forwarded: a forged X-Forwarded-For and X-Forwarded-Proto are ignored',
  );
  t.same(
    clientFacts('127.0.0.1', { forwarded: 'for=10.1.2.3;proto=https' }, loopback),
    { ip: '127.0.0.1', secure: false },
    'x-forwarded-for mode, only a Forwarded: the proxy itself',
  );
  t.same(
    clientFacts(
      '127.0.0.1',
      { 'x-forwarded-for': '10.1.2.3', 'x-forwarded-proto': 'https' },
      loopback,
      false,
      'forwarded',
    ),
    { ip: '127.0.0.1', secure: false },
    'forwarded mode, only an X-Forwarded-For: the proxy itself',
  );
});

t.test('settings: names, ranges, a comma list; a wrong one is refused by name', async (t) => {
  const trust = compileTrustProxy('loopback, 192.0.2.0/24')!;
  t.ok(trust('127.0.0.1', 0));
  t.ok(trust('192.0.2.77', 0));
  t.notOk(trust('198.51.100.1', 0));
  t.throws(() => compileTrustProxy(['not-an-address']), /invalid IP address: not-an-address/);
});

t.test('an address list (who may read the metrics)', async (t) => {
  const allowed = compileAddressList(['127.0.0.1', '10.0.0.0/8']);
  t.ok(allowed('127.0.0.1'));
  t.ok(allowed('::ffff:10.2.3.4'), 'an IPv4-mapped address counts as its IPv4 one');
  t.notOk(allowed('192.0.2.1'));
  t.notOk(allowed(''));
  t.notOk(compileAddressList([])('127.0.0.1'), 'an empty list lets nobody in');
});

t.test('the group an address counts in for per-address limits: IPv4 itself, IPv6 its network', async (t) => {
  t.equal(clientGroup('192.0.2.7', 64), '192.0.2.7');
  t.equal(clientGroup('::ffff:192.0.2.7', 64), '192.0.2.7', 'IPv4-mapped IPv6 is its IPv4 address');
  t.equal(clientGroup('2001:db8:1:2::1', 64), '2001:db8:1:2:0:0:0:0/64');
  t.equal(clientGroup('2001:DB8:1:2:aaaa:bbbb:cccc:dddd', 64), '2001:db8:1:2:0:0:0:0/64', 'any case, any host part');
  t.not(clientGroup('2001:db8:1:3::1', 64), clientGroup('2001:db8:1:2::1', 64), 'another /64');
  t.equal(clientGroup('2001:db8:1:2ff::1', 56), '2001:db8:1:200:0:0:0:0/56', 'a prefix inside a word');
  t.equal(clientGroup('fe80::1:2%eth0', 112), 'fe80:0:0:0:0:0:1:0/112', 'a zone is left out');
  t.equal(clientGroup('::1', 64), '0:0:0:0:0:0:0:0/64');
  t.equal(clientGroup('64:ff9b::192.0.2.7', 120), '64:ff9b:0:0:0:0:c000:200/120', 'a dotted tail is two words');
  t.equal(clientGroup('::ffff:c000:207', 64), '192.0.2.7', 'IPv4-mapped in hex');
  t.equal(clientGroup('0:0:0:0:0:ffff:192.0.2.7', 64), '192.0.2.7', 'IPv4-mapped written out');
  t.equal(clientGroup('2001:db8::1', 128), '2001:db8::1', '/128: each address itself');
  t.equal(clientGroup('unknown', 64), 'unknown', 'not an address: as it is');
});
