/**
 * The faults test of the journal: SIGKILL a process whose every change is confirmed only once persisted()
 * resolved, at random moments — between appends, during one, during a compaction of the durable file — and
 * every confirmed change is there at the next start, once, in order. Each round goes on from what the last
 * one left.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Store } from '../../../lib/store/store.js';
import { captureLogger, makeTempDir } from './fixtures/temp-store.js';
import { listSlice } from './fixtures/journal-slice.js';

const CHILD = fileURLToPath(new URL('./fixtures/journal-kill-child.js', import.meta.url));
const ROUNDS = 10;
const NO_COMPACTION_MS = 10_000;

interface RoundResult {
  lastConfirmed: number;
  compactions: number;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Start the child and SIGKILL it `delayMs` after its first compaction of the round, so that every round sees
 * one however slow the machine is, and the kill lands at a moment of the cycle that the delay picks. A child
 * that confirms changes but never compacts is killed after NO_COMPACTION_MS, and the test's count fails.
 */
function runAndKill(file: string, delayMs: number): Promise<RoundResult> {
  const child = spawn(process.execPath, [CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const result: RoundResult = { lastConfirmed: -1, compactions: 0, signal: null, stderr: '' };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (result.stderr += chunk));
  let armed = false;
  let fallback: NodeJS.Timeout | undefined;
  const arm = (ms: number) => {
    if (armed) return;
    armed = true;
    clearTimeout(fallback);
    setTimeout(() => child.kill('SIGKILL'), ms);
  };
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'compacted') {
      result.compactions++;
      arm(delayMs);
      return;
    }
    const match = /^confirmed (\d+)$/.exec(line);
    if (!match) return;
    result.lastConfirmed = Number(match[1]);
    fallback ??= setTimeout(() => arm(0), NO_COMPACTION_MS);
  });
  return new Promise((resolve) => {
    child.on('close', (_code, signal) => {
      result.signal = signal;
      resolve(result);
    });
  });
}

t.test('SIGKILL at any moment loses no confirmed change, and repeats none', async (t) => {
  const file = path.join(makeTempDir(t), 'store.json');
  let compactions = 0;
  let previous = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const result = await runAndKill(file, 20 + ((round * 37) % 250));
    t.equal(result.signal, 'SIGKILL', `round ${round}: killed, not crashed`, { stderr: result.stderr });
    t.ok(result.lastConfirmed > previous, `round ${round}: changes were confirmed`);
    compactions += result.compactions;

    const { logger, lines } = captureLogger();
    const store = new Store({ path: file, logger });
    await store.load();
    const list = listSlice();
    store.register(list);
    const items = list.items;
    const expected = Array.from({ length: result.lastConfirmed }, (_, index) => index + 1);
    // The change under way when the kill came may be on disk too (written, not yet confirmed).
    const extra = items.length === result.lastConfirmed + 1 ? [result.lastConfirmed + 1] : [];
    t.same(items, [...expected, ...extra], `round ${round}: 1..${result.lastConfirmed} are there, once, in order`, {
      diagnostic: false,
    });
    t.notOk(
      lines.some((entry) => entry.level === 'error'),
      `round ${round}: loaded without an error`,
    );
    t.comment(
      `round ${round}: ${result.lastConfirmed - previous} changes confirmed, ${result.compactions} compactions, ` +
        `${list.replayed} replayed from the journal${extra.length ? ', plus the one under way' : ''}`,
    );
    previous = items.length;
    // Not closed: the next round starts on the files as the kill left them. Its lock is let go by hand, so
    // that the next child may open the store.
    fs.rmSync(`${file}.lock`);
  }
  t.ok(compactions >= ROUNDS, `the durable file was compacted ${compactions} times along the way`);
});
