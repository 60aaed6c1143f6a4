import 'server-only';
import { sql } from '../db/kysely';
import { OPERATION_LOCK_SEED } from '../db/locks';

// Resolving an unknown (docs/design.md "Resolving an unknown"): the SQL that decides which records
// settle which, run inside the ingest transaction (lib/server/outcomes/ingest.ts), by
// `outcomes:reclassify` after it changed a delivery, and the state check's conditional update
// (lib/server/outcomes/state-check.ts).

const alias = (a: 'u' | 's') => sql.raw(a);

/**
 * THE one definition of "the same operation", in its two ways: two records of one organization,
 * server and tool under the same idempotency key AND the same argument digest; or two records of
 * one organization's MCP task (the same task id: its later statuses and its result). A missing
 * key, digest or task id never matches (NULL = NULL is not true), nor do other arguments under the
 * same key or another task: near misses never resolve. Two predicates, each joined on its own
 * (UNION ALL below), not one OR: with the OR the planner gives up both indexes and joins every
 * stored record of the organization (seconds per batch at 200,000 records).
 */
const sameKeyedOperation = (u = alias('u'), s = alias('s')) => sql<boolean>`(
  ${u}.organization = ${s}.organization AND ${u}.server = ${s}.server AND ${u}.tool_name = ${s}.tool_name
  AND ${u}.idempotency_key = ${s}.idempotency_key AND ${u}.args_digest = ${s}.args_digest)`;
const sameTask = (u = alias('u'), s = alias('s')) =>
  sql<boolean>`(${u}.organization = ${s}.organization AND ${u}.task_id = ${s}.task_id)`;
const SAME_OPERATION = [sameKeyedOperation, sameTask];

/**
 * Refusals that settle an earlier unknown: the tool itself looked at the request and said no
 * (the same input was not acceptable, the target does not exist, its policy denies it). Not
 * admission or protocol refusals (a 401 or 429 says nothing about the earlier call; a folded
 * -32602 may follow a handler that ran), nor a tool's conflict, unavailable or rate limit.
 */
export const SETTLING_REFUSALS = ['validation', 'not_found', 'denied'] as const;

/** Whether record `s` settles its operation: it completed, or the tool refused it outright. */
export const settles = (s = alias('s')) => sql<boolean>`(
  ${s}.delivery = 'completed'
  OR (${s}.delivery = 'rejected' AND ${s}.boundary = 'tool'
      AND ${s}.category::text = ANY(${sql.val([...SETTLING_REFUSALS])}::text[])))`;

/** "Later" (docs/design.md): by occurredAt, ties broken by the order the console received them. */
const later = (s = alias('s'), u = alias('u')) =>
  sql<boolean>`(${s}.occurred_at, ${s}.received_seq) > (${u}.occurred_at, ${u}.received_seq)`;

/**
 * The keys of the operations these rows belong to, for pg_advisory_xact_lock: two batches that
 * carry an unknown and its settler at the same moment serialize, so neither commits without
 * seeing the other (read committed would otherwise let both miss).
 */
export function operationLockKeys(
  rows: { organization?: unknown; idempotency_key?: unknown; args_digest?: unknown; task_id?: unknown }[],
) {
  const keys = rows.flatMap((r) => [
    ...(r.idempotency_key && r.args_digest ? [JSON.stringify([r.organization, r.idempotency_key])] : []),
    ...(r.task_id ? [JSON.stringify([r.organization, 'task', r.task_id])] : []),
  ]);
  return [...new Set(keys)].sort();
}

/** Takes the operations' locks, in one order for every transaction (no deadlock). */
export const lockOperations = (keys: string[]) => sql`
  SELECT pg_advisory_xact_lock(h) FROM (
    SELECT DISTINCT hashtextextended(k, ${sql.lit(OPERATION_LOCK_SEED)}) AS h FROM unnest(${keys}::text[]) AS k ORDER BY h
  ) AS locks`;

/**
 * Resolves every unresolved unknown that one of these records settles, or that an already stored
 * later record settles (records arrive out of order): each by its earliest later settler.
 * Answers the records it resolved.
 *
 * Every step is a lookup per record through an index: the batch's records by id, each one's
 * operation through the "same operation" indexes (LATERAL subqueries, fenced with OFFSET 0 so the
 * planner cannot flatten them), the resolved records by id again. The cost follows the batch,
 * never the table. Left to itself, on a young partition whose statistics lag behind its growth,
 * the planner hash-joined every stored record or every stored unknown instead, a cost that grew
 * with the table (bench:ingest's resolution step shows the difference).
 */
export const resolveByLaterRecords = (ids: string[]) => sql<{ id: string; resolved_by_record_id: string }>`
  WITH fresh AS MATERIALIZED (
    SELECT o.id, o.organization, o.server, o.tool_name, o.idempotency_key, o.args_digest, o.task_id,
           o.delivery, o.boundary, o.category, o.occurred_at, o.received_seq, o.resolved_at
    FROM unnest(${ids}::uuid[]) AS f(id)
    CROSS JOIN LATERAL (SELECT * FROM outcome_records o WHERE o.id = f.id OFFSET 0) o
    WHERE (o.idempotency_key IS NOT NULL AND o.args_digest IS NOT NULL) OR o.task_id IS NOT NULL
  ), pairs AS (
    ${sql.join(
      SAME_OPERATION.flatMap((same) => [
        sql`SELECT u.id AS unknown_id, s.id AS settler_id, s.delivery AS settled_as, s.occurred_at, s.received_seq
        FROM fresh u CROSS JOIN LATERAL (
          SELECT s.id, s.delivery, s.occurred_at, s.received_seq FROM outcome_records s
          WHERE ${same()} AND ${later()} AND ${settles()} OFFSET 0) s
        WHERE u.delivery = 'unknown' AND u.resolved_at IS NULL`,
        sql`SELECT u.id, s.id, s.delivery, s.occurred_at, s.received_seq
        FROM fresh s CROSS JOIN LATERAL (
          SELECT u.id FROM outcome_records u
          WHERE ${same()} AND ${later()} AND u.delivery = 'unknown' AND u.resolved_at IS NULL OFFSET 0) u
        WHERE ${settles()}`,
      ]),
      sql` UNION ALL `,
    )}
  ), earliest AS (
    SELECT DISTINCT ON (unknown_id) unknown_id, settler_id, settled_as
    FROM pairs ORDER BY unknown_id, occurred_at, received_seq
  )
  UPDATE outcome_records r
  SET resolved_at = now(), resolution_by = 'record', resolved_by_record_id = e.settler_id,
      resolution_verdict = (CASE WHEN e.settled_as = 'completed' THEN 'happened' ELSE 'did_not_happen' END)::state_verdict
  FROM earliest e
  WHERE r.id = ANY(ARRAY(SELECT unknown_id FROM earliest)) AND r.id = e.unknown_id
    AND r.resolved_at IS NULL AND r.delivery = 'unknown'
  RETURNING r.id, r.resolved_by_record_id`;

/**
 * The state check's claim: resolves the record only while it is an unresolved unknown of a
 * readable organization (null: any). Row-locking: of two at once, the second sees the first's
 * commit and updates nothing.
 */
export const claimByStateCheck = (
  id: string,
  organization: string | null,
  verdict: 'happened' | 'did_not_happen',
) => sql<{
  id: string;
  organization: string;
}>`
  UPDATE outcome_records
  SET resolved_at = now(), resolution_by = 'state_check', resolution_verdict = ${verdict}::state_verdict
  WHERE id = ${id}::uuid AND delivery = 'unknown' AND resolved_at IS NULL
    AND (${organization}::text IS NULL OR organization = ${organization}::text)
  RETURNING id, organization`;
