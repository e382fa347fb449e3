/**
 * A token's life as a conversation with the real host (fake IRC, HTTP without a socket): created over
 * IRC, refused until an administrator grants an endpoint, used, revoked.
 */
import t from 'tap';
import { definePlugin, type PluginDefinition } from '../../../lib/plugin.js';
import tokensPlugin from '../../../plugins/tokens/index.js';
import { startHarness } from '../../../testing/harness.js';

/** One token route to grant, standing in for the api plugin. */
const users = definePlugin({
  name: 'users',
  description: 'one token route',
  configSchema: { type: 'object', properties: {} },
  start({ http }) {
    http.route({
      method: 'GET',
      path: '/api/irc/users/',
      name: 'irc.users',
      summary: 'Users',
      tier: 'token',
      handler: () => ({ body: { results: ['alice'] } }),
    });
  },
});

t.test('created over IRC, granted by an admin, used over HTTP, revoked', async (t) => {
  const bot = await startHarness(t, {
    registry: [users, tokensPlugin] as PluginDefinition<never>[],
    plugins: { users: {}, tokens: {} },
    admins: ['boss'],
  });
  const [created] = await bot.say('alice', 'alice', 'TOKEN CREATE laptop');
  const match = /^Token #(\d+) .*created: (ntd_\S+)$/.exec(created ?? '');
  t.ok(match, `a token and its secret: ${created}`);
  const [, id, secret] = match!;
  const asAlice = { Authorization: `Token ${secret}` };

  t.equal((await bot.inject('GET', '/api/irc/users/')).status, 401, 'no token');
  t.match(await bot.inject('GET', '/api/irc/users/', asAlice), { status: 403, body: { error: { code: 'forbidden' } } });
  t.match(await bot.say('alice', 'alice', `TOKEN GRANT ${id} irc.users`), [/admin/i], 'only an admin grants');
  t.match(await bot.say('boss', 'boss', `TOKEN GRANT ${id} irc.users`), [/irc\.users/]);
  t.match(await bot.inject('GET', '/api/irc/users/', asAlice), { status: 200, body: { results: ['alice'] } });

  t.match(await bot.say('alice', 'alice', `TOKEN REVOKE ${id}`), [/revoked/i]);
  t.equal((await bot.inject('GET', '/api/irc/users/', asAlice)).status, 401, 'a revoked token');
  t.notOk(
    bot.logs.some((line) => line.includes(secret!)),
    'the secret is never in the log',
  );
});
