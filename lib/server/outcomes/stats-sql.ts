import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

// The overview's counts (lib/server/outcomes/stats.ts), computed in PostgreSQL. Counts are
// int8, which pg answers as text.

type Classified = Pick<Selectable<DB['outcome_records']>, 'delivery' | 'category' | 'read_only'>;

// The windows, all relative to now(): the last 7 days (up to an hour ahead, for clocks slightly
// fast) and the last 24 hours. outcome_counts (migration 20261201232642_overview_counts) holds
// counts per whole hour of occurred_at: a window's whole hours are read there; the partial hours
// at its edges are counted from the records ([lo, lo_full), [d1, d1_full) and [hi_full, hi]),
// each an index-only range scan of the (occurred_at, id, …) index. The same counts as counting
// every record of the window, for a few thousand rows instead of ~230,000 at 1M records.
const ORIGIN = sql`timestamptz '2000-01-01 00:00:00+00'`;
const windows = sql`(
  SELECT now() - interval '7 days' AS lo, now() + interval '1 hour' AS hi,
         now() - interval '24 hours' AS d1,
         date_bin('1 hour', now() - interval '7 days', ${ORIGIN}) + interval '1 hour' AS lo_full,
         date_bin('1 hour', now() - interval '24 hours', ${ORIGIN}) + interval '1 hour' AS d1_full,
         date_bin('1 hour', now(), ${ORIGIN}) AS hi_full) AS w`;

/** Per delivery, category and read-only: the records of the last 24 hours and of the last 7 days. */
// `unresolved`: unknowns nothing has settled yet (docs/design.md "Resolving an unknown"), the ones the
// overview counts as unknown writes.
export const selectOverviewGroups = () => sql<Classified & { d1: string; d7: string; unresolved: boolean }>`
  SELECT delivery, category, read_only, unresolved, sum(d1)::int8 AS d1, sum(d7)::int8 AS d7
  FROM (
    SELECT c.delivery, c.category, c.read_only, c.unresolved,
           coalesce(sum(c.n) FILTER (WHERE c.occurred_hour >= w.d1_full), 0) AS d1, sum(c.n) AS d7
    FROM ${windows} JOIN outcome_counts c ON c.occurred_hour >= w.lo_full AND c.occurred_hour < w.hi_full
    GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT o.delivery, o.category, o.read_only, (o.delivery = 'unknown' AND o.resolved_at IS NULL), 0, count(*)
    FROM ${windows} JOIN outcome_records o ON o.occurred_at >= w.lo AND o.occurred_at < w.lo_full
    GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT o.delivery, o.category, o.read_only, (o.delivery = 'unknown' AND o.resolved_at IS NULL), count(*), 0
    FROM ${windows} JOIN outcome_records o ON o.occurred_at >= w.d1 AND o.occurred_at < w.d1_full
    GROUP BY 1, 2, 3, 4
    UNION ALL
    SELECT o.delivery, o.category, o.read_only, (o.delivery = 'unknown' AND o.resolved_at IS NULL), count(*), count(*)
    FROM ${windows} JOIN outcome_records o ON o.occurred_at >= w.hi_full AND o.occurred_at <= w.hi
    GROUP BY 1, 2, 3, 4
  ) AS parts
  GROUP BY 1, 2, 3, 4
  HAVING sum(d7) <> 0`;

/** Per bucket of `hours` (whole hours, from 2000-01-01 UTC) and delivery: the records of the last 7 days. */
export const selectOverviewBuckets = (hours: number) => sql<Pick<Classified, 'delivery'> & { bucket: Date; n: string }>`
  SELECT bucket, delivery, sum(n)::int8 AS n
  FROM (
    SELECT date_bin(make_interval(hours => ${hours}), c.occurred_hour, ${ORIGIN}) AS bucket, c.delivery, sum(c.n) AS n
    FROM ${windows} JOIN outcome_counts c ON c.occurred_hour >= w.lo_full AND c.occurred_hour < w.hi_full
    GROUP BY 1, 2
    UNION ALL
    SELECT date_bin(make_interval(hours => ${hours}), o.occurred_at, ${ORIGIN}), o.delivery, count(*)
    FROM ${windows} JOIN outcome_records o ON o.occurred_at >= w.lo AND o.occurred_at < w.lo_full
    GROUP BY 1, 2
    UNION ALL
    SELECT date_bin(make_interval(hours => ${hours}), o.occurred_at, ${ORIGIN}), o.delivery, count(*)
    FROM ${windows} JOIN outcome_records o ON o.occurred_at >= w.hi_full AND o.occurred_at <= w.hi
    GROUP BY 1, 2
  ) AS parts
  GROUP BY 1, 2
  HAVING sum(n) <> 0`;

/** Folds the trigger rows of outcome_counts and outcome_tool_counts, one row per group (lib/server/outcomes/stats-job.ts). */
export const foldOverviewCounts = () => sql<{ n: string }>`SELECT outcome_counts_fold() AS n`;

/**
 * The request references of the newest `scan` records of the last 24 hours, each with its latest
 * record's time, most recent first. The newest records first through the (occurred_at, id, …)
 * index: a reference's first appearance is its latest record, so the first `max` distinct
 * references of a long enough scan are the `max` most recently active of the whole window.
 * `scanned`: how many records it read (fewer than `scan`: the whole window).
 */
export const selectRecentRequestRefs = (scan: number, max: number) => sql<{ request_ref: string; scanned: number }>`
  WITH newest AS MATERIALIZED (
    SELECT request_ref, occurred_at FROM outcome_records
    WHERE occurred_at >= now() - interval '24 hours'
    ORDER BY occurred_at DESC LIMIT ${scan}::int
  )
  SELECT request_ref, (SELECT count(*)::int FROM newest) AS scanned
  FROM newest
  GROUP BY request_ref
  ORDER BY max(occurred_at) DESC
  LIMIT ${max}::int`;
