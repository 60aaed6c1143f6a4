import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from './kysely';

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

// One statement, aggregated in PostgreSQL: per (server, tool) counts over seven days and the last
// sighting ever, then one index lookup per pair (occurred_at / created_at) for the annotations of
// its latest advertisement, and the server's trust. A call "failed" unless it completed ok.
export const selectToolInventory = (limit: number) => sql<InventoryRow>`
  WITH calls AS (
    SELECT server, tool_name,
           count(*) FILTER (WHERE occurred_at >= now() - interval '7 days') AS calls_7d,
           count(*) FILTER (WHERE occurred_at >= now() - interval '7 days' AND NOT (delivery = 'completed' AND category = 'ok')) AS failures_7d,
           max(occurred_at) AS last_seen,
           max(occurred_at) FILTER (WHERE tool_annotations IS NOT NULL) AS advertised_at
    FROM outcome_records
    GROUP BY server, tool_name
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
           c.advertised_at AS call_advertised_at, r.advertised_at AS request_advertised_at
    FROM calls c FULL JOIN requests r ON r.server = c.server AND r.tool_name = c.tool_name
    ORDER BY 1, 2
    LIMIT ${limit}::int
  )
  SELECT s.server, s.tool_name, s.calls_7d, s.failures_7d, s.requests_7d, s.last_seen,
         CASE WHEN s.request_advertised_at IS NOT NULL AND (s.call_advertised_at IS NULL OR s.request_advertised_at > s.call_advertised_at)
              THEN ra.tool_annotations ELSE ca.tool_annotations END AS annotations,
         t.trusted_by, t.trusted_at
  FROM seen s
  LEFT JOIN LATERAL (
    SELECT o.tool_annotations FROM outcome_records o
    WHERE o.occurred_at = s.call_advertised_at AND o.server = s.server AND o.tool_name = s.tool_name AND o.tool_annotations IS NOT NULL
    ORDER BY o.received_seq DESC LIMIT 1) ca ON true
  LEFT JOIN LATERAL (
    SELECT a.tool_annotations FROM approval_requests a
    WHERE a.created_at = s.request_advertised_at AND a.server = s.server AND a.tool_name = s.tool_name AND a.tool_annotations IS NOT NULL
    ORDER BY a.id DESC LIMIT 1) ra ON true
  LEFT JOIN trusted_servers t ON t.name = s.server
  ORDER BY s.server, s.tool_name`;
