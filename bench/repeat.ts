/**
 * One benchmark run several times, as one result: each figure with a target shows the median run's value and the
 * worst run's (never the best), and is met only if every run met it; a figure without one shows each run's
 * value where they differ.
 */
import type { BenchResult, Figure } from './common.js';

/** Which way a figure's target points: a smaller number is better (`≤`), a larger one (`≥`), or no order. */
function direction(target: string | undefined): 'lower' | 'higher' | null {
  if (!target) return null;
  if (/[≥>]/.test(target)) return 'higher';
  if (/[≤<]/.test(target)) return 'lower';
  return null;
}

function number(text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = Number(text.replace(/,/g, ''));
  return Number.isFinite(value) ? value : null;
}

/**
 * The number a figure's target judges: its own `measure`; else the p99 where the target names it; else the second of
 * "a / b" (a p50 / p99, or the memory after the sync / after the churn); else the first number of the value.
 */
export function measureOf(figure: Figure): number | null {
  if (figure.measure !== undefined) return figure.measure;
  const numberPattern = '(-?[\\d,]*\\.?\\d+)';
  if (figure.target?.startsWith('p99')) {
    const p99 = new RegExp(`p99 ${numberPattern}`).exec(figure.value);
    if (p99) return number(p99[1]);
  }
  const pair = new RegExp(`^[^(;]*? / ${numberPattern}`).exec(figure.value);
  if (pair) return number(pair[1]);
  return number(new RegExp(numberPattern).exec(figure.value)?.[1]);
}

/** The figure of that name in each run, in run order (undefined where a run lacks it). */
function byRun(results: readonly BenchResult[], name: string): (Figure | undefined)[] {
  return results.map((result) => result.figures.find((figure) => figure.name === name));
}

function mergeFigure(name: string, figures: (Figure | undefined)[]): Figure {
  const present = figures.filter((figure): figure is Figure => figure !== undefined);
  const first = present[0]!;
  const pass = present.some((figure) => figure.pass === false)
    ? false
    : present.length === figures.length && present.every((figure) => figure.pass === true)
      ? true
      : first.pass === undefined
        ? undefined
        : false;
  const order = direction(first.target);
  const measured = present.map((figure) => ({ figure, measure: measureOf(figure) }));
  const merged: Figure = { name, value: '', ...(first.target === undefined ? {} : { target: first.target }) };
  if (pass !== undefined) merged.pass = pass;
  const missing = figures.length - present.length;
  const missingText = missing > 0 ? `; not measured in ${missing} of ${figures.length} runs` : '';
  if (order && measured.every((entry) => entry.measure !== null) && present.length > 1) {
    // Worst first: the median is the middle one, the worst the first.
    const sorted = [...measured].sort((a, b) =>
      order === 'lower' ? b.measure! - a.measure! : a.measure! - b.measure!,
    );
    const median = sorted[Math.floor(sorted.length / 2)]!.figure.value;
    const worst = sorted[0]!.figure.value;
    merged.value =
      (median === worst ? `${median} (median and worst ` : `median ${median}; worst ${worst} (`) +
      `of ${present.length} runs: ${measured.map((entry) => String(entry.measure)).join(', ')})${missingText}`;
    return merged;
  }
  const values = present.map((figure) => figure.value);
  merged.value = values.every((value) => value === values[0])
    ? `${values[0]}${present.length > 1 ? ` (each of ${present.length} runs)` : ''}${missingText}`
    : values.map((value, index) => `run ${index + 1}: ${value}`).join('; ') + missingText;
  return merged;
}

/** `results`, the same benchmark's runs, as one result (a single run unchanged). */
export function mergeRuns(results: readonly BenchResult[]): BenchResult {
  if (results.length === 1) return results[0]!;
  const names: string[] = [];
  for (const result of results) {
    for (const figure of result.figures) if (!names.includes(figure.name)) names.push(figure.name);
  }
  const notes = [...new Set(results.flatMap((result) => result.notes ?? []))];
  return {
    title: results[0]!.title,
    setup:
      `${results.find((result) => result.setup)?.setup ?? ''} Run ${results.length} times: a figure with a target ` +
      'shows the median run and the worst run (the runs’ numbers in brackets), and is met only if every run met it.',
    figures: names.map((name) => mergeFigure(name, byRun(results, name))),
    ...(notes.length > 0 ? { notes } : {}),
  };
}
