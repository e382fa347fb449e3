/**
 * Memory: heap used per tracked user (with two channel memberships each, as
 * the HTTP model) at several network sizes. Run with `node --expose-gc`; each
 * size is measured on a fresh model against a baseline of the same model with
 * its channels and no users.
 */
import { NetworkModel } from '../lib/model/network.js';
import { formatCount, isSmoke, runBench, type Figure } from './common.js';
import { populate } from './model.js';

const CHANNELS = 5000;

function settledHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('memory.js needs a heap it can collect: run it as node --expose-gc dist/bench/memory.js');
  for (let pass = 0; pass < 3; pass++) gc();
  return process.memoryUsage().heapUsed;
}

function perUser(users: number): number {
  const model = new NetworkModel();
  populate(model, { users: 0, channels: CHANNELS });
  const before = settledHeap();
  populate(model, { users, channels: CHANNELS });
  const after = settledHeap();
  // Keep the model alive until after the measurement.
  if (model.users.size !== users) throw new Error(`expected ${users} users, the model has ${model.users.size}`);
  return (after - before) / users;
}

async function main() {
  const sizes = isSmoke() ? [2000] : [10_000, 50_000, 100_000];
  const figures: Figure[] = sizes.map((users) => {
    const bytes = perUser(users);
    return {
      name: `${formatCount(users)} users`,
      value: `${formatCount(bytes / 1024, 2)} KB per user`,
      target: '≤ 1.5 KB',
      pass: bytes <= 1.5 * 1024,
    };
  });
  return {
    title: 'Memory',
    setup:
      `Heap used (after full GCs) by the users of a fresh model, each with WHO fields (ident, host, IP, realname, ` +
      `account for a third, server) and a real host (behind a cloak for a tenth), and two channel memberships, over ${formatCount(CHANNELS)} channels; ` +
      "membership entries on both sides (the channel's members map and the user's channel set) are included.",
    figures,
  };
}

runBench('Memory', main);
