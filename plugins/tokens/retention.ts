/**
 * The tokens slice's retention policy (`plugins.tokens.retention`): revoked tokens some days after their
 * revocation, and the oldest audit entries (by age, and beyond a count), are appended to the plugin's archive
 * file and then forgotten, so that the slice — and what the store writes of it — stays bounded. Archived
 * first, forgotten second: a crash in between repeats a line in the archive, never loses one.
 */
import { errorMessage, type PluginContext } from '../../lib/sdk.js';
import { storedAudit, storedToken, type RetentionPolicy, type TokensSlice } from './model.js';

/** How often the policy is applied (and once at start). */
export const RETENTION_CHECK_MS = 60 * 60 * 1000;

/** Apply `policy` to `tokens` now; resolves with what was archived. One run at a time. */
export function retention(
  { store, logger }: Pick<PluginContext, 'store' | 'logger'>,
  tokens: TokensSlice,
  policy: RetentionPolicy,
  now: () => number = Date.now,
): () => Promise<{ tokens: number; audit: number }> {
  let running: Promise<{ tokens: number; audit: number }> | undefined;
  const run = async (): Promise<{ tokens: number; audit: number }> => {
    const expired = tokens.expired(policy, now());
    if (expired.tokens.length === 0 && expired.audit.length === 0) return { tokens: 0, audit: 0 };
    const at = new Date(now()).toISOString();
    let file: string;
    try {
      file = await store.archive([
        ...expired.tokens.map((token) => ({ archived_at: at, token: storedToken(token) })),
        ...expired.audit.map((entry) => ({ archived_at: at, audit: storedAudit(entry) })),
      ]);
    } catch (error) {
      logger.error(
        `could not archive old tokens and audit entries; they are kept until the next try: ${errorMessage(error)}`,
      );
      return { tokens: 0, audit: 0 };
    }
    tokens.forget(expired);
    try {
      await store.persisted();
    } catch (error) {
      // The store logs its failure too; what was forgotten is saved with the next write that succeeds.
      logger.error(
        `archived old tokens and audit entries to ${file}, but the store could not save that they are gone: ${errorMessage(error)}`,
      );
      return { tokens: expired.tokens.length, audit: expired.audit.length };
    }
    logger.info(
      `archived ${expired.tokens.length} revoked token(s) and ${expired.audit.length} audit entr${expired.audit.length === 1 ? 'y' : 'ies'} to ${file}`,
      { kept_tokens: tokens.all().length, kept_audit: tokens.auditCount },
    );
    return { tokens: expired.tokens.length, audit: expired.audit.length };
  };
  return () => {
    running ??= run()
      .catch((error: unknown) => {
        logger.error(`the retention check of the tokens failed; it runs again within the hour: ${errorMessage(error)}`);
        return { tokens: 0, audit: 0 };
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
