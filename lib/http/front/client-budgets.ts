/**
 * How many public answers the front may give a client from its store before the bot must see one of
 * the client's requests again: read off the `RateLimit-*` headers of the last reusable answer the bot
 * gave that client. The bot's rate limit stays the one truth: the front only spends what the bot said
 * is left, and the next request that reaches the bot carries the count of what was spent
 * (`X-Front-Served`), which the bot charges first; until the bot's answer says it was counted
 * (`X-Front-Counted`), the count is reported again.
 */
import type { IncomingHttpHeaders } from 'node:http';

interface Budget {
  /** No rate limit headers came: no rate limit applies to the client's public requests. */
  unlimited: boolean;
  limit: string;
  remaining: number;
  reset: string;
  /** Answers given from the store since the client's last request reached the bot. */
  served: number;
  usedAt: number;
}

/** A budget nobody used for this long is forgotten (the client's next request goes to the bot). */
const IDLE_MS = 10 * 60 * 1000;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export class ClientBudgets {
  private readonly budgets = new Map<string, Budget>();

  get size(): number {
    return this.budgets.size;
  }

  /**
   * Spend one answer of `ip`'s budget: the rate limit headers that answer carries (none when no limit
   * applies), or undefined when the front may not answer: nothing is known or nothing is left.
   */
  spend(ip: string, now: number): readonly string[] | undefined {
    const budget = this.budgets.get(ip);
    if (!budget) return undefined;
    budget.usedAt = now;
    if (budget.unlimited) return [];
    if (budget.remaining < 1) return undefined;
    budget.remaining -= 1;
    budget.served += 1;
    return [
      'RateLimit-Limit',
      budget.limit,
      'RateLimit-Remaining',
      String(budget.remaining),
      'RateLimit-Reset',
      budget.reset,
    ];
  }

  /**
   * The answers `ip` was given from the store and not yet reported, to report with a request to the bot;
   * the count starts again. If the bot's answer says no rate limit counted them, {@link putBack} them.
   */
  takeServed(ip: string): number {
    const budget = this.budgets.get(ip);
    if (!budget) return 0;
    const { served } = budget;
    budget.served = 0;
    return served;
  }

  /** Answers reported to the bot that nothing counted (the request did not reach its rate limit): report them again. */
  putBack(ip: string, served: number): void {
    const budget = this.budgets.get(ip);
    if (budget && served > 0) budget.served += served;
  }

  /** A reusable answer the bot gave `ip`: its rate limit headers say what is left to spend. */
  learn(ip: string, headers: IncomingHttpHeaders, now: number): void {
    const limit = header(headers, 'ratelimit-limit');
    const remaining = Number(header(headers, 'ratelimit-remaining'));
    const reset = header(headers, 'ratelimit-reset') ?? '0';
    // Answers served while this one was on its way are still to be reported.
    const served = this.budgets.get(ip)?.served ?? 0;
    if (limit === undefined) {
      this.budgets.set(ip, { unlimited: true, limit: '', remaining: 0, reset: '', served, usedAt: now });
      return;
    }
    const usable = Number.isInteger(remaining) && remaining >= 0 ? remaining : 0;
    this.budgets.set(ip, { unlimited: false, limit, remaining: usable, reset, served, usedAt: now });
  }

  /** Any other answer to `ip` (an error, a token route): what it cost is not known, so nothing is spent until the bot says. */
  forget(ip: string): void {
    const budget = this.budgets.get(ip);
    // What was served and not yet reported is kept: the next request to the bot carries it.
    if (budget) {
      budget.unlimited = false;
      budget.remaining = 0;
    }
  }

  /** Forget the budgets of clients gone quiet. */
  sweep(now: number): void {
    for (const [ip, budget] of this.budgets) if (now - budget.usedAt > IDLE_MS) this.budgets.delete(ip);
  }
}
