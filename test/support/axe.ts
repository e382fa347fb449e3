/**
 * axe-core in a page of the real browser: the violations of impact serious or critical, one line each; with
 * `rules`, the violations of those rules whatever their impact (e.g. `color-contrast` in dark mode).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function axeViolations(page: Page, rules?: string[]): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async (only) => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: { id: string; impact: string | null; nodes: unknown[] }[] }>;
        };
      }
    ).axe;
    const options = only ? { runOnly: { type: 'rule', values: only } } : {};
    return (await axe.run((globalThis as unknown as { document: unknown }).document, options)).violations.map(
      (violation) => ({
        id: violation.id,
        impact: violation.impact,
        nodes: violation.nodes.length,
      }),
    );
  }, rules ?? null);
  return result
    .filter((violation) => rules || violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}, ${violation.nodes} elements)`);
}
