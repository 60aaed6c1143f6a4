-- The tools inventory's per-(server, tool) figures kept as records change (lib/server/data/sql/tools.ts
-- selectToolInventory): before, every view grouped the whole of outcome_records by server and
-- tool for its seven-day calls and failures, the last sighting and the latest advertisement
-- (a cost in proportion to the records stored). Now it reads these rows, kept exactly like
-- outcome_counts (migration 20261201232642_overview_counts, whose reasons hold here too):
-- statement-level triggers on outcome_records (transition tables: one aggregate per statement)
-- append one row per (server, tool, occurred hour, receipt day) a statement changed, never
-- update a shared row, so concurrent ingest batches never wait for each other; the purge's
-- per-partition DELETE appends its own negative rows (lib/server/data/sql/retention.ts
-- deleteOutcomeBatch); a partition dropped is forgotten by outcome_counts_forget(), which now
-- forgets these rows too; outcome_counts_fold() (the one job, lib/server/jobs/overview-counts.ts)
-- folds both tables. A separate table: outcome_counts keeps the few rows per hour the overview reads.
--
-- A group's calls, failures (NOT (delivery = 'completed' AND category = 'ok')) and advertised
-- (records carrying tool_annotations) are the sums of its rows. A maximum cannot be taken back
-- when a record goes, so last_at and advertised_at hold the latest occurred_at of the records a row
-- added: the max over a group's rows is an upper bound of its live records' latest occurred_at,
-- reached unless the latest one was deleted, and always within the group's hour. The inventory
-- finds the latest hour whose groups still hold records and reads the exact instant from the
-- records there, backwards from that bound (one index lookup, an hour at worst). For that bound
-- to hold, an update that moves a group's latest occurred_at writes a row even when its counts
-- net to nothing.

-- CreateTable
CREATE TABLE "outcome_tool_counts" (
    "id" BIGSERIAL NOT NULL,
    "server" TEXT NOT NULL,
    "tool_name" TEXT NOT NULL,
    "occurred_hour" TIMESTAMPTZ(3) NOT NULL,
    "received_day" TIMESTAMPTZ(3) NOT NULL,
    "calls" BIGINT NOT NULL,
    "failures" BIGINT NOT NULL,
    "advertised" BIGINT NOT NULL,
    "last_at" TIMESTAMPTZ(3),
    "advertised_at" TIMESTAMPTZ(3),
    "folded" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "outcome_tool_counts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outcome_tool_counts_server_tool_name_occurred_hour_received_idx" ON "outcome_tool_counts"("server", "tool_name", "occurred_hour", "received_day");

-- CreateIndex
CREATE INDEX "outcome_tool_counts_occurred_hour_idx" ON "outcome_tool_counts"("occurred_hour");

-- CreateIndex
CREATE INDEX "outcome_tool_counts_received_day_idx" ON "outcome_tool_counts"("received_day");

-- The latest advertisement of a pair: only the rows that changed how many records carried
-- annotations, so a tool that stopped advertising long ago is not found by reading every hour since.
CREATE INDEX "outcome_tool_counts_advertised_idx" ON "outcome_tool_counts"("server", "tool_name", "occurred_hour")
  WHERE "advertised" <> 0;

-- Trigger rows are folded by the job: found through this index, not by reading every row.
CREATE INDEX "outcome_tool_counts_unfolded_idx" ON "outcome_tool_counts"("occurred_hour") WHERE NOT "folded";

-- No write may slip between the count of what is stored and the triggers (this transaction
-- holds the lock until it commits).
LOCK TABLE "outcome_records" IN SHARE MODE;

CREATE FUNCTION outcome_tool_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised, last_at, advertised_at)
    SELECT server, tool_name,
           date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           count(*), count(*) FILTER (WHERE NOT (delivery = 'completed' AND category = 'ok')),
           count(*) FILTER (WHERE tool_annotations IS NOT NULL),
           max(occurred_at), max(occurred_at) FILTER (WHERE tool_annotations IS NOT NULL)
    FROM new_rows GROUP BY 1, 2, 3, 4;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised)
    SELECT server, tool_name,
           date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           -count(*), -count(*) FILTER (WHERE NOT (delivery = 'completed' AND category = 'ok')),
           -count(*) FILTER (WHERE tool_annotations IS NOT NULL)
    FROM old_rows GROUP BY 1, 2, 3, 4;
  ELSE
    -- New rows minus old ones per group: an update that changes nothing kept writes nothing.
    INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised, last_at, advertised_at)
    SELECT server, tool_name,
           date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           sum(d), coalesce(sum(d) FILTER (WHERE failed), 0), coalesce(sum(d) FILTER (WHERE annotated), 0),
           max(occurred_at) FILTER (WHERE d = 1), max(occurred_at) FILTER (WHERE d = 1 AND annotated)
    FROM (
      SELECT server, tool_name, occurred_at, received_at, NOT (delivery = 'completed' AND category = 'ok') AS failed,
             tool_annotations IS NOT NULL AS annotated, 1 AS d
      FROM new_rows
      UNION ALL
      SELECT server, tool_name, occurred_at, received_at, NOT (delivery = 'completed' AND category = 'ok'),
             tool_annotations IS NOT NULL, -1
      FROM old_rows
    ) AS changed
    GROUP BY 1, 2, 3, 4
    HAVING sum(d) <> 0 OR sum(d) FILTER (WHERE failed) <> 0 OR sum(d) FILTER (WHERE annotated) <> 0
        OR max(occurred_at) FILTER (WHERE d = 1) IS DISTINCT FROM max(occurred_at) FILTER (WHERE d = -1)
        OR max(occurred_at) FILTER (WHERE d = 1 AND annotated) IS DISTINCT FROM max(occurred_at) FILTER (WHERE d = -1 AND annotated);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER outcome_tool_counts_insert AFTER INSERT ON outcome_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();
CREATE TRIGGER outcome_tool_counts_update AFTER UPDATE ON outcome_records
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();
CREATE TRIGGER outcome_tool_counts_delete AFTER DELETE ON outcome_records
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();

CREATE OR REPLACE FUNCTION outcome_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM outcome_counts;
  DELETE FROM outcome_tool_counts;
  RETURN NULL;
END
$$;

-- Both tables now: every group that has trigger rows folded into one row (none when its records
-- are all gone); answers how many rows it replaced. Safe beside writers and another fold (see
-- migration 20261201232642_overview_counts). A folded group's last_at / advertised_at: the max of
-- its rows' (still a bound), advertised_at none once no record of it carries annotations.
CREATE OR REPLACE FUNCTION outcome_counts_fold() RETURNS bigint LANGUAGE sql AS $$
  WITH fresh AS (
    SELECT DISTINCT occurred_hour, received_day, delivery, category, read_only, unresolved
    FROM outcome_counts WHERE NOT folded
  ), gone AS (
    DELETE FROM outcome_counts c USING fresh f
    WHERE c.occurred_hour = f.occurred_hour AND c.received_day = f.received_day AND c.delivery = f.delivery
      AND c.category = f.category AND c.read_only = f.read_only AND c.unresolved = f.unresolved
    RETURNING c.occurred_hour, c.received_day, c.delivery, c.category, c.read_only, c.unresolved, c.n
  ), folded AS (
    INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n, folded)
    SELECT occurred_hour, received_day, delivery, category, read_only, unresolved, sum(n), true
    FROM gone GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0
  ), tools_fresh AS (
    SELECT DISTINCT server, tool_name, occurred_hour, received_day FROM outcome_tool_counts WHERE NOT folded
  ), tools_gone AS (
    DELETE FROM outcome_tool_counts c USING tools_fresh f
    WHERE c.server = f.server AND c.tool_name = f.tool_name AND c.occurred_hour = f.occurred_hour
      AND c.received_day = f.received_day
    RETURNING c.server, c.tool_name, c.occurred_hour, c.received_day, c.calls, c.failures, c.advertised, c.last_at, c.advertised_at
  ), tools_folded AS (
    INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised, last_at, advertised_at, folded)
    SELECT server, tool_name, occurred_hour, received_day, sum(calls), sum(failures), sum(advertised), max(last_at),
           CASE WHEN sum(advertised) > 0 THEN max(advertised_at) END, true
    FROM tools_gone GROUP BY 1, 2, 3, 4 HAVING sum(calls) <> 0
  )
  SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM tools_gone)
$$;

-- Before a partition of outcome_records covering [p_lower, p_upper) is dropped: its records'
-- groups go with it, in both tables. Whole days (every partition the console makes): the rows of
-- those receipt days; otherwise the partition's own records, counted out.
CREATE OR REPLACE FUNCTION outcome_counts_forget(p_partition text, p_lower timestamptz, p_upper timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF date_bin('1 day', p_lower, timestamptz '2000-01-01 00:00:00+00') = p_lower
     AND date_bin('1 day', p_upper, timestamptz '2000-01-01 00:00:00+00') = p_upper THEN
    DELETE FROM outcome_counts WHERE received_day >= p_lower AND received_day < p_upper;
    DELETE FROM outcome_tool_counts WHERE received_day >= p_lower AND received_day < p_upper;
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

-- What is stored already, folded.
INSERT INTO outcome_tool_counts (server, tool_name, occurred_hour, received_day, calls, failures, advertised, last_at, advertised_at, folded)
SELECT server, tool_name,
       date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
       date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
       count(*), count(*) FILTER (WHERE NOT (delivery = 'completed' AND category = 'ok')),
       count(*) FILTER (WHERE tool_annotations IS NOT NULL),
       max(occurred_at), max(occurred_at) FILTER (WHERE tool_annotations IS NOT NULL), true
FROM outcome_records GROUP BY 1, 2, 3, 4;
