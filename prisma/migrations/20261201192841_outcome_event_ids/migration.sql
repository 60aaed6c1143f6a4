-- One (api_key_id, event_id) across the partitions of outcome_records, kept in a table of its own.
--
-- Until now a BEFORE INSERT trigger took a transaction-level advisory lock on the API key and
-- probed every partition for the pair. The lock, held to commit, made one key's batches commit
-- one at a time, across every round trip of their transactions: bench:ingest fell from 13,773 to
-- 3,867 records/s. Here the pair is the primary key of an unpartitioned table, claimed by the
-- same trigger with INSERT ... ON CONFLICT DO NOTHING: a unique index's own wait, so an insert of
-- a pair that a concurrent transaction is inserting waits for it to commit or roll back (then
-- skips or goes ahead), and every other insert goes on in parallel, whatever its key. Every
-- writer passes through the trigger, COPY included.
--
-- A taken pair is still free to its own record, moving between partitions (retention puts kept
-- records back; a new partition takes its range's rows from the default one), and to a new
-- record when the one holding it is gone (retention deleted it): the claim is then taken over,
-- under the row's lock, so two such inserts at once store one record. Retention deletes the
-- claims of the rows it deletes in batches, and sweeps those of dropped partitions afterwards
-- (lib/server/data/retention.ts).
--
-- Lookups of stored records by pair (ingestion's replays) go through this table to the record's
-- id, so outcome_records no longer needs its (api_key_id, event_id) index: one index fewer to
-- maintain per record, for the one this table adds.

-- DropIndex
DROP INDEX "outcome_records_api_key_id_event_id_idx";

-- CreateTable
CREATE TABLE "outcome_event_ids" (
    "api_key_id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "organization" TEXT NOT NULL,
    "record_id" UUID NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "outcome_event_ids_pkey" PRIMARY KEY ("api_key_id","event_id")
);

-- The pairs already stored (the old trigger kept them unique), in receipt order.
INSERT INTO "outcome_event_ids" (api_key_id, event_id, organization, record_id, received_at)
SELECT api_key_id, event_id, organization, id, received_at FROM "outcome_records" ORDER BY received_at, received_seq;

-- CreateIndex
CREATE INDEX "outcome_event_ids_received_at_idx" ON "outcome_event_ids"("received_at");

-- The trigger keeps its name and its place; only its function changes.
CREATE OR REPLACE FUNCTION outcome_records_event_unique() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  holder uuid;
BEGIN
  LOOP
    INSERT INTO outcome_event_ids (api_key_id, event_id, organization, record_id, received_at)
    VALUES (NEW.api_key_id, NEW.event_id, NEW.organization, NEW.id, NEW.received_at)
    ON CONFLICT (api_key_id, event_id) DO NOTHING;
    IF FOUND THEN
      RETURN NEW;
    END IF;
    -- Taken, and committed (ON CONFLICT waited for an insert in flight). Each statement here
    -- runs on a fresh snapshot (VOLATILE, read committed): it sees what that wait let through.
    SELECT e.record_id INTO holder FROM outcome_event_ids e
    WHERE e.api_key_id = NEW.api_key_id AND e.event_id = NEW.event_id
    FOR UPDATE;
    IF FOUND THEN
      -- The same record moving between partitions.
      IF holder = NEW.id THEN
        RETURN NEW;
      END IF;
      -- Stored: the row is skipped, as ON CONFLICT DO NOTHING would.
      IF EXISTS (SELECT 1 FROM outcome_records r WHERE r.id = holder) THEN
        RETURN NULL;
      END IF;
      -- Its record is gone: this one takes the claim over, under the row lock taken above.
      UPDATE outcome_event_ids
      SET organization = NEW.organization, record_id = NEW.id, received_at = NEW.received_at
      WHERE api_key_id = NEW.api_key_id AND event_id = NEW.event_id;
      RETURN NEW;
    END IF;
    -- Swept away meanwhile: claim it again.
  END LOOP;
END
$$;

-- A record's time of receipt is never changed by the console; should anything change it (a move
-- by hand, a test), its claim follows, so that lookups and the sweep find the record where it is.
CREATE FUNCTION outcome_records_event_moved() RETURNS trigger LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE outcome_event_ids SET received_at = NEW.received_at
  WHERE api_key_id = OLD.api_key_id AND event_id = OLD.event_id AND record_id = OLD.id;
  RETURN NEW;
END
$$;

CREATE TRIGGER "outcome_records_event_moved" BEFORE UPDATE OF "received_at" ON "outcome_records"
FOR EACH ROW WHEN (OLD.received_at IS DISTINCT FROM NEW.received_at) EXECUTE FUNCTION outcome_records_event_moved();
