/**
 * The tokens plugin's retention policy: revoked tokens and old audit entries are appended to the archive, then
 * forgotten, at start and every hour; the slice stays bounded, and ids are never handed out again.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import tokensPlugin from '../../../plugins/tokens/index.js';
import type { TokensSlice } from '../../../plugins/tokens/model.js';
import { RETENTION_CHECK_MS } from '../../../plugins/tokens/retention.js';
import type { PluginDefinition } from '../../../lib/plugin.js';
import { startHarness, type HarnessOptions } from '../../../testing/harness.js';

const DAY = 24 * 60 * 60 * 1000;
const admin = { account: 'boss', via: 'irc' } as const;

function withTokens(tokens: Record<string, unknown> = {}, more: Partial<HarnessOptions> = {}): HarnessOptions {
  return { registry: [tokensPlugin] as PluginDefinition<never>[], plugins: { tokens }, admins: ['boss'], ...more };
}

t.test('revoked tokens go to the archive after revoked_days; live ones stay', async (t) => {
  const bot = await startHarness(t, withTokens({ retention: { revoked_days: 7 } }));
  const tokens = bot.slice<TokensSlice>('tokens');
  const kept = tokens.create('alice', 'kept', admin);
  const gone = tokens.create('alice', 'gone', admin);
  tokens.revoke(gone.token, admin);
  await bot.clock.advance(6 * DAY);
  t.ok(tokens.get(gone.token.id), 'six days after its revocation it is still kept');
  await bot.clock.advance(DAY + RETENTION_CHECK_MS);
  await bot.until(() => tokens.get(gone.token.id) === undefined, 'the token to be forgotten');
  t.equal(tokens.get(gone.token.id), undefined, 'a week after, it is forgotten');
  t.ok(tokens.get(kept.token.id), 'the live token stays, however old');
  const archived = bot.host.store.archivedRecords('tokens') as { archived_at: string; token?: { id: number } }[];
  t.same(
    archived.filter((record) => record.token).map((record) => record.token!.id),
    [gone.token.id],
    'archived first',
  );
  t.match(archived[0], { archived_at: /^\d{4}-\d\d-\d\dT/, token: { label: 'gone', revoked_at: /T/ } });
  t.notOk(JSON.stringify(archived).includes(gone.secret), 'the archive holds no secret');
  t.ok(
    bot.logs.some((line) => /archived 1 revoked token\(s\) and 0 audit entries to .*tokens\.jsonl/.test(line)),
    'and the log says where',
  );
  const next = tokens.create('alice', 'next', admin);
  t.equal(next.token.id, gone.token.id + 1, 'the id is not handed out again');
});

t.test('audit entries go by age and beyond the count; the archive file is on disk, and a restart agrees', async (t) => {
  const policy = { audit_days: 30, audit_max_entries: 100 };
  const first = await startHarness(t, withTokens({ retention: policy }, { store: 'files' }));
  const tokens = first.slice<TokensSlice>('tokens');
  const { token } = tokens.create('alice', 'busy', admin);
  for (let index = 0; index < 150; index++) tokens.grant(token, [`irc.e${index}`], admin);
  t.equal(tokens.auditCount, 151);
  await first.clock.advance(RETENTION_CHECK_MS);
  // The archive is written to disk, then the slice forgets: the log line comes last.
  await first.until(
    () => first.logs.some((line) => /archived 0 revoked token\(s\) and 51 audit/.test(line)),
    'archived',
  );
  t.equal(tokens.auditCount, 100, 'the oldest beyond 100 went');
  t.same(tokens.audit()[0]!.details, ['irc.e50']);
  await first.clock.advance(31 * DAY);
  await first.until(
    () => first.logs.some((line) => /archived 0 revoked token\(s\) and 100 audit/.test(line)),
    'archived',
  );
  t.equal(tokens.auditCount, 0, 'and all of them once older than 30 days');
  const archive = path.join(first.storeDir!, 'archive', 'tokens.jsonl');
  t.ok(existsSync(archive), 'the archive is beside the store');
  const lines = readFileSync(archive, 'utf8').trim().split('\n');
  t.equal(lines.length, 151, 'one line per entry, each once');
  t.match(JSON.parse(lines[0]!), { audit: { token_id: token.id, action: 'create', actor: { account: 'boss' } } });
  tokens.grant(token, ['irc.after'], admin);
  await first.host.store.persisted();
  await first.stop();

  const second = await startHarness(t, withTokens({ retention: policy }, { storeDir: first.storeDir! }));
  const again = second.slice<TokensSlice>('tokens');
  t.same(
    again.audit().map((entry) => entry.details),
    [['irc.after']],
    'a restart has what was kept, not what was archived',
  );
  t.ok(again.get(token.id)!.grants.includes('irc.e149'));
});
