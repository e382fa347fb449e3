/**
 * The TOKEN commands, sent to the bot in private and answered by NOTICE.
 * Everyone logged in to NickServ manages their own tokens; administrators
 * approve endpoints, mark staff tokens, and see and revoke every token.
 * A token is always written `#<id>`; commands take `<id>` or `#<id>`.
 *
 * An answer that reports a token's state after a change (or a change it did not need) is sent only
 * once the store has the tokens on disk, so a crash after it cannot undo what it said.
 */
import {
  errorMessage,
  openApiPath,
  usageLine,
  type CommandDefinition,
  type CommandInvocation,
  type Logger,
} from '../../lib/sdk.js';
import {
  SECRET_NOT_DELIVERED,
  TOKEN_NOT_SAVED,
  type ApiToken,
  type AuditActor,
  type AuditEntry,
  type TokensSlice,
} from './model.js';
import { checkNames, describeValidNames, parseTokenId, wildcards, type GrantableEndpoint } from './endpoints.js';
import { cleanLabel } from './services.js';

export interface TokenCommandsOptions {
  tokens: TokensSlice;
  maxTokensPerAccount: number;
  /** The grantable endpoints now (the route table changes as plugins start). */
  endpoints: () => GrantableEndpoint[];
  /** Folds account names (the network's CASEMAPPING). */
  fold: (name: string) => string;
  /** Resolves once the token changes made so far are on disk; rejects when the store cannot write them. */
  persisted: () => Promise<void>;
  logger: Logger;
}

/** Longest label TOKEN CREATE accepts. */
export const MAX_LABEL_LENGTH = 64;
/**
 * Lines a list answers with before it says how many more there are: an answer has 10 s to leave the
 * bot, and at the default pacing (one line per 500 ms, answers two lines in three while a sync waits)
 * a longer one would be cut off.
 */
export const MAX_LIST_LINES = 12;
/** Audit entries TOKEN AUDIT shows (the newest). */
export const AUDIT_LINES = 12;

const SUBCOMMANDS =
  'CREATE, LIST, INFO, REVOKE (anyone logged in to NickServ); GRANT, DENY, STAFF, ENDPOINTS, AUDIT (administrators)';

export function describeToken(token: ApiToken): string {
  // Quoted as JSON, so a label cannot pass itself off as the rest of the line (`a" of admin: ...`).
  const label = token.label ? ` ${JSON.stringify(token.label)}` : '';
  const state = token.revokedAt === null ? 'active' : `revoked ${token.revokedAt}`;
  const endpoints = token.grants.length > 0 ? token.grants.join(', ') : 'none';
  return (
    `#${token.id}${label} of ${token.owner}: ${state}; endpoints: ${endpoints}` +
    `${token.staff ? '; staff' : ''}; last used ${token.lastUsedAt ?? 'never'}`
  );
}

export function describeAudit(entry: AuditEntry): string {
  const { actor } = entry;
  const by =
    actor.via === 'system'
      ? `system (${actor.reason})`
      : actor.via === 'http'
        ? `${actor.account} with staff token #${actor.tokenId ?? '?'}`
        : actor.via === 'web'
          ? `${actor.account} on the website`
          : actor.account;
  const details = entry.details.length > 0 ? ` ${entry.details.join(', ')}` : '';
  return `${entry.at} #${entry.tokenId} ${entry.action}${details} by ${by}`;
}

/** `GET /api/irc/users/{nick}/` from the route pattern `/api/irc/users/:nick/`. */
function displayPath(endpoint: GrantableEndpoint): string {
  return `${endpoint.method} ${openApiPath(endpoint.path)}`;
}

export function tokenCommands(options: TokenCommandsOptions): CommandDefinition[] {
  const { tokens, logger, fold } = options;

  const actorOf = (invocation: CommandInvocation): AuditActor => ({ account: invocation.sender.account!, via: 'irc' });

  const usageOf = (name: string): string => usageLine(commands.find((candidate) => candidate.name === name)!);

  /** The token named by `text` that the sender may see (their own, or any for an administrator). */
  const findToken = (invocation: CommandInvocation, text: string | undefined, command: string): ApiToken | null => {
    const id = parseTokenId(text);
    if (id === null) {
      // Long text is not echoed: someone may have pasted a secret where the id belongs.
      const problem =
        text === undefined
          ? 'Which token?'
          : text.length <= 12
            ? `"${text}" is not a token id.`
            : 'That is not a token id.';
      invocation.reply(`${problem} ${usageOf(command)}`);
      return null;
    }
    const token = tokens.get(id);
    const account = invocation.sender.account!;
    if (!token || (!invocation.isAdmin && !tokens.isOwner(token, account))) {
      invocation.reply(
        invocation.isAdmin
          ? `There is no token #${id}.`
          : `The account ${account} has no token #${id}. TOKEN LIST shows yours.`,
      );
      return null;
    }
    return token;
  };

  /** Wait until the tokens are on disk; false (and logged) when the store could not write them. */
  const saved = async (command: string, token: ApiToken): Promise<boolean> => {
    try {
      await options.persisted();
      return true;
    } catch (error) {
      logger.error('a token change could not be saved', { command, token: `#${token.id}`, error: errorMessage(error) });
      return false;
    }
  };

  /**
   * Answer `text` once it is on disk. When the store could not write, the change stays in effect in
   * memory and dirty (the store writes it with a later save), and the answer says first that a restart
   * may undo it; the same command sent again asks for another write, and confirms once that succeeds.
   */
  const answerSaved = async (
    invocation: CommandInvocation,
    command: string,
    token: ApiToken,
    text: string,
  ): Promise<void> => {
    if (await saved(command, token)) {
      invocation.reply(text);
      return;
    }
    invocation.reply(
      `NOT SAVED: the bot could not write this to its store, so a restart may undo it. ${text} ` +
        `Send ${command} again to save it; the bot's log says why it failed.`,
    );
  };

  /** Refuse changes to a revoked token; true when it is live. */
  const requireLive = (invocation: CommandInvocation, token: ApiToken): boolean => {
    if (token.revokedAt === null) return true;
    invocation.reply(`Token #${token.id} was revoked at ${token.revokedAt}; a revoked token cannot be changed.`);
    return false;
  };

  const listTokens = (invocation: CommandInvocation, list: ApiToken[], whose: string): void => {
    if (list.length === 0) {
      invocation.reply(`${whose} no tokens.`);
      return;
    }
    // Live tokens first: they are the ones that matter.
    const ordered = [...list].sort(
      (a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || a.id - b.id,
    );
    const live = list.filter((token) => token.revokedAt === null).length;
    invocation.reply(`${whose} ${list.length} token${list.length === 1 ? '' : 's'} (${live} active):`);
    for (const token of ordered.slice(0, MAX_LIST_LINES)) invocation.reply(`  ${describeToken(token)}`);
    if (ordered.length > MAX_LIST_LINES) {
      invocation.reply(`  …and ${ordered.length - MAX_LIST_LINES} more; TOKEN INFO <id> shows any one of them.`);
    }
  };

  const commands: CommandDefinition[] = [
    {
      name: 'TOKEN',
      usage: '<subcommand> [arguments]',
      help: `Manages API tokens for the HTTP API. Subcommands: ${SUBCOMMANDS}. Send HELP TOKEN <subcommand> for one of them.`,
      handle({ args, reply }) {
        const prefix = args.length > 0 ? `There is no subcommand TOKEN ${args[0]!.toUpperCase()}. ` : '';
        reply(`${prefix}TOKEN subcommands: ${SUBCOMMANDS}. Send HELP TOKEN <subcommand> for details.`);
      },
    },
    {
      name: 'TOKEN CREATE',
      usage: '[label]',
      help:
        'Creates an API token for your account and shows it once: copy it then, it cannot be shown again. ' +
        'A new token reaches no endpoint until an administrator approves each endpoint for it.',
      requiresAccount: true,
      async handle(invocation) {
        const { reply, text } = invocation;
        const account = invocation.sender.account!;
        const label = cleanLabel(text);
        const characters = [...label].length;
        if (characters > MAX_LABEL_LENGTH) {
          reply(
            `A label has at most ${MAX_LABEL_LENGTH} characters; this one has ${characters}. ${usageOf('TOKEN CREATE')}`,
          );
          return;
        }
        const live = tokens.liveCount(account);
        if (live >= options.maxTokensPerAccount) {
          reply(
            `The account ${account} already holds ${live} active tokens, the most allowed. ` +
              'Revoke one first (TOKEN LIST, then TOKEN REVOKE <id>).',
          );
          return;
        }
        const { token, secret } = tokens.create(account, label, actorOf(invocation));
        logger.info('token created', { token: `#${token.id}`, account });
        // A secret is shown only for a token that a crash cannot take away again; one that could not be saved
        // is revoked instead, by the bot, and its secret never leaves.
        if (!(await saved('TOKEN CREATE', token))) {
          tokens.revoke(token, TOKEN_NOT_SAVED);
          logger.warn('token revoked: it could not be saved', { token: `#${token.id}`, account });
          reply(
            `Your new token #${token.id} could not be saved (the bot could not write its store), so it was revoked at ` +
              "once and its secret is not shown. Try again later; the bot's log says why.",
          );
          return;
        }
        // A secret that never reached its owner (their nick changed hands, or the answer could not leave in
        // time) is of no use to anyone but whoever might have got it: the token is revoked at once, by the bot
        // (the audit log must not say that its owner did).
        reply(`Token #${token.id}${label ? ` ${JSON.stringify(label)}` : ''} created: ${secret}`, {
          onDropped: () => {
            if (!tokens.revoke(token, SECRET_NOT_DELIVERED)) return;
            logger.warn('token revoked: its secret could not be delivered', { token: `#${token.id}`, account });
          },
        });
        reply(
          'Copy it now: it is shown only this once (only its hash is kept). It reaches no endpoint until an administrator ' +
            `approves it (TOKEN GRANT #${token.id} <endpoint>). Send it as the header "Authorization: Token <token>".`,
        );
      },
    },
    {
      name: 'TOKEN LIST',
      usage: '[ALL|<account>]',
      maxArgs: 1,
      help:
        'Lists your tokens with their state and approved endpoints. Administrators may list every token (ALL) ' +
        "or an account's tokens.",
      requiresAccount: true,
      handle(invocation) {
        const { args, isAdmin, reply } = invocation;
        const account = invocation.sender.account!;
        const wanted = args[0];
        if (wanted === undefined) {
          listTokens(invocation, tokens.ownedBy(account), `The account ${account} has`);
          return;
        }
        const all = wanted.toUpperCase() === 'ALL';
        if (!isAdmin && (all || fold(wanted) !== fold(account))) {
          // Not what was typed: anyone may send any text here, and it has no business in the log.
          logger.warn('admin command refused', { command: `TOKEN LIST ${all ? 'ALL' : '<account>'}`, account });
          reply(
            `Permission denied: TOKEN LIST ${all ? 'ALL' : '<account>'} is for administrators, and the account ${account} ` +
              'is not one. TOKEN LIST shows your own tokens.',
          );
          return;
        }
        if (all) {
          listTokens(invocation, tokens.all(), 'There are');
          return;
        }
        // Accounts compare folded: the answer names the account as its services spell it, not as typed —
        // as its newest token records it, or as the sender's own account when it is theirs.
        const owned = tokens.ownedBy(wanted);
        const name = owned.at(-1)?.owner ?? (fold(wanted) === fold(account) ? account : wanted);
        listTokens(invocation, owned, `The account ${name} has`);
      },
    },
    {
      name: 'TOKEN INFO',
      usage: '<id>',
      maxArgs: 1,
      help: 'Shows one of your tokens: label, state, approved endpoints, staff flag, last use and uses per endpoint.',
      requiresAccount: true,
      handle(invocation) {
        const token = findToken(invocation, invocation.args[0], 'TOKEN INFO');
        if (!token) return;
        const { reply } = invocation;
        reply(describeToken(token));
        reply(`  created ${token.createdAt}${token.revokedAt === null ? '' : `, revoked ${token.revokedAt}`}`);
        const uses = Object.entries(token.uses).map(([endpoint, count]) => `${endpoint} ${count}`);
        reply(`  uses: ${uses.length > 0 ? uses.join(', ') : 'none yet'}`);
        if (token.grants.length === 0 && token.revokedAt === null) {
          reply('  This token reaches no endpoint yet: an administrator must approve each one (TOKEN GRANT).');
        }
      },
    },
    {
      name: 'TOKEN REVOKE',
      usage: '<id>',
      maxArgs: 1,
      help: 'Revokes one of your tokens for good: every request with it gets 401 from then on. Administrators may revoke any token.',
      requiresAccount: true,
      async handle(invocation) {
        const token = findToken(invocation, invocation.args[0], 'TOKEN REVOKE');
        if (!token) return;
        if (!tokens.revoke(token, actorOf(invocation))) {
          await answerSaved(
            invocation,
            'TOKEN REVOKE',
            token,
            `Token #${token.id} was already revoked at ${token.revokedAt}.`,
          );
          return;
        }
        logger.info('token revoked', { token: `#${token.id}`, by: invocation.sender.account });
        await answerSaved(
          invocation,
          'TOKEN REVOKE',
          token,
          `Token #${token.id} is revoked: every request with it now gets 401.`,
        );
      },
    },
    {
      name: 'TOKEN GRANT',
      usage: '<id> <endpoint|irc.*|netstats.*>...',
      help:
        'Approves endpoints for a token (TOKEN ENDPOINTS lists their names). A wildcard such as netstats.* ' +
        'covers every endpoint of that group, including ones added later.',
      adminOnly: true,
      async handle(invocation) {
        const { args, reply } = invocation;
        if (args.length < 2) {
          reply(usageOf('TOKEN GRANT'));
          return;
        }
        const token = findToken(invocation, args[0], 'TOKEN GRANT');
        if (!token || !requireLive(invocation, token)) return;
        const endpoints = options.endpoints();
        const { valid, unknown } = checkNames(args.slice(1), endpoints);
        if (unknown.length > 0) {
          reply(
            `Nothing granted: unknown endpoint ${unknown.join(', ')}. Valid names: ${describeValidNames(endpoints)}.`,
          );
          return;
        }
        const added = tokens.grant(token, valid, actorOf(invocation));
        if (added.length === 0) {
          await answerSaved(
            invocation,
            'TOKEN GRANT',
            token,
            `Token #${token.id} already had ${valid.join(', ')}; its endpoints: ${token.grants.join(', ')}.`,
          );
          return;
        }
        logger.info('token granted', {
          token: `#${token.id}`,
          by: invocation.sender.account,
          endpoints: added.join(','),
        });
        await answerSaved(
          invocation,
          'TOKEN GRANT',
          token,
          `Token #${token.id} may now call ${added.join(', ')}; its endpoints: ${token.grants.join(', ')}.`,
        );
      },
    },
    {
      name: 'TOKEN DENY',
      usage: '<id> <endpoint|irc.*|netstats.*>...',
      help: 'Withdraws endpoints from a token. Denying one endpoint that a wildcard covers replaces the wildcard by the other endpoints it covers now.',
      adminOnly: true,
      async handle(invocation) {
        const { args, reply } = invocation;
        if (args.length < 2) {
          reply(usageOf('TOKEN DENY'));
          return;
        }
        const token = findToken(invocation, args[0], 'TOKEN DENY');
        if (!token || !requireLive(invocation, token)) return;
        const endpoints = options.endpoints();
        const names = args.slice(1).map((name) => name.toLowerCase());
        // A granted name stays deniable even after its route is gone (its plugin turned off).
        const unknown = checkNames(names, endpoints).unknown.filter((name) => !token.grants.includes(name));
        if (unknown.length > 0) {
          reply(
            `Nothing denied: unknown endpoint ${unknown.join(', ')}. Valid names: ${describeValidNames(endpoints)}.`,
          );
          return;
        }
        const known = endpoints.map((endpoint) => endpoint.name);
        const { denied, expanded } = tokens.deny(token, names, known, actorOf(invocation));
        const now = token.grants.length > 0 ? token.grants.join(', ') : 'none';
        if (denied.length === 0) {
          await answerSaved(
            invocation,
            'TOKEN DENY',
            token,
            `Token #${token.id} had none of ${names.join(', ')}; its endpoints: ${now}.`,
          );
          return;
        }
        logger.info('token denied', {
          token: `#${token.id}`,
          by: invocation.sender.account,
          endpoints: denied.join(','),
        });
        const note =
          expanded.length > 0
            ? ` (${expanded.join(', ')} was replaced by the endpoints it covers now, so it no longer reaches new ones)`
            : '';
        await answerSaved(
          invocation,
          'TOKEN DENY',
          token,
          `Token #${token.id} may no longer call ${denied.join(', ')}${note}; its endpoints: ${now}.`,
        );
      },
    },
    {
      name: 'TOKEN STAFF',
      usage: '<id> ON|OFF',
      maxArgs: 2,
      help: 'Marks a token as staff (ON) or not (OFF). A staff token may manage tokens over HTTP under /api/staff/.',
      adminOnly: true,
      async handle(invocation) {
        const { args, reply } = invocation;
        const setting = args[1]?.toUpperCase();
        if (args.length !== 2 || (setting !== 'ON' && setting !== 'OFF')) {
          reply(usageOf('TOKEN STAFF'));
          return;
        }
        const token = findToken(invocation, args[0], 'TOKEN STAFF');
        if (!token || !requireLive(invocation, token)) return;
        const staff = setting === 'ON';
        if (!tokens.setStaff(token, staff, actorOf(invocation))) {
          await answerSaved(
            invocation,
            'TOKEN STAFF',
            token,
            `Token #${token.id} ${staff ? 'was already' : 'was not'} a staff token.`,
          );
          return;
        }
        logger.info('token staff changed', { token: `#${token.id}`, by: invocation.sender.account, staff });
        await answerSaved(
          invocation,
          'TOKEN STAFF',
          token,
          `Token #${token.id} ${staff ? 'is now a staff token' : 'is no longer a staff token'}.`,
        );
      },
    },
    {
      name: 'TOKEN ENDPOINTS',
      usage: '',
      maxArgs: 0,
      help: 'Lists the endpoint names an administrator may grant, with their paths, and the wildcards.',
      adminOnly: true,
      handle({ reply }) {
        const endpoints = options.endpoints();
        if (endpoints.length === 0) reply('No token endpoint is served right now (is the api plugin enabled?).');
        for (const endpoint of endpoints) reply(`  ${endpoint.name} — ${displayPath(endpoint)} — ${endpoint.summary}`);
        reply(`Wildcards: ${wildcards(endpoints).join(', ')} (each also covers endpoints of its group added later).`);
      },
    },
    {
      name: 'TOKEN AUDIT',
      usage: '[id]',
      maxArgs: 1,
      help: `Shows the newest ${AUDIT_LINES} entries of the token audit log (creations, grants, denials, revocations, staff changes), or those of one token.`,
      adminOnly: true,
      handle(invocation) {
        const { args, reply } = invocation;
        let tokenId: number | undefined;
        if (args[0] !== undefined) {
          const token = findToken(invocation, args[0], 'TOKEN AUDIT');
          if (!token) return;
          tokenId = token.id;
        }
        const entries = tokens.audit(tokenId);
        if (entries.length === 0) {
          reply(tokenId === undefined ? 'The audit log is empty.' : `No audit entries for token #${tokenId}.`);
          return;
        }
        const shown = entries.slice(-AUDIT_LINES);
        reply(
          `${entries.length} audit entr${entries.length === 1 ? 'y' : 'ies'}${tokenId === undefined ? '' : ` for #${tokenId}`}` +
            `${shown.length < entries.length ? `, the newest ${shown.length}` : ''}:`,
        );
        for (const entry of shown) reply(`  ${describeAudit(entry)}`);
      },
    },
  ];
  return commands;
}
