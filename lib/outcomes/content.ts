// What "the same content" means for an outcome record's idempotency (API.md: same eventId and
// same content is a replay). Pure.
import { canonicalJson } from '@/lib/audit/chain';
import type { Outcome } from './schemas';

/**
 * The received record (after schema parsing) as canonical JSON: keys sorted, and null fields
 * dropped, since producers write null and absent interchangeably for "not there".
 */
export function outcomeContent(record: Outcome): string {
  return canonicalJson(dropNulls(record));
}

function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, dropNulls(v)]),
  );
}
