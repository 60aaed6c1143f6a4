import { createHash } from 'node:crypto';

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

/** JSON with object keys sorted at every depth, so equal entries hash equally. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as object).filter((k) => (value as Record<string, unknown>)[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

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
