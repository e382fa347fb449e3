import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import t, { type Test } from 'tap';
import { createLogger } from '../../../lib/logger.js';
import {
  CountryLocator,
  countryFromHost,
  loadCountryLookup,
  openCountryDatabase,
  packagedCountryDatabase,
} from '../../../plugins/stats/countries.js';
import { webircAddresses } from '../../../scripts/crowd.js';
import type { Harness } from '../../../testing/harness.js';
import { writeMmdb } from '../../support/mmdb.js';
import { startCollector } from './support.js';

const quiet = createLogger({ sink: () => undefined });

/** A directory of its own for the test, removed after it (teardowns run last-registered first). */
function privateDir(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'countries-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the packaged GeoLite2 country data knows the countries of public addresses', async (t) => {
  const { lookup, type } = openCountryDatabase(packagedCountryDatabase());
  t.match(type, /country/i);
  for (const { ip, country, network } of webircAddresses) t.equal(lookup(ip), country, `${ip} (${network})`);
  t.equal(lookup('2001:4860:4860::8888'), 'US', 'IPv6');
  t.equal(lookup('::ffff:81.2.69.142'), 'GB', 'IPv4-mapped IPv6');
  t.equal(lookup('127.0.0.1'), null, 'loopback');
  t.equal(lookup('10.1.2.3'), null, 'private');
  t.equal(lookup('192.168.1.1'), null, 'private');
  t.equal(lookup('198.51.100.7'), null, 'documentation (TEST-NET-2)');
  t.equal(lookup('203.0.113.5'), null, 'documentation (TEST-NET-3)');
  t.equal(lookup('2001:db8::5'), null, 'IPv6 documentation');
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
  const locator = new CountryLocator((ip) => {
    asked.push(ip);
    return ({ '81.2.69.142': 'GB', '91.0.10.20': 'DE' } as Record<string, string>)[ip] ?? null;
  }, 2);
  t.equal(locator.countryOf({ ip: null, host: 'a.example.fr' }), 'FR');
  t.same(asked, [], 'a host name needs no database');
  t.equal(locator.countryOf({ ip: '81.2.69.142', host: 'a.example.fr' }), 'GB', 'the IP wins');
  t.equal(locator.countryOf({ ip: '127.0.0.1', host: 'a.example.fr' }), 'FR', 'an unknown IP falls back to the host');
  t.equal(locator.countryOf({ ip: null, host: '91.0.10.20' }), 'DE', 'a host that is an IP');
  t.equal(locator.countryOf({ ip: null, host: 'cloak.example.com' }), null);
  t.equal(locator.countryOf({ ip: null, host: null }), null);
  t.equal(locator.countryOf({ ip: '91.0.10.20', host: null }), 'DE');
  t.same(asked, ['81.2.69.142', '127.0.0.1', '91.0.10.20'], 'each IP is looked up once');
  locator.ofIp('192.0.2.1');
  locator.ofIp('81.2.69.142');
  t.same(asked.slice(3), ['192.0.2.1', '81.2.69.142'], 'past the cache size the oldest answers are forgotten');
});

/** The collector on a connection not yet registered: its server's profile reads both 338 and 378. */
async function collectorIn(t: Test, channel = '#chat'): Promise<Harness> {
  const bot = await startCollector(t, { stats: { version_requests_per_second: 0 }, register: false });
  bot.irc.receive(
    `:DataBot!databot@bot.host JOIN ${channel}`,
    `:hub.test.net 353 DataBot = ${channel} :DataBot`,
    `:hub.test.net 366 DataBot ${channel} :End of /NAMES list.`,
  );
  return bot;
}

t.test('a user is located when they change; WHOIS 378 gives the IP', async (t) => {
  const bot = await collectorIn(t);
  const { model } = bot.host;
  const changes: string[] = [];
  model.on('change', (change) => {
    if (change.slice === 'users') changes.push(`${change.kind} ${change.name ?? ''}`);
  });
  bot.irc.receive(':alice!a@cloak.example.com JOIN #chat');
  t.equal(model.users.get('alice')!.countryCode, null);
  t.same(changes, ['upsert alice'], 'no country found, no change: no event');

  bot.irc.receive(
    ':hub.test.net 378 DataBot alice :is connecting from webuser@dsl-81-2-69-142.isp.example 81.2.69.142',
    ':hub.test.net 378 DataBot ghost :is connecting from x@y 192.0.2.9',
    ':hub.test.net 378 DataBot alice :is connecting from garbage',
  );
  t.equal(model.users.get('alice')!.ip, '81.2.69.142');
  t.equal(model.users.get('alice')!.realHost, 'dsl-81-2-69-142.isp.example', 'the host behind the cloak, too');
  t.equal(model.users.get('alice')!.host, 'cloak.example.com', 'the host shown is left as it is');
  t.equal(model.users.get('ghost'), undefined, 'an unknown nick is not added');
  t.equal(model.users.get('alice')!.countryCode, 'GB', 'located again by the IP (the packaged database)');
});

t.test("WHOIS 378 in UnrealIRCd's form gives the real host without the ident", async (t) => {
  const bot = await collectorIn(t);
  const { model } = bot.host;
  bot.irc.receive(':bob!b@Clk-1234.example JOIN #chat');
  bot.irc.receive(':irc.example 378 DataBot bob :is connecting from *@dsl-7.isp.example 192.0.2.5');
  t.match(model.users.get('bob'), { host: 'Clk-1234.example', realHost: 'dsl-7.isp.example', ip: '192.0.2.5' });
  bot.irc.receive(':irc.example 378 DataBot bob :is connecting from *@other.isp.example not-an-ip');
  t.match(model.users.get('bob'), { realHost: 'other.isp.example', ip: '192.0.2.5' }, 'no IP where the line has none');
});

t.test('WHOIS 338 (ircd-hybrid; Charybdis and ircu with ident@host) gives the IP', async (t) => {
  const bot = await collectorIn(t);
  const { model } = bot.host;
  bot.irc.receive(':carol!c@carol.example JOIN #chat', ':dave!d@Clk-9.example JOIN #chat');
  bot.irc.receive(
    ':hub.test.net 338 DataBot carol 81.2.69.142 :actually using host',
    ':irc.example 338 DataBot dave ~d@dsl-8.isp.example 192.0.2.8 :actually using host',
    ':irc.example 338 DataBot ghost 192.0.2.9 :actually using host',
  );
  t.match(model.users.get('carol'), { ip: '81.2.69.142', host: 'carol.example', realHost: null });
  t.match(model.users.get('dave'), { ip: '192.0.2.8', realHost: 'dsl-8.isp.example', host: 'Clk-9.example' });
  t.equal(model.users.get('ghost'), undefined, 'an unknown nick is not added');
});

t.test("an operator's own database: MaxMind's country and city records, IPv4-only ones", async (t) => {
  const dir = privateDir(t);
  const country = path.join(dir, 'GeoLite2-Country.mmdb');
  // Not the packaged answers (81.2.69.142 is GB there), so a pass shows this file was read.
  writeFileSync(
    country,
    writeMmdb({
      databaseType: 'GeoLite2-Country',
      built: new Date('2026-11-20T00:00:00Z'),
      networks: [
        { network: '81.2.69.0/24', data: { country: { iso_code: 'FR' }, registered_country: { iso_code: 'GB' } } },
        { network: '91.0.0.0/10', data: { registered_country: { iso_code: 'DE' } } },
        { network: '2a00:1450::/32', data: { country: { iso_code: 'IE' } } },
      ],
    }),
  );
  const database = openCountryDatabase(country);
  t.equal(database.type, 'GeoLite2-Country');
  t.equal(database.built.toISOString(), '2026-11-20T00:00:00.000Z');
  t.equal(database.lookup('81.2.69.142'), 'FR', 'the country the network is in');
  t.equal(database.lookup('::ffff:81.2.69.142'), 'FR', 'IPv4-mapped IPv6');
  t.equal(database.lookup('2a00:1450:4001::1'), 'IE', 'IPv6');
  t.equal(database.lookup('91.0.10.20'), null, 'a registered country alone says nothing of where users are');
  t.equal(database.lookup('24.10.20.30'), null, 'an address the file does not have');

  const city = path.join(dir, 'GeoLite2-City.mmdb');
  writeFileSync(
    city,
    writeMmdb({
      databaseType: 'GeoLite2-City',
      networks: [{ network: '81.2.69.0/24', data: { city: { names: { en: 'London' } }, country: { iso_code: 'GB' } } }],
    }),
  );
  t.equal(openCountryDatabase(city).lookup('81.2.69.142'), 'GB', 'a city database has countries too');

  const ipv4 = path.join(dir, 'country-ipv4.mmdb');
  writeFileSync(
    ipv4,
    writeMmdb({
      databaseType: 'country ipv4',
      ipVersion: 4,
      networks: [
        { network: '0.0.0.0/1', data: { country_code: 'NL' } },
        { network: '128.0.0.0/1', data: { country_code: 'NL' } },
      ],
    }),
  );
  const { lookup } = openCountryDatabase(ipv4);
  t.equal(lookup('81.2.69.142'), 'NL');
  t.equal(lookup('2001:4860:4860::8888'), null, 'an IPv6 address is not looked up in an IPv4 tree');
  t.equal(lookup('::ffff:81.2.69.142'), 'NL', 'but an IPv4-mapped one is');
});

t.test('a geoip_database that is missing or not a country database stops the start, saying why', async (t) => {
  const dir = privateDir(t);
  const write = (name: string, data: Buffer | string): string => {
    writeFileSync(path.join(dir, name), data);
    return path.join(dir, name);
  };
  const asn = write('GeoLite2-ASN.mmdb', writeMmdb({ databaseType: 'GeoLite2-ASN', networks: [] }));
  const cases: [string, string, RegExp][] = [
    [
      'missing',
      path.join(dir, 'nowhere.mmdb'),
      /^cannot read \S+nowhere\.mmdb \(ENOENT[^)]*\): give the path of a country/,
    ],
    ['a directory', dir, /^cannot read \S+ \(EISDIR/],
    ['gzip', write('country.mmdb.gz', gzipSync(Buffer.from('x'))), /is gzip-compressed: unpack it \(gunzip\)/],
    ['text', write('notes.txt', 'not a database'), /notes\.txt is not a MaxMind DB \(\.mmdb\) file: give the path/],
    ['an ASN database', asn, /GeoLite2-ASN\.mmdb is a "GeoLite2-ASN" database, which has no countries: give/],
  ];
  for (const [what, file, message] of cases) {
    t.throws(() => openCountryDatabase(file), { message }, what);
    t.throws(
      () => loadCountryLookup(file, quiet),
      { message: /^config\.plugins\.stats\.geoip_database: / },
      `${what}: the error names the key`,
    );
  }
  const truncated = write(
    'cut.mmdb',
    Buffer.concat([Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), Buffer.from([0xe1])]),
  );
  t.throws(() => openCountryDatabase(truncated), {
    message: /cut\.mmdb is not a readable MaxMind DB \(\.mmdb\) file \(/,
  });

  const starting = startCollector(t, { stats: { geoip_database: asn }, register: false });
  await t.rejects(starting, {
    message:
      /plugin "stats" failed to start: config\.plugins\.stats\.geoip_database: \S+GeoLite2-ASN\.mmdb is a "GeoLite2-ASN" database/,
  });
});

t.test('the collector locates users with the geoip_database it is given', async (t) => {
  const dir = privateDir(t);
  const file = path.join(dir, 'own.mmdb');
  writeFileSync(
    file,
    writeMmdb({
      databaseType: 'GeoIP2-Country',
      networks: [{ network: '81.2.69.0/24', data: { country: { iso_code: 'FR' } } }],
    }),
  );
  const {
    host,
    irc: transport,
    logs: logged,
  } = await startCollector(t, { stats: { geoip_database: file, version_requests_per_second: 0 }, register: false });
  t.ok(
    logged.some((line) => line.includes('country database loaded') && line.includes('GeoIP2-Country')),
    'the log says which database was loaded',
  );
  transport.receive(':alice!a@81.2.69.142 JOIN #chat', ':bob!b@dsl.example.de JOIN #chat');
  t.equal(
    host.model.users.get('alice')!.countryCode,
    'FR',
    "the IP host, by the operator's file (GB in the packaged one)",
  );
  t.equal(host.model.users.get('bob')!.countryCode, 'DE', 'a host name still gives its ccTLD');
});
