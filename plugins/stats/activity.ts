/**
 * Counting activity: every PRIVMSG, NOTICE and CTCP ACTION a user sends to a
 * channel the bot is in is one line for that channel and that nick. Other CTCP
 * (VERSION, PING, ...) is not chat; the bot's own lines and server notices are
 * not counted.
 */
import type { IrcMessage, IrcPort, NetworkModel } from '../../lib/sdk.js';
import type { ActivitySlice } from './model/activity.js';
import { isSelfKey } from './live.js';

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
