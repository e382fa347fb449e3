/**
 * The bot's own line parser reads every line as irc-framework's parser followed by the adapter's conversion
 * did: the same command, parameters, source, tags and time, for real lines, the odd corners of the grammar,
 * and thousands of random ones.
 */
import t from 'tap';
import IrcFramework from 'irc-framework';
import { toIrcMessage } from '../../../lib/irc/irc-framework.js';
import { parseLine } from '../../../lib/irc/line-parser.js';
import type { IrcMessage } from '../../../lib/irc/port.js';

const received = new Date('2026-11-27T12:00:00.000Z');

/** What the library and the adapter made of `line`, with the receive time fixed where there is no server time. */
function byLibrary(line: string): IrcMessage {
  const message = toIrcMessage(IrcFramework.ircLineParser(line));
  return message.tags.time && !Number.isNaN(new Date(message.tags.time).getTime())
    ? message
    : { ...message, time: received };
}

function comparable(message: IrcMessage | null) {
  return message && { ...message, tags: { ...message.tags }, time: message.time.toISOString() };
}

const lines = [
  ':hub.test.net 354 DataBot 101 #c ident host.example hub.test.net alice H* acct :Alice Liddell',
  ':hub.test.net 322 DataBot #chan 12 :[+nt] a topic: with colons',
  ':hub.test.net 005 DataBot WHOX CHANTYPES=# :are supported by this server',
  '@time=2026-11-27T10:11:12.345Z;account=bob :bob!b@h PRIVMSG #c :hello there ',
  '@msgid=abc\\:def\\stwo\\\\three\\n\\r\\x;+draft/reply=1;EMPTY;=nokey :n!u@h TAGMSG #c',
  '@time=not-a-time :n!u@h NOTICE me :x',
  '@ :n!u@h PRIVMSG #c :empty tags',
  ':nick!user PRIVMSG #c :no host',
  ':nick@host PRIVMSG #c :no ident',
  ':irc.server.name NOTICE * :server source',
  ':justanick JOIN #c',
  ':n!u@h PRIVMSG #c :',
  ':n!u@h PRIVMSG #c ::starts with a colon',
  ':n!u@h MODE #c +o-v  a   b ',
  'PING :still-there',
  'PING',
  'ping lower case',
  '  :n!u@h PRIVMSG #c :leading spaces',
  ':n!u@h PRIVMSG #c a:b :c',
  ':n!u@h 315 me a* :End of /WHO list.\r\n',
  '@a=b',
  ':',
  ': PRIVMSG #c :empty source',
  'CMD:glued param',
];

t.test('real lines and the corners of the grammar', async (t) => {
  for (const line of lines)
    t.same(comparable(parseLine(line, received)), comparable(byLibrary(line)), JSON.stringify(line));
});

t.test('random lines', async (t) => {
  // A fixed seed: the same lines on every run.
  let seed = 20261127;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const alphabet = [' ', ' ', ' ', ':', '@', '!', '.', ';', '=', '\\', 's', 'S', ':', 'a', 'B', '#', '1', 'time', '\r'];
  let differ = 0;
  for (let index = 0; index < 5000; index++) {
    let line = '';
    const length = 1 + Math.floor(random() * 30);
    for (let char = 0; char < length; char++) line += alphabet[Math.floor(random() * alphabet.length)];
    const mine = comparable(parseLine(line, received));
    const library = comparable(byLibrary(line));
    // The library makes a message even of a line with nothing in it; the bot skips those.
    if (mine === null) {
      if (line.replace(/[\r\n]/g, '') !== '') differ++;
      continue;
    }
    if (JSON.stringify(mine) !== JSON.stringify(library)) {
      differ++;
      if (differ <= 3) t.same(mine, library, JSON.stringify(line));
    }
  }
  t.equal(differ, 0, '5,000 random lines read alike');
});
