import t from 'tap';
import { NetworkModel } from '../../../lib/model/network.js';
import { ServicesSlice, type StoredServices } from '../../../lib/model/services.js';

const lists = [
  {
    service: 'NickServ',
    commands: [
      { name: 'IDENTIFY', description: 'Identifies to services for a nickname.' },
      { name: 'STATUS', description: null },
    ],
  },
  { service: 'ChanServ', commands: [{ name: 'OP', description: 'Gives channel ops to a user.' }] },
];

t.test('the catalogue and the time it was read survive a snapshot and a restore', async (t) => {
  const model = new NetworkModel(() => new Date('2026-11-25T10:00:00.000Z'));
  model.setServiceCommands(lists);
  const stored = JSON.parse(JSON.stringify(model.services.persistence.snapshot())) as StoredServices;
  t.equal(stored.fetched_at, '2026-11-25T10:00:00.000Z');

  const restored = new ServicesSlice();
  restored.persistence.restore(stored);
  t.equal(restored.fetchedAt, '2026-11-25T10:00:00.000Z', 'the time it was read, not the time of the restore');
  t.same([...restored.all()], lists);
  t.same(restored.get('nickserv'), lists[0], 'looked up without regard to case');
});

t.test('a store without a catalogue, or without its time, leaves none', async (t) => {
  const slice = new ServicesSlice();
  slice.persistence.restore({ fetched_at: null, services: lists });
  t.equal(slice.fetchedAt, null);
  t.equal(slice.size, 0, 'a catalogue that would be served as never read is not kept');
  slice.persistence.restore({ fetched_at: 'not a time', services: lists });
  t.equal(slice.size, 0);
});

t.test('a malformed stored catalogue is refused with what is wrong; malformed commands are dropped', async (t) => {
  const slice = new ServicesSlice();
  t.throws(() => slice.persistence.restore(null as unknown as StoredServices), /"services" array/);
  t.throws(
    () => slice.persistence.restore({ fetched_at: null, services: [{ service: 3 }] } as unknown as StoredServices),
    /"service" name and a "commands" array/,
  );
  slice.persistence.restore({
    fetched_at: '2026-11-25T10:00:00.000Z',
    services: [
      {
        service: 'NickServ',
        commands: [{ name: 'IDENTIFY', description: 'x' }, { name: 7 }, null] as unknown as {
          name: string;
          description: null;
        }[],
      },
    ],
  });
  t.same(slice.get('NickServ')?.commands, [{ name: 'IDENTIFY', description: 'x' }]);
});
