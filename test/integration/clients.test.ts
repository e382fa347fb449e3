/**
 * CTCP VERSION on the real test network while the collector syncs every 2 s: people on hub and leaf
 * who answer with several clients and versions, some of them changing nick before they are asked,
 * between the question and their answer, or after it, either in the bot's channel (the bot sees the
 * NICK) or out of its sight (it does not); and people who never answer.
 */
import t from 'tap';
import { eventually, startBot, type TestBot } from '../support/bot.js';
import { IrcClient, type IrcMessage } from '../support/irc-client.js';
import { startTestNetwork, type TestNetwork } from '../support/testnet.js';

const tag = Math.random().toString(36).slice(2, 6);
const channel = `#versions${tag}`;
const REFRESH_SECONDS = 2;
const REQUESTS_PER_SECOND = 10;
const RETRY_SECONDS = 3;

/** When a person changes nick, relative to the bot's question. */
type Rename = 'never' | 'before' | 'between' | 'after';

interface Person {
  irc: IrcClient;
  /** The nick the person connected with. */
  first: string;
  /** The nick the person changes to, if they do. */
  second: string;
  rename: Rename;
  /** In the bot's channel, where the bot sees their NICK. */
  inChannel: boolean;
  /** The CTCP VERSION reply, and what the collector must read from it; null for someone who never answers. */
  answer: { reply: string; client: string; version: string } | null;
  /** Each VERSION question that reached the person: when, and the nick it was sent to. */
  questions: { at: number; to: string }[];
}

/** The replies of the people who answer, as those clients word them, with how many people send each. */
const ANSWERS: { reply: string; client: string; version: string; people: number }[] = [
  { reply: 'irssi v1.4.5 - running on Linux x86_64', client: 'irssi', version: '1.4.5', people: 6 },
  { reply: 'irssi v1.2.3-1ubuntu4 - running on Linux x86_64', client: 'irssi', version: '1.2.3-1ubuntu4', people: 4 },
  { reply: 'WeeChat 4.1.1 (Dec  3 2023)', client: 'WeeChat', version: '4.1.1', people: 5 },
  { reply: 'WeeChat 3.8 (Jan 28 2023)', client: 'WeeChat', version: '3.8', people: 3 },
  { reply: 'HexChat 2.16.2 [x64] / Windows 10 [3.4GHz]', client: 'HexChat', version: '2.16.2', people: 4 },
  {
    reply: 'HexChat 2.16.1 / Linux 6.1.0-13-amd64 [x86_64/2.50GHz/SMP]',
    client: 'HexChat',
    version: '2.16.1',
    people: 3,
  },
  { reply: 'mIRC v7.76 Khaled Mardam-Bey', client: 'mIRC', version: '7.76', people: 6 },
  { reply: 'The Lounge 4.4.3 -- https://thelounge.chat/', client: 'The Lounge', version: '4.4.3', people: 3 },
  { reply: 'thelounge v4.4.1 -- https://thelounge.chat/', client: 'The Lounge', version: '4.4.1', people: 2 },
];
const RENAMES: readonly Rename[] = ['never', 'before', 'between', 'after'];

let network: TestNetwork;
let bot: TestBot;
const people: Person[] = [];
/** Set once every person is connected and has changed nick where they do so before being asked. */
let settledAt = 0;

function botNick(): string {
  return bot.host.irc.state.nick;
}

function isQuestion(message: IrcMessage): boolean {
  return message.command === 'PRIVMSG' && message.params[1] === '\x01VERSION\x01' && message.nick === botNick();
}

/** A person who answers the bot's first question as their `rename` says, and any later one at once. */
async function connect(person: Omit<Person, 'irc' | 'questions'>, index: number): Promise<Person> {
  const irc = new IrcClient({
    port: index % 2 === 0 ? network.hubPort : network.leafPort,
    nick: person.first,
    keep: false,
  });
  const connected: Person = { ...person, irc, questions: [] };
  irc.onLine = (message) => {
    if (!isQuestion(message)) return;
    connected.questions.push({ at: Date.now(), to: message.params[0]! });
    const first = connected.questions.length === 1;
    // The server takes the lines in order: an answer after the NICK comes from the new nick.
    if (first && person.rename === 'between') irc.send(`NICK ${person.second}`);
    if (person.answer) irc.send(`NOTICE ${message.nick} :\x01VERSION ${person.answer.reply}\x01`);
    if (first && person.rename === 'after') irc.send(`NICK ${person.second}`);
  };
  await irc.connect();
  const registered = await irc.register();
  if (!registered.ok) throw new Error(`${person.first} could not register: ${registered.last.raw}`);
  people.push(connected);
  if (person.rename === 'before') {
    renamesDue.set(fold(person.first), connected);
    renameIfSeen(connected);
  } else if (person.inChannel) {
    irc.send(`JOIN ${channel}`);
  }
  return connected;
}

/** Those who change nick before being asked and have not yet, by folded first nick. */
const renamesDue = new Map<string, Person>();

/**
 * Those who change nick before being asked do so the moment the bot knows all a sync finds about them (their
 * real host comes last), while they wait among the others to be asked: then nothing about them changes
 * again. Those for the bot's channel join it right before, so the bot sees the NICK.
 */
function renameIfSeen(person: Person | undefined): void {
  const user = person && bot.host.model.users.get(person.first);
  if (!person || !user || user.realHost === null) return;
  renamesDue.delete(fold(person.first));
  if (person.inChannel) person.irc.send(`JOIN ${channel}`);
  person.irc.send(`NICK ${person.second}`);
}

function fold(nick: string): string {
  return bot.host.model.fold(nick);
}

t.before(async () => {
  network = await startTestNetwork();
  bot = await startBot(network, {
    plugins: {
      stats: {
        refresh_seconds: REFRESH_SECONDS,
        latency_seconds: 60,
        commands_refresh_seconds: 3600,
        join: [channel],
        version_requests_per_second: REQUESTS_PER_SECOND,
        version_retry_seconds: RETRY_SECONDS,
      },
      api: { cache_seconds: 0 },
    },
  });
  await eventually(() => bot.host.model.channels.get(channel)?.joined === true, 'the bot to join', 15000);
  const planned: Omit<Person, 'irc' | 'questions'>[] = [];
  for (const { people: count, ...answer } of ANSWERS) {
    for (let copy = 0; copy < count; copy++) {
      const index = planned.length;
      planned.push({
        first: `v${index}a${tag}`,
        second: `v${index}b${tag}`,
        rename: RENAMES[Math.floor(index / 2) % RENAMES.length]!,
        inChannel: index % 2 === 0,
        answer,
      });
    }
  }
  // Never answer: one in the channel, one who changes nick in it after the first question, one out of sight.
  for (const [name, inChannel, rename] of [
    ['still', true, 'never'],
    ['moves', true, 'between'],
    ['away', false, 'never'],
  ] as const) {
    planned.push({ first: `s${name}a${tag}`, second: `s${name}b${tag}`, rename, inChannel, answer: null });
  }
  const off = bot.host.model.on('change', (change) => {
    if (change.slice === 'users' && change.kind === 'upsert' && change.name && renamesDue.size > 0) {
      renameIfSeen(renamesDue.get(fold(change.name)));
    }
  });
  await Promise.all(planned.map((person, index) => connect(person, index)));
  await eventually(() => renamesDue.size === 0, 'a sync to see those who change nick before being asked', 15000);
  off();
  settledAt = Date.now();
});

t.teardown(async () => {
  for (const person of people) person.irc.destroy();
  await bot?.stop();
  await network?.stop();
});

type Distribution = Record<string, { users: number; versions: Record<string, number> }>;

async function clientCounts(): Promise<Distribution> {
  const response = await fetch(`${bot.url}/network/data/clients/?limit=1000`);
  const body = (await response.json()) as {
    results: { client: string; users: number; versions: { version: string | null; users: number }[] }[];
  };
  return Object.fromEntries(
    body.results.map((item) => [
      item.client,
      {
        users: item.users,
        versions: Object.fromEntries(item.versions.map((entry) => [String(entry.version), entry.users])),
      },
    ]),
  );
}

t.test('every answer counts once, by client and version, whenever the nick changed', async (t) => {
  const expected: Distribution = {};
  for (const person of people) {
    if (!person.answer) continue;
    const { client, version } = person.answer;
    const entry = (expected[client] ??= { users: 0, versions: {} });
    entry.users++;
    entry.versions[version] = (entry.versions[version] ?? 0) + 1;
  }
  const answering = people.filter((person) => person.answer).length;
  t.ok(answering >= 30, `${answering} people answer`);
  // README "Clients": each user is asked within the users waiting before them at version_requests_per_second,
  // after the sync that sees them (at most two refreshes for a rename out of the bot's sight).
  const withinMs = (people.length / REQUESTS_PER_SECOND + 2 * REFRESH_SECONDS) * 1000 + 3000;
  let counts: Distribution = {};
  await eventually(
    async () => {
      counts = await clientCounts();
      return JSON.stringify(counts) === JSON.stringify(expected);
    },
    'the client counts',
    withinMs,
  ).catch(() => undefined);
  const tookMs = Date.now() - settledAt;
  t.same(counts, expected, 'every answer, by client and version');
  t.ok(tookMs <= withinMs, `within the documented ${withinMs} ms (took ${tookMs} ms)`);

  // Whoever the bot can follow is asked once: in its channel it sees every NICK, and out of its sight an
  // answer from the new nick is taken. Someone who changes nick out of its sight after a sync saw them (and
  // maybe after answering) is a new user at the next sync.
  const askedAgain = people
    .filter((person) => person.answer && (person.inChannel || person.rename === 'never' || person.rename === 'between'))
    .filter((person) => person.questions.length !== 1)
    .map(
      (person) =>
        `${person.first} (${person.rename}, ${person.inChannel ? 'in' : 'out of'} sight): ${person.questions.length}`,
    );
  t.same(askedAgain, [], 'asked exactly once');
});

t.test('someone who never answers is asked again after version_retry_seconds, and not more often', async (t) => {
  const silent = people.filter((person) => !person.answer && (person.inChannel || person.rename === 'never'));
  t.equal(silent.length, 3);
  const retryMs = RETRY_SECONDS * 1000;
  // The first questions went out during the test before.
  await eventually(
    () => silent.every((person) => person.questions.length >= 3),
    'three questions each',
    2 * retryMs + 5000,
  );
  for (const person of silent) {
    const gaps = person.questions.slice(1, 3).map((question, index) => question.at - person.questions[index]!.at);
    // The bot times from its question, the person from its arrival: a few ms either way, and a retry may
    // wait its turn behind new users and the sync's lines in the paced queue (never earlier than due).
    t.ok(
      gaps.every((gap) => gap >= retryMs - 200 && gap <= retryMs + 3000),
      `${person.first}: each question one retry time after the one before, no other between (gaps in ms: ${gaps.join(', ')})`,
    );
  }
  const moved = silent.find((person) => person.rename === 'between')!;
  t.same(
    moved.questions.slice(0, 3).map((question) => question.to),
    [moved.first, moved.second, moved.second],
    'after a nick change, the retry goes to the new nick',
  );
});
