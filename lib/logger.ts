/**
 * Leveled logging, one line per event, each line naming its source
 * (`host`, `irc`, `http`, or a plugin's name): readable text by default, or one JSON
 * object per line (through pino) for log shippers.
 *
 * Secrets never reach the output: every configured password is registered with
 * {@link Logger.addSecret} and masked wherever it appears, and anything shaped
 * like an API token (`ntd_` + 43 base64url characters) is masked as well.
 */

import { pino, type Logger as PinoLogger } from 'pino';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Extra key/value pairs printed after the message as `key=value`. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  readonly source: string;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger writing to the same sink with another source name. */
  child(source: string): Logger;
  /** Mask this value in every line any logger of this family writes from now on. */
  addSecret(value: string | undefined | null): void;
}

/** Where finished lines go; tests pass an array's push. */
export type LogSink = (line: string, level: LogLevel) => void;

export interface LoggerOptions {
  level?: LogLevel;
  /** `text` (default): `<time> <LEVEL> [source] message key=value`; `json`: pino's JSON lines. */
  format?: 'text' | 'json';
  sink?: LogSink;
  /** Clock for the timestamp; tests pin it. */
  now?: () => Date;
}

const TOKEN_PATTERN = /ntd_[A-Za-z0-9_-]{43}/g;
const MASK = '[redacted]';

/** Shared by a logger and its children: level, sink and the secrets to mask. */
interface LogFamily {
  threshold: number;
  sink: LogSink;
  /** The line's time, ISO 8601 in UTC. */
  stamp: () => string;
  secrets: Set<string>;
  /** The JSON format's writer; undefined for text. */
  json: PinoLogger | undefined;
}

/** The longest a line for stdout waits to be written with others. */
const STDOUT_HOLD_MS = 100;
/** Characters of lines for stdout held at most: once they are reached, what is held is written. */
const STDOUT_CHUNK = 65_536;

/**
 * Lines for stdout, written together every {@link STDOUT_HOLD_MS} ms (or once 64 KB wait): an access-log line per
 * request would otherwise be a write of its own, and even a write per turn of the event loop cost a cached
 * answer more CPU than the rest of its logging. A warning or error goes to stderr at once, after what stdout
 * holds, so the two keep their order; and what is held is written before the process exits.
 */
class StdoutLines {
  /** The lines held, and their characters in all. */
  private lines: string[] = [];
  private chars = 0;
  private timer: NodeJS.Timeout | undefined;
  private hooked = false;
  private readonly flushSoon = (): void => {
    this.timer = undefined;
    this.flush();
  };

  write(line: string): void {
    // Held as strings and encoded together at the flush: one encoding of many lines costs a line less than one each.
    this.lines.push(line);
    this.chars += line.length + 1;
    if (this.chars >= STDOUT_CHUNK) {
      this.flush();
      return;
    }
    if (this.timer === undefined) {
      // Unreferenced: held lines never keep the process alive; exit writes them.
      this.timer = setTimeout(this.flushSoon, STDOUT_HOLD_MS);
      this.timer.unref();
    }
    if (!this.hooked) {
      this.hooked = true;
      process.once('exit', () => this.flush());
    }
  }

  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.lines.length === 0) return;
    const held = this.lines;
    this.lines = [];
    this.chars = 0;
    held.push('');
    process.stdout.write(held.join('\n'));
  }
}

const stdoutLines = new StdoutLines();

/** Write the lines held for stdout now: before a message the program writes to stderr itself (a fatal error). */
export function flushLogs(): void {
  stdoutLines.flush();
}

function defaultSink(line: string, level: LogLevel): void {
  if (level === 'error' || level === 'warn') {
    stdoutLines.flush();
    process.stderr.write(line + '\n');
  } else {
    stdoutLines.write(line);
  }
}

function formatValue(value: string | number | boolean | null): string {
  // A finite number or a boolean never needs quotes (the access log's status, ms and bytes).
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return String(value);
  const text = String(value);
  return /^[^\s"=]*$/.test(text) && text !== '' ? text : JSON.stringify(text);
}

/** Replace secrets and token-shaped strings. */
function maskSecrets(text: string, secrets: Iterable<string>): string {
  // Each step looks before it copies: most text (an access-log line's parts) holds no token or secret.
  let result = text.includes('ntd_') ? text.replace(TOKEN_PATTERN, MASK) : text;
  for (const secret of secrets) {
    if (secret.length > 0 && result.includes(secret)) result = result.split(secret).join(MASK);
  }
  return result;
}

/** Whether a number field holds a secret (a PIN-like one would match its digits); false while there are none. */
function holdsSecret(value: number | boolean | null, secrets: ReadonlySet<string>): boolean {
  return typeof value === 'number' && secrets.size > 0 && maskSecrets(String(value), secrets) !== String(value);
}

/** A number, boolean or null field's text, masked where a secret's digits are in it; its text made once. */
function formatOther(value: number | boolean | null, secrets: ReadonlySet<string>): string {
  if (typeof value !== 'number') return formatValue(value);
  const text = String(value);
  for (const secret of secrets) if (secret.length > 0 && text.includes(secret)) return MASK;
  return text;
}

/** Replace secrets and token-shaped strings, and keep the event on one line. */
export function redact(text: string, secrets: Iterable<string>): string {
  const result = maskSecrets(text, secrets);
  return result.includes('\n') || result.includes('\r') ? result.replace(/[\r\n]+/g, ' ') : result;
}

const LEVEL_TAGS: Record<LogLevel, string> = { debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR' };

let stampSecond = -1;
let stampPrefix = '';

/** `new Date().toISOString()`, with the part up to the second made once a second (a line per request asks often). */
function isoNow(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== stampSecond) {
    stampSecond = second;
    stampPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const milli = now - second * 1000;
  return `${stampPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

class FamilyLogger implements Logger {
  /** What follows the time on each of this logger's lines, by level: ` INFO  [source] `. */
  private readonly heads: Record<LogLevel, string>;

  constructor(
    private readonly family: LogFamily,
    readonly source: string,
  ) {
    const head = (level: LogLevel) => ` ${LEVEL_TAGS[level]} [${source}] `;
    this.heads = { debug: head('debug'), info: head('info'), warn: head('warn'), error: head('error') };
  }

  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  child(source: string): Logger {
    return new FamilyLogger(this.family, source);
  }

  addSecret(value: string | undefined | null): void {
    if (value) this.family.secrets.add(value);
  }

  private write(level: LogLevel, message: string, fields?: LogFields): void {
    if (LOG_LEVELS.indexOf(level) < this.family.threshold) return;
    const { json, secrets } = this.family;
    if (json) {
      const record: Record<string, string | number | boolean | null> = { source: this.source };
      if (fields) {
        for (const [key, value] of Object.entries(fields)) {
          if (value === undefined) continue;
          if (typeof value === 'string') record[key] = redact(value, secrets);
          else record[key] = holdsSecret(value, secrets) ? MASK : value;
        }
      }
      json[level](record, redact(message, secrets));
      return;
    }
    // Only the message and the fields' text are searched for secrets, each before it is quoted: the time and
    // the source are the logger's own, and the line as a whole is three times as long to search.
    let line = this.family.stamp() + this.heads[level] + redact(message, secrets);
    if (fields) {
      for (const key in fields) {
        const value = fields[key];
        if (value === undefined) continue;
        line += ` ${key}=${typeof value === 'string' ? formatValue(maskSecrets(value, secrets)) : formatOther(value, secrets)}`;
      }
    }
    this.family.sink(line, level);
  }
}

/** pino writing JSON lines to the sink (or to stdout): `level` as a word, `time` as ISO 8601, `msg`. */
function jsonWriter(options: LoggerOptions): PinoLogger {
  const now = options.now ?? (() => new Date());
  const sink = options.sink;
  const destination = sink
    ? { write: (line: string) => sink(line.replace(/\n$/, ''), levelOfLine(line)) }
    : pino.destination({ dest: 1, sync: true });
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      messageKey: 'msg',
      timestamp: () => `,"time":"${now().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

function levelOfLine(line: string): LogLevel {
  const match = /"level":"(\w+)"/.exec(line);
  const level = match?.[1] as LogLevel | undefined;
  return level !== undefined && LOG_LEVELS.includes(level) ? level : 'info';
}

export function createLogger(options: LoggerOptions = {}, source = 'host'): Logger {
  const family: LogFamily = {
    threshold: LOG_LEVELS.indexOf(options.level ?? 'info'),
    sink: options.sink ?? defaultSink,
    stamp: options.now ? () => options.now!().toISOString() : isoNow,
    secrets: new Set(),
    json: options.format === 'json' ? jsonWriter(options) : undefined,
  };
  return new FamilyLogger(family, source);
}

/** A message for any thrown value, without a stack. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    // An object without a prototype, or whose toString throws.
    return Object.prototype.toString.call(error);
  }
}
