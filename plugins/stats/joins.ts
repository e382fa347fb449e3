/**
 * Which channels the bot sits in (where it then sees every change live):
 * the configured list, or with `join: "*"` the biggest public channels up to
 * `max_channels`, re-checked at every sync.
 */
import type { Channel, IrcMessage, Logger, NetworkModel } from '../../lib/sdk.js';
import type { SyncContext } from './context.js';
import {
  ERR_BADCHANNELKEY,
  ERR_BANNEDFROMCHAN,
  ERR_CHANNELISFULL,
  ERR_INVITEONLYCHAN,
  ERR_NEEDREGGEDNICK,
  ERR_OPERONLY,
  ERR_SECUREONLYCHAN,
  ERR_TOOMANYCHANNELS,
} from './numerics.js';
import type { CollectorUnit, LineHandler } from './unit.js';

/** Channels per JOIN or PART line, well under the 512-byte line limit. */
const CHANNELS_PER_LINE = 10;
/** A channel that refused the bot is not asked again for this long. */
const REFUSAL_BACKOFF_MS = 30 * 60 * 1000;

/** JOIN refusals: too many channels, channel full, invite only, banned, bad key, registered users, TLS, operators only. */
const REFUSALS: readonly string[] = [
  ERR_TOOMANYCHANNELS,
  ERR_CHANNELISFULL,
  ERR_INVITEONLYCHAN,
  ERR_BANNEDFROMCHAN,
  ERR_BADCHANNELKEY,
  ERR_NEEDREGGEDNICK,
  ERR_SECUREONLYCHAN,
  ERR_OPERONLY,
];

/** Channels that refused the bot, by folded name, with when they may be tried again. */
export interface JoinState {
  refusedUntil: Map<string, number>;
  /** Until then the bot joins nothing more: the server said it is in too many channels. */
  fullUntil: number;
  /**
   * The channels the bot sat in when the server last said it is in too many (405), on this connection: the
   * most it is let in (an operator's allowance, which CHANLIMIT does not tell), so that it does not try again
   * past it every 30 minutes.
   */
  fullAt: number | null;
}

export function createJoinState(): JoinState {
  return { refusedUntil: new Map(), fullUntil: 0, fullAt: null };
}

/**
 * Remember a refused JOIN, so the sync after it does not ask again (and again); after "too many channels" (405),
 * as many channels as the bot sits in then are the most it joins on this connection. Returns the channel
 * refused, or null when `message` is no refusal.
 */
export function noteJoinRefusal(
  message: IrcMessage,
  state: JoinState,
  model: NetworkModel,
  now = Date.now(),
): string | null {
  if (!REFUSALS.includes(message.command)) return null;
  const channel = message.params[1];
  if (!channel) return null;
  if (message.command === ERR_TOOMANYCHANNELS) {
    state.fullUntil = now + REFUSAL_BACKOFF_MS;
    const joined = joinedCount(model);
    if (joined > 0) state.fullAt = joined;
  }
  state.refusedUntil.set(model.fold(channel), now + REFUSAL_BACKOFF_MS);
  return channel;
}

/** The channels the bot sits in. */
function joinedCount(model: NetworkModel): number {
  let joined = 0;
  for (const channel of model.channels.all()) if (channel.joined) joined++;
  return joined;
}

/** Users in a channel other than the bot (LIST and NAMES count the bot too). */
function othersIn(channel: Channel): number {
  return channel.joined ? channel.users - 1 : channel.users;
}

/**
 * What to join and what to leave, given the model after LIST. Channels that refused the bot
 * lately, and channels that are invite-only (+i) or keyed (+k), are not tried. Pure.
 */
export function planJoins(
  context: Pick<SyncContext, 'model' | 'config'> & { limit?: number | null },
  state: JoinState = createJoinState(),
  now = Date.now(),
): { join: string[]; part: string[] } {
  const { model, config } = context;
  const channels = [...model.channels.all()];
  const mayTry = (name: string): boolean => (state.refusedUntil.get(model.fold(name)) ?? 0) <= now;
  const full = now < state.fullUntil;
  if (config.join !== '*') {
    if (full) return { join: [], part: [] };
    return { join: config.join.filter((name) => !model.channels.get(name)?.joined && mayTry(name)), part: [] };
  }
  const max = Math.min(
    config.max_channels,
    context.limit ?? Number.POSITIVE_INFINITY,
    state.fullAt ?? Number.POSITIVE_INFINITY,
  );
  const wanted = channels
    .filter((channel) => !channel.hidden && othersIn(channel) > 0)
    .filter((channel) => channel.joined || (!/[ik]/.test(channel.modes) && mayTry(channel.name)))
    .sort((a, b) => othersIn(b) - othersIn(a) || (a.name < b.name ? -1 : 1))
    .slice(0, max);
  const wantedKeys = new Set(wanted.map((channel) => model.fold(channel.name)));
  // Left alone, the bot would keep an abandoned channel alive; a channel turned secret is none of its business.
  const part = channels
    .filter((channel) => channel.joined && !wantedKeys.has(model.fold(channel.name)))
    .filter((channel) => channel.hidden || othersIn(channel) <= 0);
  // A channel that fell out of the biggest is kept (its line counts go on, and sizes near the edge change all
  // the time): a bigger one is joined only where that leaves the bot within `max`.
  const staying = joinedCount(model) - part.length;
  return {
    join: full
      ? []
      : wanted
          .filter((channel) => !channel.joined)
          .slice(0, Math.max(0, max - staying))
          .map((channel) => channel.name),
    part: part.map((channel) => channel.name),
  };
}

/**
 * Send the PARTs and JOINs the plan asks for, a few channels per line through the paced queue: the PARTs first, so
 * that a channel joined in the place of one left finds the bot below the server's limit.
 */
export function joinChannels(context: SyncContext, state: JoinState): void {
  const { irc } = context;
  // An operator may be allowed more channels than CHANLIMIT says; a 405 stops it where the server does.
  const limit = irc.state.isOperator ? null : irc.state.profile.channelLimit;
  const { join, part } = planJoins({ ...context, limit }, state);
  for (let start = 0; start < part.length; start += CHANNELS_PER_LINE) {
    irc.send('PART', part.slice(start, start + CHANNELS_PER_LINE).join(','), 'Channel no longer collected');
  }
  for (let start = 0; start < join.length; start += CHANNELS_PER_LINE) {
    irc.send('JOIN', join.slice(start, start + CHANNELS_PER_LINE).join(','));
  }
}

/**
 * JOIN refusals as a unit of the collector: each is noted against this connection's joins (`joins`) and logged,
 * once per channel and 30 minutes at most: why the bot is not in a channel it would sit in.
 */
export function joinRefusalsUnit({
  model,
  logger,
  joins,
}: {
  model: NetworkModel;
  logger: Logger;
  joins: () => JoinState;
}): CollectorUnit {
  const refusal: LineHandler = (message) => {
    const refused = noteJoinRefusal(message, joins(), model);
    if (refused === null) return;
    logger.info('join refused', { channel: refused, reply: message.command, text: message.params.at(-1) ?? '' });
  };
  return { name: 'join refusals', lines: Object.fromEntries(REFUSALS.map((numeric) => [numeric, refusal])) };
}
