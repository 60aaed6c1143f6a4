// For hostile-input tests (never imported by the app): what "nothing was written" compares.
import { db } from '@/lib/server/db/db';

/**
 * Every row count and state counter a refused request could have changed, as one string: equal
 * before and after means nothing was stored, decided, redeemed, revoked or audited. The incident
 * access log is separate: reading an incident logs the access by design, found or not.
 */
export async function stateFingerprint(): Promise<string> {
  const [row] = await db.$queryRaw<Record<string, bigint>[]>`
    SELECT (SELECT count(*) FROM outcome_records) AS outcomes,
           (SELECT count(*) FROM approval_requests) AS approvals,
           (SELECT coalesce(sum(version), 0) FROM approval_requests) AS approval_versions,
           (SELECT count(*) FROM approval_decisions) AS decisions,
           (SELECT count(*) FROM grants) AS grants,
           (SELECT count(redeemed_at) + count(revoked_at) FROM grants) AS grant_changes,
           (SELECT count(*) FROM audit_entries) AS audit,
           (SELECT count(*) FROM trusted_servers) AS trusted,
           (SELECT count(*) FROM policy_rules) AS rules,
           (SELECT count(*) FROM tool_definitions) AS tools,
           (SELECT count(held_hash) FROM tool_definitions) AS held_tools,
           (SELECT count(*) FROM catalog_servers) AS catalog_servers`;
  return Object.entries(row)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

export async function incidentAccessCount(): Promise<number> {
  return db.incidentAccessLog.count();
}
