/**
 * The plugin test harness (`irc-network-data/testing`): the real host with your plugins on a fake IRC
 * connection, a fake server at its other end that answers as a small network would, and a manual clock for the
 * host's timers, so that a plugin's tests read as a conversation. It works with any test runner: hand it tap's
 * or node:test's `t`, or anything with `teardown(fn)` or `after(fn)`. It needs neither an IRC server nor a
 * socket, and loads no IRC client library.
 *
 * ```ts
 * import test from 'node:test';
 * import assert from 'node:assert/strict';
 * import { startHarness } from 'irc-network-data/testing';
 * import plugin from './my-plugin.js';
 *
 * test('HELLO answers', async (t) => {
 *   const bot = await startHarness(t, { registry: [plugin], plugins: { hello: {} } });
 *   assert.deepEqual(await bot.say('alice', 'alice', 'HELLO'), ['Hello, alice!']);
 * });
 * ```
 * @module irc-network-data/testing
 */
export { startHarness, type Harness, type HarnessOptions, type HarnessTest, type DurableWrites } from './harness.js';
export { FakeServer, type Registration, type Reply } from './fake-server.js';
export {
  fakeNetwork,
  type FakeNetwork,
  type FakeServerEntry,
  type FakeUser,
  type FakeChannel,
  type Asker,
} from './fake-network.js';
export { ManualClock } from './manual-clock.js';
export { FakeTransport, DEFAULT_ISUPPORT, type ConnectionEvent } from './fake-irc.js';
