-- outcome_counts_forget (migrations 20261201232642_overview_counts, 20261202024325_tool_counts):
-- its whole-day deletes are now planned on each call, with the partition's bounds known. As static
-- SQL in PL/pgSQL they ran on a cached plan, which after a few calls may be the generic one: it
-- sees "received_day >= $1 AND received_day < $2" with the default selectivity of a range
-- (0.5 %), not the month the purge takes out (every receipt day of it: 64,800 tool rows in
-- bench:scale). With that estimate the planner walked the index entry by entry, visiting the heap
-- in index order (23,337 buffers for 928 pages at 10M records, 79 ms), where a bitmap scan reads
-- each page once (1,010 buffers, 45 ms). Same results; only the plan changes.
CREATE OR REPLACE FUNCTION outcome_counts_forget(p_partition text, p_lower timestamptz, p_upper timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF date_bin('1 day', p_lower, timestamptz '2000-01-01 00:00:00+00') = p_lower
     AND date_bin('1 day', p_upper, timestamptz '2000-01-01 00:00:00+00') = p_upper THEN
    EXECUTE 'DELETE FROM outcome_counts WHERE received_day >= $1 AND received_day < $2' USING p_lower, p_upper;
    EXECUTE 'DELETE FROM outcome_tool_counts WHERE received_day >= $1 AND received_day < $2' USING p_lower, p_upper;
  ELSE
    EXECUTE format($sql$
      INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
      SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
             date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
             delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, -count(*)
      FROM %I GROUP BY 1, 2, 3, 4, 5, 6$sql$, p_partition);
    EXECUTE format($sql$
      INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised)
      SELECT server, tool_name,
             date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
             date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
             -count(*), -count(*) FILTER (WHERE NOT (delivery = 'completed' AND category = 'ok')),
             -count(*) FILTER (WHERE tool_annotations IS NOT NULL)
      FROM %I GROUP BY 1, 2, 3, 4$sql$, p_partition);
  END IF;
END
$$;
