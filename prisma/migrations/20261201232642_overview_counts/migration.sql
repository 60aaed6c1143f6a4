-- The overview's counts kept as records change (lib/server/data/sql/stats.ts): before, the
-- overview counted the last seven days of outcome_records on every view, an index-only scan of
-- ~230,000 entries per statement at 1M records (two statements: ~150 ms each on a quiet machine,
-- 260-410 ms under load; bench:ui's overview at p95 279 ms). Now it reads these rows for the whole
-- hours of its windows (a few thousand, fewer once folded) and counts only the partial hours at
-- their edges from the records themselves, so its numbers stay exactly those of the records.
--
-- Kept by statement-level triggers on outcome_records (transition tables: one aggregate per
-- statement, never per row): each INSERT, UPDATE or DELETE through the parent appends one row per
-- group it changed, n = + inserted − deleted (an update: its new rows minus its old ones, so one
-- that changes no counted column nets to nothing and writes nothing). Append-only on purpose:
-- concurrent ingest batches never wait for each other on a shared counter row (an upsert would
-- hold that row's lock until commit and serialize every batch of the same hour). The rows of a
-- group are folded into one by outcome_counts_fold() (lib/server/jobs/overview-counts.ts, every
-- minute). Statements that bypass the parent maintain the counts themselves: the purge's
-- per-partition DELETE (lib/server/data/sql/retention.ts deleteOutcomeBatch) appends its own
-- negative rows, and a dropped partition's groups are forgotten by outcome_counts_forget()
-- before the DROP (received_day is in the key for this: partitions are whole UTC days of
-- received_at). Moving rows out of the default partition (outcome_records_ensure_partitions)
-- changes no count.

-- CreateTable
CREATE TABLE "outcome_counts" (
    "id" BIGSERIAL NOT NULL,
    "occurred_hour" TIMESTAMPTZ(3) NOT NULL,
    "received_day" TIMESTAMPTZ(3) NOT NULL,
    "delivery" "outcome_delivery" NOT NULL,
    "category" "outcome_category" NOT NULL,
    "read_only" BOOLEAN NOT NULL,
    "unresolved" BOOLEAN NOT NULL,
    "n" BIGINT NOT NULL,
    "folded" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "outcome_counts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "outcome_counts_occurred_hour_idx" ON "outcome_counts"("occurred_hour");

-- Trigger rows are folded by the job: found through this index, not by reading every row.
CREATE INDEX "outcome_counts_unfolded_idx" ON "outcome_counts"("occurred_hour") WHERE NOT "folded";

-- No write may slip between the count of what is stored and the triggers (this transaction
-- holds the lock until it commits).
LOCK TABLE "outcome_records" IN SHARE MODE;

CREATE FUNCTION outcome_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
    SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, count(*)
    FROM new_rows GROUP BY 1, 2, 3, 4, 5, 6;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
    SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, -count(*)
    FROM old_rows GROUP BY 1, 2, 3, 4, 5, 6;
  ELSE
    INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
    SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
           date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
           delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, sum(d)
    FROM (SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows) AS changed
    GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER outcome_counts_insert AFTER INSERT ON outcome_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();
CREATE TRIGGER outcome_counts_update AFTER UPDATE ON outcome_records
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();
CREATE TRIGGER outcome_counts_delete AFTER DELETE ON outcome_records
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();

CREATE FUNCTION outcome_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM outcome_counts;
  RETURN NULL;
END
$$;
CREATE TRIGGER outcome_counts_truncate AFTER TRUNCATE ON outcome_records
  FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_truncated();

-- Folds every group that has trigger rows into one row (none when its rows sum to 0); answers how
-- many rows it replaced. Safe beside writers and another fold: it deletes only rows its snapshot
-- sees (a concurrent fold's deletions are skipped, its new row stays), so every sum is unchanged.
CREATE FUNCTION outcome_counts_fold() RETURNS bigint LANGUAGE sql AS $$
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
  )
  SELECT count(*) FROM gone
$$;

-- Before a partition of outcome_records covering [p_lower, p_upper) is dropped: its records' groups
-- go with it. Whole days (every partition the console makes): the rows of those receipt days;
-- otherwise the partition's own records, counted out.
CREATE FUNCTION outcome_counts_forget(p_partition text, p_lower timestamptz, p_upper timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF date_bin('1 day', p_lower, timestamptz '2000-01-01 00:00:00+00') = p_lower
     AND date_bin('1 day', p_upper, timestamptz '2000-01-01 00:00:00+00') = p_upper THEN
    DELETE FROM outcome_counts WHERE received_day >= p_lower AND received_day < p_upper;
  ELSE
    EXECUTE format($sql$
      INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n)
      SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
             date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
             delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, -count(*)
      FROM %I GROUP BY 1, 2, 3, 4, 5, 6$sql$, p_partition);
  END IF;
END
$$;

-- What is stored already, folded.
INSERT INTO outcome_counts (occurred_hour, received_day, delivery, category, read_only, unresolved, n, folded)
SELECT date_bin('1 hour', occurred_at, timestamptz '2000-01-01 00:00:00+00'),
       date_bin('1 day', received_at, timestamptz '2000-01-01 00:00:00+00'),
       delivery, category, read_only, delivery = 'unknown' AND resolved_at IS NULL, count(*), true
FROM outcome_records GROUP BY 1, 2, 3, 4, 5, 6;
