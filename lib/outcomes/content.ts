// What "the same content" means for an outcome record's idempotency (docs/api.md: same eventId and
// same content is a replay). Pure.
import { canonicalJson } from '../json/canonical';
import type { Outcome } from './schemas';

/**
 * The received record (after schema parsing) as canonical JSON, null members left out, since
 * producers write null and absent interchangeably for "not there".
 */
export function outcomeContent(record: Outcome): string {
  return canonicalJson(record, { nullMembers: 'omit' });
}
