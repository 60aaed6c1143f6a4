import { describe, expect, it } from 'vitest';
import { dropOldest } from './bounded';

const filled = (n: number) => new Map<number, string>(Array.from({ length: n }, (_, i) => [i + 1, `v${i + 1}`]));

describe('dropOldest', () => {
  it.each([
    // entries 1..n in insertion order, the bound, the keys left
    { n: 10, max: 10, left: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
    { n: 11, max: 10, left: [3, 4, 5, 6, 7, 8, 9, 10, 11] },
    { n: 25, max: 20, left: [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25] },
    { n: 3, max: 1, left: [3] },
    { n: 2, max: 5, left: [1, 2] },
  ])('$n entries, at most $max: keeps the newest', ({ n, max, left }) => {
    const map = filled(n);
    dropOldest(map, max);
    expect([...map.keys()]).toEqual(left);
    expect(map.get(left[0])).toBe(`v${left[0]}`);
  });

  it('a key set again counts as new: the least recently set go first', () => {
    const map = filled(10);
    map.delete(1);
    map.set(1, 'again');
    map.set(11, 'v11');
    dropOldest(map, 10);
    expect([...map.keys()]).toEqual([4, 5, 6, 7, 8, 9, 10, 1, 11]);
  });
});
