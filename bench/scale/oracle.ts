/**
 * The truth: an IRC operator (NetAdmin: every privilege, no send queue limit) on the hub, asking the
 * network itself. One query at a time, so no reply is mistaken for another's.
 */
import { casefold } from '../../lib/irc/casemapping.js';
import { IrcClient, type IrcMessage } from '../../test/support/irc-client.js';

export interface OracleOptions {
  host: string;
  port: number;
  nick: string;
  operName: string;
  operPass: string;
}

/** The network's own counts, from LUSERS. */
export interface Lusers {
  /** Global users (266): the bot's own client included, the services' clients not (InspIRCd leaves U-lined clients out). */
  users: number;
  invisible: number;
  channels: number;
  servers: number;
  operators: number;
}

/** One connection's row of STATS L (InspIRCd: `nick[ident@ip] sendq cmds_out bytes_out cmds_in bytes_in time_open`). */
export interface LinkInfo {
  nick: string;
  sendq: number;
  bytesOut: number;
}

/** The nicks of a NAMES reply, without their channel prefixes. */
export function namesOf(replies: readonly IrcMessage[]): string[] {
  return replies
    .filter((message) => message.command === '353')
    .flatMap((message) => (message.params.at(-1) ?? '').split(' '))
    .filter(Boolean)
    .map((entry) => entry.replace(/^[~&@%+]+/, '').replace(/!.*$/, ''));
}

/** LUSERS numerics → counts. InspIRCd's 266 is `:Current global users: N  Max: M`. */
export function parseLusers(replies: readonly IrcMessage[]): Lusers {
  const text = (code: string): string =>
    replies
      .find((message) => message.command === code)
      ?.params.slice(1)
      .join(' ') ?? '';
  const number = (source: string, pattern: RegExp): number => Number(pattern.exec(source)?.[1] ?? NaN);
  const global = text('266');
  const visible = number(text('251'), /There are (\d+) users/i);
  const invisible = number(text('251'), /(\d+) invisible/i);
  return {
    users: /\d/.test(global) ? number(global, /(\d+)/) : visible + invisible,
    invisible,
    servers: number(text('251'), /on (\d+) servers?/i),
    operators: number(text('252'), /^(\d+)/),
    channels: number(text('254'), /^(\d+)/),
  };
}

/** The truth the model is held to: LUSERS, with the services' clients that LUSERS leaves out counted back in. */
export interface Truth extends Lusers {
  /** Clients on the services server (WHO shows them, LUSERS does not): the model has them too. */
  servicesUsers: number;
  /** LUSERS users + servicesUsers: every user WHO shows an operator. */
  allUsers: number;
}

// SCALE_SLOW_TRUTH_MS=1000 writes each question to the hub that took 1 s or more to the bench's output, with when
// it was sent (docs/scaling-network.md).
const logSlowTruthMs = Number(process.env.SCALE_SLOW_TRUTH_MS ?? 0) || Infinity;

export class Oracle {
  private queue: Promise<unknown> = Promise.resolve();
  /** The server's last ERROR line, which says why it closed the connection. */
  private lastError: string | null = null;
  /** Connections lost and opened again (each with its reason). */
  readonly losses: string[] = [];

  private constructor(
    private client: IrcClient,
    private readonly options: OracleOptions,
  ) {
    this.watch(client);
  }

  static async connect(options: OracleOptions): Promise<Oracle> {
    return new Oracle(await Oracle.open(options, options.nick), options);
  }

  /** An operator's connection to `network`'s hub, named `nick`: how every question of the benches is asked. */
  static onHub(
    network: { host?: string; hub: { clientPort: number }; operName: string; operPass: string },
    nick: string,
  ): Promise<Oracle> {
    return Oracle.connect({
      host: network.host ?? '127.0.0.1',
      port: network.hub.clientPort,
      nick,
      operName: network.operName,
      operPass: network.operPass,
    });
  }

  private static async open(options: OracleOptions, nick: string): Promise<IrcClient> {
    const client = new IrcClient({
      host: options.host,
      port: options.port,
      nick,
      user: 'oracle',
      realname: 'scale bench truth',
      keep: false,
      registerTimeout: 30_000,
    });
    await client.connect();
    const registration = await client.register();
    if (!registration.ok) {
      client.destroy();
      throw new Error(`the oracle could not register as ${nick}: ${registration.last.raw}`);
    }
    const oper = await client.request(`OPER ${options.operName} ${options.operPass}`, ['381', '491', '464'], 15_000);
    if (oper.at(-1)?.command !== '381') {
      client.destroy();
      throw new Error(`the oracle could not OPER as ${options.operName}: ${oper.at(-1)?.raw}`);
    }
    return client;
  }

  private watch(client: IrcClient): void {
    client.onRaw = (raw) => {
      if (raw.startsWith('ERROR')) this.lastError = raw;
    };
  }

  /**
   * The connection, opened again if the server closed it: a run of many minutes must not be lost to
   * one dropped connection. Each loss is kept in {@link losses} with the server's reason.
   */
  private async connection(): Promise<IrcClient> {
    if (!this.client.closed) return this.client;
    this.losses.push(this.lastError ?? 'closed without an ERROR line');
    this.lastError = null;
    // The old nick may linger until the server notices: the new connection takes another.
    this.client = await Oracle.open(this.options, `${this.options.nick}${this.losses.length}`);
    this.watch(this.client);
    return this.client;
  }

  /** Sends a line outside the query queue (e.g. CONNECT, which has no reply to wait for). */
  send(line: string): void {
    this.client.send(line);
  }

  /**
   * A question to the hub, one at a time. The wait is long: at 100,000 users under churn the hub, at nice
   * 10 on two busy cores, once took over a minute to answer a WHOIS, and the truth is what the run measures
   * against, so it waits rather than fail the run.
   */
  private ask(line: string, ends: string[], timeoutMs = 180_000): Promise<IrcMessage[]> {
    const next = this.queue.then(async () => {
      const client = await this.connection();
      const sentAt = performance.now();
      try {
        return await client.request(line, ends, timeoutMs);
      } catch (error) {
        // Lost while asking: asked again on a new connection.
        if (!client.closed) throw error;
        return (await this.connection()).request(line, ends, timeoutMs);
      } finally {
        const took = performance.now() - sentAt;
        if (took >= logSlowTruthMs) {
          const at = new Date(Date.now() - took).toISOString();
          process.stderr.write(`${at} truth: ${line} took ${took.toFixed(0)} ms\n`);
        }
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  async lusers(): Promise<Lusers> {
    return parseLusers(await this.ask('LUSERS', ['266']));
  }

  /**
   * LUSERS, and the clients of the services server (`WHO <server> s`), which InspIRCd's LUSERS does not count.
   * With `plainViewer` (the nick of a bot without OPER), only the users that one can see ({@link hiddenFrom}).
   */
  async truth(servicesServer: string, plainViewer?: string): Promise<Truth> {
    const lusers = await this.lusers();
    const services = await this.ask(`WHO ${servicesServer} s`, ['315']);
    const servicesUsers = services.filter((message) => message.command === '352').length;
    const hidden = plainViewer === undefined ? 0 : (await this.hiddenFrom(plainViewer)).size;
    return { ...lusers, servicesUsers, allUsers: lusers.users + servicesUsers - hidden };
  }

  /**
   * Every user's nick (WHOX `%n`; an operator sees +i users too); with `plainViewer`, those a plain user of that
   * nick sees ({@link hiddenFrom}).
   */
  async nicks(plainViewer?: string): Promise<string[]> {
    const replies = await this.ask('WHO * %tn,5', ['315'], 300_000);
    const hidden = plainViewer === undefined ? new Set<string>() : await this.hiddenFrom(plainViewer);
    return replies
      .filter((message) => message.command === '354' && message.params[1] === '5')
      .map((message) => message.params[2] ?? '')
      .filter((nick) => !hidden.has(casefold(nick)));
  }

  /**
   * The users (casefolded nicks) a plain user of nick `viewer` cannot see: invisible (+i, InspIRCd's WHO flag `m`
   * matches user modes), in none of its channels, and not listed by STATS P (which shows operators to anyone, and
   * which the bot asks). A WHO by a user who is not an operator lists no one else.
   */
  async hiddenFrom(viewer: string): Promise<Set<string>> {
    const invisible = (await this.ask('WHO +i m%tn,8', ['315'], 300_000))
      .filter((message) => message.command === '354' && message.params[1] === '8')
      .map((message) => casefold(message.params[2] ?? ''));
    const seen = new Set<string>();
    // RPL_STATS `249 me :<nick> (<host>) ...`, the nick first in the text.
    for (const line of await this.ask('STATS P', ['219'])) {
      if (line.command === '249') seen.add(casefold((line.params.at(-1) ?? '').split(' ')[0] ?? ''));
    }
    for (const channel of await this.channelsOf(viewer)) {
      for (const member of await this.names(channel)) seen.add(casefold(member));
    }
    return new Set(invisible.filter((nick) => !seen.has(nick)));
  }

  /** The names of every linked server. */
  async links(): Promise<string[]> {
    const replies = await this.ask('LINKS', ['365']);
    return replies.filter((message) => message.command === '364').map((message) => message.params[1] ?? '');
  }

  /** The members of a channel (all of them: the oracle has channels/auspex and users/auspex). */
  async names(channel: string): Promise<string[]> {
    return namesOf(await this.ask(`NAMES ${channel}`, ['366']));
  }

  /** Every channel LIST shows (an operator sees secret ones too), with its user count. */
  async listed(): Promise<Map<string, number>> {
    const replies = await this.ask('LIST', ['323'], 120_000);
    const channels = new Map<string, number>();
    for (const message of replies) {
      if (message.command === '322') channels.set(message.params[1] ?? '', Number(message.params[2]));
    }
    return channels;
  }

  /** The channels a user is in, from WHOIS (an operator sees all of them). */
  async channelsOf(nick: string): Promise<string[]> {
    const replies = await this.ask(`WHOIS ${nick}`, ['318', '401']);
    return replies
      .filter((message) => message.command === '319')
      .flatMap((message) => (message.params.at(-1) ?? '').split(' '))
      .filter(Boolean)
      .map((entry) => entry.replace(/^[~&@%+]+/, ''));
  }

  /** STATS L of the server the oracle is on: every local connection's send queue. */
  async localLinks(): Promise<LinkInfo[]> {
    const replies = await this.ask('STATS L', ['219']);
    return replies.flatMap((message) => {
      if (message.command !== '211') return [];
      const match = /^(\S+)\[\S*\] (\d+) \d+ (\d+)/.exec(message.params.slice(1).join(' '));
      return match ? [{ nick: match[1]!, sendq: Number(match[2]), bytesOut: Number(match[3]) }] : [];
    });
  }

  async close(): Promise<void> {
    await this.client.quit('oracle done');
  }
}
