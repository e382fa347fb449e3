/**
 * Collector ingest: generated IRC lines (joins, parts, quits, nick changes,
 * messages) through irc-framework's line parser and the adapter's conversion
 * into the collector's live handlers and activity counting, versus the parser
 * and conversion alone. Rounds alternate parse-only and full; each full round
 * starts from the same model.
 */
import IrcFramework from 'irc-framework';
import { toIrcMessage } from '../lib/irc/irc-framework.js';
import { ActivitySlice } from '../lib/model/activity.js';
import { NetworkModel } from '../lib/model/network.js';
import { countLine } from '../plugins/stats/activity.js';
import { track } from '../plugins/stats/live.js';
import { FakeTransport } from '../test/support/fake-irc.js';
import { formatCount, formatRatio, isSmoke, median, runBench, seededRandom } from './common.js';
import { channelOf, nickOf, populate } from './model.js';

const INITIAL_USERS = 20_000;
const CHANNELS = 500;
const JOINED = 200;

/**
 * Lines a busy network sends a bot in 200 channels: mostly messages, then joins and parts,
 * quits (with a new user connecting and joining in their place) and nick changes.
 */
function generateLines(count: number): string[] {
  const random = seededRandom(7);
  const online: string[] = Array.from({ length: INITIAL_USERS }, (_, index) => nickOf(index));
  let nextUser = INITIAL_USERS;
  let nextNick = 0;
  const lines: string[] = [];
  const mask = (nick: string): string => `:${nick}!~${nick.slice(0, 8)}@host-${nick.length}.example.com`;
  while (lines.length < count) {
    const roll = random();
    const slot = Math.floor(random() * online.length);
    const nick = online[slot]!;
    const channel = channelOf(Math.floor(JOINED * random() ** 2));
    if (roll < 0.7) {
      lines.push(`${mask(nick)} PRIVMSG ${channel} :hello there, this is line ${lines.length} of the benchmark`);
    } else if (roll < 0.82) {
      lines.push(`${mask(nick)} JOIN ${channel} * :Real Name`);
    } else if (roll < 0.9) {
      lines.push(`${mask(nick)} PART ${channel} :bye`);
    } else if (roll < 0.95) {
      lines.push(`${mask(nick)} QUIT :Quit: leaving`);
      const fresh = nickOf(nextUser++);
      online[slot] = fresh;
      lines.push(`${mask(fresh)} JOIN ${channel} * :Real Name`);
    } else {
      const renamed = `renamed${(nextNick++).toString(36)}`;
      lines.push(`${mask(nick)} NICK :${renamed}`);
      online[slot] = renamed;
    }
  }
  return lines.slice(0, count);
}

function freshContext() {
  const irc = new FakeTransport();
  irc.connect();
  irc.register();
  const model = new NetworkModel();
  populate(model, { users: INITIAL_USERS, channels: CHANNELS, joinedChannels: JOINED });
  const activity = new ActivitySlice({ timeZone: 'UTC', retentionDays: 30, fold: (name) => model.fold(name) });
  return { irc, model, activity };
}

function parseOnly(lines: readonly string[]): number {
  const started = process.hrtime.bigint();
  let commands = 0;
  for (const line of lines) commands += toIrcMessage(IrcFramework.ircLineParser(line)).params.length;
  if (commands === 0) throw new Error('the parser produced no parameters');
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function ingest(lines: readonly string[]): { seconds: number; users: number } {
  const context = freshContext();
  const now = new Date();
  const started = process.hrtime.bigint();
  for (const line of lines) {
    const message = toIrcMessage(IrcFramework.ircLineParser(line));
    track(message, context);
    countLine(message, context, now);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, users: context.model.users.size };
}

async function main() {
  const smoke = isSmoke();
  const count = smoke ? 100_000 : 1_000_000;
  const rounds = smoke ? 1 : 5;
  const lines = generateLines(count);
  // Warm-up: the JIT sees both paths before anything counts.
  parseOnly(lines.slice(0, 50_000));
  ingest(lines.slice(0, 50_000));
  const parseRates: number[] = [];
  const fullRates: number[] = [];
  const ratios: number[] = [];
  let users = 0;
  for (let round = 0; round < rounds; round++) {
    const parse = count / parseOnly(lines);
    const full = ingest(lines);
    users = full.users;
    parseRates.push(parse);
    fullRates.push(count / full.seconds);
    ratios.push(count / full.seconds / parse);
  }
  const ratio = median(ratios);
  return {
    title: 'Collector ingest',
    setup:
      `${formatCount(count)} generated lines (70% PRIVMSG, 12% JOIN, 8% PART, 5% QUIT with a new user joining, ` +
      `5% NICK) over ${formatCount(INITIAL_USERS)} users in ${JOINED} joined channels; ${rounds} interleaved rounds, ` +
      'medians. Full = irc-framework parse + toIrcMessage + the live handlers + activity counting.',
    figures: [
      { name: 'parse only', value: `${formatCount(median(parseRates))} lines/s` },
      { name: 'parse + model', value: `${formatCount(median(fullRates))} lines/s` },
      { name: 'users tracked at the end', value: formatCount(users) },
      { name: 'ratio full ÷ parse only', value: formatRatio(ratio), target: '≥ 0.5×', pass: ratio >= 0.5 },
    ],
  };
}

runBench('Collector ingest', main);
