// Sorting a short list (one the server reads whole) by a column named in the URL. Pure.
export type SortDir = 'asc' | 'desc';
export type Sort<K extends string> = { key: K; dir: SortDir };
type Value = string | number | Date | null | undefined;

/** `?sort=key` or `?sort=-key` (descending); anything else is the fallback. */
export function readSort<K extends string, F extends Sort<K> | null>(
  param: string | undefined,
  keys: readonly K[],
  fallback: F,
): Sort<K> | F {
  if (!param) return fallback;
  const dir: SortDir = param.startsWith('-') ? 'desc' : 'asc';
  const key = (dir === 'desc' ? param.slice(1) : param) as K;
  return keys.includes(key) ? { key, dir } : fallback;
}

export const sortParam = <K extends string>(s: Sort<K>) => (s.dir === 'desc' ? `-${s.key}` : s.key);

const comparable = (v: Value) => (v instanceof Date ? v.getTime() : typeof v === 'string' ? v.toLowerCase() : v);

/**
 * A sorted copy; empty values (never used, no date) last whichever the direction; ties keep their
 * order. No sort: the rows as they came (the server's own order).
 */
export function sortRows<T, K extends string>(
  rows: readonly T[],
  sort: Sort<K> | null,
  by: Record<K, (row: T) => Value>,
): T[] {
  if (!sort) return [...rows];
  const get = by[sort.key];
  const sign = sort.dir === 'asc' ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i, v: comparable(get(row)) }))
    .sort((a, b) => {
      if (a.v == null || b.v == null) return a.v == null && b.v == null ? a.i - b.i : a.v == null ? 1 : -1;
      return (a.v < b.v ? -1 : a.v > b.v ? 1 : 0) * sign || a.i - b.i;
    })
    .map((x) => x.row);
}
