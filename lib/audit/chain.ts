import { createHash } from 'node:crypto';
import { canonicalJson } from '../json/canonical';

// The audit chain's pure part: canonical form and hash. hash = SHA-256(prevHash ‖ canonical entry).

export const GENESIS_HASH = 'sha256:' + '0'.repeat(64);

export type AuditFields = {
  seq: bigint | number | string;
  at: Date | string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  data: unknown;
};

export function auditHash(prevHash: string, e: AuditFields): string {
  const canonical = canonicalJson({
    seq: String(e.seq),
    at: new Date(e.at).toISOString(),
    actor: e.actor,
    action: e.action,
    targetType: e.targetType,
    targetId: e.targetId,
    data: e.data,
  });
  return 'sha256:' + createHash('sha256').update(prevHash).update('\n').update(canonical).digest('hex');
}

/** The fields of an entry that are known before the chain's lock is taken. */
export type AuditTemplateFields = Omit<AuditFields, 'seq' | 'at'>;

/**
 * The canonical form of an entry with holes where the database fills in values only it knows
 * (while it holds the chain's lock): always `at` and `seq`, and optionally `targetId`. Joined as
 * `parts[0] ‖ hole₀ ‖ parts[1] ‖ hole₁ ‖ …`, holes in key order (at, seq, targetId), it is exactly
 * `canonicalJson` of the whole entry, provided each hole's text needs no JSON escaping: an ISO
 * timestamp, a decimal sequence number, a UUID. Built by canonicalJson itself, not by hand.
 */
export function canonicalTemplate(
  e: AuditTemplateFields,
  holes: readonly ('at' | 'seq' | 'targetId')[] = ['at', 'seq'],
): string[] {
  if (!holes.includes('at') || !holes.includes('seq'))
    throw new Error('canonicalTemplate: `at` and `seq` are always holes');
  const text = canonicalJson({ ...e, at: '', seq: '', ...(holes.includes('targetId') ? { targetId: '' } : {}) });
  const parts: string[] = [];
  let from = 0;
  // Inside a JSON string every quote is escaped, so `"key":""` occurs only as a member. Keys
  // sorting before `data` are found first from the start, keys after it last from the end, so
  // a member of the same name nested in `data` is never taken for the entry's own.
  for (const key of ['at', 'seq', 'targetId'] as const) {
    if (!holes.includes(key)) continue;
    const member = `${JSON.stringify(key)}:""`;
    const at = key < 'data' ? text.indexOf(member, from) : text.lastIndexOf(member);
    if (at < from) throw new Error(`canonicalTemplate: no top-level "${key}" member`);
    const cut = at + member.length - 1; // between the two quotes
    parts.push(text.slice(from, cut));
    from = cut;
  }
  parts.push(text.slice(from));
  return parts;
}
