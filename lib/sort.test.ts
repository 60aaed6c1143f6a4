import { describe, expect, it } from 'vitest';
import { readSort, sortParam, sortRows } from './sort';

const rows = [
  { name: 'beta', used: new Date('2026-11-02T00:00:00Z') },
  { name: 'Alpha', used: null },
  { name: 'gamma', used: new Date('2026-11-01T00:00:00Z') },
  { name: 'alpha', used: new Date('2026-11-03T00:00:00Z') },
];
const by = { name: (r: (typeof rows)[number]) => r.name, used: (r: (typeof rows)[number]) => r.used };

describe('sortRows', () => {
  it('sorts text case-insensitively, ties in their original order', () => {
    expect(sortRows(rows, { key: 'name', dir: 'asc' }, by).map((r) => r.name)).toEqual([
      'Alpha',
      'alpha',
      'beta',
      'gamma',
    ]);
    expect(sortRows(rows, { key: 'name', dir: 'desc' }, by).map((r) => r.name)).toEqual([
      'gamma',
      'beta',
      'Alpha',
      'alpha',
    ]);
  });
  it('sorts dates and puts empty values last in both directions', () => {
    expect(sortRows(rows, { key: 'used', dir: 'desc' }, by).map((r) => r.name)).toEqual([
      'alpha',
      'beta',
      'gamma',
      'Alpha',
    ]);
    expect(sortRows(rows, { key: 'used', dir: 'asc' }, by).map((r) => r.name)).toEqual([
      'gamma',
      'beta',
      'alpha',
      'Alpha',
    ]);
  });
});

describe('readSort', () => {
  const keys = ['name', 'used'] as const;
  const fallback = { key: 'name', dir: 'asc' } as const;
  it.each([
    [undefined, fallback],
    ['used', { key: 'used', dir: 'asc' }],
    ['-used', { key: 'used', dir: 'desc' }],
    ['-bogus', fallback],
    ['', fallback],
  ])('%s', (param, expected) => {
    expect(readSort(param, keys, fallback)).toEqual(expected);
  });
  it('writes back what it reads', () => {
    expect(sortParam({ key: 'used', dir: 'desc' })).toBe('-used');
    expect(sortParam({ key: 'name', dir: 'asc' })).toBe('name');
  });
});
