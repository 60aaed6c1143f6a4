import { twMerge } from 'tailwind-merge';

// Joins class names and resolves Tailwind conflicts: the later class wins (`cn('text-slate-600',
// soon && 'text-rose-700')` is red when soon), which plain string concatenation cannot promise.
export function cn(...classes: Array<string | false | null | undefined>): string {
  return twMerge(classes.filter(Boolean).join(' '));
}
