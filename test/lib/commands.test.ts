import t from 'tap';
import {
  choice,
  converted,
  many,
  optional,
  refused,
  wholeNumber,
  word,
  type Converter,
} from '../../lib/command-arguments.js';
import {
  CommandRegistry,
  REPLY_DEADLINE_MS,
  defineCommand,
  type CommandDefinition,
  type CommandRate,
} from '../../lib/commands.js';
import { createLogger } from '../../lib/logger.js';
import { FakeTransport } from '../../testing/fake-irc.js';

function setup(
  admins = ['boss'],
  options: { rate?: CommandRate; pacing?: { burst: number; intervalMs: number }; now?: () => number } = {},
) {
  const irc = new FakeTransport(options.pacing ? { pacing: options.pacing } : {});
  irc.connect();
  irc.register();
  const logs: string[] = [];
  const registry = new CommandRegistry(
    irc,
    admins,
    createLogger({ sink: (line) => logs.push(line) }),
    options.rate,
    options.now,
  );
  const runs: string[] = [];
  registry.register('test', {
    name: 'PING ME',
    usage: '<text>',
    help: 'Echoes the text. Anyone may use it.',
    handle: ({ text, reply }) => {
      runs.push(`ping ${text}`);
      reply(`pong ${text}`);
    },
  });
  registry.register('test', {
    name: 'SHUTDOWN',
    usage: '',
    help: 'Administrators only.',
    adminOnly: true,
    handle: ({ sender, reply }) => {
      runs.push(`shutdown by ${sender.account}`);
      reply('ok');
    },
  });
  const notices = (nick: string) =>
    irc.sent.filter((line) => line.startsWith(`NOTICE ${nick} `)).map((line) => line.slice(`NOTICE ${nick} :`.length));
  return { irc, registry, runs, notices, logs };
}

async function deliver(setupResult: ReturnType<typeof setup>, line: string): Promise<void> {
  const { irc, registry } = setupResult;
  const message = (await new Promise((resolve) => {
    const off = irc.on('message', (m) => {
      off();
      resolve(m);
    });
    irc.receive(line);
  })) as Parameters<CommandRegistry['dispatch']>[0];
  await registry.dispatch(message);
}

t.test('commands without usage or help text are refused at registration', async (t) => {
  const { registry } = setup();
  const base: CommandDefinition = { name: 'X', usage: '', help: 'Does x.', handle: () => undefined };
  t.throws(() => registry.register('p', { ...base, help: ' ' }), {
    message: /command "X" of plugin "p" has no help text/,
  });
  t.throws(() => registry.register('p', { ...base, usage: undefined as unknown as string }), {
    message: /has no usage text/,
  });
  t.throws(() => registry.register('p', { ...base, name: 'ping me' }), {
    message: /already registered by plugin "test"/,
  });
});

t.test('a command runs with its arguments; the longest name wins', async (t) => {
  const context = setup();
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me hello there');
  t.same(context.runs, ['ping hello there']);
  t.same(context.notices('alice'), ['pong hello there']);
});

t.test('declared arguments: the handler gets their values; the host answers their errors', async (t) => {
  const context = setup();
  const seen: string[] = [];
  /** A word only an administrator may name, as a converter that depends on the sender's rights. */
  const guarded: Converter<string> = {
    min: 1,
    max: 1,
    convert: ([name = ''], { command, sender, isAdmin }) => {
      seen.push(`${command} for ${sender.nick} (${sender.account}, admin ${isAdmin})`);
      return name === 'secret' && !isAdmin ? refused(`Only administrators may name ${name}.`) : converted(name);
    },
  };
  context.registry.register('test', {
    name: 'SET',
    usage: '<count> ON|OFF <name>...',
    help: 'Takes a count, a setting and names.',
    // The account, and so the rights, are looked up for a command that needs them.
    requiresAccount: true,
    args: [wholeNumber, choice('ON', 'OFF'), many(guarded)],
    handle({ reply, usage }, count, setting, names) {
      context.runs.push(`set ${count + 1} ${setting.toLowerCase()} ${names.join('+')}`);
      reply(`set; ${usage}`);
    },
  });
  context.irc.receive(':irc.test CAP DataBot ACK :account-tag');
  await deliver(context, '@account=alice :alice!a@h PRIVMSG DataBot :set 2 on a b');
  t.same(context.runs, ['set 3 on a+b'], 'typed values: a number, a choice as declared, a list');
  t.same(context.notices('alice'), ['set; Usage: SET <count> ON|OFF <name>...'], 'the usage line is at hand');
  t.same(seen, ['SET for alice (alice, admin false)', 'SET for alice (alice, admin false)']);
  const answers: [string, string][] = [
    ['set 2 on', 'Usage: SET <count> ON|OFF <name>...'],
    ['set two on a', '"two" is not a whole number. Usage: SET <count> ON|OFF <name>...'],
    ['set 2 maybe a', 'Usage: SET <count> ON|OFF <name>...'],
    ['set 2 off a secret', 'Only administrators may name secret.'],
  ];
  for (const [text, answer] of answers) {
    await deliver(context, `@account=alice :alice!a@h PRIVMSG DataBot :${text}`);
    t.equal(context.notices('alice').at(-1), answer, text);
  }
  await deliver(context, '@account=boss :boss!b@h PRIVMSG DataBot :set 0 off secret');
  t.same(context.runs, ['set 3 on a+b', 'set 1 off secret'], 'only what converted ran');
});

t.test('a command that takes no argument refuses any word; an optional one may be left out', async (t) => {
  const context = setup();
  context.registry.register('test', {
    name: 'NOW',
    usage: '',
    help: 'Takes nothing.',
    args: [],
    handle: () => void context.runs.push('now'),
  });
  context.registry.register('test', {
    name: 'PAGE',
    usage: '[number]',
    help: 'Takes a page number, or none.',
    args: [optional(wholeNumber, 1)],
    handle: (_invocation, page) => void context.runs.push(`page ${page}`),
  });
  await deliver(context, ':alice!a@h PRIVMSG DataBot :now please');
  t.same(context.notices('alice'), ['Too many arguments. Usage: NOW']);
  await deliver(context, ':alice!a@h PRIVMSG DataBot :page 3 4');
  t.equal(context.notices('alice').at(-1), 'Too many arguments. Usage: PAGE [number]');
  t.same(context.runs, [], 'nothing ran');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :now');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :page');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :page 3');
  t.same(context.runs, ['now', 'page 1', 'page 3']);
});

t.test(
  'arguments are read only once the sender may run the command; a throwing converter is an internal error',
  async (t) => {
    const context = setup();
    context.irc.receive(':irc.test CAP DataBot ACK :account-tag');
    const read: string[] = [];
    const recorded: Converter<string> = {
      min: 1,
      max: 1,
      convert: ([first = '']) => {
        read.push(first);
        return converted(first);
      },
    };
    context.registry.register('test', {
      name: 'ADMINSAY',
      usage: '<word>',
      help: 'Administrators only.',
      adminOnly: true,
      args: [recorded],
      handle: () => undefined,
    });
    await deliver(context, '@account=alice :alice!a@h PRIVMSG DataBot :adminsay hello');
    t.match(context.notices('alice').at(-1), /^Permission denied/);
    t.same(read, [], 'no converter ran for a sender refused');
    const broken: Converter<string> = {
      min: 1,
      max: 1,
      convert: () => {
        throw new Error('lookup failed');
      },
    };
    context.registry.register('flaky', {
      name: 'LOOKUP',
      usage: '<word>',
      help: 'Breaks.',
      args: [broken],
      handle: () => undefined,
    });
    await deliver(context, ':alice!a@h PRIVMSG DataBot :lookup x');
    t.equal(context.notices('alice').at(-1), 'Sorry, LOOKUP failed because of an internal error.');
    t.ok(context.logs.some((line) => line.includes('plugin=flaky') && line.includes('lookup failed')));
  },
);

t.test('arguments that are not converters are refused at registration, naming the command and the fix', async (t) => {
  const { registry } = setup();
  const base = { name: 'X', usage: '', help: 'Does x.', handle: () => undefined };
  const broken = [{ min: 1, max: 1 }, { min: 2, max: 1, convert: () => converted('') }, null];
  for (const converter of broken) {
    t.throws(() => registry.register('p', { ...base, args: [word, converter as unknown as Converter<string>] }), {
      message: /^command "X" of plugin "p": args\[1\] is not a converter \(min and max words/,
    });
  }
  // A plugin written for an earlier version would otherwise run with words it never read.
  t.throws(() => registry.register('p', { ...base, maxArgs: 0 } as CommandDefinition), {
    message: 'command "X" of plugin "p": maxArgs was removed; declare args instead (args: [] takes no word)',
  });
});

t.test("a handler's values are typed from its converters", async (t) => {
  // Checked by the compiler: each @ts-expect-error fails the build if the line below it compiles.
  const command = defineCommand({
    name: 'TYPED',
    usage: '<count> <name>...',
    help: 'Types its values.',
    args: [wholeNumber, many(word), optional(choice('ON', 'OFF'))],
    handle(_invocation, count, names, setting) {
      const total: number = count + names.length;
      // @ts-expect-error the count is a number
      const text: string = count;
      // @ts-expect-error an optional argument may be undefined
      const chosen: 'ON' | 'OFF' = setting;
      void [total, text, chosen];
    },
  });
  defineCommand({
    name: 'NONE',
    usage: '',
    help: 'Takes no argument.',
    args: [],
    // @ts-expect-error no argument, no value
    handle(_invocation, value: string) {
      void value;
    },
  });
  t.equal(command.args?.length, 3);
});

t.test('args: [] refuses any word, with the usage; no args leaves the words to the handler', async (t) => {
  const context = setup();
  context.registry.register('test', {
    name: 'PICK',
    usage: '',
    help: 'Takes no word.',
    args: [],
    handle: ({ args, reply }) => {
      context.runs.push(`pick ${args.join(' ')}`.trim());
      reply('picked');
    },
  });
  await deliver(context, ':alice!a@h PRIVMSG DataBot :pick 5');
  t.same(context.notices('alice'), ['Too many arguments. Usage: PICK']);
  t.same(context.runs, [], 'nothing was done');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :pick');
  t.same(context.runs, ['pick'], 'run without a word');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me as many words as you like');
  t.same(context.runs.at(-1), 'ping as many words as you like', 'without args, any number');
});

t.test('unknown commands and channel messages', async (t) => {
  const context = setup();
  await deliver(context, ':alice!a@h PRIVMSG DataBot :frobnicate');
  t.match(context.notices('alice')[0], /Unknown command "frobnicate"/);
  await deliver(context, ':alice!a@h PRIVMSG #chan :ping me x');
  t.same(context.runs, [], 'messages to channels are not commands');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :\x01VERSION\x01');
  t.notOk(
    context.notices('alice').some((line) => /Unknown command/.test(line) && line.includes('VERSION')),
    'CTCP is not a command (the bot policy answers it)',
  );
  t.same(context.runs, []);
});

t.test('admin rights come from the account tag, never the nick', async (t) => {
  const context = setup();
  context.irc.receive(':irc.test CAP DataBot ACK :account-tag');
  // The nick is the admin's account name, but no account tag: not logged in.
  await deliver(context, ':boss!x@h PRIVMSG DataBot :SHUTDOWN');
  t.match(context.notices('boss').at(-1), /not logged in/);
  await deliver(context, '@account=mallory :boss!x@h PRIVMSG DataBot :SHUTDOWN');
  t.match(context.notices('boss').at(-1), /Permission denied.*mallory/);
  await deliver(context, '@account=Boss :someone!x@h PRIVMSG DataBot :SHUTDOWN');
  t.same(context.runs, ['shutdown by Boss'], 'the admin account (any nick, any case) may');
  t.ok(context.logs.some((line) => /admin command refused/.test(line)));
  t.equal(context.registry.isListedAdmin('BOSS'), true, 'the list alone, folded, for an account with no client');
  t.equal(context.registry.isListedAdmin('mallory'), false);
});

t.test('without account-tag the account comes from WHOIS 330', async (t) => {
  const context = setup();
  const { irc, registry } = context;
  const message = await new Promise<Parameters<CommandRegistry['dispatch']>[0]>((resolve) => {
    const off = irc.on('message', (m) => {
      off();
      resolve(m);
    });
    irc.receive(':boss!x@h PRIVMSG DataBot :SHUTDOWN');
  });
  const running = registry.dispatch(message);
  await new Promise((resolve) => setImmediate(resolve));
  t.ok(irc.sent.includes('WHOIS boss'), 'asked WHOIS');
  irc.receive(':irc.test 311 DataBot boss x h * :Boss', ':irc.test 330 DataBot boss boss :is logged in as');
  irc.receive(':irc.test 318 DataBot boss :End of /WHOIS list.');
  await running;
  t.same(context.runs, ['shutdown by boss']);
});

t.test('HELP lists what the sender may use and explains one command', async (t) => {
  const context = setup();
  context.irc.receive(':irc.test CAP DataBot ACK :account-tag');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :HELP');
  const list = context.notices('alice');
  t.ok(list.some((line) => line.includes('PING ME <text>')));
  t.notOk(
    list.some((line) => line.includes('SHUTDOWN')),
    'admin-only commands are hidden from non-admins',
  );
  await deliver(context, ':alice!a@h PRIVMSG DataBot :HELP ping me');
  t.ok(context.notices('alice').includes('Usage: PING ME <text>'));
  await deliver(context, '@account=boss :b!x@h PRIVMSG DataBot :HELP');
  t.ok(context.notices('b').some((line) => line.includes('SHUTDOWN')));
});

t.test('HELP tells a sender who is not logged in which commands need a NickServ account', async (t) => {
  const context = setup();
  context.irc.receive(':irc.test CAP DataBot ACK :account-tag');
  for (const name of ['MINE', 'MINE TOO']) {
    context.registry.register('test', {
      name,
      usage: '',
      help: 'Needs an account.',
      requiresAccount: true,
      handle: () => undefined,
    });
  }
  await deliver(context, ':alice!a@h PRIVMSG DataBot :HELP');
  t.equal(
    context.notices('alice').at(-1),
    'You are not logged in: MINE and MINE TOO need a NickServ account. ' +
      'Identify to NickServ first (/msg NickServ IDENTIFY <account> <password>).',
  );
  await deliver(context, ':alice!a@h PRIVMSG DataBot :HELP mine too');
  t.same(context.notices('alice').slice(-3), [
    'Usage: MINE TOO',
    'Needs an account.',
    'Only users logged in to a NickServ account may use this command.',
  ]);
  await deliver(context, ':bob!b@h PRIVMSG DataBot :HELP mine');
  t.match(context.notices('bob').at(-1), /^You are not logged in: MINE TOO needs a NickServ account\./, 'a group');
  await deliver(context, '@account=alice :alice!a@h PRIVMSG DataBot :HELP');
  t.notOk(
    context
      .notices('alice')
      .slice(-4)
      .some((line) => line.includes('not logged in')),
    'no note for a sender who is logged in',
  );
});

t.test('a handler that throws gets a polite reply and a log line', async (t) => {
  const context = setup();
  context.registry.register('flaky', {
    name: 'BREAK',
    usage: '',
    help: 'Always fails.',
    handle: () => {
      throw new Error('kaboom');
    },
  });
  await deliver(context, ':alice!a@h PRIVMSG DataBot :break');
  t.match(context.notices('alice').at(-1), /internal error/);
  t.notMatch(context.notices('alice').at(-1), /kaboom/);
  t.ok(context.logs.some((line) => line.includes('plugin=flaky') && line.includes('kaboom')));
});

t.test('a client that floods commands is answered once, then ignored until its allowance comes back', async (t) => {
  let now = 1_000_000;
  const context = setup(['boss'], { rate: { burst: 3, intervalMs: 2000 }, now: () => now });
  for (let i = 1; i <= 6; i++) await deliver(context, `:flood!f@bad.example PRIVMSG DataBot :ping me ${i}`);
  t.same(context.runs, ['ping 1', 'ping 2', 'ping 3']);
  t.same(context.notices('flood').slice(3), [
    'Too many commands: wait 2 s before the next one. Commands sent meanwhile are ignored.',
  ]);
  // The same client under another nick is the same client.
  await deliver(context, ':flood2!f@bad.example PRIVMSG DataBot :ping me 7');
  t.same(context.notices('flood2'), [], 'a new nick does not reset the allowance');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me mine');
  t.same(context.notices('alice'), ['pong mine'], 'other clients are not held up');
  now += 2000;
  await deliver(context, ':flood!f@bad.example PRIVMSG DataBot :ping me 8');
  t.same(context.runs.at(-1), 'ping 8', 'one more after the interval');
  t.match(context.logs.join('\n'), /commands throttled/);
});

t.test("answers go ahead of the bot's other output", async (t) => {
  const context = setup(['boss'], { pacing: { burst: 1, intervalMs: 30 } });
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(alive));
  for (let i = 0; i < 5; i++) context.irc.send('WHO', `mask${i}`);
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me now');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const order = context.irc.sent.filter((line) => /^(WHO|NOTICE alice)/.test(line));
  const answer = order.indexOf('NOTICE alice :pong now');
  t.ok(answer >= 0 && answer <= 1, `written as soon as a line may go (at ${answer} in ${order.join(', ')})`);
  t.equal(order.length, 6, 'and every queued line after it');
});

t.test('an answer still queued when its nick changes or quits is dropped, not sent to the next holder', async (t) => {
  const context = setup(['boss'], { pacing: { burst: 1, intervalMs: 40 } });
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(alive));
  context.irc.send('PING', 'first');
  context.registry.register('test', {
    name: 'SECRET',
    usage: '',
    help: 'Answers with a secret.',
    handle: ({ reply }) => {
      reply('your secret is s3cr3t');
      reply('keep it safe');
    },
  });
  await deliver(context, ':victim!v@h PRIVMSG DataBot :secret');
  await deliver(context, ':victim!v@h NICK :elsewhere');
  await deliver(context, ':bob!b@h PRIVMSG DataBot :secret');
  await deliver(context, ':bob!b@h QUIT :gone');
  await deliver(context, ':dave!d@h PRIVMSG DataBot :secret');
  // mallory (who shares a channel with the bot) takes the nick: whoever had it is gone, seen or not.
  await deliver(context, ':mallory!m@h NICK :dave');
  await deliver(context, ':carol!c@h PRIVMSG DataBot :secret');
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.same(context.notices('victim'), [], 'the nick changed before the answer left');
  t.same(context.notices('bob'), [], 'the nick quit before the answer left');
  t.same(context.notices('dave'), [], 'someone else took the nick before the answer left');
  t.same(context.notices('carol'), ['your secret is s3cr3t', 'keep it safe'], 'an unchanged nick gets its answer');
});

t.test('an answer that cannot leave within the deadline is dropped', async (t) => {
  let now = 1_000_000;
  const context = setup(['boss'], { pacing: { burst: 1, intervalMs: 60 }, now: () => now });
  const alive = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(alive));
  context.irc.send('PING', 'first');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me late');
  now += REPLY_DEADLINE_MS + 1;
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(context.notices('alice'), []);
  t.match(context.logs.join('\n'), /dropped: it could not be sent in time/);
  await deliver(context, ':alice!a@h PRIVMSG DataBot :ping me again');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(context.notices('alice'), ['pong again'], 'a later command is answered');
});

t.test('a command still waiting on a lookup is not forgotten: its nick changing stops it', async (t) => {
  let now = 1_000_000;
  const context = setup(['boss'], { now: () => now });
  let release: () => void = () => undefined;
  const looked = new Promise<void>((resolve) => (release = resolve));
  const handled: string[] = [];
  let entered: () => void = () => undefined;
  const waiting = new Promise<void>((resolve) => (entered = resolve));
  context.registry.register('test', {
    name: 'SLOWCHECK',
    usage: '',
    help: 'Waits, then answers.',
    // Slow, so no deadline from the command: only the nick change can stop the answer here.
    slow: true,
    handle: async ({ reply }) => {
      entered();
      await looked;
      handled.push('answered');
      reply('your secret is s3cr3t');
    },
  });
  const running = deliver(context, ':victim!v@h PRIVMSG DataBot :slowcheck');
  await waiting;
  // Another client's command much later sweeps answers long done; the running one must stay known.
  now += REPLY_DEADLINE_MS + 1000;
  await deliver(context, ':other!o@h PRIVMSG DataBot :ping me x');
  await deliver(context, ':victim!v@h NICK :away');
  release();
  await running;
  t.same(handled, ['answered']);
  t.same(context.notices('victim'), [], 'the answer did not go to the nick the victim left');
});

t.test('an answer given more than the deadline after its command is dropped, and says so', async (t) => {
  let now = 1_000_000;
  const context = setup(['boss'], { now: () => now });
  const dropped: string[] = [];
  context.registry.register('test', {
    name: 'LATE',
    usage: '',
    help: 'Answers late.',
    handle: async ({ reply }) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      now += REPLY_DEADLINE_MS + 1;
      reply('too late', { onDropped: () => dropped.push('too late') });
    },
  });
  context.registry.register('test', {
    name: 'LONGJOB',
    usage: '',
    help: 'A slow command: its answers have their own deadline.',
    slow: true,
    handle: async ({ reply }) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      now += REPLY_DEADLINE_MS + 1;
      reply('done at last', { onDropped: () => dropped.push('done at last') });
    },
  });
  await deliver(context, ':alice!a@h PRIVMSG DataBot :late');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :longjob');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(context.notices('alice'), ['done at last']);
  t.same(dropped, ['too late'], 'the handler hears of the one dropped, once');
});

t.test('answers still queued when the connection drops are never sent: their handlers hear so', async (t) => {
  const context = setup(['boss'], { pacing: { burst: 1, intervalMs: 1000 } });
  const dropped: string[] = [];
  context.registry.register('test', {
    name: 'TWICE',
    usage: '',
    help: 'Answers twice.',
    handle: ({ reply }) => {
      reply('one', { onDropped: () => dropped.push('one') });
      reply('two', { onDropped: () => dropped.push('two') });
    },
  });
  context.irc.send('PING', 'busy');
  await deliver(context, ':alice!a@h PRIVMSG DataBot :twice');
  context.irc.drop();
  context.registry.connectionLost();
  t.same(dropped, ['one', 'two']);
  t.same(context.notices('alice'), []);
});

t.test('an answer split into several lines is delivered only once its last line has left', async (t) => {
  // Two lines may leave at once: the bot mode at registration took one, the answer's first line takes the other.
  const long = `${'word '.repeat(100)}end`;
  for (const loss of ['the connection drops', 'the nick changes'] as const) {
    const context = setup(['boss'], { pacing: { burst: 2, intervalMs: 1000 } });
    const dropped: string[] = [];
    context.registry.register('test', {
      name: 'LONG',
      usage: '',
      help: 'Answers with more than one NOTICE can carry.',
      handle: ({ reply }) => reply(long, { onDropped: () => dropped.push('long') }),
    });
    await deliver(context, ':alice!a@h PRIVMSG DataBot :long');
    t.equal(context.notices('alice').length, 1, 'its first line left, the second waits');
    if (loss === 'the connection drops') {
      context.irc.drop();
      context.registry.connectionLost();
    } else {
      await deliver(context, ':alice!a@h NICK :elsewhere');
    }
    t.same(dropped, ['long'], `${loss} before its last line left: the handler hears so at once`);
  }
});

t.test('an answer that has left in full is never reported dropped later', async (t) => {
  // A secret that did reach its owner must not be revoked by what happens afterwards.
  for (const text of ['short', `${'word '.repeat(100)}end`]) {
    for (const loss of ['the connection drops', 'the nick changes'] as const) {
      const context = setup(['boss']);
      const dropped: string[] = [];
      context.registry.register('test', {
        name: 'SAY',
        usage: '',
        help: 'Answers.',
        handle: ({ reply }) => reply(text, { onDropped: () => dropped.push('say') }),
      });
      await deliver(context, ':alice!a@h PRIVMSG DataBot :say');
      t.equal(context.notices('alice').length, text === 'short' ? 1 : 2, 'every line has left');
      if (loss === 'the connection drops') {
        context.irc.drop();
        context.registry.connectionLost();
      } else {
        await deliver(context, ':alice!a@h NICK :elsewhere');
      }
      t.same(dropped, [], `${text.length} characters, then ${loss}: nothing is reported dropped`);
    }
  }
});

t.test('a command whose sender took too long to look up is not run at all', async (t) => {
  let now = 1_000_000;
  const context = setup(['boss'], { now: () => now });
  const runs: string[] = [];
  context.registry.register('test', {
    name: 'MINE',
    usage: '',
    help: 'Needs an account.',
    requiresAccount: true,
    handle: ({ reply }) => {
      runs.push('ran');
      reply('done');
    },
  });
  // No account-tag: the account comes from a WHOIS, which answers 11 s later.
  const running = deliver(context, ':alice!a@h PRIVMSG DataBot :mine');
  await new Promise((resolve) => setTimeout(resolve, 20));
  now += REPLY_DEADLINE_MS + 1000;
  context.irc.receive(
    ':irc.test 330 DataBot alice alice :is logged in as',
    ':irc.test 318 DataBot alice :End of /WHOIS list.',
  );
  await running;
  t.same(runs, [], 'nothing is done that could not be confirmed');
  t.same(context.notices('alice'), []);
  t.match(context.logs.join('\n'), /a command was not run: looking its sender up took too long/);
});
