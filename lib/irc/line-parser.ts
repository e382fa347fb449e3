/**
 * One IRC line into an {@link IrcMessage}, with what it needs and no more: the bot reads tens of thousands of
 * lines a second on a big network (WHO and LIST replies, chat), and every object a line leaves behind is work
 * for the garbage collector. It reads a line exactly as irc-framework's parser followed by the adapter's
 * conversion did (tags unescaped, the source split into nick, ident and host, an empty trailing parameter
 * kept), which a test checks line by line, but builds one message object instead of four or five.
 */
import type { IrcMessage, IrcSource } from './port.js';

/** The tags of a line without any: one shared object, as nothing changes a message's tags. */
const NO_TAGS: Readonly<Record<string, string>> = Object.freeze(Object.create(null) as Record<string, string>);

const ESCAPES: Readonly<Record<string, string>> = { '\\\\': '\\', '\\:': ';', '\\s': ' ', '\\n': '\n', '\\r': '\r' };
// Case-insensitive as irc-framework's: `\S` is taken for an escape it does not know, and dropped.
const ESCAPE = /\\\\|\\:|\\s|\\n|\\r|\\/gi;

/** A tag value with IRCv3's escapes undone. */
function unescapeValue(value: string): string {
  return value.includes('\\') ? value.replace(ESCAPE, (escape) => ESCAPES[escape] ?? '') : value;
}

function parseTags(text: string): Record<string, string> {
  const tags = Object.create(null) as Record<string, string>;
  for (const tag of text.split(';')) {
    const equals = tag.indexOf('=');
    const key = (equals === -1 ? tag : tag.slice(0, equals)).toLowerCase();
    if (!key) continue;
    tags[key] = equals === -1 ? '' : unescapeValue(tag.slice(equals + 1));
  }
  return tags;
}

/** `nick!ident@host`, `nick@host`, `nick!ident`, a server name (it has a dot) or a bare nick. */
function parseSource(prefix: string): IrcSource {
  const bang = prefix.indexOf('!');
  const at = prefix.indexOf('@');
  let nick = '';
  let ident = '';
  let host = '';
  if (bang === -1 && at === -1) {
    if (prefix.includes('.')) host = prefix;
    else nick = prefix;
  } else if (bang === -1) {
    nick = prefix.slice(0, at);
    host = prefix.slice(at + 1);
  } else if (at === -1) {
    nick = prefix.slice(0, bang);
    ident = prefix.slice(bang + 1);
  } else {
    nick = prefix.slice(0, bang);
    // substring, as the library: an `@` before the `!` gives what lies between them.
    ident = prefix.substring(bang + 1, at);
    host = prefix.slice(at + 1);
  }
  return { nick: nick || prefix, ident, host };
}

/** The index of the first character at or after `from` that is not a space. */
function skipSpaces(line: string, from: number): number {
  let index = from;
  while (line.charCodeAt(index) === 32) index++;
  return index;
}

/** The index of the next space at or after `from`, or the line's end. */
function wordEnd(line: string, from: number): number {
  const space = line.indexOf(' ', from);
  return space === -1 ? line.length : space;
}

/**
 * One line (without its CR LF), received at `receivedAt` unless it carries a `server-time` tag; null for a line
 * with nothing in it.
 */
export function parseLine(raw: string, receivedAt?: Date): IrcMessage | null {
  const line = raw.includes('\r') || raw.includes('\n') ? raw.replace(/^[\r\n]+|[\r\n]+$/g, '') : raw;
  if (!line) return null;
  // As irc-framework: tags and source only at the very start, no spaces before them.
  let index = 0;
  let tags = NO_TAGS;
  if (line.charCodeAt(index) === 64 /* @ */) {
    const end = wordEnd(line, index);
    tags = parseTags(line.slice(index + 1, end));
    index = skipSpaces(line, end);
  }
  let source: IrcSource | null = null;
  if (line.charCodeAt(index) === 58 /* : */) {
    const end = wordEnd(line, index);
    const prefix = line.slice(index + 1, end);
    if (prefix) source = parseSource(prefix);
    index = skipSpaces(line, end);
  }
  index = skipSpaces(line, index);
  const commandEnd = wordEnd(line, index);
  const command = line.slice(index, commandEnd).toUpperCase();
  index = skipSpaces(line, commandEnd);
  const params: string[] = [];
  while (index < line.length) {
    // A parameter starting with a colon after a space is the last one, spaces and all (it may be empty).
    if (line.charCodeAt(index) === 58 && line.charCodeAt(index - 1) === 32) {
      params.push(line.slice(index + 1));
      break;
    }
    const end = wordEnd(line, index);
    params.push(line.slice(index, end));
    index = skipSpaces(line, end);
  }
  return { command, params, source, tags, time: timeOf(tags, receivedAt) };
}

function timeOf(tags: Readonly<Record<string, string>>, receivedAt: Date | undefined): Date {
  const stamp = tags.time;
  if (stamp) {
    const time = new Date(stamp);
    if (!Number.isNaN(time.getTime())) return time;
  }
  return receivedAt ?? new Date();
}
