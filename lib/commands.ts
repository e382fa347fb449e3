/**
 * Commands over IRC. Plugins declare commands (name, usage, help, admin-only, the converters of their
 * arguments); the host dispatches private messages to the bot, converts the arguments and answers their
 * errors, answers HELP, and decides admin-only by the sender's NickServ account — never by nick.
 */
import type { Logger } from './logger.js';
import { errorMessage } from './logger.js';
import { ClientThrottle } from './rate-limiter.js';
import type { IrcMessage, IrcPort } from './irc/port.js';
import { splitText, stripFormatting } from './irc/text.js';
import {
  convertArguments,
  optional,
  rest,
  type ArgumentContext,
  type ArgumentValues,
  type CommandSender,
  type Converter,
} from './command-arguments.js';

export type { CommandSender } from './command-arguments.js';

export interface CommandInvocation {
  sender: CommandSender;
  /** Words after the command name, as sent (the handler gets its declared arguments converted besides). */
  args: string[];
  /** The words after the command name, joined by single spaces (a label's runs of spaces become one). */
  text: string;
  isAdmin: boolean;
  /** The command's usage line, `Usage: NAME usage`, for an answer that ends with it. */
  usage: string;
  /** Answer the sender (by NOTICE); see {@link ReplyOptions}. */
  reply(text: string, options?: ReplyOptions): void;
}

export interface ReplyOptions {
  /**
   * Runs (once) if the answer is dropped instead of sent — any of its lines, for one too long for a single
   * NOTICE: the nick may have changed hands, or the answer could not leave in time. A handler that
   * answered with a secret undoes what it made.
   */
  onDropped?: () => void;
}

/** Any list of argument converters: what a definition's `args` may be. */
export type Converters = readonly Converter<unknown>[];

export interface CommandDefinition<Args extends Converters = Converters> {
  /** One or more words, e.g. `HELP` or `TOKEN CREATE`; matched case-insensitively. */
  name: string;
  /** Arguments after the name, e.g. `<id> <endpoint>...`; empty string when there are none. */
  usage: string;
  /** One sentence or more on what it does. */
  help: string;
  /** Only administrators may run it. */
  adminOnly?: boolean;
  /** Only senders logged in to an account may run it. */
  requiresAccount?: boolean;
  /**
   * For a command that needs an account (adminOnly, requiresAccount), what to say besides the refusal where
   * nobody can have one, the network's IRC server knowing no accounts (the TOKEN commands: who manages tokens
   * instead).
   */
  withoutAccounts?: string;
  /**
   * Its arguments, one converter each, in order (`[visibleToken, many(endpointName)]`; `[]` for none).
   * The host reads the words after the name with them once the sender may run the command, and answers
   * the errors itself: too many words (`Too many arguments. Usage: …`: a word the sender meant is never
   * silently ignored), too few, or a word a converter refuses. The handler then gets the values, typed by
   * the converters. Unset: the words are not checked, and the handler reads {@link CommandInvocation.args}.
   */
  args?: Args;
  /**
   * It may answer long after it was sent (SYNC): each answer then has {@link REPLY_DEADLINE_MS} from when
   * it is given, not from when the command came. Commands that answer with a secret must not be slow.
   */
  slow?: boolean;
  handle(invocation: CommandInvocation, ...values: ArgumentValues<Args>): void | Promise<void>;
}

/**
 * `definition` as it is, with its handler's values typed from its `args`: for a command written apart
 * from the `register` call that takes it (one file per command).
 */
export function defineCommand<const Args extends Converters = []>(
  definition: CommandDefinition<Args>,
): CommandDefinition<Args> {
  return definition;
}

/** Decides whether an account (or sender) is an administrator beyond the configured list. */
export type AdminCheck = (sender: CommandSender) => boolean | Promise<boolean>;

interface RegisteredCommand {
  plugin: string;
  definition: CommandDefinition;
  words: string[];
}

/**
 * Answers to one command. They go ahead of the bot's other output, and each line is dropped rather than
 * sent once the nick may belong to someone else: the bot saw it change, quit or be taken, or the line
 * could not leave within {@link REPLY_DEADLINE_MS} of the command (a nick the bot shares no channel with
 * can change hands unseen, and an answer can carry a token's secret).
 */
interface ReplyChannel {
  open: boolean;
  /** Its command is slow ({@link CommandDefinition.slow}). */
  slow: boolean;
  /** The command is still being handled: more answers may come. */
  running: boolean;
  /** When the command came. */
  started: number;
  /** When its last line was queued. */
  lastQueued: number;
  /** Of each answer with a line still queued, what to run if that line is never sent. */
  undelivered: Set<() => void>;
}

/** The longest from a command to each line of its answer leaving the bot (from the answer, for a slow command). */
export const REPLY_DEADLINE_MS = 10_000;
/** How many commands one client (ident@host) may send: `burst` at once, then one per `intervalMs`. */
export interface CommandRate {
  burst: number;
  intervalMs: number;
}

/** `Usage: NAME usage`, as HELP and usage errors show it. */
export function usageLine(definition: Pick<CommandDefinition, 'name' | 'usage'>): string {
  return `Usage: ${definition.name}${definition.usage ? ` ${definition.usage}` : ''}`;
}

export class CommandRegistry {
  /** Commands running, for {@link settled}. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly commands: RegisteredCommand[] = [];
  private readonly adminChecks: AdminCheck[] = [];
  /** By folded nick: the answers still on their way to it. */
  private readonly replying = new Map<string, ReplyChannel[]>();
  /** By ident@host: the commands each client may still send; null when there is no limit. */
  private readonly allowance: ClientThrottle | null;

  constructor(
    private readonly irc: IrcPort,
    private readonly admins: readonly string[],
    private readonly logger: Logger,
    private readonly rate: CommandRate = { burst: 5, intervalMs: 2000 },
    private readonly now: () => number = Date.now,
  ) {
    this.allowance =
      rate.intervalMs === 0
        ? null
        : new ClientThrottle({ capacity: rate.burst, refill_per_second: 1000 / rate.intervalMs }, now);
    this.register('host', {
      name: 'HELP',
      usage: '[command]',
      help: 'Lists the commands you can use, or explains one command.',
      args: [optional(rest)],
      handle: (invocation, topic) => this.help(invocation, topic),
    });
  }

  /**
   * Register a command; usage and help are required, and its arguments must be converters (checked here,
   * at startup).
   */
  register<const Args extends Converters = []>(plugin: string, definition: CommandDefinition<Args>): void {
    const words = definition.name.trim().toUpperCase().split(/\s+/);
    if (!definition.name.trim()) throw new Error(`plugin "${plugin}": a command needs a name`);
    const culprit = `command "${definition.name}" of plugin "${plugin}"`;
    if (typeof definition.usage !== 'string') throw new Error(`${culprit} has no usage text`);
    if (!definition.help?.trim()) throw new Error(`${culprit} has no help text`);
    if ('maxArgs' in definition) {
      // A plugin written for an earlier version (or in JavaScript) would otherwise run with words it never read.
      throw new Error(`${culprit}: maxArgs was removed; declare args instead (args: [] takes no word)`);
    }
    if (definition.args !== undefined) checkConverters(culprit, definition);
    const existing = this.commands.find((command) => command.words.join(' ') === words.join(' '));
    if (existing) {
      throw new Error(
        `command "${definition.name}" of plugin "${plugin}" is already registered by plugin "${existing.plugin}"`,
      );
    }
    this.commands.push({ plugin, definition, words });
  }

  addAdminCheck(check: AdminCheck): void {
    this.adminChecks.push(check);
  }

  list(): readonly { plugin: string; definition: CommandDefinition }[] {
    return this.commands;
  }

  /** Resolves once every command dispatched so far has finished (answered, or failed). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** The private message handler: find the command, check rights, run it. Sees every line the bot receives. */
  async dispatch(message: IrcMessage): Promise<void> {
    if (message.command === 'NICK' || message.command === 'QUIT') {
      if (this.replying.size > 0 && message.source) {
        this.closeReplies(message.source.nick);
        // Someone taking a nick shows that whoever had it before is gone, seen or not.
        if (message.command === 'NICK' && message.params[0]) this.closeReplies(message.params[0]);
      }
      return;
    }
    if (message.command !== 'PRIVMSG' || !message.source) return;
    const [target, text = ''] = message.params;
    if (!target || this.irc.casefold(target) !== this.irc.casefold(this.irc.state.nick)) return;
    if (text.startsWith('\x01')) return; // CTCP is not a command
    const plain = stripFormatting(text);
    const words = plain.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    const nick = message.source.nick;
    const { channel, reply } = this.replyTo(nick);
    try {
      if (!this.allowed(`${message.source.ident}@${message.source.host}`.toLowerCase(), reply)) return;
      // Only a command is tracked: every other line the bot receives passes here too.
      const running = this.run(message, words, channel, reply);
      this.inFlight.add(running);
      try {
        await running;
      } finally {
        this.inFlight.delete(running);
      }
    } finally {
      channel.running = false;
    }
  }

  private async run(
    message: IrcMessage,
    words: string[],
    channel: ReplyChannel,
    reply: (line: string, options?: ReplyOptions) => void,
  ): Promise<void> {
    const nick = message.source!.nick;
    const command = this.match(words);
    if (!command) {
      reply(`Unknown command "${words[0]}". Send HELP for the list of commands.`);
      return;
    }
    const { definition, plugin } = command;
    channel.slow = definition.slow === true;
    const args = words.slice(command.words.length);
    const sender: CommandSender = { nick, account: null };
    if (definition.adminOnly || definition.requiresAccount || definition.name.toUpperCase() === 'HELP') {
      sender.account = await this.accountOf(message);
    }
    const isAdmin = sender.account !== null && (await this.isAdmin(sender));
    // While the bot looked the sender up, their nick may have gone to someone else, or the answer's time run
    // out: nothing is done that could not be confirmed.
    if (!channel.open) return;
    if (!channel.slow && this.now() > channel.started + REPLY_DEADLINE_MS) {
      channel.open = false;
      this.logger.warn('a command was not run: looking its sender up took too long', {
        command: definition.name,
        nick,
      });
      return;
    }
    if ((definition.adminOnly || definition.requiresAccount) && sender.account === null) {
      const missing = this.noAccountServices();
      if (missing === null) {
        reply(
          `You are not logged in. Identify to NickServ first (/msg NickServ IDENTIFY <account> <password>), then try again.`,
        );
      } else {
        const more = definition.withoutAccounts === undefined ? '' : ` ${definition.withoutAccounts}`;
        reply(`${definition.name} needs a NickServ account, and ${missing}.${more}`);
      }
      return;
    }
    if (definition.adminOnly && !isAdmin) {
      this.logger.warn('admin command refused', { command: definition.name, nick, account: sender.account });
      reply(
        `Permission denied: ${definition.name} is for administrators, and the account ${sender.account} is not one.`,
      );
      return;
    }
    const usage = usageLine(definition);
    try {
      const read = await this.readArguments(definition, args, { command: definition.name, sender, isAdmin }, usage);
      if ('answer' in read) {
        reply(read.answer);
        return;
      }
      await definition.handle({ sender, args, text: args.join(' '), isAdmin, usage, reply }, ...read.values);
    } catch (error) {
      this.logger.error(`command ${definition.name} of plugin ${plugin} threw`, { plugin, error: errorMessage(error) });
      reply(`Sorry, ${definition.name} failed because of an internal error.`);
    }
  }

  /** A reply function for `nick`: each line urgent, and dropped once the nick may be someone else's. */
  private replyTo(nick: string): { channel: ReplyChannel; reply: (line: string, options?: ReplyOptions) => void } {
    const key = this.irc.casefold(nick);
    const now = this.now();
    const channel: ReplyChannel = {
      open: true,
      slow: false,
      running: true,
      started: now,
      lastQueued: now,
      undelivered: new Set(),
    };
    this.sweepReplies();
    this.replying.set(key, [...(this.replying.get(key) ?? []), channel]);
    const reply = (line: string, options: ReplyOptions = {}): void => {
      let dropped = false;
      const drop = (): false => {
        if (!dropped) {
          dropped = true;
          // It runs inside the send queue's turn: a throw must not stop the queue.
          try {
            options.onDropped?.();
          } catch (error) {
            this.logger.error("a dropped answer's handler threw", { nick, error: errorMessage(error) });
          }
        }
        return false;
      };
      if (!channel.open || !this.irc.state.connected) {
        channel.open = false;
        drop();
        return;
      }
      // Split here rather than by the transport: an answer is delivered only once its last line has left.
      const pieces = splitText(line);
      if (pieces.length === 0) return;
      channel.lastQueued = this.now();
      const deadline = (channel.slow ? channel.lastQueued : channel.started) + REPLY_DEADLINE_MS;
      channel.undelivered.add(drop);
      let unsent = pieces.length;
      const stillWanted = (): boolean => {
        if (channel.open && this.now() <= deadline) {
          if (--unsent === 0) channel.undelivered.delete(drop);
          return true;
        }
        channel.undelivered.delete(drop);
        if (channel.open) {
          this.logger.warn('an answer to a command was dropped: it could not be sent in time', { nick });
        }
        channel.open = false;
        return drop();
      };
      for (const piece of pieces) this.irc.notice(nick, piece, { urgent: true, key, stillWanted });
    };
    return { channel, reply };
  }

  /** Forget answers that are over: their command is done and none of their lines can still be sent. */
  private sweepReplies(): void {
    const stale = this.now() - REPLY_DEADLINE_MS;
    for (const [key, channels] of this.replying) {
      const live = channels.filter(
        (channel) => channel.open && (channel.running || channel.lastQueued >= stale || channel.undelivered.size > 0),
      );
      if (live.length === 0) this.replying.delete(key);
      else if (live.length < channels.length) this.replying.set(key, live);
    }
  }

  /** The connection is gone: nothing queued was sent, and nick changes until the next one go unseen. */
  connectionLost(): void {
    const channels = [...this.replying.values()].flat();
    this.replying.clear();
    for (const channel of channels) this.close(channel);
  }

  /** `nick` changed, quit or was taken: answers on their way to it would reach whoever holds it next. */
  private closeReplies(nick: string): void {
    const key = this.irc.casefold(nick);
    const channels = this.replying.get(key);
    if (!channels) return;
    this.replying.delete(key);
    for (const channel of channels) this.close(channel);
  }

  /** No more answers: those still queued are dropped when their turn comes, and their handlers hear so now. */
  private close(channel: ReplyChannel): void {
    channel.open = false;
    for (const drop of channel.undelivered) drop();
    channel.undelivered.clear();
  }

  /**
   * Whether a client may send another command: {@link CommandRate.burst} at once, then one per
   * {@link CommandRate.intervalMs}. The first refusal says so; further ones until the next command is
   * allowed are ignored, so a flood costs the bot no output.
   */
  private allowed(client: string, reply: (line: string) => void): boolean {
    if (!this.allowance) return true;
    const decision = this.allowance.take(client);
    if (decision.allowed) return true;
    if (decision.firstRefusal) {
      reply(
        `Too many commands: wait ${decision.retryAfterSeconds} s before the next one. Commands sent meanwhile are ignored.`,
      );
      this.logger.warn('commands throttled', { client });
    }
    return false;
  }

  /** Whether `account` is one of the configured `admins` (folded with the network's casemapping). */
  isListedAdmin(account: string): boolean {
    const folded = this.irc.casefold(account);
    return this.admins.some((admin) => this.irc.casefold(admin) === folded);
  }

  /** `administrator` means: logged in to an account listed in `admins`, or accepted by a plugin's check. */
  async isAdmin(sender: CommandSender): Promise<boolean> {
    if (sender.account === null) return false;
    if (this.isListedAdmin(sender.account)) return true;
    for (const check of this.adminChecks) {
      try {
        if (await check(sender)) return true;
      } catch (error) {
        this.logger.error('admin check threw', { error: errorMessage(error) });
      }
    }
    return false;
  }

  /**
   * The sender's account: the `account` tag when the server sends it (account-tag:
   * no tag means not logged in), else WHOIS 330.
   */
  async accountOf(message: IrcMessage): Promise<string | null> {
    if (message.tags.account !== undefined) return message.tags.account === '*' ? null : message.tags.account;
    if (this.irc.state.profile.accountFrom === 'account-tag') return null;
    const nick = message.source!.nick;
    try {
      const lines = await this.irc.request({
        send: ['WHOIS', nick],
        urgent: true,
        reply: (line) => line.command === '330' && this.sameNick(line.params[1], nick),
        end: (line) => (line.command === '318' || line.command === '401') && this.sameNick(line.params[1], nick),
        timeoutMs: 10000,
      });
      return lines.find((line) => line.command === '330')?.params[2] ?? null;
    } catch (error) {
      this.logger.warn('WHOIS for the account failed', { nick, error: errorMessage(error) });
      return null;
    }
  }

  /**
   * Why nobody can log in to an account here, in words that end a sentence: the IRC server knows no accounts
   * (its profile says so); null where it does.
   */
  private noAccountServices(): string | null {
    const { profile } = this.irc.state;
    if (profile.accounts) return null;
    return `this network has no account services: its IRC server (${profile.family ?? profile.version}) knows no accounts`;
  }

  private sameNick(a: string | undefined, b: string): boolean {
    return a !== undefined && this.irc.casefold(a) === this.irc.casefold(b);
  }

  private match(words: string[]): RegisteredCommand | undefined {
    const upper = words.map((word) => word.toUpperCase());
    let best: RegisteredCommand | undefined;
    for (const command of this.commands) {
      if (command.words.length > upper.length) continue;
      if (command.words.every((word, index) => upper[index] === word)) {
        if (!best || command.words.length > best.words.length) best = command;
      }
    }
    return best;
  }

  /**
   * The arguments' values, or the answer that refuses them: read by the definition's converters; with none
   * declared, no values (the handler reads the words themselves).
   */
  private async readArguments(
    definition: CommandDefinition,
    words: string[],
    context: ArgumentContext,
    usage: string,
  ): Promise<{ values: unknown[] } | { answer: string }> {
    return definition.args ? convertArguments(definition.args, words, context, usage) : { values: [] };
  }

  private help(invocation: CommandInvocation, topic: string | undefined): void {
    const { reply, isAdmin, sender } = invocation;
    const visible = this.commands
      .map((command) => command.definition)
      .filter((definition) => isAdmin || !definition.adminOnly);
    if (topic === undefined) {
      reply(`Commands (send HELP <command> for details):`);
      for (const definition of visible) reply(summary(definition));
      this.accountNote(visible, sender, reply);
      return;
    }
    const wanted = topic.toUpperCase().split(' ');
    const exact = this.commands.find((command) => command.words.join(' ') === wanted.join(' '));
    const group = this.commands.filter(
      (command) => command.words.length > wanted.length && wanted.every((word, index) => command.words[index] === word),
    );
    if (!exact && group.length === 0) {
      reply(`There is no command "${topic}". Send HELP for the list of commands.`);
      return;
    }
    if (exact) {
      const { definition } = exact;
      reply(usageLine(definition));
      reply(definition.help);
      if (definition.adminOnly) reply('Only administrators may use this command.');
      else if (definition.requiresAccount) reply('Only users logged in to a NickServ account may use this command.');
    }
    const shown = group.map((command) => command.definition).filter((definition) => isAdmin || !definition.adminOnly);
    for (const definition of shown) reply(summary(definition));
    this.accountNote(shown, sender, reply);
  }

  /**
   * For a sender who is not logged in: which of the commands just listed need a NickServ account, so that
   * they identify before trying one rather than after being refused.
   */
  private accountNote(shown: CommandDefinition[], sender: CommandSender, reply: (line: string) => void): void {
    if (sender.account !== null) return;
    const needing = shown
      .filter((definition) => definition.requiresAccount || definition.adminOnly)
      .map((definition) => definition.name);
    if (needing.length === 0) return;
    const names = needing.length === 1 ? needing[0] : `${needing.slice(0, -1).join(', ')} and ${needing.at(-1)}`;
    if (!this.irc.state.profile.accounts) {
      reply(
        `${names} need${needing.length === 1 ? 's' : ''} a NickServ account, and this network has no account ` +
          'services: nobody can log in to one here.',
      );
      return;
    }
    reply(
      `You are not logged in: ${names} need${needing.length === 1 ? 's' : ''} a NickServ account. ` +
        'Identify to NickServ first (/msg NickServ IDENTIFY <account> <password>).',
    );
  }
}

/** Refuses, naming the command and the argument, `args` that are not converters. */
function checkConverters(culprit: string, definition: CommandDefinition): void {
  if (!Array.isArray(definition.args)) throw new Error(`${culprit}: args must be a list of converters`);
  // A plugin in JavaScript may pass anything here: each converter is checked as it is.
  definition.args.forEach((converter: Partial<Converter<unknown>> | undefined, index) => {
    const { min, max, convert } = converter ?? {};
    const counts =
      typeof min === 'number' && typeof max === 'number' && Number.isInteger(min) && min >= 0 && max >= min;
    if (!counts || !(Number.isInteger(max) || max === Infinity) || typeof convert !== 'function') {
      throw new Error(
        `${culprit}: args[${index}] is not a converter (min and max words, 0 ≤ min ≤ max, and a convert function)`,
      );
    }
  });
}

/** A command's line in HELP's lists: name, usage and the first sentence of its help. */
function summary(definition: CommandDefinition): string {
  return `  ${definition.name}${definition.usage ? ` ${definition.usage}` : ''} — ${definition.help.split(/(?<=\.)\s/)[0]}`;
}
