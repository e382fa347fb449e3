/**
 * The journal of events kept for replay: ids without holes, what a reader who comes back gets (and how many it
 * missed), the bounds by count and by age, and each view's form of an event.
 */
import t from 'tap';
import { Journal } from '../../../plugins/events/journal.js';
import type { NetworkEvent } from '../../../plugins/stats/contract.js';

function event(time: number, fields: Partial<NetworkEvent> = {}): NetworkEvent {
  return {
    type: 'join',
    time,
    data: { channel: '#room', nick: 'alice', identity: { host: 'home.example' } },
    publicData: { channel: '#room', nick: 'alice' },
    ...fields,
  };
}

t.test('ids count from 1 within a run, and a reader resumes after the last it saw', async (t) => {
  let now = 1_700_000_000_000;
  const journal = new Journal({ events: 100, seconds: 600 }, () => now);
  const entries = Array.from({ length: 5 }, () => journal.append(event(now++)));
  t.same(
    entries.map((entry) => entry.id),
    [1, 2, 3, 4, 5].map((number) => `${journal.run}-${number}`),
  );
  t.same(Journal.parse(entries[1]!.id), { run: journal.run, number: 2 });
  const resume = journal.after(Journal.parse(entries[1]!.id)!);
  t.same(
    resume.entries.map((entry) => entry.number),
    [3, 4, 5],
  );
  t.equal(resume.lost, 0);
  t.same(journal.after({ run: journal.run, number: 5 }).entries, [], 'nothing after the latest');
  t.same(journal.after({ run: journal.run, number: 99 }), { entries: [], lost: 0 }, 'an id not given out yet');
  const other = journal.after({ run: 'zz', number: 3 });
  t.equal(other.lost, null, 'an id of another run: unknown how many were missed');
  t.equal(other.entries.length, 5, 'and everything kept is replayed');
  for (const bad of ['', 'abc', 'ab-0', 'ab-01', 'AB-1', 'ab-1-2', 'ab-99999999999999999']) {
    t.equal(Journal.parse(bad), null, `"${bad}" is not an id`);
  }
});

t.test('bounded by count and by age; a reader behind the bound is told how many it missed', async (t) => {
  let now = 1_700_000_000_000;
  const journal = new Journal({ events: 100, seconds: 10 }, () => now);
  for (let index = 0; index < 250; index++) journal.append(event(now));
  t.equal(journal.length, 100);
  const behind = journal.after({ run: journal.run, number: 120 });
  t.equal(behind.lost, 30, 'events 121 to 150 were dropped');
  t.equal(behind.entries[0]!.number, 151);
  t.equal(behind.entries.length, 100);
  now += 11_000;
  journal.append(event(now));
  const aged = journal.after({ run: journal.run, number: 200 });
  t.equal(journal.length, 1, 'the old ones expired');
  t.equal(aged.lost, 50, 'events 201 to 250 expired');
  t.same(
    aged.entries.map((entry) => entry.number),
    [251],
  );
});

t.test('each view sees its form; frames are made once', async (t) => {
  const journal = new Journal({ events: 100, seconds: 600 }, () => 1_700_000_000_000);
  const entry = journal.append(event(1_700_000_000_000));
  t.same(entry.data('public'), { channel: '#room', nick: 'alice' });
  t.same(entry.data('token'), { channel: '#room', nick: 'alice' }, 'no identity without the approval for users');
  t.same(entry.data('full'), { channel: '#room', nick: 'alice', identity: { host: 'home.example' } });
  t.equal(
    entry.frame('public'),
    `id: ${entry.id}\nevent: join\ndata: {"time":"2023-11-14T22:13:20.000Z","channel":"#room","nick":"alice"}\n\n`,
  );
  t.equal(entry.frame('public'), entry.frame('public'));
  const hidden = journal.append(event(1_700_000_000_000, { publicData: null }));
  t.equal(hidden.frame('public'), null, 'a hidden channel has no public frame');
  t.match(hidden.frame('token'), /event: join/);
  const account = journal.append(
    event(1_700_000_000_000, {
      type: 'account',
      data: { nick: 'alice', identity: { account: 'al' } },
      publicData: null,
    }),
  );
  t.equal(account.frame('token'), null, 'an account change is for readers who may see who users are');
  t.match(account.frame('full'), /"account":"al"/);
});
