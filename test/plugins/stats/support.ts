/**
 * The collector's tests: the stats plugin alone in the real host, on the fake connection to a fake server that
 * answers for a small network (testing/harness.ts), so that each test reads as a conversation with it.
 */
import type { Test } from 'tap';
import type { PluginDefinition } from '../../../lib/plugin.js';
import stats from '../../../plugins/stats/index.js';
import type { FakeTransport } from '../../../testing/fake-irc.js';
import { startHarness, type Harness, type HarnessOptions } from '../../../testing/harness.js';

/** The ISUPPORT of the test network's InspIRCd 3: WHOX, and LIST by user count and by age (ELIST). */
export const INSPIRCD_ISUPPORT = 'CASEMAPPING=rfc1459 PREFIX=(ov)@+ CHANMODES=b,k,l,MRimnprst ELIST=CMNTU WHOX';

export interface CollectorOptions extends Omit<HarnessOptions, 'registry' | 'plugins'> {
  /** The plugin's settings (`plugins.stats`); default none. */
  stats?: Record<string, unknown>;
}

/** The stats plugin alone on the fake connection, registered (unless `register: false`) and, where asked, opered. */
export function startCollector(t: Test, { stats: settings = {}, ...options }: CollectorOptions): Promise<Harness> {
  return startHarness(t, { registry: [stats as PluginDefinition<never>], plugins: { stats: settings }, ...options });
}

/** How many times each server's latency was measured since the call (by name). */
export function latencyRounds(bot: Harness): Map<string, number> {
  const rounds = new Map<string, number>();
  bot.host.model.on('change', (change) => {
    if (change.slice === 'servers' && change.kind === 'latency' && change.name) {
      rounds.set(change.name, (rounds.get(change.name) ?? 0) + 1);
    }
  });
  return rounds;
}

/** The bot joins `channel`: NAMES lists `names`, MODE answers `modes`. */
export function joinAs(irc: FakeTransport, channel: string, names: string, modes = '+nt'): void {
  irc.receive(
    `:DataBot!databot@bot.host JOIN ${channel} * :Data Bot`,
    `:hub.test.net 353 DataBot = ${channel} :${names}`,
    `:hub.test.net 366 DataBot ${channel} :End of /NAMES list.`,
    `:hub.test.net 324 DataBot ${channel} ${modes}`,
  );
}
