// The one keyset pager of the listings: order by (a time column, id), fetch one row more than the
// page, and the page's last row is where the next one starts. Pure; the Prisma query reads the
// `where`, `orderBy` and `take` it answers.

/** Where a page stopped: the ordering column's value and the row id, the tie-break. */
export type Keyset = { at: Date; id: string };

export type Direction = 'asc' | 'desc';

/** The page size asked for, from 1 to `max`; `fallback` when none was asked. */
export const pageSize = (asked: number | undefined, fallback: number, max: number): number =>
  Math.min(Math.max(asked ?? fallback, 1), max);

type Bound<T> = { gt: T } | { lt: T };

/** The query of a page: rows past `after` in (field, id) order, and one more than `limit`. */
export function keysetQuery<F extends string>(
  field: F,
  direction: Direction,
  after: Keyset | undefined,
  limit: number,
) {
  const past = <T>(value: T): Bound<T> => (direction === 'asc' ? { gt: value } : { lt: value });
  const where = after
    ? {
        OR: [
          { [field]: past(after.at) } as Record<F, Bound<Date>>,
          { [field]: after.at, id: past(after.id) } as Record<F, Date> & { id: Bound<string> },
        ],
      }
    : {};
  const orderBy: [Record<F, Direction>, { id: Direction }] = [
    { [field]: direction } as Record<F, Direction>,
    { id: direction },
  ];
  return { where, orderBy, take: limit + 1 };
}

export type Page<T> = { items: T[]; nextCursor: string | null };

/** The first `limit` of the rows fetched (limit + 1), and the cursor after the last when there were more. */
export function keysetPage<R, T = R>(
  rows: readonly R[],
  limit: number,
  cursorAfter: (last: R) => string,
  view: (row: R) => T = (row) => row as unknown as T,
): Page<T> {
  const kept = rows.slice(0, limit);
  const last = kept.at(-1);
  return { items: kept.map(view), nextCursor: rows.length > limit && last !== undefined ? cursorAfter(last) : null };
}
