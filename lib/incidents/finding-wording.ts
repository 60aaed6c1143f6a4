// The words findings are explained in: how a record was refused, what it should have done
// instead, and "a, b (2 times) and c" tallies. Pure.
import type { Category } from '@/lib/outcomes/schemas';
import type { IncidentRecord } from './types';

export const label = (c: Category) => c.replaceAll('_', ' ');

export function refusedAs(r: IncidentRecord): string {
  const how = r.classification.delivery === 'never_sent' ? 'blocked before sending' : 'refused';
  return `${how} (${label(r.classification.category)})`;
}

export function insteadOf(r: IncidentRecord): string {
  const own = r.classification.category === 'unauthenticated' || r.classification.category === 'no_credentials';
  return own ? 'instead of correcting its own credentials' : 'instead of seeking legitimate approval';
}

export const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);

/** "a, b (2 times) and c": distinct phrases in first-seen order, with how often each came. */
export function tally(phrases: string[]): string {
  const counts = new Map<string, number>();
  for (const p of phrases) counts.set(p, (counts.get(p) ?? 0) + 1);
  const items = [...counts].map(([p, n]) => (n > 1 ? `${p} ${times(n)}` : p));
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : (items[0] ?? '');
}
