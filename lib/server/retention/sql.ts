import 'server-only';
import { sql } from '../db/kysely';

// The retention purge (lib/server/retention/retention.ts): statements Prisma cannot say (a CTE of live
// approvals, DELETE by ctid with SKIP LOCKED, a session advisory lock, dropping partitions).

// Approvals still in play, as (request reference, grant id) pairs; evaluated by each statement.
const liveApprovals = (at: Date) => sql`
  live AS MATERIALIZED (
    SELECT r.request_ref, NULL::text AS grant_id FROM approval_requests r
    WHERE r.status = 'pending' AND r.expires_at > ${at}::timestamptz
    UNION ALL
    SELECT r.request_ref, g.id::text FROM approval_requests r JOIN grants g ON g.approval_id = r.id
    WHERE r.status = 'approved' AND g.redeemed_at IS NULL AND g.revoked_at IS NULL AND g.expires_at > ${at}::timestamptz
  )`;

// NOT IN over the (small) live set plans as a hashed filter on the ordered index scan, which
// stops after `batchSize` rows; NOT EXISTS would plan as an anti-join over every old row and a
// sort. Neither column of `live` that is compared holds a NULL, which NOT IN could not bear.
const untied = sql`
  o.request_ref NOT IN (SELECT l.request_ref FROM live l)
  AND (o.grant_id IS NULL OR o.grant_id NOT IN (SELECT l.grant_id FROM live l WHERE l.grant_id IS NOT NULL))`;

/**
 * Deletes up to `batchSize` of the oldest untied records received in [from, cutoff) from one
 * partition (a ctid addresses a row within its own table only, so never through the parent);
 * answers how many and the latest `received_at` among them.
 */
export const deleteOutcomeBatch = (partition: string, from: Date, cutoff: Date, at: Date, batchSize: number) => sql<{
  n: number;
  upto: Date | null;
}>`
  WITH ${liveApprovals(at)},
  deleted AS (
    DELETE FROM ${sql.table(partition)} WHERE ctid = ANY(ARRAY(
      SELECT o.ctid FROM ${sql.table(partition)} o
      WHERE o.received_at < ${cutoff}::timestamptz AND o.received_at >= ${from}::timestamptz AND ${untied}
      ORDER BY o.received_at
      LIMIT ${batchSize}::int
      FOR UPDATE OF o SKIP LOCKED))
    RETURNING id, api_key_id, event_id, received_at, occurred_at, delivery, category, read_only, resolved_at,
              server, tool_name, tool_annotations IS NOT NULL AS annotated
  ),
  -- Through the partition, not the parent: outcome_records' delete trigger does not see these,
  -- so the overview's counts (migration 20261201232642_overview_counts) and the tools
  -- inventory's (20261202024325_tool_counts) are taken down here.
  counted AS (
    INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
    SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, -count(*)
    FROM deleted GROUP BY 1, 2, 3, 4, 5, 6
  ),
  tools_counted AS (
    INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised)
    SELECT server, tool_name,
           date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           -count(*), -count(*) FILTER (WHERE NOT (delivery = 'completed' AND category = 'ok')),
           -count(*) FILTER (WHERE annotated)
    FROM deleted GROUP BY 1, 2, 3, 4
  ),
  -- Their event ids' claims go with them (migration 20261201192841_outcome_event_ids), each found
  -- by its key (a LATERAL lookup fenced with OFFSET 0: never a join over every claim).
  claims AS (
    DELETE FROM outcome_event_ids WHERE ctid = ANY(ARRAY(
      SELECT e.ctid FROM deleted d CROSS JOIN LATERAL (
        SELECT e.ctid FROM outcome_event_ids e
        WHERE e.api_key_id = d.api_key_id AND e.event_id = d.event_id AND e.record_id = d.id OFFSET 0) e))
  )
  SELECT count(*)::int AS n, max(received_at) AS upto FROM deleted`;

// ── Whole partitions (migration 20261201160000_outcome_records_partitioned) ──────────────────

export type OutcomePartition = { name: string; lower_bound: Date | null; upper_bound: Date | null };

/** The partitions of outcome_records with their bounds, oldest first; the default one last (null bounds). */
export const selectOutcomePartitions = () =>
  sql<OutcomePartition>`SELECT name, lower_bound, upper_bound FROM outcome_records_partitions()`;

/** Waits at most `ms` for a lock in this transaction: a drop gives up rather than hold ingestion up. */
export const setLockTimeout = (ms: number) =>
  sql<{ v: string }>`SELECT set_config('lock_timeout', ${`${ms}ms`}, true) AS v`;

/** How many rows a partition holds: the planner's count when ANALYZE has run (no scan), else counted. */
export const partitionRowCount = (partition: string) => sql<{ n: number; estimated: boolean }>`
  SELECT CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint::int
              ELSE (SELECT count(*)::int FROM ${sql.table(partition)}) END AS n,
         c.reltuples >= 0 AS estimated
  FROM pg_class c WHERE c.oid = ${partition}::regclass`;

/** A temporary table, gone at commit, for the records a dropped partition must keep. */
export const createKeptTable = () => sql`CREATE TEMP TABLE outcome_records_kept (LIKE outcome_records) ON COMMIT DROP`;

/**
 * Copies there the records of a partition that an approval in play keeps, found through the
 * partition's request_ref and grant_id indexes: the cost follows the live approvals, not the
 * partition's size. Answers how many.
 */
export const setAsideKeptOutcomes = (partition: string, at: Date) => sql<{ n: number }>`
  WITH ${liveApprovals(at)},
  kept AS (
    INSERT INTO outcome_records_kept
    SELECT * FROM ${sql.table(partition)} WHERE ctid = ANY(ARRAY(
      SELECT o.ctid FROM live l JOIN ${sql.table(partition)} o ON o.request_ref = l.request_ref
      UNION
      SELECT o.ctid FROM live l JOIN ${sql.table(partition)} o ON o.grant_id = l.grant_id))
    RETURNING 1
  )
  SELECT count(*)::int AS n FROM kept`;

/** State checks whose record the purge deleted (found through outcome_records' id index). */
export const deleteOrphanedStateChecks = () => sql`
  DELETE FROM outcome_state_checks c WHERE NOT EXISTS (SELECT 1 FROM outcome_records r WHERE r.id = c.record_id)`;

// A month past the limit is detached and renamed in the purge's transaction, and dropped later,
// apart (lib/server/retention/clean-up.ts cleanUpPurged): a drop's commit frees the files, which
// takes time in proportion to their size (the filesystem's), and held the parent's lock for all
// of it. Renamed with a random suffix, so that a leftover is found, and never clashes with a
// partition made again for its range.
const PURGED_PREFIX = 'outcome_records_purged_';

/** Detaches a partition (a brief lock on the parent, no file freed) and renames it for the drop. */
export const detachPartition = (partition: string) => sql`
  ALTER TABLE outcome_records DETACH PARTITION ${sql.table(partition)}`;

export const renamePurged = (partition: string, suffix: string) => sql`
  ALTER TABLE ${sql.table(partition)} RENAME TO ${sql.table(PURGED_PREFIX + suffix)}`;

/** The detached months still waiting to be dropped, in this schema. */
export const selectPurgedTables = () => sql<{ name: string }>`
  SELECT c.relname::text AS name FROM pg_class c
  WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
    AND c.relname LIKE ${PURGED_PREFIX.replaceAll('_', '\\_') + '%'}
  ORDER BY 1`;

/** Drops one (IF EXISTS: two clean-ups at once both finish). Locks that table only. */
export const dropPurgedTable = (name: string) => sql`DROP TABLE IF EXISTS ${sql.table(name)}`;

/**
 * Before a partition is taken out: the overview's and the tools inventory's counts of its records
 * (migrations 20261201232642_overview_counts, 20261202024325_tool_counts).
 */
export const forgetPartitionCounts = (partition: string, lower: Date, upper: Date) =>
  sql`SELECT outcome_counts_forget(${partition}, ${lower}::timestamptz, ${upper}::timestamptz)::text AS done`;

/**
 * Deletes up to `batchSize` of the oldest event-id claims received in [from, below) whose record
 * is gone (a dropped partition's; kept records, put back with their time of receipt, keep
 * theirs), in order of receipt; answers how many and the latest receipt among them. Each claim's
 * record is looked up on its own (OFFSET 0 keeps NOT EXISTS a lookup per claim, pruned to one
 * partition by the time of receipt): as an anti-join the planner read every record, each batch.
 */
export const deleteStaleEventIds = (from: Date, below: Date, batchSize: number) => sql<{
  n: number;
  upto: Date | null;
}>`
  WITH gone AS (
    DELETE FROM outcome_event_ids WHERE ctid = ANY(ARRAY(
      SELECT e.ctid FROM outcome_event_ids e
      WHERE e.received_at >= ${from}::timestamptz AND e.received_at < ${below}::timestamptz
        AND NOT EXISTS (
          SELECT 1 FROM outcome_records r WHERE r.id = e.record_id AND r.received_at = e.received_at OFFSET 0)
      ORDER BY e.received_at
      LIMIT ${batchSize}::int))
    RETURNING received_at
  )
  SELECT count(*)::int AS n, max(received_at) AS upto FROM gone`;

/** The kept records back into the table: their range has no partition now, so into the default one. */
export const restoreKeptOutcomes = () => sql`INSERT INTO outcome_records SELECT * FROM outcome_records_kept`;

// From the live set through the request_ref and grant_id indexes: as cheap after a run that
// deleted millions of rows as after one that deleted none.
/** How many records received before `cutoff` are kept for an approval in play. */
export const countKeptOutcomes = (cutoff: Date, at: Date) => sql<{ n: number }>`
  WITH ${liveApprovals(at)}
  SELECT count(DISTINCT o.id)::int AS n FROM live l
  JOIN outcome_records o ON o.request_ref = l.request_ref OR o.grant_id = l.grant_id
  WHERE o.received_at < ${cutoff}::timestamptz`;

/** Takes a session-level advisory lock, or answers false when another session holds it. */
export const tryAdvisoryLock = (key: bigint) => sql<{ locked: boolean }>`
  SELECT pg_try_advisory_lock(${key.toString()}::bigint) AS locked`;
