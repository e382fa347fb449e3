/**
 * The scale crowd's plan: who connects, to which server, in which channels, with which flags.
 * Pure and deterministic for a seed, so a run can be repeated and the parent and its workers
 * agree on it without talking.
 *
 * Channel sizes follow a power law by rank: the channel of rank r (1 = biggest) plans
 * max(1, round(biggest / r^0.9)) members, so at 50,000 users the biggest three plan 3,000, 1,608
 * and 1,113 members and the tail is channels of 1–3 (at 100,000 users the same: the biggest is 3,000 at
 * most). Members are drawn at random, each user in at most `maxChannelsPerUser` channels; users in no
 * channel at all are common, as on real networks.
 */

/** Options of {@link planScaleCrowd}. */
export interface ScalePlanOptions {
  users: number;
  channels: number;
  /**
   * Planned members of the biggest channel; default 3,000 per 50,000 users (at least 2), and at most 3,000: the
   * biggest networks' biggest channels hold 2,000–3,000 users, not more with the network's size.
   */
  biggest?: number;
  /** How fast channel sizes fall with rank; default 0.9. */
  exponent?: number;
  /** Share of users who set +i; default 0.1. */
  invisibleShare?: number;
  /** Share of users who are away; default 0.05. */
  awayShare?: number;
  /** At most this many channels per user (the server's `<connect maxchans>`); default 20. */
  maxChannelsPerUser?: number;
  seed?: number;
}

/** One planned user. */
export interface PlannedUser {
  /** The nick the user first connects with; a reconnect or a nick change adds a suffix. */
  nick: string;
  ident: string;
  invisible: boolean;
  away: boolean;
  /** Indices into {@link ScalePlan.channels}. */
  channels: number[];
}

export interface ScalePlan {
  /** Channel names, biggest planned first. */
  channels: string[];
  /** Planned members of each channel (same order). */
  sizes: number[];
  users: PlannedUser[];
  /** Sum of {@link sizes}: the planned channel memberships. */
  memberships: number;
}

/** mulberry32: a small deterministic PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** The names people are given (with a number after them where the network needs more); the demo's crowd too. */
export const NAMES = [
  'alice',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'niaj',
  'olivia',
  'peggy',
  'rupert',
  'sybil',
  'trent',
  'victor',
  'walter',
  'yuki',
  'zoe',
  'amir',
  'chen',
  'dmitri',
  'fatima',
  'giulia',
  'hana',
  'ines',
  'jonas',
  'kofi',
  'lars',
  'maya',
  'nils',
  'omar',
  'priya',
  'quentin',
  'rosa',
  'sven',
  'tariq',
  'ulla',
  'vera',
  'wen',
  'xavier',
  'yara',
  'zane',
  'bruno',
  'clara',
  'emil',
];

/** The planned size of the channel of `rank` (1 = biggest). */
export function channelSize(rank: number, biggest: number, exponent: number): number {
  return Math.max(1, Math.round(biggest / rank ** exponent));
}

/** The nick of user `index` at its first connection. Nicks start with a letter, as WHO chunks by first letter. */
export function nickOf(index: number): string {
  return `${NAMES[index % NAMES.length]}${index}`;
}

export function planScaleCrowd(options: ScalePlanOptions): ScalePlan {
  const { users, channels } = options;
  if (!Number.isInteger(users) || users < 1)
    throw new Error(`scale crowd: users must be an integer >= 1, got ${users}`);
  if (!Number.isInteger(channels) || channels < 1 || channels > users) {
    throw new Error(`scale crowd: channels must be an integer from 1 to users (${users}), got ${channels}`);
  }
  const biggest = Math.min(users, options.biggest ?? Math.min(3000, Math.max(2, Math.round((3000 * users) / 50000))));
  const exponent = options.exponent ?? 0.9;
  const maxChannels = options.maxChannelsPerUser ?? 20;
  const random = seededRandom(options.seed ?? 1);
  const invisibleShare = options.invisibleShare ?? 0.1;
  const awayShare = options.awayShare ?? 0.05;

  const planned: PlannedUser[] = Array.from({ length: users }, (_, index) => ({
    nick: nickOf(index),
    ident: `u${index.toString(36)}`,
    invisible: random() < invisibleShare,
    away: random() < awayShare,
    channels: [],
  }));
  const names = Array.from({ length: channels }, (_, index) => `#ch${index + 1}`);
  const sizes = names.map((_, index) => channelSize(index + 1, biggest, exponent));
  const capacity = users * maxChannels;
  const memberships = sizes.reduce((sum, size) => sum + size, 0);
  if (memberships > capacity / 2) {
    throw new Error(
      `scale crowd: ${memberships} planned memberships do not fit ${users} users of at most ${maxChannels} channels; ` +
        'use more users or fewer channels',
    );
  }
  // Channels are filled in rank order; a user already in the channel or at the cap is drawn again.
  const inChannel = new Uint8Array(users);
  sizes.forEach((size, channel) => {
    const chosen: number[] = [];
    while (chosen.length < size) {
      const user = Math.floor(random() * users);
      const member = planned[user]!;
      if (inChannel[user] === 1 || member.channels.length >= maxChannels) continue;
      inChannel[user] = 1;
      member.channels.push(channel);
      chosen.push(user);
    }
    for (const user of chosen) inChannel[user] = 0;
  });
  return { channels: names, sizes, users: planned, memberships };
}
