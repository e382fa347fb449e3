/** The SYNC command: a whole sync now, for administrators, answered with the counts. */
import type { NetworkModel } from '../../lib/sdk.js';
import type { CollectorUnit } from './unit.js';

/** SYNC as a unit of the collector; `whole` is the sync unit's. */
export function syncCommandUnit(model: NetworkModel, whole: () => Promise<void>): CollectorUnit {
  return {
    name: 'SYNC command',
    commands: [
      {
        name: 'SYNC',
        usage: '',
        args: [],
        help: 'Runs a full sync of the network now (LUSERS, LINKS, LIST, WHO, STATS P) and reports the counts.',
        adminOnly: true,
        // A sync of a big network takes longer than an answer may wait; its answer carries no secret.
        slow: true,
        async handle({ reply }) {
          await whole();
          const { stats } = model;
          reply(
            `Synced at ${stats.syncedAt ?? 'never'}: ${model.users.size} users, ${model.channels.size} channels, ` +
              `${model.servers.size} servers (network says ${stats.users ?? '?'} users)${stats.syncedAsOperator ? ', as an operator' : ''}.`,
          );
        },
      },
    ],
  };
}
