/**
 * The server side of the fake connection (fake-irc.ts): it hears every line the bot writes and answers on the
 * next turn of the event loop, as a socket would, with what the test told it (`answer`), else what its network
 * says (fake-network.ts), else nothing. It registers the bot as a server does, with the capabilities the bot's
 * IRC client library asks for, and accepts OPER when the test says the bot is an operator.
 *
 * ```ts
 * server.answer(/^TIME hub\.test\.net$/, [':hub.test.net 391 DataBot hub.test.net :Sat Nov 21 2026 15:55:12']);
 * server.answer(/^WHOIS (\S+)$/, (match) => [`:hub.test.net 401 DataBot ${match[1]} :No such nick`]);
 * ```
 */
import type { IrcClientName } from '../lib/config.js';
import { UNTAGGED_CAPS } from '../lib/irc/untagged-caps.js';
import { DEFAULT_ISUPPORT, type FakeTransport } from './fake-irc.js';
import { hubOf, networkAnswer, type FakeNetwork } from './fake-network.js';

/**
 * Lines to answer with (none: silence), or how to make them from the match of the rule's pattern; null leaves
 * the line to the earlier rules and the network.
 */
export type Reply = string[] | ((match: RegExpExecArray) => string[] | null);

/** The capabilities the fake server offers: those of the test network's InspIRCd, SASL aside. */
export const OFFERED_CAPS: readonly string[] = [
  'account-notify',
  'account-tag',
  'away-notify',
  'batch',
  'cap-notify',
  'chghost',
  'extended-join',
  'invite-notify',
  'message-tags',
  'multi-prefix',
  'server-time',
  'userhost-in-names',
];

/**
 * What each client library asks for of {@link OFFERED_CAPS}: irc-framework every one (its registration handler's
 * list, with chghost, which the adapter enables), the matrix-org-irc adapter those that put no tags on lines.
 */
export const CAPS_ASKED: Readonly<Record<IrcClientName, readonly string[]>> = {
  'irc-framework': OFFERED_CAPS,
  'matrix-org-irc': OFFERED_CAPS.filter((cap) => UNTAGGED_CAPS.includes(cap)),
};

/** How the server registers the bot. */
export interface Registration {
  nick: string;
  /** ISUPPORT tokens; default {@link DEFAULT_ISUPPORT}. */
  isupport?: string | undefined;
  /** RPL_MYINFO's version (`InspIRCd-3`, `ngircd-26.1`); no 004 line without it. */
  version?: string | undefined;
  client: IrcClientName;
  /** Whether the server knows CAP (default true); false: it acknowledges none, as ircd 2.11 has no CAP. */
  cap?: boolean | undefined;
}

interface Rule {
  pattern: RegExp;
  reply: (match: RegExpExecArray) => string[] | null;
  once: boolean;
}

export class FakeServer {
  /** The network it answers for; null: none (it answers only what a test tells it). Tests change it freely. */
  network: FakeNetwork | null;
  /** Whether OPER succeeds. */
  operator: boolean;
  private readonly rules: Rule[] = [];
  private scheduled = 0;

  constructor(
    /** The connection whose other end it is. */
    readonly connection: FakeTransport,
    options: { network?: FakeNetwork | null; operator?: boolean } = {},
  ) {
    this.network = options.network ?? null;
    this.operator = options.operator ?? false;
    connection.watch((event) => {
      if (event.kind === 'written') this.hear(event.line);
    });
  }

  /** Its name, as the source of its numerics. */
  get name(): string {
    return this.network ? hubOf(this.network) : 'irc.test';
  }

  /** Answers written but not yet received by the bot. */
  get pending(): number {
    return this.scheduled;
  }

  /**
   * Answer the lines that match `pattern` with `reply`; the latest rule for a line wins over earlier ones and the
   * network.
   */
  answer(pattern: RegExp, reply: Reply): this {
    this.rules.unshift({ pattern, reply: typeof reply === 'function' ? reply : () => reply, once: false });
    return this;
  }

  /** {@link answer}, for the next matching line only. */
  answerOnce(pattern: RegExp, reply: Reply): this {
    this.rules.unshift({ pattern, reply: typeof reply === 'function' ? reply : () => reply, once: true });
    return this;
  }

  /** Registration: the capabilities the client asks for, 001, 004 when there is a version, ISUPPORT, end of MOTD. */
  register({ nick, isupport, version, client, cap = true }: Registration): void {
    const from = `:${this.name}`;
    this.connection.receive(
      ...(cap ? [`${from} CAP * ACK :${CAPS_ASKED[client].join(' ')}`] : []),
      `${from} 001 ${nick} :Welcome`,
      ...(version ? [`${from} 004 ${nick} ${this.name} ${version} iosw biklmnopstv :bklov`] : []),
      `${from} 005 ${nick} ${isupport ?? DEFAULT_ISUPPORT} :are supported by this server`,
      `${from} 376 ${nick} :End of MOTD`,
    );
  }

  /** Say `lines` to the bot on the next turn of the event loop. */
  say(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.scheduled++;
    setImmediate(() => {
      this.scheduled--;
      if (this.connection.state.connected) this.connection.receive(...lines);
    });
  }

  private hear(line: string): void {
    const lines = this.answerTo(line);
    if (lines) this.say(lines);
  }

  private answerTo(line: string): string[] | null {
    for (const rule of this.rules) {
      const match = rule.pattern.exec(line);
      const lines = match && rule.reply(match);
      if (!lines) continue;
      if (rule.once) this.rules.splice(this.rules.indexOf(rule), 1);
      return lines;
    }
    const { state } = this.connection;
    if (/^OPER /.test(line)) {
      return [
        this.operator
          ? `:${this.name} 381 ${state.nick} :You are now an IRC operator`
          : `:${this.name} 491 ${state.nick} :Invalid oper credentials`,
      ];
    }
    return this.network && networkAnswer(this.network, line, { nick: state.nick, isOperator: state.isOperator });
  }
}
