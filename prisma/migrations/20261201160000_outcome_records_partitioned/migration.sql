-- outcome_records partitioned by time (DESIGN.md "Architecture"): declarative RANGE partitions
-- on received_at, monthly unless OUTCOME_PARTITION_INTERVAL says otherwise, created ahead by the
-- console (lib/server/jobs/partitions.ts) through outcome_records_ensure_partitions() below, and
-- a DEFAULT partition for anything outside them. Retention drops whole partitions past the limit
-- (lib/server/data/retention.ts). What Prisma cannot express lives only here: the partitioning,
-- the partitions, the two functions and the trigger; schema.prisma says @@id([id, receivedAt])
-- and @@index([apiKeyId, eventId]), which is exactly what Prisma sees of the parent table. The key
-- leads with organization, the column a per-tenant distribution (Citus) would shard by
-- (lib/server/data/tenant-keys.test.ts).
--
-- An existing database's rows are moved in this transaction: the table is rebuilt from the old
-- one with LIKE (so columns that earlier migrations added come along), the rows copied with
-- INSERT ... SELECT *, every index of the old table recreated under its own name.
--
-- Uniqueness per (api_key_id, event_id), which ingestion relies on: a unique index on a
-- partitioned table must include the partition key, and (api_key_id, event_id, received_at) would
-- let a retry arriving later be stored twice. Instead a BEFORE INSERT trigger takes a
-- transaction-level advisory lock on the API key and skips the row when the pair is stored in any
-- partition: ON CONFLICT (api_key_id, event_id) DO NOTHING, for every writer. One lock per key,
-- not per pair: a transaction re-taking a lock it holds uses no new slot of the shared lock
-- table, while a lock per row would take a slot per record (a few concurrent batches of 1,000
-- exhaust max_locks_per_transaction: "out of shared memory"). The price: one key's inserts run
-- one transaction at a time (other keys' in parallel). The lock makes a
-- concurrent insert of the same pair wait for the first to commit or roll back, and the check
-- (a fresh snapshot: the function is VOLATILE, under READ COMMITTED) then sees its row. Under
-- REPEATABLE READ or SERIALIZABLE the check could miss a pair committed after the snapshot was
-- taken; ingestion runs in READ COMMITTED, the default. Chosen over a separate unpartitioned
-- dedupe table because that table would have to be purged row by row with its records, and
-- dropping a month would again cost in proportion to the month.

-- 1. The old table steps aside; its sequence is kept (received_seq continues).
ALTER TABLE "outcome_records" RENAME TO "outcome_records_unpartitioned";

CREATE TABLE "outcome_records" (
  LIKE "outcome_records_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED
    INCLUDING IDENTITY INCLUDING STORAGE INCLUDING COMMENTS
) PARTITION BY RANGE ("received_at");

ALTER SEQUENCE "outcome_records_received_seq_seq" OWNED BY "outcome_records"."received_seq";

-- 2. Which partitions exist, with their bounds (NULL bounds: the default partition).
CREATE FUNCTION outcome_records_partitions()
RETURNS TABLE (name text, lower_bound timestamptz, upper_bound timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT c.relname::text,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$FROM \('([^']*)'\)$re$)::timestamptz,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$TO \('([^']*)'\)$re$)::timestamptz
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'outcome_records'::regclass
  ORDER BY 2 NULLS LAST
$$;

-- 3. Creates the partitions that cover [p_from, p_upto), one per p_unit ('day', 'week', 'month',
-- 'quarter', 'year'; UTC boundaries), leaving existing partitions as they are (a range already
-- covered is skipped, a new one is clipped to the next existing one, so changing the interval
-- never overlaps). Rows the default partition holds in a new range move into it. Idempotent;
-- one caller at a time (a transaction-level advisory lock: "partitio"). Answers the names created.
CREATE FUNCTION outcome_records_ensure_partitions(p_from timestamptz, p_upto timestamptz, p_unit text DEFAULT 'month')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  nxt timestamptz;
  next_lower timestamptz;
  covered_upto timestamptz;
  part text;
  step interval;
  has_default boolean;
BEGIN
  IF p_unit NOT IN ('day', 'week', 'month', 'quarter', 'year') THEN
    RAISE EXCEPTION 'outcome partitions: unknown interval %, expected day, week, month, quarter or year', p_unit
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  step := CASE p_unit WHEN 'quarter' THEN interval '3 months' ELSE ('1 ' || p_unit)::interval END;
  PERFORM pg_advisory_xact_lock(x'706172746974696f'::bigint);
  has_default := EXISTS (SELECT 1 FROM outcome_records_partitions() p WHERE p.lower_bound IS NULL);
  t := date_trunc(p_unit, p_from AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  WHILE t < p_upto LOOP
    SELECT p.upper_bound INTO covered_upto FROM outcome_records_partitions() p
    WHERE p.lower_bound <= t AND t < p.upper_bound;
    IF covered_upto IS NOT NULL THEN
      t := covered_upto;
      CONTINUE;
    END IF;
    nxt := (date_trunc(p_unit, t AT TIME ZONE 'UTC') + step) AT TIME ZONE 'UTC';
    SELECT min(p.lower_bound) INTO next_lower FROM outcome_records_partitions() p WHERE p.lower_bound > t;
    IF next_lower IS NOT NULL AND next_lower < nxt THEN
      nxt := next_lower;
    END IF;
    part := 'outcome_records_p' || to_char(t AT TIME ZONE 'UTC', 'YYYYMMDD');
    IF to_char(t AT TIME ZONE 'UTC', 'HH24MISS') <> '000000' THEN
      part := part || 't' || to_char(t AT TIME ZONE 'UTC', 'HH24MISS');
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE outcome_records INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', part);
    -- Spares ATTACH a scan of the new table.
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (received_at IS NOT NULL AND received_at >= %L AND received_at < %L)',
      part, part || '_range', t, nxt);
    IF has_default THEN
      EXECUTE format('WITH moved AS (DELETE FROM outcome_records_default WHERE received_at >= $1 AND received_at < $2 RETURNING *)
        INSERT INTO %I SELECT * FROM moved', part) USING t, nxt;
    END IF;
    EXECUTE format('ALTER TABLE outcome_records ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, t, nxt);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_range');
    RETURN NEXT part;
    t := nxt;
  END LOOP;
END
$$;

-- 4. Partitions for every month the old rows span, up to three months ahead, and the default.
SELECT outcome_records_ensure_partitions(
  least(coalesce((SELECT min(received_at) FROM outcome_records_unpartitioned), now()), now()),
  now() + interval '3 months');
CREATE TABLE "outcome_records_default" PARTITION OF "outcome_records" DEFAULT;

-- 5. The rows, then the indexes (built once per partition, after the copy).
INSERT INTO "outcome_records" SELECT * FROM "outcome_records_unpartitioned";

CREATE TEMP TABLE outcome_records_index_definitions ON COMMIT DROP AS
SELECT ic.relname AS name, pg_get_indexdef(ix.indexrelid) AS definition, ix.indisprimary AS is_primary, ix.indisunique AS is_unique
FROM pg_index ix JOIN pg_class ic ON ic.oid = ix.indexrelid
WHERE ix.indrelid = 'outcome_records_unpartitioned'::regclass;

DROP TABLE "outcome_records_unpartitioned";

DO $$
DECLARE
  d record;
BEGIN
  FOR d IN SELECT * FROM outcome_records_index_definitions ORDER BY name LOOP
    IF d.is_primary THEN
      ALTER TABLE "outcome_records" ADD CONSTRAINT "outcome_records_pkey" PRIMARY KEY ("organization", "id", "received_at");
    ELSIF d.name = 'outcome_records_api_key_id_event_id_key' THEN
      CREATE INDEX "outcome_records_api_key_id_event_id_idx" ON "outcome_records"("api_key_id", "event_id");
    ELSIF d.is_unique THEN
      RAISE EXCEPTION 'outcome_records: unique index % cannot carry over to a partitioned table without received_at; decide its rule', d.name;
    ELSE
      EXECUTE regexp_replace(d.definition, ' ON (\S+\.)?outcome_records_unpartitioned ', ' ON outcome_records ');
    END IF;
  END LOOP;
END
$$;

-- 6. One (api_key_id, event_id) across every partition (see the top of this file).
CREATE FUNCTION outcome_records_event_unique() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('outcome_records/' || NEW.api_key_id::text, 0));
  IF EXISTS (SELECT 1 FROM outcome_records o WHERE o.api_key_id = NEW.api_key_id AND o.event_id = NEW.event_id) THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "outcome_records_event_unique" BEFORE INSERT ON "outcome_records"
FOR EACH ROW EXECUTE FUNCTION outcome_records_event_unique();
