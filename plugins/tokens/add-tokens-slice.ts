/**
 * The tokens slice as the plugin adds it to the model: each change announced at once (the store then
 * writes the durable file), but a token's uses (its last-used time and counts per endpoint) at most every
 * {@link USE_SAVE_MS}, and at stop.
 */
import type { PluginContext } from '../../lib/sdk.js';
import { TokensSlice } from './model.js';

/**
 * Uses of a token reach the store at most this often, and at stop: announcing each request would
 * rewrite the whole store file every second for as long as API traffic lasts.
 */
export const USE_SAVE_MS = 60_000;

/** The slice, added to the model; `stop` announces the uses not announced yet. */
export function addTokensSlice({ model, timers }: Pick<PluginContext, 'model' | 'timers'>): {
  tokens: TokensSlice;
  stop: () => void;
} {
  let usedSinceSaved = false;
  // The HTTP server still answers for a moment after the plugins stop (the host closes it last):
  // from then on each use is announced at once, so the store's final flush has it.
  let stopped = false;
  const announceUses = (): void => {
    if (!usedSinceSaved) return;
    usedSinceSaved = false;
    model.changed({ slice: 'tokens', kind: 'use' });
  };
  const tokens = new TokensSlice({
    onChange: (kind, tokenId) => {
      if (kind === 'use' && !stopped) usedSinceSaved = true;
      else model.changed({ slice: 'tokens', kind, name: `#${tokenId}` });
    },
    fold: (name) => model.fold(name),
  });
  timers.every(USE_SAVE_MS, announceUses);
  // The host hands the slice to the store once the plugin's start returns, which restores stored tokens
  // before the HTTP server listens.
  model.addSlice(tokens);
  return {
    tokens,
    stop: () => {
      stopped = true;
      announceUses();
    },
  };
}
