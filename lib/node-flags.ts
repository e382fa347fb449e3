/**
 * The V8 flags the bot runs with: the bin's shebang (app/main.ts), `npm start`, the demo and the
 * benchmarks. A small young generation (2 MB semi-spaces instead of 16 MB), and an old generation that may
 * grow 20 % past what the last full collection kept before the next one starts (V8 otherwise picks a factor of
 * up to four, from how fast it collects), keep a bot on a network of 50,000 users at about 150 MB resident instead of 220 MB
 * (docs/scaling.md). `--optimize-for-size`, used before for the same end, starts every full collection in
 * V8's memory-reducing mode: at 100,000 users under churn it collected every few seconds, compacting all pages, and
 * its pauses made most of the event loop's long holds (docs/performance.md).
 */
export const BOT_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--heap-growing-percent=20'];

/**
 * The environment the bot runs with, beside its flags: glibc's malloc keeps at most two arenas (it makes up
 * to eight per core otherwise, one for each thread that allocates at once), which keeps memory freed by
 * Node's threads from staying resident. Without glibc it changes nothing.
 */
export const BOT_NODE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** {@link BOT_NODE_ENV} as `NAME=value` words, for a command line. */
export const BOT_NODE_ENV_WORDS: readonly string[] = Object.entries(BOT_NODE_ENV).map(
  ([name, value]) => `${name}=${value}`,
);
