/**
 * The bot for the website's browser test: test/support/bot.ts's, named from here so that the test runner
 * (scripts/run-tests.mjs) runs that file once rather than once per IRC client library — nothing the
 * website shows depends on the library.
 */
export { eventually, startBot as startWebsiteBot, type TestBot } from './bot.js';
