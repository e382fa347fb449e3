/**
 * Counting activity: every PRIVMSG, NOTICE and CTCP ACTION a user sends to a
 * channel the bot is in is one line for that channel and that nick. Other CTCP
 * (VERSION, PING, ...) is not chat; the bot's own lines and server notices are
 * not counted. The activity unit also keeps the channels' records and today's
 * peaks, and tells the store of them.
 */
import type { IrcMessage, IrcPort, NetworkModel } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import type { ActivitySlice } from './model/activity.js';
import type { ChannelRecordsSlice } from './model/channel-records.js';
import { DAY_MS } from './model/history.js';
import { isSelfKey } from './live.js';
import type { CollectorUnit, LineHandler } from './unit.js';

export interface ActivityContext {
  irc: IrcPort;
  model: NetworkModel;
  /** Folds names as the model does (the collector gives it `model.fold`): the keys are folded once, by the model. */
  activity: ActivitySlice;
}

/** Whether a PRIVMSG or NOTICE text is a chat line: plain text or a CTCP ACTION. */
export function isChatLine(text: string): boolean {
  if (!text.startsWith('\x01')) return true;
  return /^\x01ACTION(?: |\x01|$)/.test(text);
}

/** Count `message` if it is a chat line in one of the bot's channels; returns whether it counted. */
export function countLine(message: IrcMessage, { irc, model, activity }: ActivityContext, at: Date): boolean {
  if (message.command !== 'PRIVMSG' && message.command !== 'NOTICE') return false;
  const [target, text = ''] = message.params;
  const source = message.source;
  // Only users' lines count; a server's name has a dot, which no nick may have.
  if (!target || !source || source.nick.includes('.')) return false;
  const { nick } = source;
  // Each name is folded once, for the self check, the channel lookup and the counts alike.
  const nickKey = model.fold(nick);
  if (isSelfKey(nick, nickKey, irc, model)) return false;
  const channelKey = model.fold(target);
  const channel = model.channels.byKey(channelKey);
  if (!channel?.joined || !isChatLine(text)) return false;
  activity.recordFolded(channelKey, channel.name, nickKey, nick, channel.hidden, at);
  return true;
}

/**
 * Activity as a unit of the collector: it counts the chat lines, keeps every channel's record of users and
 * today's peak of those the bot is in, and tells the store of both every `save_seconds` and at stop.
 */
export function activityUnit(
  context: CollectorContext,
  { activity, records }: { activity: ActivitySlice; records: ChannelRecordsSlice },
): CollectorUnit {
  const { model, config, now } = context;
  // Made once: the handler runs for two lines in three.
  const counting: ActivityContext = { irc: context.irc, model, activity };
  const count: LineHandler = (message) => void countLine(message, counting, now());
  /**
   * Activity counts change with every line, and channel records with every count that passes one: the store
   * hears of them every `save_seconds` (and at stop), in the one write the activity costs anyway. Once a day,
   * the records of channels gone for the retention are forgotten (while synced: the model has every channel).
   */
  const announce = (): void => {
    const at = new Date();
    activity.rollover(at);
    if (activity.takeChanges()) model.changed({ slice: 'activity', kind: 'counts' });
    if (model.ready) {
      const before = at.getTime() - config.retention_days * DAY_MS;
      records.forget(activity.dateOf(at), (key) => model.channels.byKey(key) !== undefined, before);
    }
    if (records.takeChanges()) model.changed({ slice: 'channel-records', kind: 'records' });
  };
  return {
    name: 'activity',
    lines: { PRIVMSG: count, NOTICE: count },
    reactions: {
      // A member more, or a LIST count: every channel's record, and today's peak of those the bot is in.
      channelCounted(channel, key) {
        const at = now();
        records.note(channel.name, channel.users, at.getTime(), key);
        if (channel.joined) activity.notePeak(channel.name, channel.users, channel.hidden, at);
      },
    },
    timers: [{ everyMs: config.save_seconds * 1000, run: announce }],
    onStop: announce,
  };
}
