import { describe, expect, it } from 'vitest';
import { cn } from './cn';

describe('cn', () => {
  it.each<[Array<string | false | null | undefined>, string]>([
    [['text-slate-600', 'text-rose-700'], 'text-rose-700'],
    [['px-2 py-1', false, 'px-4'], 'py-1 px-4'],
    [['rounded-md', null, undefined, 'shadow-xs'], 'rounded-md shadow-xs'],
    [['bg-white hover:bg-slate-50', 'bg-rose-50'], 'hover:bg-slate-50 bg-rose-50'],
  ])('%j → %s', (input, expected) => {
    expect(cn(...input)).toBe(expected);
  });
});
