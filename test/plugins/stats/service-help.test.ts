/**
 * The services' commands: how their HELP answers read (Atheme, Anope 2.0 and 2.1), and the collector asking the
 * services that are online, after its first sync, and putting their commands in the model.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { ServiceCommands } from '../../../lib/model/services.js';
import { stripFormatting } from '../../../lib/irc/text.js';
import { mergeListings, parseHelp, parseSubcommands, withUnansweredKept } from '../../../plugins/stats/service-help.js';
import { fakeNetwork } from '../../../testing/fake-network.js';
import type { Harness } from '../../../testing/harness.js';
import { INSPIRCD_ISUPPORT, startCollector } from './support.js';
// Anope 2.1's answers, written out from its source (Anope 2.1.15: modules/help.cpp, src/misc.cpp's HelpWrapper
// and LineWrapper, modules/nickserv/nickserv.cpp, modules/chanserv/chanserv.cpp, ns_set.cpp, cs_set.cpp, each
// command's description, data/*.example.conf); the fixture's header says which part comes from where.
import * as anope21 from './fixtures/anope-2.1-help.js';
import { findRepoRoot } from '../../support/testnet.js';

const B = '\x02';

/** Atheme 7.2.12 on the test network, `HELP` to NickServ from a logged-in user (NOTICE texts as received). */
const athemeNickServHelp = [
  `***** ${B}NickServ Help${B} *****`,
  `${B}NickServ${B} allows users to ${B}'register'${B} a nickname, and stop`,
  `others from using that nick. ${B}NickServ${B} allows the owner of a`,
  'nickname to disconnect a user from the network that is using',
  'their nickname.',
  ' ',
  'For more information on a command, type:',
  `${B}/msg NickServ help <command>${B}`,
  'For a verbose listing of all commands, type:',
  `${B}/msg NickServ help commands${B}`,
  ' ',
  'The following commands are available:',
  `${B}GHOST          ${B} Reclaims use of a nickname.`,
  `${B}GROUP          ${B} Adds a nickname to your account.`,
  `${B}IDENTIFY       ${B} Identifies to services for a nickname.`,
  `${B}INFO           ${B} Displays information on registrations.`,
  `${B}REGISTER       ${B} Registers a nickname.`,
  `${B}SET            ${B} Sets various control flags.`,
  `${B}UNGROUP        ${B} Removes a nickname from your account.`,
  ' ',
  `${B}Other commands:${B} ACC, DROP, HELP, LOGIN, LOGOUT, SETPASS, `,
  '                STATUS',
  `***** ${B}End of Help${B} *****`,
];

/** Atheme 7.2.12, `HELP COMMANDS` to NickServ (the verbose listing). */
const athemeNickServCommands = [
  `***** ${B}NickServ Help${B} *****`,
  'The following commands are available:',
  `${B}ACC            ${B} Displays parsable session information.`,
  `${B}DROP           ${B} Drops an account registration.`,
  `${B}GHOST          ${B} Reclaims use of a nickname.`,
  `${B}GROUP          ${B} Adds a nickname to your account.`,
  `${B}HELP           ${B} Displays contextual help information.`,
  `${B}IDENTIFY       ${B} Identifies to services for a nickname.`,
  `${B}INFO           ${B} Displays information on registrations.`,
  `${B}LOGIN          ${B} Authenticates to a services account.`,
  `${B}LOGOUT         ${B} Logs your services session out.`,
  `${B}REGISTER       ${B} Registers a nickname.`,
  `${B}SET            ${B} Sets various control flags.`,
  `${B}SETPASS        ${B} Changes a password using an authcode.`,
  `${B}STATUS         ${B} Displays session information.`,
  `${B}UNGROUP        ${B} Removes a nickname from your account.`,
  `***** ${B}End of Help${B} *****`,
];

/** Atheme 7.2.12, `HELP` to ChanServ from a logged-in user. */
const athemeChanServHelp = [
  `***** ${B}ChanServ Help${B} *****`,
  `${B}ChanServ${B} gives normal users the ability to maintain control`,
  'of a channel, without the need of a bot. Channel takeovers are',
  `virtually impossible when a channel is registered with ${B}ChanServ${B}.`,
  'Registration is a quick and painless process. Once registered,',
  'the founder can maintain complete and total control over the channel.',
  'Please note that channels will expire if there are no eligible channel successors.',
  'Successors are primarily those who have the +S (if available) or +R flag',
  'set on their account in the channel, although other people may be chosen',
  'depending on their access level and activity.',
  ' ',
  'For more information on a command, type:',
  `${B}/msg ChanServ help <command>${B}`,
  'For a verbose listing of all commands, type:',
  `${B}/msg ChanServ help commands${B}`,
  ' ',
  'The following commands are available:',
  `${B}FLAGS          ${B} Manipulates specific permissions on a channel.`,
  `${B}INFO           ${B} Displays information on registrations.`,
  `${B}OP             ${B} Gives channel ops to a user.`,
  `${B}REGISTER       ${B} Registers a channel.`,
  ' ',
  `${B}Other commands:${B} DEOP, HELP`,
  `***** ${B}End of Help${B} *****`,
];

/** Anope 2.0, `HELP` to NickServ: indented `NAME  Description` lines padded to 13 columns, no end line. */
const anopeNickServHelp = [
  `${B}NickServ${B} allows you to register a nickname and`,
  'prevent others from using it. The following',
  'commands allow for registration and maintenance of',
  `nicknames; to use them, type ${B}/msg NickServ \x1fcommand\x1f${B}.`,
  'For more information on a specific command, type',
  `${B}/msg NickServ HELP \x1fcommand\x1f${B}.`,
  '    ACCESS        Modify the list of authorized addresses',
  '    AJOIN         Manage your auto join list',
  '    ALIST         List channels you have access on',
  '    CERT          Modify the nickname client certificate list',
  '    DROP          Cancel the registration of a nickname',
  '    GLIST         Lists all nicknames in your group',
  '    GROUP         Join a group',
  '    IDENTIFY      Identify yourself with your password',
  '    INFO          Displays information about a given nickname',
  '    LOGOUT        Reverses the effect of the IDENTIFY command',
  '    RECOVER       Regains control of your nick',
  '    REGISTER      Register a nickname',
  '    RESETPASS     Helps you reset lost passwords',
  '    SET           Set options, including kill protection',
  '    STATUS        Returns the owner status of the given nickname',
  '    UNGROUP       Remove a nick from a group',
  '    UPDATE        Updates your current status, i.e. it checks for new memos',
  'Accounts that are not used anymore are subject to',
  'the automatic expiration, i.e. they will be deleted',
  'after 21 days if not used.',
];

/** Anope 2.0, `HELP` to ChanServ with command groups (names only) and the `HELP ALL` hint. */
const anopeChanServHelp = [
  `${B}ChanServ${B} allows you to register and control various`,
  `aspects of channels. ${B}ChanServ${B} can often prevent`,
  'malicious users from "taking over" channels by limiting',
  'who is allowed channel operator privileges. Available',
  'commands are listed below; to use them, type',
  `${B}/msg ChanServ \x1fcommand\x1f${B}. For more information on a`,
  `specific command, type ${B}/msg ChanServ HELP \x1fcommand\x1f${B}.`,
  '    BAN           Bans a given nick or mask on a channel',
  '    DROP          Cancel the registration of a channel',
  '    INFO          Lists information about the specified registered channel',
  '    REGISTER      Register a channel',
  '    SET           Set channel options and information',
  '    TOPIC         Manipulate the topic of the specified channel',
  ' ',
  'Used to manage the list of privileged users commands:',
  '     ACCESS, AOP, FLAGS, HOP, QOP, SOP, VOP',
  'Used to modify the channel status of you or other users commands:',
  '     DEHALFOP, DEOP, DEVOICE, HALFOP, OP, VOICE',
  `Use the ${B}HELP ALL${B} command to list all commands and their descriptions.`,
  'Note that any channel which is not used for 14 days',
  '(i.e. which no user on the channel is present for)',
  'will be automatically dropped.',
];

t.test('formatting codes are stripped', async (t) => {
  t.equal(
    stripFormatting(`${B}bold${B} \x0304,12red\x03 \x1funder\x1f \x1ditalic\x1d \x0f\x16x`),
    'bold red under italic x',
  );
});

t.test('Atheme: HELP lists some commands and names others; HELP COMMANDS describes them all', async (t) => {
  const first = parseHelp(athemeNickServHelp);
  t.equal(first.ended, true, 'Atheme ends with "End of Help"');
  t.equal(first.fullListing, 'HELP COMMANDS');
  t.same(
    first.commands.map((command) => command.name),
    ['GHOST', 'GROUP', 'IDENTIFY', 'INFO', 'REGISTER', 'SET', 'UNGROUP'],
  );
  t.same(
    first.commands.find((command) => command.name === 'REGISTER'),
    { name: 'REGISTER', description: 'Registers a nickname.' },
  );
  t.same(first.namedOnly, ['ACC', 'DROP', 'HELP', 'LOGIN', 'LOGOUT', 'SETPASS', 'STATUS'], 'a wrapped list continues');

  const merged = mergeListings(first, parseHelp(athemeNickServCommands));
  t.equal(merged.length, 14);
  t.ok(
    merged.every((command) => command.description !== null),
    'every command has a description',
  );
  t.same(
    merged.find((command) => command.name === 'IDENTIFY'),
    {
      name: 'IDENTIFY',
      description: 'Identifies to services for a nickname.',
    },
  );
  t.same(
    merged.map((command) => command.name),
    [...merged.map((command) => command.name)].sort(),
    'ordered by name',
  );

  const chanServ = parseHelp(athemeChanServHelp);
  t.same(
    chanServ.commands.find((command) => command.name === 'REGISTER'),
    {
      name: 'REGISTER',
      description: 'Registers a channel.',
    },
  );
  t.same(chanServ.namedOnly, ['DEOP', 'HELP']);
  t.notOk(
    chanServ.commands.some((command) => /^(Please|Successors|The)$/.test(command.name)),
    'prose is not taken for commands',
  );
  t.same(
    mergeListings(chanServ, null).find((command) => command.name === 'DEOP'),
    { name: 'DEOP', description: null },
    'without the full listing a named-only command has no description',
  );
});

t.test('Anope: indented listing, groups named only, HELP ALL', async (t) => {
  const nickServ = parseHelp(anopeNickServHelp);
  t.equal(nickServ.ended, false, 'Anope has no end line');
  t.equal(nickServ.fullListing, null, '"HELP command" is no pointer to a full listing');
  t.equal(nickServ.commands.length, 17);
  t.same(
    nickServ.commands.find((command) => command.name === 'REGISTER'),
    { name: 'REGISTER', description: 'Register a nickname' },
  );
  t.same(
    nickServ.commands.find((command) => command.name === 'IDENTIFY'),
    {
      name: 'IDENTIFY',
      description: 'Identify yourself with your password',
    },
  );
  t.same(nickServ.namedOnly, []);

  const chanServ = parseHelp(anopeChanServHelp);
  t.equal(chanServ.fullListing, 'HELP ALL');
  t.same(
    chanServ.commands.map((command) => command.name),
    ['BAN', 'DROP', 'INFO', 'REGISTER', 'SET', 'TOPIC'],
  );
  t.same(chanServ.namedOnly, [
    'ACCESS',
    'AOP',
    'FLAGS',
    'HOP',
    'QOP',
    'SOP',
    'VOP',
    'DEHALFOP',
    'DEOP',
    'DEVOICE',
    'HALFOP',
    'OP',
    'VOICE',
  ]);
  t.same(
    parseHelp(['    SETNOEXPIRESX Prevent a long name from expiring']).commands,
    [{ name: 'SETNOEXPIRESX', description: 'Prevent a long name from expiring' }],
    'a name that fills its 13 columns is followed by one space only',
  );
});

/**
 * The collector, not yet registered, asking `services` (those of them that are users of the network, on the
 * services' server) once it has synced; the test tells the server their answers, then registers the bot.
 */
async function askingServices(t: Test, services: string[]): Promise<Harness> {
  return startCollector(t, {
    stats: { services, version_requests_per_second: 0 },
    network: fakeNetwork({
      users: [
        { nick: 'DataBot', server: 'hub.test.net' },
        ...services.map((nick) => ({
          nick,
          ident: 'services',
          host: 'services.test.net',
          server: 'services.test.net',
        })),
      ],
    }),
    version: 'InspIRCd-3',
    isupport: INSPIRCD_ISUPPORT,
    register: false,
  });
}

/** Registers the bot; resolves once the services that answer have their commands in the model. */
async function commandsAsked(bot: Harness, answering: string[]): Promise<ServiceCommands[]> {
  await bot.register();
  const { services } = bot.host.model;
  await bot.until(() => answering.every((service) => services.get(service)), `the commands of ${answering.join(', ')}`);
  return [...services.all()];
}

const notices = (service: string, texts: readonly string[]) =>
  texts.map((text) => `:${service}!${service}@services.test.net NOTICE DataBot :${text}`);

t.test('an answer ends at its end line, or when the service falls silent', async (t) => {
  const bot = await askingServices(t, ['NickServ', 'ChanServ']);
  const end = notices('NickServ', [athemeNickServHelp.at(-1)!]);
  bot.server
    .answer(/^PRIVMSG NickServ :?HELP$/, [
      ...notices('NickServ', athemeNickServHelp.slice(0, 3)),
      ':alice!a@h NOTICE DataBot :not from the service',
      ...notices('NickServ', athemeNickServHelp.slice(3)),
      // After the end line: not part of this answer.
      ...notices('NickServ', ['late line']),
    ])
    .answer(/^PRIVMSG NickServ :HELP COMMANDS$/, notices('NickServ', athemeNickServCommands))
    .answer(/^PRIVMSG NickServ :HELP SET$/, end)
    // Anope has no end line; without SET, its one answer.
    .answer(
      /^PRIVMSG ChanServ :?HELP$/,
      notices(
        'ChanServ',
        anopeNickServHelp.filter((line) => !/^ {4}SET /.test(line)),
      ),
    );
  const asked = bot.next(/^PRIVMSG NickServ :?HELP$/).then(() => performance.now());
  const full = bot.next(/^PRIVMSG NickServ :HELP COMMANDS$/).then(() => performance.now());
  const chanServAsked = bot.next(/^PRIVMSG ChanServ :?HELP$/).then(() => performance.now());
  const lists = await commandsAsked(bot, ['NickServ', 'ChanServ']);
  const answered = performance.now();
  t.ok((await full) - (await asked) < 1000, 'the end line ends the wait at once: the full listing is asked next');
  t.ok(answered - (await chanServAsked) >= 1400, 'without an end line, silence ends the answer');
  t.same(
    lists.map((list) => [list.service, list.commands.length]),
    [
      ['NickServ', 14],
      ['ChanServ', 16],
    ],
    'each answer whole, and nothing else: not another user’s notice, nor a line after the end',
  );
});

t.test('fetching: only services that WHOIS finds, the full listing when HELP points to one', async (t) => {
  const bot = await askingServices(t, ['NickServ', 'ChanServ', 'BotServ']);
  bot.server
    // ngircd's services answer WHOIS (310 is an IRC service) but are left out of ISON.
    .answer(/^WHOIS NickServ$/, [
      ':hub.test.net 311 DataBot NickServ NickServ services.test.net * :Nickname Services',
      ':hub.test.net 310 DataBot NickServ :is an IRC service',
      ':hub.test.net 318 DataBot NickServ :End of WHOIS list',
    ])
    .answer(/^WHOIS ChanServ$/, [
      ':hub.test.net 311 DataBot ChanServ ChanServ services.test.net * :Channel Services',
      ':hub.test.net 318 DataBot ChanServ :End of WHOIS list',
    ])
    // ircd-hybrid ends a 401 without 318.
    .answer(/^WHOIS BotServ$/, [':hub.test.net 401 DataBot BotServ :No such nick/channel'])
    .answer(/^PRIVMSG NickServ :?HELP$/, notices('NickServ', athemeNickServHelp))
    .answer(/^PRIVMSG NickServ :HELP COMMANDS$/, notices('NickServ', athemeNickServCommands))
    .answer(/^PRIVMSG NickServ :HELP SET$/, notices('NickServ', transcript('atheme-7.2/nickserv-help-set.user.txt')))
    .answer(/^PRIVMSG ChanServ :?HELP$/, notices('ChanServ', ['You are not authorized to use ChanServ.']));
  const lists = await commandsAsked(bot, ['NickServ']);
  // The services are asked side by side; each one's questions in turn.
  t.same(bot.irc.sentMatching(/^PRIVMSG/), [
    'PRIVMSG NickServ HELP',
    'PRIVMSG ChanServ HELP',
    'PRIVMSG NickServ :HELP COMMANDS',
    'PRIVMSG NickServ :HELP SET',
  ]);
  t.equal(lists.length, 1, 'a service that lists nothing is left out');
  t.equal(lists[0]!.service, 'NickServ');
  t.equal(lists[0]!.commands.length, 16, '14 commands and SET EMAIL, SET PASSWORD');
  t.same(
    lists[0]!.commands.map((command) => command.name).filter((name) => name.startsWith('SET')),
    ['SET', 'SET EMAIL', 'SET PASSWORD', 'SETPASS'],
    'in order',
  );
});

t.test('a refresh keeps the last list of a service that did not answer, and only configured services', async (t) => {
  const last = [
    { service: 'NickServ', commands: [{ name: 'IDENTIFY', description: 'old' }] },
    { service: 'ChanServ', commands: [{ name: 'OP', description: 'old' }] },
    { service: 'OldServ', commands: [{ name: 'GONE', description: null }] },
  ];
  // What the model has from the last time, as the services slice gives it.
  const known = { get: (service: string) => last.find((list) => list.service.toLowerCase() === service.toLowerCase()) };
  const answered = [{ service: 'NickServ', commands: [{ name: 'REGISTER', description: 'new' }] }];
  t.same(withUnansweredKept(answered, ['ChanServ', 'NickServ', 'MemoServ'], known), [
    { service: 'ChanServ', commands: [{ name: 'OP', description: 'old' }] },
    { service: 'NickServ', commands: [{ name: 'REGISTER', description: 'new' }] },
  ]);
});

/** The NOTICE texts of a transcript recorded on the test network (test/fixtures/networks/). */
function transcript(file: string): string[] {
  const lines = readFileSync(path.join(findRepoRoot(), 'test', 'fixtures', 'networks', file), 'utf8').split('\n');
  return lines.filter((line) => / NOTICE /.test(line)).map((line) => line.replace(/^:\S+ NOTICE \S+ :/, ''));
}

t.test('Anope 2.0 as recorded: groups under headings without a colon, then HELP ALL, then HELP SET', async (t) => {
  const first = parseHelp(transcript('anope-2.0/chanserv-help.user.txt'));
  t.equal(first.fullListing, 'HELP ALL');
  t.equal(first.commands.length, 11, 'the described commands');
  t.same(
    first.namedOnly,
    // prettier-ignore
    ['ACCESS', 'AOP', 'FLAGS', 'HOP', 'LEVELS', 'QOP', 'SOP', 'VOP', 'DEHALFOP', 'DEOP', 'DEOWNER', 'DEPROTECT',
      'DEVOICE', 'DOWN', 'HALFOP', 'OP', 'OWNER', 'PROTECT', 'UP', 'VOICE', 'AKICK', 'CLONE', 'ENFORCE', 'ENTRYMSG',
      'LOG', 'MODE', 'SET', 'SYNC', 'TOPIC'],
    'the 29 commands of the groups, continuation lines included',
  );
  const full = parseHelp(transcript('anope-2.0/chanserv-help-all.user.txt'));
  const merged = mergeListings(first, full);
  t.equal(merged.length, 40);
  t.ok(
    merged.every((command) => command.description !== null),
    'HELP ALL describes every one',
  );
  t.match(
    merged.find((command) => command.name === 'FLAGS'),
    { description: 'Modify the list of privileged users' },
  );

  const set = parseSubcommands('SET', transcript('anope-2.0/chanserv-help-set.user.txt'));
  t.equal(set.length, 17);
  t.same(set[0], { name: 'SET AUTOOP', description: 'Should services automatically give status to users' });
  t.match(set, [{}, {}, { name: 'SET DESCRIPTION', description: 'Set the channel description' }]);
  t.match(set.at(-1), { name: 'SET URL' });
  t.same(parseSubcommands('SET', transcript('anope-2.0/nickserv-help-set.user.txt')).length > 3, true);
});

t.test('Atheme 7.2 as recorded: HELP SET lists its subcommands without the parent', async (t) => {
  const set = parseSubcommands('SET', transcript('atheme-7.2/nickserv-help-set.user.txt'));
  t.ok(set.length >= 2, JSON.stringify(set));
  t.same(
    set.find((command) => command.name === 'SET PASSWORD'),
    {
      name: 'SET PASSWORD',
      description: 'Changes the password associated with your account.',
    },
  );
  t.notOk(
    set.some((command) => /^SET (FOR|SET|HELP)\b/.test(command.name)),
    'prose is not taken for a subcommand',
  );
});

t.test('every recorded service answer parses into commands', async (t) => {
  for (const file of readdirSync(path.join(findRepoRoot(), 'test', 'fixtures', 'networks', 'anope-2.0'))) {
    if (!/-help(-all)?\.(user|oper)\.txt$/.test(file)) continue;
    const texts = transcript(`anope-2.0/${file}`);
    const listing = parseHelp(texts);
    if (texts.join(' ') === 'Access denied.') {
      t.same(listing.commands, [], `${file}: OperServ refuses a user and lists nothing`);
      continue;
    }
    t.ok(listing.commands.length + listing.namedOnly.length > 0, `${file}: something listed`);
  }
});

t.test('Anope 2.1: HELP, HELP ALL and HELP SET of NickServ and ChanServ read in full', async (t) => {
  const nickServ = parseHelp(anope21.nickServHelp);
  t.same(
    nickServ.commands.map((command) => command.name),
    // prettier-ignore
    ['AJOIN', 'ALIST', 'CERT', 'CONFIRM', 'DROP', 'GLIST', 'GROUP', 'HELP', 'IDENTIFY', 'INFO', 'LIST', 'LOGOUT',
      'RECOVER', 'REGISTER', 'RESETPASS', 'SET', 'UNGROUP', 'UPDATE'],
    'names padded to the longest listed (RESETPASS), four spaces before the description',
  );
  t.same(
    nickServ.commands.find((command) => command.name === 'UPDATE'),
    { name: 'UPDATE', description: 'Updates your current status, i.e. it checks for new memos' },
  );
  t.same(nickServ.namedOnly, [], 'a user sees no group');
  t.equal(nickServ.fullListing, null, 'and no pointer to HELP ALL');
  t.equal(nickServ.ended, false, 'no end line');

  const chanServ = parseHelp(anope21.chanServHelp);
  t.equal(chanServ.fullListing, 'HELP ALL');
  t.same(
    chanServ.commands.map((command) => command.name),
    ['BAN', 'DROP', 'GETKEY', 'HELP', 'INFO', 'INVITE', 'KICK', 'LIST', 'REGISTER', 'STATUS', 'UNBAN'],
  );
  t.same(
    chanServ.namedOnly,
    // prettier-ignore
    ['ACCESS', 'AOP', 'FLAGS', 'HOP', 'LEVELS', 'QOP', 'SOP', 'VOP', 'DEHALFOP', 'DEOP', 'DEOWNER', 'DEPROTECT',
      'DEVOICE', 'DOWN', 'HALFOP', 'OP', 'OWNER', 'PROTECT', 'UP', 'VOICE', 'AKICK', 'CLONE', 'ENFORCE', 'ENTRYMSG',
      'LOG', 'MODE', 'SET', 'SYNC', 'TOPIC'],
    'the three groups, continuation lines included',
  );
  const all = mergeListings(chanServ, parseHelp(anope21.chanServHelpAll));
  t.equal(all.length, 40);
  t.ok(
    all.every((command) => command.description !== null),
    'HELP ALL describes every one',
  );
  t.match(
    all.find((command) => command.name === 'DEPROTECT'),
    {
      description: 'Removes PROTECT status from you or the specified nick on a channel',
    },
  );

  const nickServSet = parseSubcommands('SET', anope21.nickServHelpSet);
  t.same(
    nickServSet.map((command) => command.name),
    // prettier-ignore
    ['SET AUTOOP', 'SET DISPLAY', 'SET EMAIL', 'SET HIDE', 'SET KEEPMODES', 'SET LANGUAGE', 'SET NEVEROP',
      'SET PASSWORD', 'SET PRIVATE', 'SET PROTECT', 'SET URL'],
  );
  t.same(nickServSet[0], {
    name: 'SET AUTOOP',
    description: 'Sets whether services should set channel status modes on you automatically.',
  });
  const chanServSet = parseSubcommands('SET', anope21.chanServHelpSet);
  t.equal(chanServSet.length, 16);
  t.same(
    chanServSet.find((command) => command.name === 'SET SECUREFOUNDER'),
    { name: 'SET SECUREFOUNDER', description: 'Stricter control of channel founder status' },
    'the longest name sets the column',
  );
  t.notOk(
    chanServSet.some((command) => command.name === 'SET SECURE'),
    'nothing made up',
  );
});

t.test(
  "Anope 2.1: a services operator's NickServ HELP groups the privileged commands and points to HELP ALL",
  async (t) => {
    const first = parseHelp(anope21.nickServHelpOper);
    t.equal(first.commands.length, 18);
    t.same(first.namedOnly, ['GETEMAIL', 'SASET', 'SUSPEND', 'UNSUSPEND'], 'under "Services Operator commands"');
    t.equal(first.fullListing, 'HELP ALL');
    const merged = mergeListings(first, parseHelp(anope21.nickServHelpAllOper));
    t.equal(merged.length, 22);
    t.same(
      merged.find((command) => command.name === 'GETEMAIL'),
      { name: 'GETEMAIL', description: 'Matches and returns all users that registered using given email' },
    );
    t.ok(merged.every((command) => command.description !== null));
  },
);

t.test('Anope 2.1: a description wrapped onto a line indented to its column is read whole', async (t) => {
  const all = parseHelp(anope21.chanServHelpAllAt80);
  t.equal(all.commands.length, 40, 'the wrapped lines are no commands of their own');
  t.same(
    all.commands.filter((command) => command.name.startsWith('DE')).map((command) => command.description),
    [
      'Removes HALFOP status from you or the specified nick on a channel',
      'Removes OP status from you or the specified nick on a channel',
      'Removes OWNER status from you or the specified nick on a channel',
      'Removes PROTECT status from you or the specified nick on a channel',
      'Removes VOICE status from you or the specified nick on a channel',
    ],
    'as at the default line length',
  );
  const set = parseSubcommands('SET', anope21.nickServHelpSetAt80);
  t.same(set, parseSubcommands('SET', anope21.nickServHelpSet), 'HELP SET too');
  t.same(
    parseHelp(['    LIST    Lists channels', '            matching a pattern', ' ', '            Prose, not more'])
      .commands,
    [{ name: 'LIST', description: 'Lists channels matching a pattern' }],
    'only right under a description',
  );
});

t.test('Anope 2.1: fetching asks HELP, then HELP ALL where it points to it, then HELP SET', async (t) => {
  const bot = await askingServices(t, ['NickServ', 'ChanServ']);
  bot.server
    .answer(/^PRIVMSG NickServ :?HELP$/, notices('NickServ', anope21.nickServHelp))
    .answer(/^PRIVMSG NickServ :HELP SET$/, notices('NickServ', anope21.nickServHelpSet))
    .answer(/^PRIVMSG ChanServ :?HELP$/, notices('ChanServ', anope21.chanServHelp))
    .answer(/^PRIVMSG ChanServ :HELP ALL$/, notices('ChanServ', anope21.chanServHelpAll))
    .answer(/^PRIVMSG ChanServ :HELP SET$/, notices('ChanServ', anope21.chanServHelpSet));
  const lists = await commandsAsked(bot, ['NickServ', 'ChanServ']);
  // The services are asked side by side; each one's questions in turn.
  t.same(bot.irc.sentMatching(/^PRIVMSG NickServ /), ['PRIVMSG NickServ HELP', 'PRIVMSG NickServ :HELP SET']);
  t.same(bot.irc.sentMatching(/^PRIVMSG ChanServ /), [
    'PRIVMSG ChanServ HELP',
    'PRIVMSG ChanServ :HELP ALL',
    'PRIVMSG ChanServ :HELP SET',
  ]);
  t.same(
    lists.map((list) => [list.service, list.commands.length]),
    [
      ['NickServ', 18 + 11],
      ['ChanServ', 40 + 16],
    ],
    'every command and SET sub-command',
  );
  t.ok(lists.every((list) => list.commands.every((command) => command.description !== null)));
});
