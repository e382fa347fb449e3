import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import {
  CountryLocator,
  countryFromHost,
  loadGeoipCountries,
  locateUser,
  noteWhoisHost,
} from '../../../plugins/stats/countries.js';
import { webircAddresses } from '../../../scripts/crowd.js';
import { FakeTransport } from '../../support/fake-irc.js';

t.test('geoip-lite (country data only) knows the countries of public addresses', async (t) => {
  const before = process.env.GEODATADIR;
  const lookup = loadGeoipCountries();
  t.equal(process.env.GEODATADIR, before, 'GEODATADIR is as it was');
  for (const { ip, country, network } of webircAddresses) t.equal(lookup(ip), country, `${ip} (${network})`);
  t.equal(lookup('2001:4860:4860::8888'), 'US', 'IPv6');
  t.equal(lookup('::ffff:81.2.69.142'), 'GB', 'IPv4-mapped IPv6');
  t.equal(lookup('127.0.0.1'), null, 'loopback');
  t.equal(lookup('10.1.2.3'), null, 'private');
  t.equal(lookup('not an ip'), null);
});

t.test('country-code TLDs of hosts', async (t) => {
  const cases: [string, string | null][] = [
    ['dsl-1-2.example.de', 'DE'],
    ['host86-1.range86.btcentralplus.co.uk', 'GB'],
    ['p5B0A1C2D.dip0.t-ipconnect.DE.', 'DE'],
    ['cpe-1-2.fr', 'FR'],
    ['user.example.com', null],
    ['example.net', null],
    ['cloak.example.io', null],
    ['streamer.tv', null],
    ['me.me', null],
    ['irccloud.com', null],
    ['user/alice', null],
    ['localhost', null],
    ['81.2.69.142', null],
    ['2001:db8::1', null],
    ['host.eu', null],
    ['x.zz', null],
  ];
  for (const [host, country] of cases) t.equal(countryFromHost(host), country, host);
});

t.test('a user: IP first, then a host that is an IP, then the host TLD; IPs cached', async (t) => {
  const asked: string[] = [];
  let loads = 0;
  const locator = new CountryLocator(() => {
    loads++;
    return (ip) => {
      asked.push(ip);
      return ({ '81.2.69.142': 'GB', '91.0.10.20': 'DE' } as Record<string, string>)[ip] ?? null;
    };
  }, 2);
  t.equal(loads, 0, 'nothing is loaded before the first IP');
  t.equal(locator.countryOf({ ip: null, host: 'a.example.fr' }), 'FR');
  t.equal(loads, 0, 'a host name needs no database');
  t.equal(locator.countryOf({ ip: '81.2.69.142', host: 'a.example.fr' }), 'GB', 'the IP wins');
  t.equal(locator.countryOf({ ip: '127.0.0.1', host: 'a.example.fr' }), 'FR', 'an unknown IP falls back to the host');
  t.equal(locator.countryOf({ ip: null, host: '91.0.10.20' }), 'DE', 'a host that is an IP');
  t.equal(locator.countryOf({ ip: null, host: 'cloak.example.com' }), null);
  t.equal(locator.countryOf({ ip: null, host: null }), null);
  t.equal(locator.countryOf({ ip: '91.0.10.20', host: null }), 'DE');
  t.equal(loads, 1, 'the database is loaded once');
  t.same(asked, ['81.2.69.142', '127.0.0.1', '91.0.10.20'], 'each IP is looked up once');
  locator.ofIp('192.0.2.1');
  locator.ofIp('81.2.69.142');
  t.same(asked.slice(3), ['192.0.2.1', '81.2.69.142'], 'past the cache size the oldest answers are forgotten');
});

t.test('locateUser sets the country when it changes; WHOIS 378 gives the IP', async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  const locator = new CountryLocator(() => (ip) => (ip === '81.2.69.142' ? 'GB' : null));
  const changes: string[] = [];
  model.on('change', (change) => changes.push(`${change.slice} ${change.kind} ${change.name ?? ''}`));
  model.upsertUser('alice', { host: 'cloak.example.com' });
  locateUser(model, locator, 'alice');
  t.equal(model.users.get('alice')!.countryCode, null);
  t.equal(changes.length, 1, 'no change, no event');

  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  irc.on('message', (message) => noteWhoisHost(message, model));
  irc.connect();
  irc.receive(
    ':hub.test.net 378 DataBot alice :is connecting from webuser@dsl-81-2-69-142.isp.example 81.2.69.142',
    ':hub.test.net 378 DataBot ghost :is connecting from x@y 192.0.2.9',
    ':hub.test.net 378 DataBot alice :is connecting from garbage',
  );
  t.equal(model.users.get('alice')!.ip, '81.2.69.142');
  t.equal(model.users.get('alice')!.realHost, 'dsl-81-2-69-142.isp.example', 'the host behind the cloak, too');
  t.equal(model.users.get('alice')!.host, 'cloak.example.com', 'the host shown is left as it is');
  t.equal(model.users.get('ghost'), undefined, 'an unknown nick is not added');
  locateUser(model, locator, 'alice');
  t.equal(model.users.get('alice')!.countryCode, 'GB');
  locateUser(model, locator, 'nobody');
});

t.test("WHOIS 378 in UnrealIRCd's form gives the real host without the ident", async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  model.upsertUser('bob', { host: 'Clk-1234.example' });
  const irc = new FakeTransport();
  t.teardown(() => irc.quit('test over'));
  irc.on('message', (message) => noteWhoisHost(message, model));
  irc.connect();
  irc.receive(':irc.example 378 DataBot bob :is connecting from *@dsl-7.isp.example 192.0.2.5');
  t.match(model.users.get('bob'), { host: 'Clk-1234.example', realHost: 'dsl-7.isp.example', ip: '192.0.2.5' });
  irc.receive(':irc.example 378 DataBot bob :is connecting from *@other.isp.example not-an-ip');
  t.match(model.users.get('bob'), { realHost: 'other.isp.example', ip: '192.0.2.5' }, 'no IP where the line has none');
});
