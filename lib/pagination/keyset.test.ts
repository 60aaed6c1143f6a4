// The one keyset pager: the query it asks for and the page it makes of what came back.
import { describe, expect, it } from 'vitest';
import { keysetPage, keysetQuery, pageSize } from './keyset';

const at = new Date('2026-03-01T12:00:00.000Z');
const id = '0b7e4a1c-3f2d-4c5b-9a8e-1d2c3b4a5f60';

describe('pageSize', () => {
  it('is the default when none is asked, and stays within 1..max', () => {
    expect(pageSize(undefined, 50, 200)).toBe(50);
    expect(pageSize(10, 50, 200)).toBe(10);
    expect(pageSize(0, 50, 200)).toBe(1);
    expect(pageSize(-5, 50, 200)).toBe(1);
    expect(pageSize(1_000, 50, 200)).toBe(200);
  });
});

describe('keysetQuery', () => {
  it('newest first: rows before the cursor, ties broken by a smaller id', () => {
    expect(keysetQuery('occurredAt', 'desc', { at, id }, 50)).toEqual({
      where: { OR: [{ occurredAt: { lt: at } }, { occurredAt: at, id: { lt: id } }] },
      orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
      take: 51,
    });
  });

  it('soonest first: rows after the cursor, ties broken by a larger id', () => {
    expect(keysetQuery('expiresAt', 'asc', { at, id }, 10)).toEqual({
      where: { OR: [{ expiresAt: { gt: at } }, { expiresAt: at, id: { gt: id } }] },
      orderBy: [{ expiresAt: 'asc' }, { id: 'asc' }],
      take: 11,
    });
  });

  it('the first page has no bound', () => {
    expect(keysetQuery('at', 'desc', undefined, 3).where).toEqual({});
  });
});

describe('keysetPage', () => {
  const rows = [{ n: 1 }, { n: 2 }, { n: 3 }];
  const cursorAfter = (r: { n: number }) => `after-${r.n}`;

  it('one row more than the page: the page, and a cursor after its last row', () => {
    expect(keysetPage(rows, 2, cursorAfter)).toEqual({ items: [{ n: 1 }, { n: 2 }], nextCursor: 'after-2' });
  });

  it('no more rows than the page: all of them, and no cursor', () => {
    expect(keysetPage(rows, 3, cursorAfter)).toEqual({ items: rows, nextCursor: null });
    expect(keysetPage([], 3, cursorAfter)).toEqual({ items: [], nextCursor: null });
  });

  it('shows the rows kept, the cursor read from the row itself', () => {
    expect(keysetPage(rows, 1, cursorAfter, (r) => r.n * 10)).toEqual({ items: [10], nextCursor: 'after-1' });
  });
});
