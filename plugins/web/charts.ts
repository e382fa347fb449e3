/**
 * Charts as inline SVG, drawn on the server: they are in the HTML the page is sent with, so they show
 * without JavaScript. Each one is a figure whose numbers are also a table (its text alternative). Each
 * point or bar has an SVG `<title>` with its numbers, on a column as tall as the chart under it (what is drawn
 * over it lets the pointer through) so that the pointer finds it: the browser's own tooltip, which the page's
 * script replaces with one of its own.
 */
import { escapeHtml } from '../../lib/sdk.js';
import { count, table, type TableOptions } from './layout.js';

const WIDTH = 640;
const HEIGHT = 200;
const LEFT = 44;
const BOTTOM = 22;
const TOP = 8;

/** A round upper bound for an axis holding `max`. */
function niceMax(max: number): number {
  // Counts: an axis of at least 0, 1, 2, so that no two of its labels read alike.
  if (max <= 2) return 2;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= max) return step * magnitude;
  return 10 * magnitude;
}

function gridLines(max: number): string {
  const plotHeight = HEIGHT - TOP - BOTTOM;
  return [0, 0.5, 1]
    .map((fraction) => {
      const y = TOP + plotHeight * (1 - fraction);
      return (
        `<line class="grid" x1="${LEFT}" x2="${WIDTH}" y1="${y}" y2="${y}"/>` +
        `<text x="${LEFT - 4}" y="${y + 4}" text-anchor="end">${count(Math.round(max * fraction))}</text>`
      );
    })
    .join('');
}

export interface Series {
  label: string;
  values: readonly (number | null)[];
}

/**
 * Lines over time: `labels` along the x axis (a few of them printed), one polyline per series (a gap where
 * a value is null), then the same numbers as a table in a `<details>`.
 */
export function lineChart(title: string, labels: readonly string[], series: readonly Series[]): string {
  if (!series.some((one) => one.values.some((value) => value !== null))) {
    return `<p class="muted">${escapeHtml(title)}: no points yet. The history takes one every few minutes once the bot has synced.</p>`;
  }
  const max = niceMax(Math.max(0, ...series.flatMap((one) => one.values.filter((value) => value !== null))));
  const plotWidth = WIDTH - LEFT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const x = (index: number): number =>
    LEFT + (labels.length <= 1 ? plotWidth / 2 : (plotWidth * index) / (labels.length - 1));
  const y = (value: number): number => TOP + plotHeight * (1 - value / max);
  const paths = series
    .map((one, seriesIndex) => {
      let d = '';
      let pen = 'M';
      one.values.forEach((value, index) => {
        if (value === null) {
          pen = 'M';
          return;
        }
        d += `${pen}${x(index).toFixed(1)},${y(value).toFixed(1)}`;
        pen = 'L';
      });
      // A dot on every point, so that a point with no neighbour (the first of a history) shows too.
      const dots = one.values
        .map((value, index) =>
          value === null
            ? ''
            : `<circle class="d${seriesIndex % 2}" cx="${x(index).toFixed(1)}" cy="${y(value).toFixed(1)}" r="2.5"/>`,
        )
        .join('');
      return d ? `<path class="s${seriesIndex % 2}" d="${d}"/>${dots}` : '';
    })
    .join('');
  const step = Math.max(1, Math.ceil(labels.length / 6));
  const ticks = labels
    .map((label, index) =>
      index % step === 0 || index === labels.length - 1
        ? `<text x="${x(index)}" y="${HEIGHT - 6}" text-anchor="middle">${escapeHtml(label)}</text>`
        : '',
    )
    .join('');
  // A column per point, from halfway to the one before to halfway to the one after, titled with every series.
  const half = labels.length <= 1 ? plotWidth / 2 : plotWidth / (labels.length - 1) / 2;
  const hits = labels
    .map((label, index) => {
      const left = Math.max(LEFT, x(index) - half);
      const right = Math.min(WIDTH, x(index) + half);
      const tip = [label, ...series.map((one) => `${one.label} ${count(one.values[index])}`)].join(' · ');
      return (
        `<rect class="hit" x="${left.toFixed(1)}" y="${TOP}" width="${(right - left).toFixed(1)}" ` +
        `height="${plotHeight}"><title>${escapeHtml(tip)}</title></rect>`
      );
    })
    .join('');
  const legend = series.map(
    (one, index) => `<span class="key k${index % 2}" aria-hidden="true">━</span> ${escapeHtml(one.label)}`,
  );
  const rows = labels.map((label, index) => [escapeHtml(label), ...series.map((one) => count(one.values[index]))]);
  return (
    `<figure><svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">` +
    `${gridLines(max)}${hits}${paths}${ticks}</svg>` +
    `<figcaption>${escapeHtml(title)} ${legend.join(' ')}</figcaption></figure>` +
    `<details><summary>${escapeHtml(title)}: the numbers</summary>` +
    table(title, ['Time', ...series.map((one) => `n:${one.label}`)], rows, {
      sorted: { column: 0, direction: 'ascending' },
    }) +
    `</details>`
  );
}

/** Bars, one per label (24 hours of a day, servers), then the numbers as a table in a `<details>`. */
export function barChart(
  title: string,
  labels: readonly string[],
  values: readonly number[],
  columns: readonly [label: string, value: string] = ['Hour', 'Lines'],
  tableOptions: TableOptions = { sorted: { column: 0, direction: 'ascending' } },
): string {
  const max = niceMax(Math.max(0, ...values));
  const plotWidth = WIDTH - LEFT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, values.length);
  const bars = values
    .map((value, index) => {
      const height = (plotHeight * value) / max;
      return `<rect x="${(LEFT + index * slot + slot * 0.15).toFixed(1)}" y="${(TOP + plotHeight - height).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${height.toFixed(1)}"/>`;
    })
    .join('');
  // Under each bar, a column as tall as the chart with its numbers: a bar of 0 has a tooltip too.
  const hits = labels
    .map((label, index) => {
      const tip = `${columns[0]} ${label} · ${columns[1]} ${count(values[index])}`;
      return (
        `<rect class="hit" x="${(LEFT + index * slot).toFixed(1)}" y="${TOP}" width="${slot.toFixed(1)}" ` +
        `height="${plotHeight}"><title>${escapeHtml(tip)}</title></rect>`
      );
    })
    .join('');
  const step = Math.max(1, Math.ceil(labels.length / 8));
  const ticks = labels
    .map((label, index) =>
      index % step === 0
        ? `<text x="${(LEFT + index * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle">${escapeHtml(label)}</text>`
        : '',
    )
    .join('');
  const rows = labels.map((label, index) => [escapeHtml(label), count(values[index])]);
  return (
    `<figure><svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">` +
    `${gridLines(max)}${hits}${bars}${ticks}</svg><figcaption>${escapeHtml(title)}</figcaption></figure>` +
    `<details><summary>${escapeHtml(title)}: the numbers</summary>${table(title, [columns[0], `n:${columns[1]}`], rows, tableOptions)}</details>`
  );
}

/** One bar of a {@link rankChart}. */
export interface Ranked {
  label: string;
  value: number;
  /** Its share, in percent, shown after the value. */
  percent?: number;
  /** A bar for "the rest" (other, unknown members): drawn in the muted colour. */
  rest?: boolean;
}

const SMALL_WIDTH = 320;
const ROW = 22;
const LABEL_WIDTH = 112;
const VALUE_WIDTH = 44;

/** A label cut to what fits beside a small chart's bars; the whole of it is in the bar's title and the table. */
function fitted(label: string): string {
  return label.length > 17 ? `${label.slice(0, 16)}…` : label;
}

/**
 * A small chart of horizontal bars, one per entry, most first as given (a distribution: members by client or
 * by country), each labelled and with its value; then the numbers as a table in a `<details>`.
 */
export function rankChart(
  title: string,
  entries: readonly Ranked[],
  columns: readonly [label: string, value: string],
): string {
  if (entries.length === 0) return `<p class="muted">${escapeHtml(title)}: none counted.</p>`;
  const max = Math.max(1, ...entries.map((entry) => entry.value));
  const plotWidth = SMALL_WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const height = entries.length * ROW;
  const shown = (entry: Ranked): string =>
    `${count(entry.value)}${entry.percent === undefined ? '' : ` (${count(entry.percent)} %)`}`;
  const rows = entries
    .map((entry, index) => {
      const y = index * ROW;
      const width = Math.max(entry.value > 0 ? 1 : 0, (plotWidth * entry.value) / max);
      return (
        `<rect class="hit" x="0" y="${y}" width="${SMALL_WIDTH}" height="${ROW}">` +
        `<title>${escapeHtml(`${entry.label} · ${columns[1]} ${shown(entry)}`)}</title></rect>` +
        `<text class="label" x="0" y="${y + 15}">${escapeHtml(fitted(entry.label))}</text>` +
        `<rect${entry.rest ? ' class="rest"' : ''} x="${LABEL_WIDTH}" y="${y + 4}" width="${width.toFixed(1)}" height="${ROW - 8}"/>` +
        `<text x="${(LABEL_WIDTH + width + 4).toFixed(1)}" y="${y + 15}">${count(entry.value)}</text>`
      );
    })
    .join('');
  const hasPercent = entries.some((entry) => entry.percent !== undefined);
  const head = [columns[0], `n:${columns[1]}`, ...(hasPercent ? ['n:Share'] : [])];
  const tableRows = entries.map((entry) => [
    escapeHtml(entry.label),
    count(entry.value),
    ...(hasPercent ? [entry.percent === undefined ? '–' : `${count(entry.percent)} %`] : []),
  ]);
  return (
    `<figure><svg class="chart small" viewBox="0 0 ${SMALL_WIDTH} ${height}" role="img" aria-label="${escapeHtml(title)}">` +
    `${rows}</svg><figcaption>${escapeHtml(title)}</figcaption></figure>` +
    `<details><summary>${escapeHtml(title)}: the numbers</summary>${table(title, head, tableRows)}</details>`
  );
}
