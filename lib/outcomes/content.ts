// What "the same content" means for an outcome record's idempotency (API.md: same eventId and
// same content is a replay). Pure.
import type { Outcome } from './schemas';

/**
 * The received record (after schema parsing) as canonical JSON: keys sorted at every depth, and
 * null fields dropped, since producers write null and absent interchangeably for "not there".
 * One pass, no intermediate objects: it runs for every record of every batch.
 */
export function outcomeContent(record: Outcome): string {
  return canonical(record);
}

function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const object = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(object).sort()) {
    const v = object[key];
    if (v === null || v === undefined) continue;
    out += `${out ? ',' : ''}${JSON.stringify(key)}:${canonical(v)}`;
  }
  return `{${out}}`;
}
