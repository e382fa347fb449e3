import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { CURRENT_SCHEMA_VERSION, Store } from '../../../lib/store/store.js';
import { captureLogger, makeTempDir, problems, readStoreFile } from './fixtures/temp-store.js';

const CHILD = fileURLToPath(new URL('./fixtures/kill-child.js', import.meta.url));
const ROUNDS = 6;

interface RoundResult {
  /** How many writes the child began. */
  snapshots: number;
  /** The counter in the last write the child began. */
  lastSnapshot: number;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Start the child; once its first write is surely on disk (the second has begun), wait a
 * while and SIGKILL it: even rounds at a moment that falls anywhere, odd rounds right as a
 * write begins, so that some kills certainly land mid-write.
 */
function runAndKill(file: string, round: number): Promise<RoundResult> {
  const child = spawn(process.execPath, [CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const result: RoundResult = { snapshots: 0, lastSnapshot: -1, signal: null, stderr: '' };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (result.stderr += chunk));
  const killAtWriteStart = round % 2 === 1;
  let armed = false;
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const match = /^snapshot (\d+)$/.exec(line);
    if (!match) return;
    result.snapshots++;
    result.lastSnapshot = Number(match[1]);
    if (armed) child.kill('SIGKILL');
    if (result.snapshots === 2) {
      setTimeout(
        () => {
          if (killAtWriteStart) armed = true;
          else child.kill('SIGKILL');
        },
        100 + 40 * round,
      );
    }
  });
  // 'close' comes after the child's output is read to the end, so lastSnapshot is final.
  return new Promise((resolve) => {
    child.on('close', (_code, signal) => {
      result.signal = signal;
      resolve(result);
    });
  });
}

t.test('SIGKILL in the middle of writes always leaves a loadable file', async (t) => {
  const dir = makeTempDir(t);
  const file = path.join(dir, 'store.json');
  let midWriteKills = 0;
  let previousCounter = -1;

  for (let round = 0; round < ROUNDS; round++) {
    const result = await runAndKill(file, round);
    t.equal(result.signal, 'SIGKILL', `round ${round}: the child was killed, not crashed`, { stderr: result.stderr });
    t.equal(result.stderr, '', `round ${round}: the child loaded the previous round's file without complaint`);
    t.ok(result.snapshots >= 2, `round ${round}: the child wrote`);

    const contents = readStoreFile(file); // throws, failing the test, if not JSON
    t.equal(contents.schema_version, CURRENT_SCHEMA_VERSION, `round ${round}: the file has schema_version`);
    const counter = (contents.slices.churn as { counter: number }).counter;
    t.ok(counter > previousCounter, `round ${round}: the file holds this round's data`);
    previousCounter = counter;
    if (result.lastSnapshot > counter) midWriteKills++;
    // A backup is made when a write replaces a file: in the first round, a kill during the second write (on a
    // busy machine it can outlast the wait) comes before any did. From then on one is always there.
    if (round > 0 || fs.existsSync(`${file}.bak`)) {
      const backup = readStoreFile(`${file}.bak`);
      t.equal(backup.schema_version, CURRENT_SCHEMA_VERSION, `round ${round}: the backup is complete`);
    }
    t.comment(
      `round ${round}: ${result.snapshots} writes begun, last ${result.lastSnapshot}, on disk ${counter}, ` +
        `temp file left: ${fs.existsSync(`${file}.tmp`)}`,
    );

    const { logger, lines } = captureLogger();
    const fresh = new Store({ path: file, logger });
    await fresh.load();
    const restored: unknown[] = [];
    fresh.register({ key: 'churn', snapshot: () => null, restore: (data) => restored.push(data) });
    await fresh.close();
    t.same(problems(lines), [], `round ${round}: a fresh store loads it without recovery`);
    t.equal((restored[0] as { counter: number } | undefined)?.counter, counter);
    t.same(
      fs.readdirSync(dir).filter((name) => name.includes('.corrupt-')),
      [],
    );
  }
  t.ok(midWriteKills >= 1, `some kills landed mid-write (${midWriteKills} of ${ROUNDS})`);
});
