/** The IRC client library a test runs the bot on. */
import type { IrcClientName } from '../lib/config.js';
import { IRC_CLIENTS } from '../lib/config-schema.js';

/**
 * The IRC client library the tests that run the bot stand for (integration tests, and the plugin harness):
 * TEST_IRC_CLIENT (scripts/run-tests.mjs runs them once per library), else irc-framework.
 */
export function testIrcClient(): IrcClientName {
  const wanted = process.env.TEST_IRC_CLIENT;
  if (!wanted) return 'irc-framework';
  const known = IRC_CLIENTS.find((name) => name === wanted);
  if (!known) throw new Error(`TEST_IRC_CLIENT="${wanted}" is not one of ${IRC_CLIENTS.join(', ')}`);
  return known;
}
