/**
 * The shape every part of the collector has: a unit declares what it reacts to (lines by command, model
 * changes, timers, the connection's start and end) and the commands it answers, and the plugin's start
 * registers every unit with one loop (collector.ts), as The Lounge registers its IRC events. A unit keeps its
 * own state in its closure; what several share is in the collector's context.
 */
import type { Channel, CommandDefinition, IrcMessage, User } from '../../lib/sdk.js';

/** Reads one line. It runs for every line of its command, so it does no more than its command needs. */
export type LineHandler = (message: IrcMessage) => void;

/** What a unit does when the model changes; the collector looks the user or channel up once for all of them. */
export interface ModelReactions {
  /** A user was added or changed. */
  userChanged?: (user: User) => void;
  /** A channel gained a member, or a LIST (or its own replies) gave its count; `key` is its folded name. */
  channelCounted?: (channel: Channel, key: string) => void;
  /** The model was marked synced. */
  synced?: () => void;
}

/** A task run every `everyMs` while the plugin runs (a throw is logged with the plugin's name). */
export interface UnitTimer {
  everyMs: number;
  run: () => void;
}

export interface CollectorUnit {
  /** What the unit does, in a word or two: the wiring test and the docs name units by it. */
  readonly name: string;
  /**
   * Its line handlers, by command or numeric (`JOIN`, `353`, named in numerics.ts): with the other units' handlers
   * they make one table, built once, so a line costs one lookup and the handlers of its command.
   */
  readonly lines?: Readonly<Record<string, LineHandler>>;
  readonly reactions?: ModelReactions;
  readonly timers?: readonly UnitTimer[];
  readonly commands?: readonly CommandDefinition[];
  /** The connection is registered, opered and in bot mode, and the connection's sync state is new. */
  readonly onReady?: () => void;
  /** The connection is gone. */
  readonly onDisconnected?: () => void;
  /** The plugin stops. */
  readonly onStop?: () => void;
}
