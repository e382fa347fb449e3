/**
 * Service commands: the bot sends HELP to each configured service that is
 * online (WHOIS finds it) and reads the command names and descriptions from its NOTICEs.
 *
 * Atheme answers with a header, prose, "The following commands are available:",
 * one `NAME   Description` line per command (the name in bold), "Other commands:
 * A, B, ..." (names only) and "***** End of Help *****"; `HELP COMMANDS` then
 * gives every command with its description. Anope indents `    NAME   Description`
 * lines, groups commands by name only (a heading without a colon over indented
 * comma lists) with a hint to send `HELP ALL`, and has no end line, so its answer
 * ends when the service falls silent. Anope 2.1 pads the names to the longest listed,
 * four spaces apart from the descriptions, and wraps a description longer than its
 * `linelength` allows onto lines indented to the description's column. `HELP SET` then
 * lists the SET sub-commands (`SET EMAIL`, ...), each named with its parent in the catalogue.
 */
import {
  askService as askServiceFor,
  onlineNicks,
  stripFormatting,
  type IrcPort,
  type ServiceCommand,
  type ServiceCommands,
  type ServicesSlice,
} from '../../lib/sdk.js';
import type { CollectorContext } from './collector.js';
import type { SyncContext } from './context.js';
import type { CollectorUnit } from './unit.js';

/** Silence after the last NOTICE that ends an answer without an end line (Anope, refusals). */
const QUIET_MS = 1500;
/** The longest a whole answer may take. */
const ANSWER_TIMEOUT_MS = 15000;

/** Commands whose own HELP lists sub-commands, asked after the listing. */
const SUBCOMMAND_PARENTS = new Set(['SET']);

/** What one HELP answer says. */
export interface HelpListing {
  /** Commands with descriptions, in the order listed. */
  commands: ServiceCommand[];
  /** Commands named without a description (Atheme's "Other commands", Anope's groups). */
  namedOnly: string[];
  /** The request that lists every command with its description, when the answer points to one. */
  fullListing: 'HELP COMMANDS' | 'HELP ALL' | null;
  /** The answer ended with an end line (Atheme), rather than by going quiet. */
  ended: boolean;
}

export const END_OF_HELP = /^\*+\s*End of Help\s*\*+$/i;
const COMMAND_LINE = /^\s{0,8}([A-Z][A-Z0-9_-]*)(\s+)(\S.*?)\s*$/;
const NAME_LIST = /^\s*([A-Z][A-Z0-9_-]*(?:\s*,\s*[A-Z][A-Z0-9_-]*)*)\s*,?\s*$/;
/** An indented list of two or more names with commas: `  ACCESS, AOP, FLAGS` (Anope 2.0's groups). */
const GROUP_LINE = /^\s+([A-Z][A-Z0-9_-]*(?:\s*,\s*[A-Z][A-Z0-9_-]*)+)\s*,?\s*$/;
/**
 * A name and its description are apart by two spaces at least, or by one when the name fills its column
 * (Anope pads names to 13 characters; `SET DESCRIPTION Set the ...`).
 */
const FILLED_COLUMN = 13;

/** A command just listed, whose description the next line may go on with, from `column` on. */
interface ContinuedCommand {
  command: { name: string; description: string };
  column: number;
}

/**
 * The text of a line that goes on with the description above it: Anope 2.1 wraps a long description onto
 * lines indented exactly to the column the description started at (`column`), with nothing in the name's.
 */
function continuation(text: string, column: number): string | null {
  const indent = /^\s*/.exec(text)![0].length;
  return indent === column && indent < text.length ? text.slice(indent) : null;
}

/**
 * Parse the NOTICE texts of one HELP answer. A command line is an upper-case name, padded to a
 * column with at least two spaces (one when the name fills the column: Anope pads to 13), and a
 * description; names after "Other commands:" or under Anope's "... commands:" group headings are
 * listed without one.
 */
export function parseHelp(texts: readonly string[]): HelpListing {
  const listing: HelpListing = { commands: [], namedOnly: [], fullListing: null, ended: false };
  let inNameList = false;
  /** The command listed on the line before, and the column its description starts at. */
  let last: ContinuedCommand | null = null;
  for (const raw of texts) {
    const text = stripFormatting(raw).replace(/\s+$/, '');
    if (END_OF_HELP.test(text.trim())) {
      listing.ended = true;
      break;
    }
    const more = last ? continuation(text, last.column) : null;
    if (last && more) {
      last.command.description += ` ${more}`;
      continue;
    }
    last = null;
    if (/help commands\b/i.test(text)) listing.fullListing ??= 'HELP COMMANDS';
    if (/\bHELP ALL\b/.test(text)) listing.fullListing = 'HELP ALL';
    const other = /^\s*(?:Other commands|[A-Za-z][A-Za-z ]* commands):\s*(.*)$/.exec(text);
    if (other) {
      inNameList = true;
      listing.namedOnly.push(...namesIn(other[1]!));
      continue;
    }
    // Anope 2.0 groups commands under a heading without a colon ("Used to manage channels"), as an
    // indented list of names with commas, continued on the next indented lines.
    const group = GROUP_LINE.exec(text);
    if (group) {
      inNameList = true;
      listing.namedOnly.push(...namesIn(group[1]!));
      continue;
    }
    if (inNameList) {
      const names = NAME_LIST.exec(text);
      if (names && text.trim() !== '') {
        listing.namedOnly.push(...namesIn(names[1]!));
        continue;
      }
      inNameList = false;
    }
    const command = COMMAND_LINE.exec(text);
    if (command && (command[2]!.length >= 2 || command[1]!.length >= FILLED_COLUMN)) {
      const entry = { name: command[1]!, description: command[3]! };
      listing.commands.push(entry);
      last = { command: entry, column: text.length - command[3]!.length };
    }
  }
  return listing;
}

/**
 * The sub-commands a `HELP <parent>` answer lists, named `<parent> <sub>`: Anope writes each with its
 * parent (`    SET AUTOOP     Should services ...`), Atheme lists them without it after "The following
 * subcommands are available:" (`EMAIL           Changes your e-mail address.`).
 */
export function parseSubcommands(parent: string, texts: readonly string[]): ServiceCommand[] {
  const found = new Map<string, ServiceCommand>();
  const withParent = new RegExp(`^\\s*${parent}\\s+([A-Z][A-Z0-9_-]*)(\\s+)(\\S.*?)\\s*$`);
  let listed = false;
  /** The sub-command listed on the line before, and the column its description starts at. */
  let last: ContinuedCommand | null = null;
  for (const raw of texts) {
    const text = stripFormatting(raw).replace(/\s+$/, '');
    if (END_OF_HELP.test(text.trim())) break;
    const more = last ? continuation(text, last.column) : null;
    if (last && more) {
      last.command.description += ` ${more}`;
      continue;
    }
    last = null;
    if (/subcommands are available/i.test(text)) {
      listed = true;
      continue;
    }
    const anope = withParent.exec(text);
    if (anope && (anope[2]!.length >= 2 || parent.length + 1 + anope[1]!.length >= FILLED_COLUMN)) {
      const name = `${parent} ${anope[1]!}`;
      const command = { name, description: anope[3]! };
      found.set(name, command);
      last = { command, column: text.length - anope[3]!.length };
      continue;
    }
    const atheme = listed ? COMMAND_LINE.exec(text) : null;
    if (atheme && (atheme[2]!.length >= 2 || atheme[1]!.length >= FILLED_COLUMN)) {
      const name = `${parent} ${atheme[1]!}`;
      const command = { name, description: atheme[3]! };
      found.set(name, command);
      last = { command, column: text.length - atheme[3]!.length };
    } else if (listed && text.trim() === '') {
      continue;
    } else if (listed && !atheme) {
      listed = false;
    }
  }
  return [...found.values()];
}

function namesIn(text: string): string[] {
  return text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => /^[A-Z][A-Z0-9_-]*$/.test(name));
}

/**
 * Everything one service lists: the HELP answer, completed from its full listing when it named
 * commands without descriptions. Commands named nowhere with a description keep a null one.
 */
export function mergeListings(first: HelpListing, full: HelpListing | null): ServiceCommand[] {
  const byName = new Map<string, ServiceCommand>();
  for (const command of [...first.commands, ...(full?.commands ?? [])]) {
    if (!byName.has(command.name) || byName.get(command.name)!.description === null) byName.set(command.name, command);
  }
  for (const name of [...first.namedOnly, ...(full?.namedOnly ?? [])]) {
    if (!byName.has(name)) byName.set(name, { name, description: null });
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Send `text` to `service` and collect its NOTICEs to the bot until Atheme's end line, a quiet spell
 * (Anope has no end line), or the timeout.
 */
export function askService(irc: IrcPort, service: string, text: string): Promise<string[]> {
  return askServiceFor(irc, service, text, {
    quietMs: QUIET_MS,
    timeoutMs: ANSWER_TIMEOUT_MS,
    ends: (message, fromService) =>
      fromService && END_OF_HELP.test(stripFormatting(message.params.at(-1) ?? '').trim()),
  });
}

/**
 * HELP to every configured service that is online; services that list no command are left out. The
 * services are asked side by side (their answers tell apart by sender): an answer without an end line
 * (Anope's) ends only after a quiet spell, and one service after another would take tens of seconds. None is
 * asked where the server knows no accounts (its profile's `accounts`, ircd 2.11): no such services run there.
 */
export async function fetchServiceCommands(context: SyncContext): Promise<ServiceCommands[]> {
  const { irc, config, logger } = context;
  if (!irc.state.profile.accounts) return [];
  const online = await onlineNicks(irc, config.services);
  const lists = await Promise.all(
    online.map(async (service): Promise<ServiceCommands> => {
      const first = parseHelp(await askService(irc, service, 'HELP'));
      const needsFull = first.fullListing !== null && (first.namedOnly.length > 0 || first.commands.length === 0);
      const full = needsFull ? parseHelp(await askService(irc, service, first.fullListing!)) : null;
      const commands = mergeListings(first, full);
      // SET is a family (SET EMAIL, SET PASSWORD, ...) that only its own HELP lists.
      for (const parent of commands.filter((command) => SUBCOMMAND_PARENTS.has(command.name))) {
        commands.push(...parseSubcommands(parent.name, await askService(irc, service, `HELP ${parent.name}`)));
      }
      commands.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      logger.debug('service commands', { service, commands: commands.length });
      return { service, commands };
    }),
  );
  return lists.filter((list) => list.commands.length > 0);
}

/**
 * The catalogue after a refresh: each configured service's list as it answered, or, for a service
 * that did not answer this time (offline, too slow), the list it gave last time; in config order.
 */
export function withUnansweredKept(
  answered: readonly ServiceCommands[],
  services: readonly string[],
  known: Pick<ServicesSlice, 'get'>,
): ServiceCommands[] {
  const byService = new Map(answered.map((list) => [list.service.toLowerCase(), list]));
  return services.flatMap((service) => {
    const list = byService.get(service.toLowerCase()) ?? known.get(service);
    return list ? [list] : [];
  });
}

/** The services' commands as a unit of the collector; the sync asks {@link ServiceCommandsUnit.askUntilAnswered}. */
export interface ServiceCommandsUnit extends CollectorUnit {
  /** Ask every service now, in the services' own turns. */
  ask(): Promise<void>;
  /** Ask, while the services have not answered once on this run (after each sync, until they do). */
  askUntilAnswered(): void;
}

/** HELP to the services every `commands_refresh_seconds`, and after each sync until they answer once. */
export function serviceCommandsUnit(context: CollectorContext): ServiceCommandsUnit {
  const { irc, model, config, connection, queues } = context;
  let missing = true;
  const ask = (): Promise<void> =>
    connection.ready
      ? queues.services.run('commands', async () => {
          const lists = await fetchServiceCommands(context);
          if (!irc.state.connected) return;
          missing = lists.length === 0;
          // A service that did not answer this time (offline, slow) keeps the list it gave last time.
          if (!missing) model.setServiceCommands(withUnansweredKept(lists, config.services, model.services));
        })
      : Promise.resolve();
  return {
    name: 'service commands',
    ask,
    askUntilAnswered: () => {
      if (missing) void ask();
    },
    timers: [{ everyMs: config.commands_refresh_seconds * 1000, run: () => void ask() }],
  };
}
