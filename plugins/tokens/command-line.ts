/**
 * `irc-network-data token …`: the token administration of the command line, for an operator on the bot's
 * machine, where nobody can log in to an account (a network without services, like IRCnet's or EFnet's) or
 * before anyone may (the first administrator's token). It is a front end over the token rules, as the TOKEN
 * commands are: the same slice and audit log (with the actor `via: 'cli'`, named after the operator), the same
 * limits, each change on disk before it is reported. Whoever can run it can write the store, so it acts as an
 * administrator. It runs while the bot is stopped: the store is locked by a running bot.
 */
import os from 'node:os';
import { openApiPath, type CommandLineCommand, type CommandLineOutput } from '../../lib/sdk.js';
import { describeAudit, describeToken } from './commands/answers.js';
import { wildcards, type GrantableEndpoint } from './endpoints.js';
import type { TokensSlice } from './model.js';
import type { Caller, TokenRules } from './rules.js';

export interface TokenCommandLineOptions {
  rules: TokenRules;
  tokens: TokensSlice;
  endpoints: () => GrantableEndpoint[];
}

const USAGE = [
  'usage: irc-network-data token <command> [words…] --config <path> [--as <name>]',
  "  list [<owner>]                      every token, or one holder's",
  '  info <id>                           one token',
  '  create <owner> [label…]             a new token of <owner>; its secret is shown once',
  '  grant <id> <endpoint|group.*>…      approve endpoints for a token (also: approve)',
  '  deny <id> <endpoint|group.*>…       withdraw approved endpoints',
  '  staff <id> on|off                   let a token manage tokens over HTTP (/api/staff/), or not',
  '  revoke <id>                         revoke a token for good',
  '  endpoints                           the endpoint names that may be granted',
  "  audit [<id>]                        the audit log, or one token's entries",
  'The audit log names the operator as the user running the command, or as --as <name> says.',
].join('\n');

/** What a subcommand got: its words, the name the operator acts as, and where to write. */
interface Invocation {
  words: string[];
  caller: Caller;
  output: CommandLineOutput;
}

/** Exit codes: done, refused by the rules (no such token, an unknown endpoint…), a wrong command line. */
const DONE = 0;
const REFUSED = 1;
const USAGE_ERROR = 2;

function tokenId(word: string | undefined): number | undefined {
  const match = /^#?(\d{1,9})$/.exec(word ?? '');
  return match ? Number(match[1]) : undefined;
}

/** The `--as <name>` option taken out of the words: the operator's name in the audit log. */
function operatorOf(args: readonly string[]): { words: string[]; operator: string } | { problem: string } {
  const words: string[] = [];
  let operator: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--as' || word.startsWith('--as=')) {
      operator = word === '--as' ? args[++index] : word.slice('--as='.length);
      if (!operator || operator.startsWith('--')) return { problem: '--as needs a name: --as <name>' };
    } else {
      words.push(word);
    }
  }
  return { words, operator: operator ?? os.userInfo().username };
}

/** Says a change, and when the store could not write it, that it is not saved (exit code 1). */
function saved(output: CommandLineOutput, ok: boolean, text: string): number {
  if (ok) {
    output.out(text);
    return DONE;
  }
  output.err(`NOT SAVED: the store could not be written (see the warning above). ${text}`);
  return REFUSED;
}

function noSuchToken(output: CommandLineOutput, id: number): number {
  output.err(`There is no token #${id}.`);
  return REFUSED;
}

type Subcommand = (options: TokenCommandLineOptions, invocation: Invocation) => Promise<number> | number;

/** A subcommand of `<id> <names…>` (grant, deny): the id and at least one name, or the usage. */
function idAndNames(words: readonly string[]): { id: number; names: string[] } | undefined {
  const [first, ...names] = words;
  const id = tokenId(first);
  return id === undefined || names.length === 0 ? undefined : { id, names };
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async list({ rules }, { words, caller, output }) {
    if (words.length > 1) return usage(output, 'list takes one owner at most');
    const listed = await rules.list(caller, words[0] === undefined ? { all: true } : { account: words[0] });
    if (!listed.ok) return REFUSED;
    if (listed.tokens.length === 0) output.out(words[0] === undefined ? 'No tokens.' : `${words[0]} holds no token.`);
    for (const token of listed.tokens) output.out(describeToken(token));
    return DONE;
  },
  async info({ rules }, { words, caller, output }) {
    const id = tokenId(words[0]);
    if (id === undefined || words.length !== 1) return usage(output, 'info takes a token id');
    const found = await rules.find(caller, id);
    if (!found.ok) return noSuchToken(output, id);
    output.out(describeToken(found.token));
    if (found.token.requests.length > 0) output.out(`Asked for: ${found.token.requests.join(', ')}`);
    return DONE;
  },
  async create({ rules }, { words, caller, output }) {
    const [owner, ...label] = words;
    if (owner === undefined || owner.startsWith('-')) return usage(output, 'create needs the holder of the token');
    const created = await rules.create(caller, label.join(' '), owner);
    if (!created.ok) {
      switch (created.reason) {
        case 'label-too-long':
          output.err(`A label has at most ${created.limit} characters; this one has ${created.length}.`);
          break;
        case 'too-many-tokens':
          output.err(`${created.account} already holds ${created.live} active tokens, the most allowed.`);
          break;
        case 'too-many-today':
          output.err(
            `${created.account} got ${created.limit} tokens in the last 24 hours; the next at ${created.nextAt}.`,
          );
          break;
        case 'not-saved':
          output.err(`Token #${created.token.id} could not be saved, so it was revoked; its secret is not shown.`);
          break;
      }
      return REFUSED;
    }
    output.out(`Token #${created.token.id} of ${owner} created: ${created.secret}`);
    output.out(
      'It is shown only this once (only its hash is kept). It reaches no endpoint until one is granted ' +
        `(irc-network-data token grant ${created.token.id} <endpoint>).`,
    );
    return DONE;
  },
  async grant({ rules }, { words, caller, output }) {
    const asked = idAndNames(words);
    if (!asked) return usage(output, 'grant needs a token id and one or more endpoint names');
    const result = await rules.grant(caller, asked.id, asked.names);
    if (!result.ok) return refused(output, result, asked.id);
    const text =
      result.added.length === 0
        ? `Token #${asked.id} already had ${result.names.join(', ')}; its endpoints: ${result.grants.join(', ')}.`
        : `Token #${asked.id} may now call ${result.added.join(', ')}; its endpoints: ${result.grants.join(', ')}.`;
    return saved(output, result.saved, text);
  },
  async deny({ rules }, { words, caller, output }) {
    const asked = idAndNames(words);
    if (!asked) return usage(output, 'deny needs a token id and one or more endpoint names');
    const result = await rules.deny(caller, asked.id, asked.names);
    if (!result.ok) return refused(output, result, asked.id);
    const left = result.grants.length > 0 ? result.grants.join(', ') : 'none';
    const text =
      result.denied.length === 0
        ? `Token #${asked.id} did not have ${result.names.join(', ')}; its endpoints: ${left}.`
        : `Token #${asked.id} may no longer call ${result.denied.join(', ')}; its endpoints: ${left}.`;
    return saved(output, result.saved, text);
  },
  async staff({ rules }, { words, caller, output }) {
    const id = tokenId(words[0]);
    const value = words[1]?.toLowerCase();
    if (id === undefined || words.length !== 2 || (value !== 'on' && value !== 'off')) {
      return usage(output, 'staff needs a token id and on or off');
    }
    const result = await rules.setStaff(caller, id, value === 'on');
    if (!result.ok) return refused(output, result, id);
    const text = `Token #${id} is ${result.staff ? 'now' : 'no longer'} a staff token${result.changed ? '' : ' (unchanged)'}.`;
    return saved(output, result.saved, text);
  },
  async revoke({ rules }, { words, caller, output }) {
    const id = tokenId(words[0]);
    if (id === undefined || words.length !== 1) return usage(output, 'revoke takes a token id');
    const result = await rules.revoke(caller, id);
    if (!result.ok) return noSuchToken(output, id);
    const text = result.revoked ? `Token #${id} revoked.` : `Token #${id} was already revoked.`;
    return saved(output, result.saved, text);
  },
  endpoints({ endpoints }, { words, output }) {
    if (words.length > 0) return usage(output, 'endpoints takes no words');
    const grantable = endpoints();
    if (grantable.length === 0) output.out('No token endpoint is served (is the api plugin enabled in this config?).');
    for (const { name, method, path, summary } of grantable) {
      output.out(`${name}  ${method} ${openApiPath(path)}  ${summary}`);
    }
    output.out(`Wildcards: ${wildcards(grantable).join(', ')}`);
    return DONE;
  },
  async audit({ rules }, { words, caller, output }) {
    const id = words[0] === undefined ? undefined : tokenId(words[0]);
    if (words.length > 1 || (words[0] !== undefined && id === undefined)) {
      return usage(output, 'audit takes a token id at most');
    }
    const log = await rules.audit(caller, id);
    if (!log.ok) return REFUSED;
    if (log.entries.length === 0) output.out('No entries.');
    for (const entry of log.entries) output.out(describeAudit(entry));
    return DONE;
  },
};
SUBCOMMANDS.approve = SUBCOMMANDS.grant!;

/** A refusal of grant, deny or staff, in words. */
function refused(
  output: CommandLineOutput,
  result: { reason: string; unknown?: string[]; valid?: string[]; token?: { revokedAt: string | null } },
  id: number,
): number {
  if (result.reason === 'unknown-endpoints') {
    output.err(
      `Nothing changed: unknown endpoint ${result.unknown!.join(', ')}. Valid names: ${result.valid!.join(', ')}.`,
    );
  } else if (result.reason === 'revoked') {
    output.err(`Token #${id} was revoked at ${result.token!.revokedAt}; a revoked token cannot be changed.`);
  } else {
    return noSuchToken(output, id);
  }
  return REFUSED;
}

function usage(output: CommandLineOutput, problem?: string): number {
  if (problem) output.err(`${problem}.`);
  output.err(USAGE);
  return USAGE_ERROR;
}

/** The `token` command of the command line. */
export function tokenCommandLine(options: TokenCommandLineOptions): CommandLineCommand {
  return {
    name: 'token',
    summary: 'create, approve, list and revoke API tokens, and read their audit log',
    async run(args, output) {
      const read = operatorOf(args);
      if ('problem' in read) return usage(output, read.problem);
      const [name, ...words] = read.words;
      if (name === undefined || name === 'help' || name === '--help') {
        if (name === undefined) return usage(output);
        output.out(USAGE);
        return DONE;
      }
      const subcommand = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
      if (!subcommand) return usage(output, `unknown token command "${name}"`);
      const caller: Caller = {
        actor: { account: read.operator, via: 'cli' },
        isAdmin: () => Promise.resolve(true),
        asked: { command: `token ${name}` },
      };
      return subcommand(options, { words, caller, output });
    },
  };
}
