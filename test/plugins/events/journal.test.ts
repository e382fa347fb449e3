/**
 * The journal of events kept for replay: ids without holes in each view, what a reader who comes back gets
 * (and how many it missed), the bounds by count and by age, and each view's form of an event.
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

/** An event of a secret channel: nothing of it is public. */
const secret = (time: number) => event(time, { publicData: null });

t.test('ids count from 1 within a run and a view, and a reader resumes after the last it saw', async (t) => {
  let now = 1_700_000_000_000;
  const journal = new Journal({ events: 100, seconds: 600 }, () => now);
  const entries = Array.from({ length: 5 }, () => journal.append(event(now++)));
  t.same(
    entries.map((entry) => entry.idOf('public')),
    [1, 2, 3, 4, 5].map((number) => `${journal.run}-${number}`),
  );
  t.equal(entries[0]!.idOf('token'), `${journal.run}-t1`);
  t.equal(entries[0]!.idOf('full'), `${journal.run}-f1`);
  t.same(Journal.parse(entries[1]!.idOf('public')!), { run: journal.run, view: 'public', number: 2 });
  t.same(Journal.parse(`${journal.run}-t7`), { run: journal.run, view: 'token', number: 7 });
  const resume = journal.after(Journal.parse(entries[1]!.idOf('public')!)!, 'public');
  t.same(
    resume.entries.map((entry) => entry.numbers[0]),
    [3, 4, 5],
  );
  t.equal(resume.lost, 0);
  t.same(
    journal.after({ run: journal.run, view: 'public', number: 5 }, 'public').entries,
    [],
    'nothing after the latest',
  );
  t.same(
    journal.after({ run: journal.run, view: 'public', number: 99 }, 'public'),
    { entries: [], lost: 0 },
    'an id not given out yet',
  );
  const other = journal.after({ run: 'zz', view: 'public', number: 3 }, 'public');
  t.equal(other.lost, null, 'an id of another run: unknown how many were missed');
  t.equal(other.entries.length, 5, 'and everything kept is replayed');
  const otherView = journal.after({ run: journal.run, view: 'token', number: 3 }, 'public');
  t.equal(otherView.lost, null, "an id of another view (the reader's token changed): unknown too");
  t.equal(journal.latestId('public'), `${journal.run}-5`);
  for (const bad of ['', 'abc', 'ab-0', 'ab-01', 'AB-1', 'ab-1-2', 'ab-x1', 'ab-99999999999999999']) {
    t.equal(Journal.parse(bad), null, `"${bad}" is not an id`);
  }
});

t.test("a public reader's ids say nothing of the events it may not see", async (t) => {
  let now = 1_700_000_000_000;
  const journal = new Journal({ events: 100, seconds: 600 }, () => now);
  const first = journal.append(event(now++));
  for (let index = 0; index < 3; index++) journal.append(secret(now++));
  const second = journal.append(event(now++));
  t.equal(first.idOf('public'), `${journal.run}-1`);
  t.equal(second.idOf('public'), `${journal.run}-2`, 'no hole where the secret events were');
  t.equal(second.idOf('token'), `${journal.run}-t5`);
  t.equal(journal.append(secret(now++)).idOf('public'), null);
  t.equal(journal.latestId('public'), `${journal.run}-2`);
  t.equal(journal.latestId('token'), `${journal.run}-t6`);
  // An event only public readers see (a channel that became public): a place among all the same.
  const flip = journal.append(event(now++, { type: 'channel_created', data: null, publicData: { channel: '#x' } }));
  const after = journal.append(secret(now++));
  t.same(flip.numbers, [3, 0, 0]);
  t.same([flip.number, after.number], [7, 8], 'every event has a place of its own among all, whichever views see it');
});

t.test('bounded by count and by age; a reader behind the bound is told how many of its view it missed', async (t) => {
  let now = 1_700_000_000_000;
  const journal = new Journal({ events: 100, seconds: 10 }, () => now);
  // Every other event is a secret channel's: the public view numbers half of them.
  for (let index = 0; index < 250; index++) journal.append(index % 2 === 0 ? event(now) : secret(now));
  t.equal(journal.length, 100);
  const behind = journal.after({ run: journal.run, view: 'token', number: 120 }, 'token');
  t.equal(behind.lost, 30, 'events 121 to 150 were dropped');
  t.equal(behind.entries[0]!.numbers[1], 151);
  t.equal(behind.entries.length, 100);
  const publicBehind = journal.after({ run: journal.run, view: 'public', number: 60 }, 'public');
  t.equal(publicBehind.lost, 15, 'public events 61 to 75 were dropped');
  t.equal(publicBehind.entries.length, 50);
  now += 11_000;
  journal.append(event(now));
  const aged = journal.after({ run: journal.run, view: 'token', number: 200 }, 'token');
  t.equal(journal.length, 1, 'the old ones expired');
  t.equal(aged.lost, 50, 'events 201 to 250 expired');
  t.same(
    aged.entries.map((entry) => entry.numbers[1]),
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
    `id: ${journal.run}-1\nevent: join\ndata: {"time":"2023-11-14T22:13:20.000Z","channel":"#room","nick":"alice"}\n\n`,
  );
  t.equal(entry.frame('public'), entry.frame('public'));
  t.match(entry.frame('full'), new RegExp(`^id: ${journal.run}-f1\n`));
  const hidden = journal.append(secret(1_700_000_000_000));
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
  const ban = journal.append(
    event(1_700_000_000_000, {
      type: 'mode',
      data: { channel: '#room', parameters: ['*!*@bad.host'] },
      tokenData: { channel: '#room', parameters: [] },
    }),
  );
  t.same(ban.data('token'), { channel: '#room', parameters: [] }, "the token view's own form, where it has one");
});
