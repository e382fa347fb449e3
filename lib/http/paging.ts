/**
 * DRF-style list pagination (`LimitOffsetPagination` with `SearchFilter` and
 * `OrderingFilter`): `?limit=`, `?offset=`, `?search=`, `?ordering=`.
 */
import { firstInOrder } from '../first-in-order.js';
import { invalidParameter } from './errors.js';
import type { ApiRequest } from './types.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface PaginateOptions<T, R = T> {
  /** The item fields `?ordering=` may name; each may be prefixed with `-` for descending order. */
  orderingFields: string[];
  /**
   * The value of an ordering field of an item (default: the item's own property of that name). With
   * `present`, a list can be filtered and ordered on the model's objects and only its page mapped.
   */
  orderingValue?: (item: T, field: string) => unknown;
  /** The page's items as answered (default: the items themselves). Only the page is mapped. */
  present?: (item: T) => R;
  /**
   * Orders items the ordering field ties, ascending whatever the direction (default: their order in
   * `items`). Cheaper than sorting the input first: one sort instead of two.
   */
  tieBreak?: (item: T) => string;
  /** The ordering when the request gives none, e.g. `name` or `-users`. */
  defaultOrdering: string;
  /** The text `?search=` looks in; without it the list refuses `?search=`. */
  searchField?: (item: T) => string | string[];
  /**
   * Folds the search and the text it looks in before they are compared (default: `toLowerCase`).
   * Lists of IRC names give the network's CASEMAPPING here, so `[a]` finds `{a}` under rfc1459.
   */
  searchFold?: (text: string) => string;
}

const lowerCase = (text: string): string => text.toLowerCase();

/**
 * The items of a list: an array, or a collection that knows its size and can be walked (a model slice's
 * map), which is then only copied when the list is searched or sorted whole. A copy of 50,000 users is a
 * large object (400 KB) that goes straight to the old generation, once per query.
 */
export type ListItems<T> = readonly T[] | { readonly size: number; [Symbol.iterator](): Iterator<T> };

/** The list envelope every list route answers. */
export interface Page<T> {
  count: number;
  /** Path and query of the next page, or null on the last page. */
  next: string | null;
  /** Path and query of the previous page, or null on the first page. */
  previous: string | null;
  results: T[];
}

function integerParameter(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const text = query.get(name);
  if (text === null || text === '') return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    // Past the largest exact integer, the bound is said: "at least 0" alone would not explain the refusal.
    const range =
      max === Number.MAX_SAFE_INTEGER && !(value > max)
        ? `an integer of at least ${min}`
        : `an integer from ${min} to ${max}`;
    throw invalidParameter(name, `must be ${range}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * What an item is ordered by, computed once per item rather than once per comparison: numbers
 * numerically, then strings case-insensitively by code unit and then exactly, then booleans; null and
 * missing values last.
 */
interface SortKey<T> {
  item: T;
  tie: string;
  missing: boolean;
  /** 0 number, 1 string, 2 boolean, 3 anything else. */
  rank: number;
  number: number;
  folded: string;
  text: string;
}

function sortKey<T>(item: T, value: unknown, tie: string): SortKey<T> {
  const missing = value === null || value === undefined;
  if (typeof value === 'number') return { item, tie, missing, rank: 0, number: value, folded: '', text: '' };
  // Code-unit comparison, so the order is the same under every locale.
  if (typeof value === 'string') {
    return { item, tie, missing, rank: 1, number: 0, folded: value.toLowerCase(), text: value };
  }
  if (typeof value === 'boolean') return { item, tie, missing, rank: 2, number: Number(value), folded: '', text: '' };
  return { item, tie, missing, rank: 3, number: 0, folded: '', text: '' };
}

/** Ascending order of two keys with values. */
function compareKeys<T>(left: SortKey<T>, right: SortKey<T>): number {
  if (left.rank !== right.rank) return left.rank - right.rank;
  if (left.number !== right.number) return left.number - right.number;
  if (left.folded !== right.folded) return left.folded < right.folded ? -1 : 1;
  return left.text < right.text ? -1 : left.text > right.text ? 1 : 0;
}

function* mapped<T, R>(items: Iterable<T>, map: (item: T) => R): Generator<R> {
  for (const item of items) yield map(item);
}

function fieldOf(item: unknown, field: string): unknown {
  return typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
}

function parseOrdering(
  ordering: string,
  fields: readonly string[],
): { field: string; descending: boolean } | undefined {
  const descending = ordering.startsWith('-');
  const field = descending ? ordering.slice(1) : ordering;
  return fields.includes(field) ? { field, descending } : undefined;
}

/** The path (canonical, with its trailing slash) and the query with `limit` and `offset` replaced. */
function pageLink(request: ApiRequest, limit: number, offset: number | undefined): string {
  const query = new URLSearchParams(request.query);
  query.set('limit', String(limit));
  if (offset === undefined) query.delete('offset');
  else query.set('offset', String(offset));
  // Sorted like DRF's links, so one page always has one URL (and one cache entry).
  query.sort();
  const path = request.path.endsWith('/') ? request.path : `${request.path}/`;
  return `${path}?${query.toString()}`;
}

/**
 * Filter, order and slice a list as the request's query asks. Bad values throw
 * 400 invalid_parameter naming the parameter and what it accepts. Ties keep the
 * input order; null and missing values sort last in both directions.
 */
export function paginate<T, R = T>(request: ApiRequest, items: ListItems<T>, options: PaginateOptions<T, R>): Page<R> {
  const { query } = request;
  const limit = integerParameter(query, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT);
  const offset = integerParameter(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);

  const defaultOrdering = parseOrdering(options.defaultOrdering, options.orderingFields);
  if (!defaultOrdering) {
    throw new Error(
      `paginate: defaultOrdering "${options.defaultOrdering}" is not one of the orderingFields (${options.orderingFields.join(', ')})`,
    );
  }
  const orderingText = query.get('ordering') ?? '';
  const ordering = orderingText === '' ? defaultOrdering : parseOrdering(orderingText, options.orderingFields);
  if (!ordering) {
    const allowed = [...options.orderingFields, ...options.orderingFields.map((field) => `-${field}`)];
    throw invalidParameter('ordering', `must be one of ${allowed.join(', ')}; got ${JSON.stringify(orderingText)}`);
  }

  let selected: ListItems<T> = items;
  const search = query.get('search') ?? '';
  if (search !== '') {
    const { searchField } = options;
    if (!searchField) throw invalidParameter('search', 'this list cannot be searched');
    const fold = options.searchFold ?? lowerCase;
    const needle = fold(search);
    const found: T[] = [];
    for (const item of items) {
      const haystack = searchField(item);
      if ((Array.isArray(haystack) ? haystack : [haystack]).some((text) => fold(text).includes(needle))) {
        found.push(item);
      }
    }
    selected = found;
  }

  const direction = ordering.descending ? -1 : 1;
  const valueOf = options.orderingValue ?? fieldOf;
  const tieBreak = options.tieBreak;
  const keyOf = (item: T): SortKey<T> => sortKey(item, valueOf(item, ordering.field), tieBreak ? tieBreak(item) : '');
  const order = (left: SortKey<T>, right: SortKey<T>): number => {
    if (left.missing !== right.missing) return Number(left.missing) - Number(right.missing);
    const byValue = left.missing ? 0 : direction * compareKeys(left, right);
    if (byValue !== 0) return byValue;
    return left.tie < right.tie ? -1 : left.tie > right.tie ? 1 : 0;
  };
  const count = 'length' in selected ? selected.length : selected.size;
  // Both are stable: ties keep the input order (after the tie-break, if any). An early page of a long list
  // is picked out without ordering the rest, and the keys of what does not make it are dropped at once
  // (a short-lived key costs the garbage collector nothing; 50,000 kept for a sort outlive the young
  // generation). A later page (whose insertions would cost more) is sorted.
  const wanted = offset + limit;
  const ordered =
    wanted * 8 <= count && wanted <= 2 * MAX_LIMIT
      ? firstInOrder(mapped(selected, keyOf), wanted, order)
      : Array.from(selected, keyOf).sort(order);

  const next = offset + limit < count ? pageLink(request, limit, offset + limit) : null;
  const previous = offset <= 0 ? null : pageLink(request, limit, offset - limit > 0 ? offset - limit : undefined);
  const page = ordered.slice(offset, offset + limit).map((key) => key.item);
  const present = options.present;
  return { count, next, previous, results: present ? page.map((item) => present(item)) : (page as unknown as R[]) };
}
