import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import type { Channel } from '../../../lib/model/channels.js';
import type { ModelChange } from '../../../lib/model/slice.js';

const fixedClock = () => new Date('2026-11-21T14:03:00.000Z');

/** A channel's members as (folded nick, prefixes) pairs, in the order they joined. */
function memberPairs(model: NetworkModel, channel: Channel): [string, string][] {
  return [...channel.members].map(([user, prefix]) => [model.fold(user.nick), prefix]);
}

function modelWithChanges() {
  const model = new NetworkModel(fixedClock);
  const changes: ModelChange[] = [];
  model.on('change', (change) => changes.push(change));
  model.connectionOpened('rfc1459');
  return { model, changes };
}

t.test('members follow joins, parts, nick changes and quits under the casemapping', async (t) => {
  const { model } = modelWithChanges();
  model.upsertChannel('#Chat[1]', { joined: true });
  model.addMember('#chat{1}', 'Alice', '@');
  model.addMember('#CHAT[1]', 'bob');
  const channel = model.channels.get('#chat{1}')!;
  t.equal(channel.name, '#Chat[1]', 'rfc1459 folds [ to {, so both names are the same channel');
  t.equal(channel.users, 2, 'a joined channel counts its members');
  t.same(memberPairs(model, channel), [
    ['alice', '@'],
    ['bob', ''],
  ]);

  model.renameUser('alice', 'Alice^');
  t.equal(model.users.get('alice~')?.nick, 'Alice^', 'the user is found by the folded new nick (~ folds to ^)');
  t.equal(model.memberPrefix('#chat[1]', 'alice^'), '@', 'the prefix moves with the nick');
  t.same(
    memberPairs(model, channel),
    [
      ['alice^', '@'],
      ['bob', ''],
    ],
    'the same two members, alice under her new nick',
  );
  t.notOk(model.users.get('alice'), 'the old nick is gone');

  model.removeMember('#chat[1]', 'BOB');
  t.equal(channel.users, 1);
  t.equal(model.users.get('bob')?.channels.size, 0, 'bob stays known, in no channel');

  model.removeUser('alice^');
  t.equal(channel.users, 0);
  t.notOk(model.users.get('Alice^'));
});

t.test('a channel the bot is not in keeps the count LIST gave', async (t) => {
  const { model } = modelWithChanges();
  model.upsertChannel('#big', { users: 500 });
  model.addMember('#big', 'carol');
  t.equal(model.channels.get('#big')!.users, 500, 'one known member does not make the count');
});

t.test('users: one server-name string per server, one time string per tick', async (t) => {
  const { model } = modelWithChanges();
  const first = model.upsertUser('a', { server: ['hub', 'test', 'net'].join('.') });
  const second = model.upsertUser('b', { server: ['hub', 'test', 'net'].join('.') });
  t.equal(first.server, 'hub.test.net');
  t.equal(second.server, first.server);
  t.equal(first.firstSeenAt, '2026-11-21T14:03:00.000Z');
  t.equal(second.firstSeenAt, first.firstSeenAt);
  model.upsertUser('a', { away: true, account: 'acct' });
  t.match(
    model.users.get('A'),
    { away: true, account: 'acct', server: 'hub.test.net' },
    'upsert keeps what it is not given',
  );
});

t.test('latency and service commands', async (t) => {
  const { model, changes } = modelWithChanges();
  model.upsertServer('Leaf.test.net', { hops: 1 });
  model.setServerLatency('leaf.TEST.net', 12.5);
  t.match(model.servers.get('leaf.test.net'), { latencyMs: 12.5, measuredAt: '2026-11-21T14:03:00.000Z' });
  model.setServerLatency('leaf.test.net', null);
  t.equal(model.servers.get('leaf.test.net')!.latencyMs, null, 'no answer is null, with the time of the attempt');
  model.setServerLatency('gone.test.net', 3);
  t.notOk(model.servers.get('gone.test.net'), 'an unknown server is not created by a late measurement');

  t.equal(model.services.fetchedAt, null);
  model.setServiceCommands([
    { service: 'NickServ', commands: [{ name: 'REGISTER', description: 'Registers a nickname.' }] },
  ]);
  t.equal(model.services.get('nickserv')?.commands[0]?.name, 'REGISTER');
  t.equal(model.services.fetchedAt, '2026-11-21T14:03:00.000Z');
  t.ok(changes.some((change) => change.slice === 'services' && change.kind === 'commands'));

  model.connectionLost();
  t.equal(model.servers.size, 0, 'the live picture is gone with the connection');
  t.equal(model.services.size, 1, 'the services keep their command lists across reconnects');
  t.notOk(model.ready);
});

t.test('ready needs a connection and a completed sync', async (t) => {
  const model = new NetworkModel(fixedClock);
  t.notOk(model.ready);
  model.connectionOpened('ascii');
  t.notOk(model.ready, 'connected but not synced');
  model.markSynced(true, 1234);
  t.ok(model.ready);
  t.equal(model.stats.syncedAsOperator, true);
  t.equal(model.stats.syncMs, 1234, 'with how long the sync took');
  t.equal(model.fold('[A]'), '[a]', 'ascii folds letters only');
  model.connectionOpened('rfc1459');
  t.notOk(model.ready, 'a new connection needs a new sync');
  t.equal(model.stats.syncMs, null);
});

t.test('names folded by the caller give the same model as names folded here', async (t) => {
  const byName = modelWithChanges();
  const byKey = modelWithChanges();
  const fold = (name: string) => byKey.model.fold(name);
  byName.model.upsertChannel('#Chat[1]', { joined: true });
  byKey.model.upsertChannel('#Chat[1]', { joined: true }, fold('#Chat[1]'));
  byName.model.upsertUser('Alice', { ident: 'a' });
  byKey.model.upsertUser('Alice', { ident: 'a' }, fold('Alice'));
  byName.model.addMember('#chat{1}', 'Alice', '@');
  byKey.model.addMember('#chat{1}', 'Alice', '@', fold('#chat{1}'), fold('Alice'));
  byName.model.addMember('#chat{1}', 'Bob~');
  byKey.model.addMember('#chat{1}', 'Bob~', '', fold('#chat{1}'), fold('Bob~'));
  byName.model.renameUser('Alice', 'Alice[2]');
  byKey.model.renameUser('Alice', 'Alice[2]', fold('Alice'), fold('Alice[2]'));
  byName.model.removeMember('#CHAT[1]', 'bob^');
  byKey.model.removeMember('#CHAT[1]', 'bob^', fold('#CHAT[1]'), fold('bob^'));
  byName.model.addMember('#chat{1}', 'carol');
  byKey.model.addMember('#chat{1}', 'carol', '', fold('#chat{1}'), fold('carol'));
  byName.model.removeUser('CAROL');
  byKey.model.removeUser('CAROL', fold('CAROL'));
  const picture = (model: NetworkModel) => ({
    users: [...model.users.all()].map((user) => ({ ...user, channels: [...user.channels].map(({ name }) => name) })),
    channels: [...model.channels.all()].map((channel) => ({ ...channel, members: memberPairs(model, channel) })),
  });
  t.same(picture(byKey.model), picture(byName.model));
  t.same(byKey.changes, byName.changes, 'the same changes, in the same order');
  t.same(picture(byKey.model).channels[0]!.members, [['alice{2}', '@']], 'bob parted, carol quit');
  t.equal(byKey.model.users.byKey('alice{2}')?.nick, 'Alice[2]');
  t.equal(byKey.model.channels.byKey('#chat{1}')?.users, 1);
});

t.test('an existing user: the clock is not read and unchanged fields keep their strings', async (t) => {
  let reads = 0;
  const model = new NetworkModel(() => {
    reads++;
    return fixedClock();
  });
  model.connectionOpened('rfc1459');
  const user = model.upsertUser('alice', { host: 'a-rather-long-host.example.com' });
  t.equal(reads, 1, 'a new user is given the time the bot first saw them');
  const host = user.host;
  model.upsertUser('Alice', { host: ['a-rather-long-host', 'example', 'com'].join('.'), away: true });
  model.addMember('#chat', 'alice');
  t.equal(reads, 1, 'a known user: no clock');
  t.equal(user.host, host);
  t.match(user, { nick: 'Alice', away: true });
  model.upsertUser('alice', { away: undefined, account: null });
  t.equal(user.away, true, 'a field given as undefined is left alone');
});

t.test('change listeners: each hears every change once, in order; removing one stops it', async (t) => {
  const model = new NetworkModel(fixedClock);
  const heard: string[] = [];
  const late = (change: ModelChange) => heard.push(`late ${change.kind}`);
  let removeLate = (): void => undefined;
  const removeFirst = model.on('change', (change) => {
    heard.push(`first ${change.kind}`);
    // Added during a change: hears the next one, not this one (as with EventEmitter).
    if (change.kind === 'connected') removeLate = model.on('change', late);
  });
  const removeSecond = model.on('change', (change) => {
    heard.push(`second ${change.kind}`);
    // Removed during a change: still hears this one.
    if (change.kind === 'upsert') removeFirst();
  });
  model.connectionOpened('rfc1459');
  model.upsertUser('alice');
  model.addMember('#chat', 'alice');
  removeSecond();
  removeLate();
  removeLate();
  model.removeUser('alice');
  t.same(heard, [
    'first connected',
    'second connected',
    'first upsert',
    'second upsert',
    'late upsert',
    'second join',
    'late join',
  ]);
});

t.test('more listeners than any design needs is reported as a leak', async (t) => {
  const model = new NetworkModel(fixedClock);
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const removers = Array.from({ length: 51 }, () => model.on('change', () => undefined));
  // Warnings are delivered on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(warnings.length, 1);
  t.match(warnings[0], { name: 'MaxListenersExceededWarning', message: /more than 50 "change" listeners/ });
  for (const remove of removers) remove();
});

t.test('an upsert that changes nothing is no change: no event, so no listener runs', async (t) => {
  const { model, changes } = modelWithChanges();
  const heard = () => changes.filter((change) => change.slice === 'users').map((change) => change.name);
  const row = { ident: '~a', host: 'a-rather-long-host.example.com', account: null, realname: 'Alice A', away: false };
  const alice = model.upsertUser('Alice', row);
  t.same(heard(), ['Alice'], 'a new user is a change');
  model.upsertUser('alice', { ...row, host: ['a-rather-long-host', 'example', 'com'].join('.') });
  t.same(heard(), ['Alice', 'alice'], "the nick's case is a change");
  model.upsertUser('alice', { ...row, host: ['a-rather-long-host', 'example', 'com'].join('.') });
  model.upsertUser('alice', { ident: '~a', account: undefined });
  model.upsertUser('alice');
  t.same(heard(), ['Alice', 'alice'], 'the same values again (a WHO row, a re-join), or none: no event');
  model.upsertUser('alice', { ...row, away: true });
  t.same(heard(), ['Alice', 'alice', 'alice'], 'one field that differs is a change');
  t.match(alice, { nick: 'alice', away: true, host: 'a-rather-long-host.example.com' });
  t.equal(model.upsertUser('ALICE'), alice, 'the user is returned whether or not anything changed');
});

t.test('a member listed again as they are, or a part of someone not there, is no change', async (t) => {
  const { model, changes } = modelWithChanges();
  const heard = () => changes.filter((change) => change.slice === 'channels').map((change) => change.kind);
  model.upsertChannel('#chat', { joined: true });
  model.addMember('#chat', 'alice', '@');
  model.addMember('#chat', 'bob');
  t.same(heard(), ['upsert', 'join', 'join']);
  model.addMember('#CHAT', 'Alice', '@');
  model.addMember('#chat', 'bob', '');
  t.same(heard(), ['upsert', 'join', 'join'], 'NAMES repeating a member with the same prefix: no event');
  model.addMember('#chat', 'bob', '+');
  t.same(heard(), ['upsert', 'join', 'join', 'join'], 'a new prefix is a change');
  t.equal(model.memberPrefix('#chat', 'bob'), '+');
  t.equal(model.channels.get('#chat')!.users, 2);
  model.removeMember('#chat', 'carol');
  model.upsertUser('dave');
  model.removeMember('#chat', 'dave');
  model.removeMember('#nowhere', 'alice');
  t.same(heard(), ['upsert', 'join', 'join', 'join'], 'a PART of someone who is not a member: no event');
  model.removeMember('#chat', 'BOB');
  t.same(heard(), ['upsert', 'join', 'join', 'join', 'part']);
  t.equal(model.channels.get('#chat')!.users, 1);
  t.same([...model.users.get('bob')!.channels], []);
});

t.test(
  'a rename onto a nick the model still has for someone else: that user is gone, from their channels too',
  async (t) => {
    const { model, changes } = modelWithChanges();
    model.upsertChannel('#c', { joined: true });
    model.addMember('#c', 'alice', '@');
    model.addMember('#c', 'bob');
    changes.length = 0;
    model.renameUser('alice', 'Bob');
    t.equal(model.users.size, 1, 'one user is left');
    const channel = model.channels.get('#c')!;
    t.same(
      memberPairs(model, channel),
      [['bob', '@']],
      'the renamed user keeps their prefix; the old bob is no member',
    );
    t.equal(channel.users, 1);
    t.same(
      changes.map(({ kind, name }) => [kind, name]),
      [
        ['remove', 'bob'],
        ['rename', 'Bob'],
      ],
    );
  },
);

t.test('a user or channel that is gone keeps no memberships', async (t) => {
  const { model } = modelWithChanges();
  model.upsertChannel('#a', { joined: true });
  model.addMember('#a', 'alice');
  model.addMember('#b', 'alice');
  const alice = model.users.get('alice')!;
  const b = model.channels.get('#b')!;
  model.removeChannel('#b');
  t.same(
    [...alice.channels].map(({ name }) => name),
    ['#a'],
    'alice is no longer in #b',
  );
  t.equal(b.members.size, 0, 'and #b no longer lists her');
  model.removeUser('alice');
  t.equal(alice.channels.size, 0, 'a user who quit is in no channel');
  t.equal(model.channels.get('#a')!.members.size, 0);

  model.addMember('#a', 'bob');
  model.addMember('#a', 'carol', '@');
  model.addMember('#c', 'carol');
  model.clearMembers('#a', 5);
  t.match(model.channels.get('#a'), { joined: false, users: 5 }, 'the bot left #a: the count to show is kept');
  t.equal(model.channels.get('#a')!.members.size, 0);
  t.same(
    [...model.users.get('carol')!.channels].map(({ name }) => name),
    ['#c'],
    'carol is still in #c',
  );
  t.equal(model.users.get('bob')!.channels.size, 0);
  t.notOk(model.users.get('bob')!.inUnwatchedHiddenChannel, 'a public channel left behind hides nobody');
});

t.test('members of a secret or private channel the bot leaves are marked: they may still be in it', (t) => {
  t.plan(4);
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  model.upsertChannel('#hush', { joined: true, hidden: true });
  model.upsertChannel('#open', { joined: true });
  model.addMember('#hush', 'spy');
  model.addMember('#hush', 'both');
  model.addMember('#open', 'both');
  model.addMember('#open', 'plain');
  model.clearMembers('#hush', 2);
  t.ok(model.users.get('spy')!.inUnwatchedHiddenChannel);
  t.ok(model.users.get('both')!.inUnwatchedHiddenChannel, 'whatever else they are in');
  t.notOk(model.users.get('plain')!.inUnwatchedHiddenChannel);
  model.removeUser('spy');
  model.upsertUser('spy');
  t.notOk(model.users.get('spy')!.inUnwatchedHiddenChannel, 'someone who comes back after a quit starts unmarked');
});

t.test('a server that goes takes its users; a services server that goes is split until it is back', async (t) => {
  const model = new NetworkModel();
  model.connectionOpened('rfc1459');
  model.upsertServer('hub.test.net');
  model.upsertServer('Leaf.test.net');
  model.upsertServer('services.test.net', { isServices: true });
  model.upsertUser('alice', { server: 'hub.test.net' });
  model.upsertUser('bob', { server: 'leaf.test.net' });
  model.upsertUser('NickServ', { server: 'services.test.net' });
  model.addMember('#chat', 'bob');
  const changes: string[] = [];
  model.on('change', (change) => changes.push(`${change.slice} ${change.kind} ${change.name ?? ''}`));

  model.removeServer('leaf.test.net');
  t.notOk(model.users.get('bob'), 'bob went with the leaf');
  t.equal(model.channels.get('#chat')?.members.size, 0, 'and out of his channels');
  t.ok(model.users.get('alice'));
  t.same(changes, ['users remove bob', 'servers remove Leaf.test.net']);
  t.same(model.servers.servicesSplit, [], 'the leaf runs no services');

  model.removeServer('services.test.net');
  t.same(model.servers.servicesSplit, ['services.test.net']);
  t.notOk(model.users.get('NickServ'));
  model.upsertServer('services.test.net', {});
  t.same(model.servers.servicesSplit, ['services.test.net'], 'back, but not yet known as services');
  model.upsertServer('services.test.net', { isServices: true });
  t.same(model.servers.servicesSplit, [], 'known as services again');

  model.removeServer('services.test.net');
  model.connectionLost();
  t.same(model.servers.servicesSplit, [], 'a new connection starts with nothing split');
});
