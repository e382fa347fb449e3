import t from 'tap';
import { ChannelRecordsSlice } from '../../../../plugins/stats/model/channel-records.js';
import { DAY_MS } from '../../../../plugins/stats/model/history.js';

const fold = (name: string) => name.toLowerCase();
const at = (iso: string) => Date.parse(iso);

t.test('a record only rises, and keeps when it was first reached', async (t) => {
  const records = new ChannelRecordsSlice(fold);
  t.equal(records.channel('#chat'), undefined, 'none before any users');
  t.notOk(records.note('#chat', 0, at('2026-11-21T09:00:00Z')), 'an empty channel sets no record');
  t.ok(records.note('#chat', 3, at('2026-11-21T09:00:00Z')));
  t.ok(records.note('#chat', 5, at('2026-11-21T10:00:00Z')));
  t.notOk(records.note('#chat', 5, at('2026-11-21T11:00:00Z')), 'as many again is no record');
  t.notOk(records.note('#chat', 2, at('2026-11-21T12:00:00Z')), 'fewer is none');
  t.same(records.channel('#CHAT'), { name: '#chat', users: 5, at: at('2026-11-21T10:00:00Z') }, 'names fold');
  t.ok(records.takeChanges(), 'the owner hears of the change');
  t.notOk(records.takeChanges(), 'once');
  records.note('#chat', 4, at('2026-11-21T13:00:00Z'));
  t.notOk(records.takeChanges(), 'a count below the record changes nothing to save');
  records.note('#Chat', 6, at('2026-11-21T14:00:00Z'));
  t.same(
    records.channel('#chat'),
    { name: '#Chat', users: 6, at: at('2026-11-21T14:00:00Z') },
    'the name as last seen',
  );
});

t.test('kept in the store as it was, malformed entries skipped', async (t) => {
  const records = new ChannelRecordsSlice(fold);
  records.note('#chat', 40, at('2026-11-19T18:45:00Z'));
  records.note('#dev', 7, at('2026-11-20T08:00:00Z'));
  const stored = JSON.parse(JSON.stringify(records.persistence.snapshot())) as unknown;
  t.same(stored, {
    forgotten_on: null,
    channels: [
      ['#chat', 40, at('2026-11-19T18:45:00Z')],
      ['#dev', 7, at('2026-11-20T08:00:00Z')],
    ],
  });
  const again = new ChannelRecordsSlice(fold);
  again.persistence.restore({
    forgotten_on: '2026-11-20',
    channels: [
      ...(stored as { channels: [string, number, number][] }).channels,
      ['#bad', -1, 0],
      ['#worse', 3, null as unknown as number],
      'not a record' as unknown as [string, number, number],
      ['#CHAT', 12, 0],
    ],
  });
  t.equal(again.size, 2);
  t.same(again.channel('#chat'), { name: '#chat', users: 40, at: at('2026-11-19T18:45:00Z') }, 'the higher of two');
  t.same(again.channel('#dev'), { name: '#dev', users: 7, at: at('2026-11-20T08:00:00Z') });
  t.equal(
    again.forget('2026-11-20', () => false, Infinity),
    null,
    'the day it ran on is kept too',
  );
  t.throws(() => again.persistence.restore(null as never), /must be an object with a "channels" array/);
});

t.test("the store's text in pieces is the snapshot's JSON, whatever the count", async (t) => {
  for (const count of [0, 1, 1000, 2500]) {
    const records = new ChannelRecordsSlice(fold);
    for (let index = 0; index < count; index++) records.note(`#c"\\${index}`, 1 + index, 1_700_000_000_000 + index);
    const pieces = [...records.persistence.snapshotJson!()];
    t.equal(pieces.join(''), JSON.stringify(records.persistence.snapshot()), `${count} records`);
    t.ok(
      pieces.every((piece) => piece.length < 64 * 1024),
      `${count} records: ${pieces.length} pieces, none big`,
    );
  }
});

t.test('once a day, the records of channels gone and unbeaten for the retention are forgotten', async (t) => {
  const records = new ChannelRecordsSlice(fold);
  const now = at('2026-11-21T00:01:00Z');
  records.note('#old-gone', 9, now - 40 * DAY_MS);
  records.note('#old-here', 9, now - 40 * DAY_MS);
  records.note('#new-gone', 9, now - 2 * DAY_MS);
  records.takeChanges();
  const here = new Set(['#old-here']);
  t.equal(
    records.forget('2026-11-21', (key) => here.has(key), now - 30 * DAY_MS),
    1,
  );
  t.equal(records.channel('#old-gone'), undefined, 'gone, and its record older than the retention');
  t.ok(records.channel('#old-here'), 'a channel that is there keeps its record, however old');
  t.ok(records.channel('#new-gone'), 'a recent record stays for when its channel forms again');
  t.ok(records.takeChanges(), 'to be saved');
  t.equal(
    records.forget('2026-11-21', () => false, Infinity),
    null,
    'not twice the same day',
  );
  t.equal(records.size, 2);
  t.equal(
    records.forget('2026-11-22', () => false, now - 30 * DAY_MS),
    1,
    'the next day, again: #old-here is gone now',
  );
  t.same(
    ['#old-here', '#new-gone'].map((name) => records.channel(name)?.users ?? null),
    [null, 9],
  );
});
