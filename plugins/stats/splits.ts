/**
 * Splits and links as they happen. A netsplit shows as QUITs whose reason is
 * `<uplink> <lost server>` from the users who share a channel with the bot, and,
 * to an operator, as server notices about links (see notices.ts). Neither is trusted as such (a
 * user on another server may quit with any text): each only says "look now".
 * The bot then asks LINKS and LUSERS at once, ahead of its other output and
 * beside a sync already running; the model drops each server LINKS no longer
 * shows with every user on it, and takes the network's new counts. A full sync
 * follows, for the users of a server that joined.
 */
import type { IrcMessage, NetworkModel } from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import { markServicesServers, syncLinks, syncServerUsers } from './servers.js';
import type { SyncContext } from './context.js';
import { syncLusers } from './sync.js';
import type { CollectorUnit, LineHandler } from './unit.js';
import { whoOnServer } from './who.js';

/** While a services server is split off, LINKS is asked this often to see it come back. */
const SERVICES_RELINK_CHECK_MS = 5000;

/** A QUIT whose reason names two linked servers: a user lost in a netsplit. */
export function isNetsplitQuit(message: IrcMessage, model: NetworkModel): boolean {
  if (message.command !== 'QUIT') return false;
  const names = /^(\S+\.\S+) (\S+\.\S+)$/.exec(message.params[0] ?? '');
  return names !== null && model.servers.get(names[1]!) !== undefined && model.servers.get(names[2]!) !== undefined;
}

/**
 * A server notice about a link that split or joined: InspIRCd's `*** LINK: Server x split: ...`,
 * `*** LINK: Received end of netburst from x`, and the like in other servers' words. Not ircd 2.11's `Server is
 * currently in split-mode.` to each client that connects while the server has fewer servers or users linked than
 * its configuration asks: it tells of no change.
 */
export function isLinkNotice(message: IrcMessage): boolean {
  if (message.command !== 'NOTICE' || !message.source) return false;
  const { nick, ident } = message.source;
  // A server's notice has its name as the source, with no ident; no nick has a dot.
  if (ident !== '' || !nick.includes('.')) return false;
  return /\b(?:split|netsplit|squit|netjoin)\b(?!-)|end of (?:net)?burst|link with \S+ established/i.test(
    message.params.at(-1) ?? '',
  );
}

/** The server a notice says finished its burst (InspIRCd: `Received end of netburst from x`), if any. */
export function burstEndedFrom(message: IrcMessage): string | null {
  return /end of (?:net)?burst from (\S+?)[.,:;]?(?:\s|$)/i.exec(message.params.at(-1) ?? '')?.[1] ?? null;
}

/**
 * The topology check: one at a time; a request while one runs makes one more run after it. The users of
 * a server that joined are asked for at once (WHO with the server flag), again when its burst ended.
 */
export class TopologyWatch {
  private running: Promise<void> | null = null;
  /** The check that runs after the running one, when something happened during it. */
  private next: Promise<void> | null = null;
  /** Servers whose burst ended since the last check: their users are all there now. */
  private readonly bursted = new Set<string>();

  constructor(
    private readonly context: SyncContext,
    /** Called after each check: a full sync for the users of servers that joined. */
    private readonly afterCheck: () => void,
  ) {}

  /** Whether `message` says the network's shape may have changed; if so, checks it now. */
  consider(message: IrcMessage): void {
    if (isNetsplitQuit(message, this.context.model)) void this.check();
    else if (isLinkNotice(message)) {
      const bursted = burstEndedFrom(message);
      if (bursted) this.bursted.add(bursted.toLowerCase());
      void this.check();
    }
  }

  /**
   * Ask LINKS and LUSERS now (and which servers run services), ahead of other output; resolves when a
   * check that started after the call is done. Calls during a check share the one check after it.
   */
  check(): Promise<void> {
    if (!this.running) return this.start();
    this.next ??= this.running.then(() => {
      this.next = null;
      return this.start();
    });
    return this.next;
  }

  private start(): Promise<void> {
    const running = this.run().finally(() => {
      if (this.running === running) this.running = null;
    });
    this.running = running;
    return running;
  }

  private async run(): Promise<void> {
    const { irc, logger, model } = this.context;
    if (!irc.state.connected) return;
    const started = Date.now();
    const bursted = [...this.bursted];
    this.bursted.clear();
    let changes: { lost: string[]; joined: string[] };
    try {
      changes = await this.ask(bursted);
    } catch (error) {
      // The sync that follows asks again; a lost connection ends everything anyway.
      logger.info('topology check interrupted', { error: error instanceof Error ? error.message : String(error) });
      return;
    }
    const { lost, joined } = changes;
    logger.info('topology checked', {
      lost: lost.join(',') || undefined,
      joined: joined.join(',') || undefined,
      servers: model.servers.size,
      users: model.stats.users,
      ms: Date.now() - started,
    });
    if (lost.length > 0 || joined.length > 0) this.afterCheck();
  }

  /** The questions of one check; the servers that left and joined. */
  private async ask(bursted: readonly string[]): Promise<{ lost: string[]; joined: string[] }> {
    const { model } = this.context;
    const urgent: SyncContext = { ...this.context, urgent: true };
    const before = new Set([...model.servers.all()].map((server) => server.name));
    await syncLinks(urgent);
    const after = new Set([...model.servers.all()].map((server) => server.name));
    const lost = [...before].filter((name) => !after.has(name));
    const joined = [...after].filter((name) => !before.has(name));
    const toAsk = new Set([...joined, ...bursted.flatMap((name) => model.servers.get(name)?.name ?? [])]);
    for (const server of toAsk) await whoOnServer(urgent, server);
    await syncLusers(urgent);
    await syncServerUsers(urgent);
    await markServicesServers(urgent);
    return { lost, joined };
  }
}

/**
 * Splits and links as a unit of the collector: the QUITs and server notices that may tell of one (while
 * connected and ready) start a check, after which `afterCheck` runs when servers left or joined; while a
 * services server is split off, a bot that gets no link notices learns that it is back by asking.
 */
export function topologyUnit(context: CollectorContext, afterCheck: () => void): CollectorUnit {
  const { model, connection } = context;
  const topology = new TopologyWatch(context, afterCheck);
  const consider: LineHandler = (message) => {
    if (connection.ready) topology.consider(message);
  };
  const relinkCheck = (): void => {
    if (connection.ready && model.ready && model.servers.servicesSplit.length > 0) void topology.check();
  };
  return {
    name: 'topology',
    lines: { QUIT: consider, NOTICE: consider },
    timers: [{ everyMs: SERVICES_RELINK_CHECK_MS, run: relinkCheck }],
  };
}
