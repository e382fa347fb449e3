/**
 * The V8 flags the bot runs with: the bin's shebang (app/main.ts), `npm start`, the demo and the
 * benchmarks. A small young generation (2 MB semi-spaces instead of 16 MB) and V8's memory-saving heap
 * growth keep a bot on a network of 50,000 users at about 150 MB resident instead of 220 MB, for a CPU
 * cost within the benchmarks' noise (docs/scaling.md).
 */
export const BOT_NODE_FLAGS: readonly string[] = ['--optimize-for-size', '--max-semi-space-size=2'];
