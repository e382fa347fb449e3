/**
 * The live event stream (`GET /api/irc/events/`) on the real test network, under each IRC client library
 * (scripts/run-tests.mjs runs this file once per library): crowd clients act, and each stream shows what they
 * did, in order, in its view. The public stream never names the secret channel or a user's identity; a token
 * approved for `irc.events` sees the secret channel, and one also approved for `irc.users` who users are. A
 * dropped stream resumes with Last-Event-ID; a revoked token's stream ends at once.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import type { TokensSlice } from '../../plugins/tokens/model.js';
import { eventually, startBot, synced, type TestBot } from '../support/bot.js';
import { openEventStream, type EventStreamReader, type StreamEvent } from '../support/event-stream.js';
import { IrcClient } from '../support/irc-client.js';
import { registerAccount, startTestNetwork, type TestNetwork } from '../support/testnet.js';

const tag = Math.random().toString(36).slice(2, 6);
const botAccount = `evb${tag}`;
const userAccount = `evu${tag}`;
const password = 'events-test-pass';
const open = `#evopen${tag}`;
const secret = `#evhush${tag}`;
const fresh = `#evnew${tag}`;
const key = `k${tag}sekrit`;

let network: TestNetwork;
let bot: TestBot;
let tokens: TokensSlice;
const clients: IrcClient[] = [];
const actor = { account: 'tester', via: 'irc' as const };

async function user(nick: string): Promise<IrcClient> {
  const irc = new IrcClient({ port: network.leafPort, nick });
  clients.push(irc);
  await irc.connect();
  const result = await irc.register();
  if (!result.ok) throw new Error(`${nick} could not register: ${result.last.raw}`);
  return irc;
}

function token(grants: string[]): { secret: string; id: number } {
  const { token: created, secret: value } = tokens.create('tester', `events ${grants.join(' ')}`, actor);
  tokens.grant(created, grants, actor);
  return { secret: value, id: created.id };
}

function stream(query = '', headers: Record<string, string> = {}): Promise<EventStreamReader> {
  return openEventStream(`${bot.url}/api/irc/events/${query}`, headers);
}

const is =
  (type: string, fields: Record<string, unknown> = {}) =>
  (event: StreamEvent): boolean =>
    event.event === type && Object.entries(fields).every(([name, value]) => event.data[name] === value);

let alice: IrcClient;
let bob: IrcClient;

t.before(async () => {
  network = await startTestNetwork();
  await registerAccount(network, { account: botAccount, password });
  await registerAccount(network, { account: userAccount, password });
  alice = await user(`al${tag}`);
  await alice.request(`JOIN ${open}`, '366');
  await alice.request(`JOIN ${secret}`, '366');
  alice.send(`MODE ${secret} +s`);
  bob = await user(`bo${tag}`);
  await bob.request(`JOIN ${open}`, '366');
  bot = await startBot(network, {
    nick: botAccount,
    sasl: { account: botAccount, password },
    plugins: {
      stats: { refresh_seconds: 600, join: [open, secret] },
      api: {},
      tokens: {},
      events: { max_streams_per_address: 12, max_streams_per_token: 2 },
    },
  });
  await synced(bot);
  await eventually(
    () => bot.host.model.channels.get(secret)?.hidden === true && bot.host.model.channels.get(open)?.hidden === false,
    'the secret channel hidden and the open one public',
  );
  tokens = bot.host.model.slices().find((slice) => slice.name === 'tokens') as TokensSlice;
});

t.teardown(async () => {
  for (const irc of clients) irc.destroy();
  await bot?.stop();
  await network?.stop();
});

t.test('every event type reaches each view, in order, as the view may see it', async (t) => {
  const full = await stream('', { Authorization: `Token ${token(['irc.events', 'irc.users']).secret}` });
  const tokenView = await stream('', { Authorization: `Token ${token(['irc.events']).secret}` });
  const open_ = await stream();
  for (const [name, reader] of [
    ['full', full],
    ['token', tokenView],
    ['public', open_],
  ] as const) {
    t.equal(reader.status, 200, `${name}: 200`);
    t.equal(reader.headers['content-type'], 'text/event-stream; charset=utf-8');
    t.equal(reader.headers['x-accel-buffering'], 'no');
    const opened = await reader.next(is('hello'), `${name}: open`);
    t.same(opened.data, {
      view: name === 'public' ? 'public' : 'token',
      identities: name === 'full',
      heartbeat_seconds: 15,
    });
  }
  const all = [full, tokenView, open_];
  const seen = async (match: (event: StreamEvent) => boolean, what: string, readers = all) =>
    Promise.all(readers.map((reader) => reader.next(match, what, 15000)));

  const carolNick = `ca${tag}`;
  const carol = await user(carolNick);
  const [connectFull, connectToken, connectPublic] = await seen(is('connect', { nick: carolNick }), 'connect');
  t.match(connectFull!.data, { nick: carolNick, server: 'leaf.test.net', identity: { ident: String } });
  t.notOk('identity' in connectToken!.data, 'no identity without irc.users');
  t.same(Object.keys(connectPublic!.data).sort(), ['nick', 'server', 'time']);

  alice.send(`TOPIC ${open} :first topic ${tag}`);
  const [topic] = await seen(is('topic', { channel: open, topic: `first topic ${tag}`, set_by: `al${tag}` }), 'topic');
  t.match(topic!.id, /^[0-9a-z]+-f\d+$/, 'an event has an id (of the full view)');

  await carol.request(`JOIN ${open}`, '366');
  const [joinFull, , joinPublic] = await seen(is('join', { channel: open, nick: carolNick }), 'join');
  t.match(joinFull!.data.identity, { ident: String, host: String });
  t.same(Object.keys(joinPublic!.data).sort(), ['channel', 'nick', 'time']);

  alice.send(`MODE ${open} +o ${carolNick}`);
  const [opFull, , opPublic] = await seen(is('mode', { channel: open, change: '+o' }), 'mode +o');
  t.same(opFull!.data.parameters, [carolNick]);
  t.same(opPublic!.data.parameters, [carolNick], 'a nick given a rank is public');
  alice.send(`MODE ${open} +k ${key}`);
  const [keyFull, keyToken, keyPublic] = await seen(is('mode', { channel: open, change: '+k' }), 'mode +k');
  t.same(keyFull!.data.parameters, [key]);
  t.same(keyToken!.data.parameters, [key]);
  t.same(keyPublic!.data.parameters, [], 'the key is not public');
  alice.send(`MODE ${open} -k ${key}`);
  alice.send(`MODE ${open} +b *!*@evil${tag}.example`);
  const [banFull, banToken, banPublic] = await seen(is('mode', { channel: open, change: '+b' }), 'mode +b');
  t.same(banFull!.data.parameters, [`*!*@evil${tag}.example`]);
  t.same(banToken!.data.parameters, [], 'no mask without irc.users');
  t.same(banPublic!.data.parameters, []);

  carol.send('AWAY :lunch');
  const [awayFull, , awayPublic] = await seen(is('away', { nick: carolNick, away: true }), 'away');
  t.equal(awayFull!.data.message, 'lunch');
  t.notOk('message' in awayPublic!.data, 'the away message is not public');

  const carolTwo = `cb${tag}`;
  carol.send(`NICK ${carolTwo}`);
  await seen(is('nick', { old_nick: carolNick, new_nick: carolTwo }), 'nick');

  bob.send(`PRIVMSG NickServ :IDENTIFY ${userAccount} ${password}`);
  const accountEvent = await full.next(is('account', { nick: `bo${tag}` }), 'account', 15000);
  t.match(accountEvent.data.identity, { account: userAccount });

  alice.send(`KICK ${open} bo${tag} :out you go`);
  await seen(is('kick', { channel: open, nick: `bo${tag}`, by: `al${tag}`, reason: 'out you go' }), 'kick');

  carol.send(`PART ${open} :bye now`);
  await seen(is('part', { channel: open, nick: carolTwo, reason: 'bye now' }), 'part');

  const daveNick = `da${tag}`;
  const dave = await user(daveNick);
  await dave.request(`JOIN ${open}`, '366');
  await seen(is('join', { channel: open, nick: daveNick }), 'join of dave');
  await dave.quit('gone fishing');
  const [quitFull, , quitPublic] = await seen(is('quit', { nick: daveNick }), 'quit');
  t.same(quitFull!.data.channels, [open]);
  t.same(quitPublic!.data.channels, [open]);
  t.match(quitFull!.data.reason, /gone fishing/);
  t.equal(quitPublic!.data.reason, null, 'an operator bot keeps quit reasons from the public');

  await alice.request(`JOIN ${fresh}`, '366');
  await seen(is('channel_created', { channel: fresh }), 'channel_created', [full, open_]);
  alice.send(`PART ${fresh}`);
  await seen(is('channel_emptied', { channel: fresh }), 'channel_emptied', [full, open_]);

  const counts = await open_.next(is('counts'), 'counts', 15000);
  t.match(counts.data, { users: Number, channels: Number, servers: Number });

  // The secret channel: every token view sees it, the public one nothing of it.
  alice.send(`TOPIC ${secret} :hush ${tag}`);
  await seen(is('topic', { channel: secret }), 'topic of the secret channel', [full, tokenView]);
  await carol.request(`JOIN ${secret}`, '366');
  await seen(is('join', { channel: secret, nick: carolTwo }), 'join of the secret channel', [full, tokenView]);
  carol.send(`PART ${secret}`);
  await seen(is('part', { channel: secret, nick: carolTwo }), 'part of the secret channel', [full, tokenView]);
  // A public event after them: once the public stream has it, it had every event before it.
  alice.send(`AWAY :sentinel ${tag}`);
  await seen(is('away', { nick: `al${tag}`, away: true }), 'the sentinel');
  alice.send('AWAY');

  // The full view has every one of them, in the order the crowd acted.
  const ours = (event: StreamEvent): boolean =>
    event.id !== null &&
    event.event !== 'counts' &&
    [event.data.channel, event.data.nick, event.data.old_nick].some(
      (name) => typeof name === 'string' && name.includes(tag),
    );
  t.same(
    full.events.filter(ours).map((event) => event.event),
    [
      'connect',
      'topic',
      'join',
      'mode',
      'mode',
      'mode',
      'mode',
      'away',
      'nick',
      'account',
      'kick',
      'part',
      ...(full.events.some((event) => event.event === 'connect' && event.data.nick === `da${tag}`) ? ['connect'] : []),
      'join',
      'quit',
      'channel_created',
      'channel_emptied',
      'topic',
      'join',
      'part',
      'away',
    ],
    'in order',
  );
  // Every view has its events in the order they happened; the same ones, where both see them.
  for (const reader of all) {
    const ids = reader.events
      .filter((event) => event.id !== null)
      .map((event) => Number(/-[tf]?(\d+)$/.exec(event.id!)![1]));
    t.same(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids rise',
    );
  }
  // What the public stream sent: nothing of the secret channel, no identity, no key, no account.
  const publicText = open_.text();
  t.notOk(publicText.includes(secret), 'the secret channel is never named publicly');
  t.notOk(publicText.includes(key), 'nor the key');
  t.notOk(publicText.includes('"identity"'), 'nor an identity');
  t.notOk(publicText.includes(userAccount), 'nor an account');
  t.notOk(
    open_.events.some((event) => event.event === 'account'),
    'no account event',
  );
  // Every frame is one the OpenAPI document describes, in each view.
  const response = await fetch(`${bot.url}/api/openapi.json`);
  const document = (await response.json()) as {
    paths: Record<string, { get: { responses: { 200: { content: Record<string, { 'x-itemSchema': object }> } } } }>;
  };
  const itemSchema =
    document.paths['/api/irc/events/']!.get.responses[200].content['text/event-stream']!['x-itemSchema'];
  t.equal((itemSchema as { oneOf?: unknown[] }).oneOf?.length, 18, 'fifteen event types, open, gap and end');
  const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(itemSchema);
  for (const reader of all) {
    for (const event of reader.events) {
      const item = { ...(event.id === null ? {} : { id: event.id }), event: event.event, data: event.data };
      t.ok(validate(item), `${event.event} matches the document`, { errors: validate.errors, item });
    }
  }
  for (const reader of all) reader.close();
});

t.test('a dropped stream resumes after its last event, with Last-Event-ID or since', async (t) => {
  // Away messages are for tokens only; InspIRCd throttles topic changes.
  const auth = { Authorization: `Token ${token(['irc.events']).secret}` };
  const query = `?types=away`;
  const first = await stream(query, auth);
  alice.send(`AWAY :before the drop ${tag}`);
  const last = await first.next(is('away', { message: `before the drop ${tag}` }), 'away before the drop');
  first.close();
  await first.ended;
  // Back, away again, back: three events while nobody of this test reads.
  for (const line of ['AWAY', `AWAY :missed ${tag}`, 'AWAY']) alice.send(line);
  const missed = (reader: EventStreamReader) =>
    reader.events.filter((event) => event.event === 'away' && event.data.nick === `al${tag}`);
  const seenByOthers = await stream(query, { ...auth, 'Last-Event-ID': last.id! });
  await eventually(() => missed(seenByOthers).length === 3, 'the three, seen by another reader');
  seenByOthers.close();
  for (const resume of [
    stream(query, { ...auth, 'Last-Event-ID': last.id! }),
    stream(`${query}&since=${last.id!}`, auth),
  ]) {
    const reader = await resume;
    await eventually(() => missed(reader).length === 3, 'the three missed events');
    t.same(
      reader.events.filter((event) => event.event !== 'hello').map((event) => [event.data.away, event.data.message]),
      [
        [false, null],
        [true, `missed ${tag}`],
        [false, null],
      ],
      'the missed events, in order, and no gap',
    );
    reader.close();
  }
  const other = await stream('?types=topic', { 'Last-Event-ID': 'zz9-5' });
  const gap = await other.next(is('gap'), 'gap of an id of another run');
  t.equal(gap.data.lost, null, 'unknown how many were missed across a restart');
  other.close();
  const bad = await stream('', { 'Last-Event-ID': 'not an id' });
  t.equal(bad.status, 400);
  t.match(bad.refusal, { error: { code: 'invalid_parameter' } });
  await bad.ended;
  const unknownType = await stream('?types=join,jump');
  t.equal(unknownType.status, 400);
  t.match(unknownType.refusal, { error: { code: 'invalid_parameter', message: /jump/ } });
  await unknownType.ended;
});

t.test("a revoked token's stream ends at once; a withdrawn approval ends the wider view", async (t) => {
  const revoked = token(['irc.events']);
  const reader = await stream('', { Authorization: `Token ${revoked.secret}` });
  await reader.next(is('hello', { view: 'token' }), 'open');
  tokens.revoke(tokens.get(revoked.id)!, actor);
  const end = await reader.next(is('end'), 'end on revocation', 3000);
  t.equal(end.data.reason, 'token_revoked');
  await reader.ended;
  const again = await stream('', { Authorization: `Token ${revoked.secret}` });
  t.equal(again.status, 401, 'a revoked token is refused');
  await again.ended;

  const widened = token(['irc.events']);
  const narrow = await stream('?types=away', { Authorization: `Token ${widened.secret}` });
  await narrow.next(is('hello', { identities: false }), 'open without identities');
  tokens.grant(tokens.get(widened.id)!, ['irc.users'], actor);
  alice.send(`AWAY :widened ${tag}`);
  await narrow.next(is('away', { message: `widened ${tag}` }), 'an event after the approval was widened');
  alice.send('AWAY');
  t.notOk(narrow.events.some(is('end')), 'a widened approval does not end the stream');
  narrow.close();

  const narrowed = token(['irc.events', 'irc.users']);
  const wide = await stream('', { Authorization: `Token ${narrowed.secret}` });
  await wide.next(is('hello', { identities: true }), 'open with identities');
  tokens.deny(tokens.get(narrowed.id)!, ['irc.users'], [], actor);
  const ended = await wide.next(is('end'), 'end on a withdrawn approval', 3000);
  t.equal(ended.data.reason, 'approval_withdrawn');
  await wide.ended;
});

t.test('open streams are capped per token', async (t) => {
  const { secret: value } = token(['irc.events']);
  const auth = { Authorization: `Token ${value}` };
  const two = [await stream('', auth), await stream('', auth)];
  t.ok(two.every((reader) => reader.status === 200));
  const third = await stream('', auth);
  t.equal(third.status, 429);
  t.match(third.refusal, { error: { code: 'rate_limited', message: /with token #\d+ \(at most 2\)/ } });
  await third.ended;
  const unapproved = await stream('', { Authorization: `Token ${token([]).secret}` });
  t.equal(unapproved.status, 200, 'a token not approved for irc.events opens a public stream, not counted as its');
  unapproved.close();
  for (const reader of two) reader.close();
  await Promise.all(two.map((reader) => reader.ended));
});

t.test('open streams are capped per address', async (t) => {
  const readers = await Promise.all(Array.from({ length: 12 }, () => stream()));
  t.ok(readers.every((reader) => reader.status === 200));
  const over = await stream();
  t.equal(over.status, 429);
  t.match(over.refusal, { error: { code: 'rate_limited', message: /at most 12/ } });
  t.ok(over.headers['retry-after']);
  await over.ended;
  for (const reader of readers) reader.close();
  await Promise.all(readers.map((reader) => reader.ended));
  await eventually(async () => {
    const next = await stream();
    next.close();
    return next.status === 200;
  }, 'a stream once the others closed');
});
