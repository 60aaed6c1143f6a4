import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

type OutcomeRow = Selectable<DB['outcome_records']>;
type Trust = Selectable<DB['trusted_servers']>;

/** One (server, tool) pair of the inventory; counts are int8, which pg answers as text. */
export type InventoryRow = Pick<OutcomeRow, 'server' | 'tool_name'> & {
  calls_7d: string;
  failures_7d: string;
  requests_7d: string;
  last_seen: Date;
  annotations: unknown;
  trusted_by: Trust['trusted_by'] | null;
  trusted_at: Trust['trusted_at'] | null;
};

// One statement. The calls' side from the counts kept per (server, tool, hour, receipt day) at
// every write (outcome_tool_counts, migration 20261202024325_tool_counts), never by grouping the
// records, so its cost follows the pairs listed and the week's (pair, hour) rows, not the records stored:
//   - the pairs: a skip scan of the counts' (server, tool_name, …) index (one descent per pair,
//     in order: the recursive union yields them sorted, so LIMIT stops it after `limit` pairs
//     that still hold records; the first `limit` pairs of both sides together are among the first
//     `limit` of each);
//   - last seen: the pair's latest hour whose groups still hold records, then the exact instant
//     from the records of that hour, backwards from the groups' bound (an index lookup; the
//     bound is the instant itself unless that record was deleted);
//   - the latest advertisement: the same over the counts of records that carried annotations,
//     then its annotations from the records at that instant (ties: the last received). Two
//     lookups, not one ordered by (occurred_at, received_seq): that sort reads past the first
//     match to the next instant, through the rest of the hour;
//   - the seven days, exact as the overview counts them (lib/server/outcomes/stats-sql.ts): the
//     whole hours from LO_FULL on from the counts (through their occurred_hour index: the rows of
//     a week lie together), the partial hour [LO, LO_FULL) from the records.
// Approval requests (far fewer) are grouped as they are. A call "failed" unless it completed ok.
// The window's bounds written out where they are used (not a CTE's columns): so the planner
// estimates the edge hour's rows from their values and keeps to the index.
const ORIGIN = sql`timestamptz '2000-01-01 00:00:00+00'`;
const LO = sql`(now() - interval '7 days')`;
const LO_FULL = sql`(date_bin('1 hour', now() - interval '7 days', ${ORIGIN}) + interval '1 hour')`;
export const selectToolInventory = (limit: number) => sql<InventoryRow>`
  WITH RECURSIVE pairs AS (
    (SELECT c.server, c.tool_name FROM outcome_tool_counts c ORDER BY c.server, c.tool_name LIMIT 1)
    UNION ALL
    SELECT nx.server, nx.tool_name FROM pairs p CROSS JOIN LATERAL (
      SELECT c.server, c.tool_name FROM outcome_tool_counts c
      WHERE (c.server, c.tool_name) > (p.server, p.tool_name)
      ORDER BY c.server, c.tool_name LIMIT 1) nx
  ), stored AS (
    SELECT p.server, p.tool_name, h.occurred_hour, h.upto
    FROM pairs p CROSS JOIN LATERAL (
      SELECT c.occurred_hour, max(c.last_at) AS upto FROM outcome_tool_counts c
      WHERE c.server = p.server AND c.tool_name = p.tool_name
      GROUP BY c.occurred_hour HAVING sum(c.calls) > 0
      ORDER BY c.occurred_hour DESC LIMIT 1) h
    LIMIT ${limit}::int
  ), recent AS (
    SELECT server, tool_name, sum(calls) AS calls, sum(failures) AS failures
    FROM (
      SELECT c.server, c.tool_name, c.calls, c.failures FROM outcome_tool_counts c WHERE c.occurred_hour >= ${LO_FULL}
      UNION ALL
      SELECT o.server, o.tool_name, 1, CASE WHEN o.delivery = 'completed' AND o.category = 'ok' THEN 0 ELSE 1 END
      FROM outcome_records o WHERE o.occurred_at >= ${LO} AND o.occurred_at < ${LO_FULL}
    ) AS parts
    GROUP BY 1, 2
  ), counted AS (
    -- A full join, so a hash or merge join: joined to the pairs otherwise, the planner (which
    -- cannot tell how many pairs a recursive CTE yields) may scan the week's pairs once per pair.
    -- The week's pairs not listed have no stored hour: the lookup below drops them.
    SELECT s.server, s.tool_name, s.occurred_hour, s.upto, r.calls, r.failures
    FROM stored s FULL JOIN recent r ON r.server = s.server AND r.tool_name = s.tool_name
  ), calls AS (
    SELECT s.server, s.tool_name, seen.occurred_at AS last_seen,
           coalesce(s.calls, 0) AS calls_7d, coalesce(s.failures, 0) AS failures_7d,
           adv.occurred_at AS advertised_at, ca.tool_annotations
    FROM counted s
    CROSS JOIN LATERAL (
      SELECT o.occurred_at FROM outcome_records o
      WHERE o.server = s.server AND o.tool_name = s.tool_name AND o.occurred_at >= s.occurred_hour AND o.occurred_at <= s.upto
      ORDER BY o.occurred_at DESC LIMIT 1) seen
    LEFT JOIN LATERAL (
      SELECT c.occurred_hour, max(c.advertised_at) AS upto FROM outcome_tool_counts c
      WHERE c.server = s.server AND c.tool_name = s.tool_name AND c.advertised <> 0
      GROUP BY c.occurred_hour HAVING sum(c.advertised) > 0
      ORDER BY c.occurred_hour DESC LIMIT 1) ah ON true
    LEFT JOIN LATERAL (
      SELECT o.occurred_at FROM outcome_records o
      WHERE o.server = s.server AND o.tool_name = s.tool_name AND o.tool_annotations IS NOT NULL
        AND o.occurred_at >= ah.occurred_hour AND o.occurred_at <= ah.upto
      ORDER BY o.occurred_at DESC LIMIT 1) adv ON true
    LEFT JOIN LATERAL (
      SELECT o.tool_annotations FROM outcome_records o
      WHERE o.occurred_at = adv.occurred_at AND o.server = s.server AND o.tool_name = s.tool_name
        AND o.tool_annotations IS NOT NULL
      ORDER BY o.received_seq DESC LIMIT 1) ca ON true
  ), requests AS (
    SELECT server, tool_name,
           count(*) FILTER (WHERE created_at >= now() - interval '7 days') AS requests_7d,
           max(created_at) AS last_seen,
           max(created_at) FILTER (WHERE tool_annotations IS NOT NULL) AS advertised_at
    FROM approval_requests
    GROUP BY server, tool_name
  ), seen AS (
    SELECT coalesce(c.server, r.server) AS server, coalesce(c.tool_name, r.tool_name) AS tool_name,
           coalesce(c.calls_7d, 0) AS calls_7d, coalesce(c.failures_7d, 0) AS failures_7d,
           coalesce(r.requests_7d, 0) AS requests_7d, greatest(c.last_seen, r.last_seen) AS last_seen,
           c.advertised_at AS call_advertised_at, c.tool_annotations AS call_annotations,
           r.advertised_at AS request_advertised_at
    FROM calls c FULL JOIN requests r ON r.server = c.server AND r.tool_name = c.tool_name
    ORDER BY 1, 2
    LIMIT ${limit}::int
  )
  SELECT s.server, s.tool_name, s.calls_7d, s.failures_7d, s.requests_7d, s.last_seen,
         CASE WHEN s.request_advertised_at IS NOT NULL AND (s.call_advertised_at IS NULL OR s.request_advertised_at > s.call_advertised_at)
              THEN ra.tool_annotations ELSE s.call_annotations END AS annotations,
         t.trusted_by, t.trusted_at
  FROM seen s
  LEFT JOIN LATERAL (
    SELECT a.tool_annotations FROM approval_requests a
    WHERE a.created_at = s.request_advertised_at AND a.server = s.server AND a.tool_name = s.tool_name AND a.tool_annotations IS NOT NULL
    ORDER BY a.id DESC LIMIT 1) ra ON true
  LEFT JOIN trusted_servers t ON t.name = s.server
  ORDER BY s.server, s.tool_name`;
