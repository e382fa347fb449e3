/**
 * Which country each user connects from: the country of their IP (which the bot
 * sees as an operator, through WHOX `%i` or WHOIS 378) in a country database in
 * MaxMind's format (`.mmdb`); else, when the host the network shows is an IP, that
 * IP's country; else the country-code top-level domain of the host; else unknown.
 *
 * The database is the GeoLite2 country data packaged on npm, or the operator's own
 * file (`geoip_database`). It is read whole into memory at start (about 9 MB for the
 * packaged one). Answers are cached per IP.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Reader, type CountryResponse } from 'maxmind';
import { errorMessage, type IrcMessage, type Logger, type NetworkModel, type User } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import { RPL_WHOISACTUALLY, RPL_WHOISHOST } from './numerics.js';
import type { CollectorUnit, LineHandler } from './unit.js';

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

/**
 * The country database read when `geoip_database` is not set: GeoLite2 country data, as the package ships it
 * (the build copies it to `dist/geoip/` from @ip-location-db/geolite2-country-mmdb).
 */
export function packagedCountryDatabase(): string {
  return fileURLToPath(new URL('../../geoip/geolite2-country.mmdb', import.meta.url));
}

/** A country database read into memory. */
export interface CountryDatabase {
  lookup: IpCountryLookup;
  /** The `database_type` of its metadata, e.g. `GeoLite2-Country`. */
  type: string;
  /** When it was built. */
  built: Date;
}

/**
 * A record of a country database: MaxMind's GeoLite2 / GeoIP2 Country and City (and DB-IP's lite
 * databases) give `country.iso_code`, the packaged ip-location-db data a flat `country_code`. `country`
 * is where the network is used, not `registered_country` (who holds it).
 */
type CountryRecord = CountryResponse & { readonly country_code?: string };

/** Every `.mmdb` file ends with its metadata, which starts with this marker. */
const MMDB_METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
/** Database types that map IPs to countries: MaxMind's, DB-IP's and ip-location-db's names. */
const COUNTRY_DATABASE_TYPE = /country|city|enterprise/i;
const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
const FIX =
  "give the path of a country database in MaxMind's format, such as the GeoLite2-Country.mmdb geoipupdate writes";

/**
 * Read a country database (`.mmdb`) whole. Throws an error that names the file, what is wrong with it
 * and the fix when it cannot be read or is not a country database.
 */
export function openCountryDatabase(file: string): CountryDatabase {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read ${file} (${errorMessage(error)}): ${FIX}`, { cause: error });
  }
  if (data.subarray(0, 2).equals(GZIP_MAGIC)) {
    throw new Error(`${file} is gzip-compressed: unpack it (gunzip) and give the .mmdb file`);
  }
  if (data.lastIndexOf(MMDB_METADATA_MARKER) === -1) {
    throw new Error(`${file} is not a MaxMind DB (.mmdb) file: ${FIX}`);
  }
  let reader: Reader<CountryRecord>;
  try {
    reader = new Reader<CountryRecord>(data);
  } catch (error) {
    throw new Error(`${file} is not a readable MaxMind DB (.mmdb) file (${errorMessage(error)}): ${FIX}`, {
      cause: error,
    });
  }
  const { databaseType: type, buildEpoch: built, ipVersion } = reader.metadata;
  if (!COUNTRY_DATABASE_TYPE.test(String(type))) {
    throw new Error(`${file} is a "${type}" database, which has no countries: ${FIX}`);
  }
  // One string per country code, shared by every answer, rather than one per IP decoded.
  const codes = new Map<string, string>();
  const lookup: IpCountryLookup = (ip) => {
    let version = isIP(ip);
    let address = ip;
    const mapped = version === 6 ? IPV4_MAPPED.exec(ip)?.[1] : undefined;
    if (mapped) {
      address = mapped;
      version = 4;
    }
    // An IPv4-only database walks an IPv6 address to some unrelated record.
    if (version === 0 || (version === 6 && ipVersion !== 6)) return null;
    const record = reader.get(address);
    const code = record?.country?.iso_code ?? record?.country_code;
    if (!code) return null;
    let shared = codes.get(code);
    if (shared === undefined) codes.set(code, (shared = code));
    return shared;
  };
  return { lookup, type, built };
}

/**
 * The collector's lookup: the operator's database when `file` (`geoip_database`) is set, which must be
 * right or the plugin does not start; else the packaged one, without which (a broken install) countries
 * come from host names only.
 */
export function loadCountryLookup(file: string | null, logger: Logger): IpCountryLookup {
  const started = Date.now();
  let database: CountryDatabase;
  try {
    database = openCountryDatabase(file ?? packagedCountryDatabase());
  } catch (error) {
    if (file !== null) {
      throw new Error(
        `config.plugins.stats.geoip_database: ${errorMessage(error)} (or set it to null for the packaged GeoLite2 data)`,
        { cause: error },
      );
    }
    logger.warn('the packaged country database could not be read; countries come from host names only', {
      error: errorMessage(error),
      fix: 'reinstall the package (or npm run build in a clone), or set plugins.stats.geoip_database',
    });
    return () => null;
  }
  logger.info('country database loaded', {
    file: file ?? 'packaged GeoLite2',
    type: database.type,
    built: database.built.toISOString().slice(0, 10),
    ms: Date.now() - started,
  });
  return database.lookup;
}

/** IPs remembered at most; past it the oldest answers are forgotten first. */
const DEFAULT_MAX_CACHED = 100_000;

export class CountryLocator {
  private readonly cache = new Map<string, string | null>();

  constructor(
    private readonly lookup: IpCountryLookup,
    private readonly maxCached = DEFAULT_MAX_CACHED,
  ) {}

  /** The country of an IP (cached). */
  ofIp(ip: string): string | null {
    const cached = this.cache.get(ip);
    if (cached !== undefined) return cached;
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
 * What an operator's WHOIS says of where a user connects from:
 * - RPL_WHOISHOST `378 me nick :is connecting from ident@host 192.0.2.1` (InspIRCd, ngIRCd; `*@host` on
 *   UnrealIRCd): the real host and the IP;
 * - RPL_WHOISACTUALLY `338 me nick 192.0.2.1 :actually using host`, or with `ident@host` before the IP
 *   (ircd-hybrid 8.2, Charybdis, Solanum, ircu): the IP, and the real host where it is given.
 */
export function noteWhoisHost(message: IrcMessage, model: NetworkModel): void {
  if (message.command === RPL_WHOISACTUALLY) return noteWhoisActually(message, model);
  if (message.command !== RPL_WHOISHOST) return;
  const nick = message.params[1];
  const match = /\sfrom (?:\S*@)?(\S+) (\S+)$/.exec(message.params.at(-1) ?? '');
  if (!nick || !match || !model.users.get(nick)) return;
  const [, realHost, ip] = match;
  model.upsertUser(nick, isIP(ip!) === 0 ? { realHost } : { realHost, ip });
}

function noteWhoisActually(message: IrcMessage, model: NetworkModel): void {
  const [, nick, ...rest] = message.params;
  const words = rest.slice(0, -1);
  const ip = words.find((word) => isIP(word) !== 0);
  if (!nick || !ip || !model.users.get(nick)) return;
  const realHost = words.find((word) => word.includes('@'))?.replace(/^[^@]*@/, '');
  model.upsertUser(nick, realHost ? { realHost, ip } : { ip });
}

/**
 * Countries as a unit of the collector: every user the model adds or changes is located again, and the WHOIS
 * replies that carry an IP (each server sends the one it has) give the real host and IP, wherever the WHOIS came
 * from.
 */
export function countriesUnit({ model, config, logger }: CollectorContext): CollectorUnit {
  const locator = new CountryLocator(loadCountryLookup(config.geoip_database, logger));
  const whoisHost: LineHandler = (message) => noteWhoisHost(message, model);
  return {
    name: 'countries',
    lines: { [RPL_WHOISHOST]: whoisHost, [RPL_WHOISACTUALLY]: whoisHost },
    reactions: { userChanged: (user) => locateKnownUser(model, locator, user) },
  };
}
