/**
 * A big network built straight through the model's named methods, as the
 * collector would after a sync: users with their WHO fields, channels from
 * LIST with topics, and the bot's joined channels with their members.
 */
import type { NetworkModel } from '../lib/model/network.js';
import { seededRandom } from './common.js';

export interface ModelSize {
  users: number;
  channels: number;
  /** Channels the bot is in (members known); the biggest ones, as with `join: "*"`. */
  joinedChannels?: number;
  /** Channels each user is in, among the joined ones. */
  channelsPerUser?: number;
  seed?: number;
}

const SERVERS = ['hub.example.net', 'leaf1.example.net', 'leaf2.example.net', 'leaf3.example.net'];
const WORDS = ['irc', 'linux', 'help', 'chat', 'music', 'games', 'dev', 'news', 'art', 'code', 'web', 'rust'];

/** Nick `index`; a third start with a capital, as many nicks on real networks do (the collector folds them). */
export function nickOf(index: number): string {
  return `${index % 3 === 1 ? 'User' : 'user'}${index.toString(36)}_${index % 97}`;
}

/** Channel `index`; one in five is named with capitals (`#Chan-Linux-5`). */
export function channelOf(index: number): string {
  const word = WORDS[index % WORDS.length]!;
  return index % 5 === 0 ? `#Chan-${word[0]!.toUpperCase()}${word.slice(1)}-${index}` : `#chan-${word}-${index}`;
}

/**
 * The WHO fields of user `index` (nick {@link nickOf}): what a server shows of them wherever they appear,
 * and the real host an operator sees (one user in ten has a cloak).
 */
export function identityOf(index: number): {
  ident: string;
  host: string;
  realHost: string;
  ip: string;
  realname: string;
  account: string | null;
} {
  const octets = [10 + (index % 200), (index >> 8) & 255, index & 255, 1 + (index % 250)];
  const realHost = `${octets.join('-')}.dyn.isp${index % 40}.example.com`;
  return {
    ident: `~u${index % 1000}`,
    host: index % 10 === 0 ? `isp${index % 40}-${((index * 2654435761) >>> 0).toString(16)}.cloak.example` : realHost,
    realHost,
    ip: octets.join('.'),
    realname: `Real Name ${index}`,
    account: index % 3 === 0 ? nickOf(index) : null,
  };
}

/** Fill `model` (connected, synced as an operator) with a deterministic network of the given size. */
export function populate(model: NetworkModel, size: ModelSize): void {
  const random = seededRandom(size.seed ?? 42);
  const joined = Math.min(size.joinedChannels ?? 200, size.channels);
  const perUser = Math.min(size.channelsPerUser ?? 2, joined);
  if (!model.connected) model.connectionOpened('rfc1459');
  for (let index = 0; index < size.channels; index++) {
    model.upsertChannel(channelOf(index), {
      users: 0,
      topic: `Welcome to ${channelOf(index)} | rules: be nice | ${WORDS[(index * 7) % WORDS.length]} talk`,
      modes: index % 3 === 0 ? '+nt' : '+cnt',
      hidden: index % 50 === 49,
      joined: index < joined,
    });
  }
  for (let index = 0; index < size.users; index++) {
    const nick = nickOf(index);
    model.upsertUser(nick, {
      ...identityOf(index),
      server: SERVERS[index % SERVERS.length]!,
      away: index % 11 === 0,
      isOperator: index % 1000 === 0,
    });
    for (let slot = 0; slot < perUser; slot++) {
      // Skewed towards the first channels: a few big ones and a long tail, as on real networks.
      const channel = Math.floor(joined * random() ** 2);
      model.addMember(channelOf(channel), nick, random() < 0.05 ? '@' : '');
    }
  }
  // LIST counts for the channels the bot is not in.
  for (let index = joined; index < size.channels; index++) {
    model.upsertChannel(channelOf(index), { users: 1 + Math.floor(200 * random() ** 3) });
  }
  model.updateStats({
    users: size.users,
    invisible: Math.floor(size.users / 3),
    channels: size.channels,
    operators: Math.ceil(size.users / 1000),
    servers: SERVERS.length + 1,
    maxUsers: size.users,
  });
  model.markSynced(true);
}
