/** What every step of a sync works with; its own file so the steps and the sync that runs them do not import each other. */
import type { IrcPort, Logger, NetworkModel } from '../../lib/sdk.js';
import type { StatsConfig } from './schema.js';

export interface SyncContext {
  irc: IrcPort;
  model: NetworkModel;
  logger: Logger;
  config: StatsConfig;
  /** The requests go ahead of the bot's other output (a topology check after a split). */
  urgent?: boolean;
}
