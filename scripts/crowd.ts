// The crowd: simulated people on the loopback test network, for the demo and integration tests.
// CLI: node dist/scripts/crowd.js --clients 40 --ports 26667,26668 [--channels 6 | --channels '#a,#b']
//        [--per-client 2] [--chat-interval 15000] [--move-interval 0] [--webirc-every 4] [--webirc-pass webircpass]
//        [--prefix ''] [--seed 1] [--host 127.0.0.1]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { IrcClient } from '../test/support/irc-client.js';
import { NAMES } from './scale-crowd/plan.js';

/** Options of {@link startCrowd}. */
export interface CrowdOptions {
  host: string;
  /** Client ports; members are spread over them round-robin. */
  ports: number[];
  clients: number;
  channels: string[];
  /** Channels each member joins (default 2, at most channels.length). */
  perClient?: number;
  /** Mean time between two lines of one member; 0 = silent (default 20000). */
  chatIntervalMs?: number;
  /**
   * Mean time between two comings and goings of one member: it leaves one of its channels and joins it again a few
   * seconds later, or sets or clears its away message; 0 = none (default).
   */
  moveIntervalMs?: number;
  /** Every k-th member (0, k, 2k, ...) connects through WEBIRC with a public IP; 0 = none (default). */
  webircEvery?: number;
  webircPass?: string;
  nickPrefix?: string;
  seed?: number;
  /** Gap between two connection attempts (default 25 ms). */
  connectGapMs?: number;
}

/** One simulated person. */
export interface CrowdMember {
  nick: string;
  port: number;
  channels: string[];
  /** The public IP claimed through WEBIRC, or null for a plain 127.0.0.1 connection. */
  ip: string | null;
  /** ISO 3166 country code of `ip` (from {@link webircAddresses}), or null. */
  country: string | null;
  /** The client family, e.g. "irssi". */
  client: string;
  /** The full CTCP VERSION reply. */
  version: string;
}

/** A running crowd. */
export interface Crowd {
  clients: CrowdMember[];
  /** Makes one member say something in a channel it is in (or to any target). */
  say(nick: string, channel: string, text: string): void;
  /** Quits every member and stops the chatter. */
  stop(): Promise<void>;
}

/** A public address of a national ISP or well-known network, with its country in the packaged GeoLite2 data. */
export interface WebircAddress {
  ip: string;
  country: string;
  network: string;
}

/** The public IPs WEBIRC members claim, in assignment order. Only strings: no traffic goes there. */
export const webircAddresses: readonly WebircAddress[] = [
  { ip: '81.2.69.142', country: 'GB', network: 'Andrews & Arnold' },
  { ip: '91.0.10.20', country: 'DE', network: 'Deutsche Telekom' },
  { ip: '90.12.34.56', country: 'FR', network: 'Orange France' },
  { ip: '24.10.20.30', country: 'US', network: 'Charter' },
  { ip: '126.20.30.40', country: 'JP', network: 'SoftBank' },
  { ip: '200.147.35.149', country: 'BR', network: 'UOL' },
  { ip: '117.192.10.20', country: 'IN', network: 'BSNL' },
  { ip: '1.128.10.20', country: 'AU', network: 'Telstra' },
  { ip: '24.114.10.20', country: 'CA', network: 'Rogers' },
  { ip: '193.0.6.139', country: 'NL', network: 'RIPE NCC' },
  { ip: '78.64.10.20', country: 'SE', network: 'Telia' },
  { ip: '83.0.10.20', country: 'PL', network: 'Orange Polska' },
  { ip: '79.10.20.30', country: 'IT', network: 'Telecom Italia' },
  { ip: '80.58.10.20', country: 'ES', network: 'Telefonica' },
  { ip: '95.24.10.20', country: 'RU', network: 'Beeline' },
  { ip: '211.234.10.20', country: 'KR', network: 'SK Telecom' },
  { ip: '41.0.10.20', country: 'ZA', network: 'Telkom SA' },
  { ip: '187.128.10.20', country: 'MX', network: 'Telmex' },
  { ip: '122.56.10.20', country: 'NZ', network: 'Spark' },
  { ip: '85.0.10.20', country: 'CH', network: 'Swisscom' },
  { ip: '84.208.10.20', country: 'NO', network: 'Telenor' },
  { ip: '78.160.10.20', country: 'TR', network: 'Turk Telekom' },
  { ip: '91.152.10.20', country: 'FI', network: 'Elisa' },
  { ip: '181.0.10.20', country: 'AR', network: 'Telecom Argentina' },
];

/** Looks up the country of a crowd WEBIRC address; null for any other address. */
export function countryOf(ip: string): string | null {
  return webircAddresses.find((address) => address.ip === ip)?.country ?? null;
}

/** CTCP VERSION replies by client family, as those clients word them. */
export const clientVersions: readonly { client: string; version: string }[] = [
  { client: 'irssi', version: 'irssi v1.4.5 - running on Linux x86_64' },
  { client: 'WeeChat', version: 'WeeChat 4.1.1 (Dec  3 2023)' },
  { client: 'HexChat', version: 'HexChat 2.16.2 [x64] / Windows 10 [3.4GHz]' },
  { client: 'mIRC', version: 'mIRC v7.76 Khaled Mardam-Bey' },
  { client: 'Textual', version: 'Textual 7.2.3 (macOS 14.4)' },
  { client: 'The Lounge', version: 'The Lounge 4.4.3 -- https://thelounge.chat/' },
  { client: 'KiwiIRC', version: 'KiwiIRC 1.7.1' },
  { client: 'Quassel', version: 'Quassel IRC v0.14.0 (dist-git) -- https://quassel-irc.org' },
  { client: 'ZNC', version: 'ZNC 1.9.0 - https://znc.in' },
  { client: 'Konversation', version: 'Konversation 23.08.4' },
  { client: 'IRCCloud', version: 'IRCCloud' },
  { client: 'Halloy', version: 'Halloy 2024.12' },
  { client: 'senpai', version: 'senpai v0.3.0' },
  { client: 'gamja', version: 'gamja' },
];

/** A member's reasons for leaving a channel a while, and its away messages. */
const partings = ['brb', 'back in a bit', 'rejoining', 'client restart', 'switching networks'];
const aways = ['lunch', 'in a meeting', 'away from keyboard', 'walking the dog', 'asleep'];

const phrases = [
  'good morning everyone',
  'anyone tried the new release?',
  'brb, coffee',
  'that build is green again',
  'lol',
  'has anyone seen the netsplit earlier?',
  'works for me',
  'which client are you on?',
  'the docs say otherwise',
  'ping me when it is merged',
  'nice',
  'I will look into it tomorrow',
  'is the server slow for you too?',
  'thanks!',
  'o/',
  'what time zone are you in?',
];

/** mulberry32: a tiny deterministic PRNG in [0, 1). */
function randomGenerator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** The members a crowd with these options will have (nicks before any collision rename). Pure. */
export function planCrowd(options: CrowdOptions): CrowdMember[] {
  if (options.ports.length === 0) throw new Error('crowd options.ports must list at least one port');
  if (options.channels.length === 0) throw new Error('crowd options.channels must list at least one channel');
  const random = randomGenerator(options.seed ?? 1);
  const names = shuffled(NAMES, random);
  const perClient = Math.max(1, Math.min(options.perClient ?? 2, options.channels.length));
  let webircCount = 0;
  let plainCount = 0;
  return Array.from({ length: options.clients }, (_, index) => {
    const round = Math.floor(index / names.length);
    const nick = `${options.nickPrefix ?? ''}${names[index % names.length]}${round ? round : ''}`;
    // The first channel rotates so every channel gets members; the rest are random.
    const first = options.channels[index % options.channels.length] as string;
    const others = shuffled(
      options.channels.filter((channel) => channel !== first),
      random,
    ).slice(0, perClient - 1);
    const { client, version } = pick(clientVersions, random);
    const every = options.webircEvery ?? 0;
    const webirc = every > 0 && index % every === 0;
    const address = webirc ? webircAddresses[webircCount % webircAddresses.length] : undefined;
    // WEBIRC and plain members each alternate over the ports, so both kinds are on every server.
    const port = options.ports[(webirc ? webircCount++ : plainCount++) % options.ports.length] as number;
    return {
      nick,
      port,
      channels: [first, ...others],
      ip: address?.ip ?? null,
      country: address?.country ?? null,
      client,
      version,
    };
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function connectMember(member: CrowdMember, options: CrowdOptions, index: number): Promise<IrcClient> {
  let nick = member.nick;
  for (let attempt = 0; attempt < 5; attempt++) {
    const client = new IrcClient({
      host: options.host,
      port: member.port,
      nick,
      user:
        member.nick
          .toLowerCase()
          .replace(/[^a-z0-9]/g, '')
          .slice(0, 10) || 'crowd',
      realname: `crowd member ${index}`,
      ctcpVersion: member.version,
      keep: false,
      lite: true,
      registerTimeout: 30000,
      webirc: member.ip
        ? { password: options.webircPass ?? 'webircpass', gateway: 'crowdgw', hostname: member.ip, ip: member.ip }
        : undefined,
    });
    await client.connect();
    const result = await client.register();
    if (result.ok) {
      member.nick = client.nick;
      return client;
    }
    client.destroy();
    if (result.last.command !== '433') throw new Error(`crowd member ${nick} could not register: ${result.last.raw}`);
    nick = `${nick}_`;
  }
  throw new Error(`crowd member ${member.nick}: every nick variant is taken`);
}

/**
 * Connects a deterministic crowd (given the seed): members spread over the ports, join their
 * channels, chat now and then, answer CTCP VERSION. Resolves once every member has joined.
 */
export async function startCrowd(options: CrowdOptions): Promise<Crowd> {
  const members = planCrowd(options);
  const connections = new Map<CrowdMember, IrcClient>();
  const timers = new Set<NodeJS.Timeout>();
  let stopping = false;

  const stop = async (): Promise<void> => {
    stopping = true;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    await Promise.all([...connections.values()].map((client) => client.quit('leaving')));
  };

  try {
    const gap = options.connectGapMs ?? 25;
    const joined = members.map(async (member, index) => {
      // Paced: a handful of connects per InspIRCd registration tick, not a thundering herd.
      await delay(index * gap);
      const client = await connectMember(member, options, index);
      connections.set(member, client);
      // The server answers the channels in order, so the last channel's 366 ends the JOIN.
      const lastChannel = (member.channels.at(-1) ?? '').toLowerCase();
      const joinedAll = client.waitFor(
        (message) => message.command === '366' && message.params[1]?.toLowerCase() === lastChannel,
        { what: `366 ${lastChannel}`, timeout: 30000 },
      );
      client.send(`JOIN ${member.channels.join(',')}`);
      await joinedAll;
    });
    await Promise.all(joined);
  } catch (error) {
    await stop();
    throw error;
  }

  /** Run `act` in `ms`, unless the crowd stops first. */
  const later = (ms: number, act: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopping) act();
    }, ms);
    timers.add(timer);
  };

  const interval = options.chatIntervalMs ?? 20000;
  if (interval > 0) {
    members.forEach((member, index) => {
      const random = randomGenerator((options.seed ?? 1) * 7919 + index);
      const chat = (): void => {
        connections.get(member)?.send(`PRIVMSG ${pick(member.channels, random)} :${pick(phrases, random)}`);
        later(interval * (0.5 + random()), chat);
      };
      later(interval * (0.5 + random()), chat);
    });
  }

  const moves = options.moveIntervalMs ?? 0;
  if (moves > 0) {
    members.forEach((member, index) => {
      const random = randomGenerator((options.seed ?? 1) * 104_729 + index);
      let away = false;
      const move = (): void => {
        const client = connections.get(member);
        if (client) {
          if (random() < 0.5) {
            // Back within 8 s: with a mean of 16 s or more between moves, before its next one.
            const channel = pick(member.channels, random);
            client.send(`PART ${channel} :${pick(partings, random)}`);
            later(3000 + 5000 * random(), () => client.send(`JOIN ${channel}`));
          } else {
            away = !away;
            client.send(away ? `AWAY :${pick(aways, random)}` : 'AWAY');
          }
        }
        later(moves * (0.5 + random()), move);
      };
      later(moves * (0.5 + random()), move);
    });
  }

  return {
    clients: members,
    say(nick, channel, text) {
      const member = members.find((candidate) => candidate.nick === nick);
      const client = member && connections.get(member);
      if (!client) throw new Error(`no crowd member is called ${nick}`);
      client.send(`PRIVMSG ${channel} :${text}`);
    },
    stop,
  };
}

function parseArgs(argv: string[]): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) args.set(arg.slice(2), 'true');
    else {
      args.set(arg.slice(2), next);
      i++;
    }
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const env = process.env;
  const channelArg = args.get('channels') ?? '6';
  const channels = /^\d+$/.test(channelArg)
    ? Array.from({ length: Number(channelArg) }, (_, i) => `#crowd${i}`)
    : channelArg.split(',').filter(Boolean);
  const options: CrowdOptions = {
    host: args.get('host') ?? '127.0.0.1',
    ports: (args.get('ports') ?? `${env.IRC_HUB_PORT ?? 16667},${env.IRC_LEAF_PORT ?? 16668}`).split(',').map(Number),
    clients: Number(args.get('clients') ?? 40),
    channels,
    perClient: Number(args.get('per-client') ?? 2),
    chatIntervalMs: Number(args.get('chat-interval') ?? 15000),
    moveIntervalMs: Number(args.get('move-interval') ?? 0),
    webircEvery: Number(args.get('webirc-every') ?? 4),
    webircPass: args.get('webirc-pass') ?? env.IRC_WEBIRC_PASS ?? 'webircpass',
    nickPrefix: args.get('prefix') ?? '',
    seed: Number(args.get('seed') ?? 1),
  };
  const crowd = await startCrowd(options);
  for (const member of crowd.clients) {
    console.log(
      `${member.nick.padEnd(14)} port ${member.port}  ${member.channels.join(',').padEnd(20)} ${(member.ip ? `${member.ip} (${member.country})` : '127.0.0.1').padEnd(24)} ${member.version}`,
    );
  }
  console.log(`crowd: ${crowd.clients.length} clients connected; Ctrl-C to stop`);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    void crowd.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(`crowd: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
