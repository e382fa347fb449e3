/**
 * Which country each user connects from: the country of their IP (which the bot
 * sees as an operator, through WHOX `%i` or WHOIS 378) in geoip-lite's offline
 * database; else, when the host the network shows is an IP, that IP's country;
 * else the country-code top-level domain of the host; else unknown.
 *
 * geoip-lite is loaded at the first lookup, with its country data only (about
 * 16 MB of memory; its default city data would take about 150 MB). Answers are
 * cached per IP.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { IrcMessage } from '../../lib/irc/port.js';
import type { NetworkModel } from '../../lib/model/network.js';
import type { User } from '../../lib/model/users.js';

/** The ISO 3166-1 alpha-2 code of an IP's country, or null. */
export type IpCountryLookup = (ip: string) => string | null;

/** Assigned ISO 3166-1 alpha-2 codes; each is also a country-code TLD (`uk` is GB's). */
const ISO_COUNTRIES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY ' +
    'BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK ' +
    'FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR ' +
    'IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ' +
    'ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM ' +
    'PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF ' +
    'TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/**
 * Country-code TLDs that are mostly sold as generic names (`.io`, `.tv`, `.me`, ...), so a host
 * under them says nothing of where the user is: Google's list of generic ccTLDs, plus ai, gg, sh, to.
 */
const VANITY_TLDS = new Set([
  'ad',
  'ai',
  'as',
  'bz',
  'cc',
  'cd',
  'co',
  'dj',
  'fm',
  'gg',
  'io',
  'la',
  'me',
  'ms',
  'nu',
  'sc',
  'sh',
  'sr',
  'tk',
  'to',
  'tv',
  'ws',
]);

/** The country a host's top-level domain names (`dsl.example.de` → DE, `x.co.uk` → GB); null for any other host. */
export function countryFromHost(host: string): string | null {
  return isIP(host) === 0 ? countryFromHostName(host) : null;
}

/** {@link countryFromHost} for a host known not to be an IP. */
function countryFromHostName(host: string): string | null {
  const tld = /\.([a-z]{2})\.?$/i.exec(host)?.[1]?.toLowerCase();
  if (!tld || VANITY_TLDS.has(tld)) return null;
  const code = tld === 'uk' ? 'GB' : tld.toUpperCase();
  return ISO_COUNTRIES.has(code) ? code : null;
}

interface GeoipLite {
  lookup(ip: string): { country?: string } | null;
}

/**
 * geoip-lite with its country data only: it reads the data directory named by GEODATADIR
 * once, when it is first required, and falls back to the country files when the city files
 * are missing. So, unless GEODATADIR is already set (the operator's own data), it is pointed
 * for that moment at a directory holding just the two country files.
 */
export function loadGeoipCountries(): IpCountryLookup {
  const require = createRequire(import.meta.url);
  const ownDataDir = process.env.GEODATADIR;
  let countryOnly: string | undefined;
  try {
    if (ownDataDir === undefined) {
      const dataDir = path.join(path.dirname(require.resolve('geoip-lite/package.json')), 'data');
      countryOnly = mkdtempSync(path.join(os.tmpdir(), 'geoip-country-'));
      for (const file of ['geoip-country.dat', 'geoip-country6.dat']) {
        try {
          symlinkSync(path.join(dataDir, file), path.join(countryOnly, file));
        } catch {
          copyFileSync(path.join(dataDir, file), path.join(countryOnly, file));
        }
      }
      process.env.GEODATADIR = countryOnly;
    }
    const geoip = require('geoip-lite') as GeoipLite;
    return (ip) => geoip.lookup(ip)?.country || null;
  } finally {
    if (ownDataDir === undefined) delete process.env.GEODATADIR;
    if (countryOnly) rmSync(countryOnly, { recursive: true, force: true });
  }
}

/** IPs remembered at most; past it the oldest answers are forgotten first. */
const DEFAULT_MAX_CACHED = 100_000;

export class CountryLocator {
  private readonly cache = new Map<string, string | null>();
  private lookup: IpCountryLookup | null = null;

  constructor(
    private readonly loadLookup: () => IpCountryLookup = loadGeoipCountries,
    private readonly maxCached = DEFAULT_MAX_CACHED,
  ) {}

  /** The country of an IP (cached). */
  ofIp(ip: string): string | null {
    const cached = this.cache.get(ip);
    if (cached !== undefined) return cached;
    this.lookup ??= this.loadLookup();
    const country = this.lookup(ip);
    if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(ip, country);
    return country;
  }

  /** The country of a user: their IP, else a host that is an IP, else the host's ccTLD. */
  countryOf(user: Pick<User, 'ip' | 'host'>): string | null {
    const fromIp = user.ip ? this.ofIp(user.ip) : null;
    if (fromIp) return fromIp;
    if (!user.host) return null;
    return isIP(user.host) !== 0 ? this.ofIp(user.host) : countryFromHostName(user.host);
  }
}

/** Set a user's country from what the model knows of them now, if it changed. */
export function locateUser(model: NetworkModel, locator: CountryLocator, nick: string): void {
  const user = model.users.get(nick);
  if (user) locateKnownUser(model, locator, user);
}

/** {@link locateUser} for a caller that has the user already. */
export function locateKnownUser(model: NetworkModel, locator: CountryLocator, user: User): void {
  const countryCode = locator.countryOf(user);
  if (countryCode !== user.countryCode) model.upsertUser(user.nick, { countryCode });
}

/**
 * RPL_WHOISHOST `378 me nick :is connecting from ident@host 192.0.2.1` (InspIRCd; `*@host` on UnrealIRCd):
 * an operator sees the real host and the IP.
 */
export function noteWhoisHost(message: IrcMessage, model: NetworkModel): void {
  if (message.command !== '378') return;
  const nick = message.params[1];
  const match = /\sfrom (?:\S*@)?(\S+) (\S+)$/.exec(message.params.at(-1) ?? '');
  if (!nick || !match || !model.users.get(nick)) return;
  const [, realHost, ip] = match;
  model.upsertUser(nick, isIP(ip!) === 0 ? { realHost } : { realHost, ip });
}
