import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import type { ModelChange } from '../../../lib/model/slice.js';

const fixedClock = () => new Date('2026-11-21T14:03:00.000Z');

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
  t.same(
    [...channel.members],
    [
      ['alice', '@'],
      ['bob', ''],
    ],
  );

  model.renameUser('alice', 'Alice^');
  t.equal(model.users.get('alice~')?.nick, 'Alice^', 'the user is found by the folded new nick (~ folds to ^)');
  t.equal(channel.members.get('alice^'), '@', 'the prefix moves with the nick');
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
  model.markSynced(true);
  t.ok(model.ready);
  t.equal(model.stats.syncedAsOperator, true);
  t.equal(model.fold('[A]'), '[a]', 'ascii folds letters only');
  model.connectionOpened('rfc1459');
  t.notOk(model.ready, 'a new connection needs a new sync');
});
