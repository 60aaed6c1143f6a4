-- The CURRENT definition of every SQL function and trigger that prisma/migrations leave in the
-- database, so that none has to be read by replaying migrations. Kept equal to the migrated
-- database by lib/server/db/sql-functions.test.ts. A change to a function or trigger is made by a
-- new migration (npm run db:create-migration) AND here, in the same change. Nothing applies this
-- file to a database: the migrations do.

-- ── Audit ──────────────────────────────────────────────────────────────────────────────────────

-- The audit log is evidence: the database itself refuses to change or remove an entry.
CREATE OR REPLACE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_entries is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;

-- Row by row, so that no UPDATE or DELETE of an entry gets through, whatever its WHERE clause.
CREATE TRIGGER audit_entries_no_update_delete BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only();

-- TRUNCATE fires no row trigger, so it is refused by a statement-level one.
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_append_only();

-- Appends to the audit hash chain in one call (hash as lib/audit/chain.ts auditHash): no round trip under its lock.
CREATE OR REPLACE FUNCTION audit_append(
  p_actor text, p_action text, p_target_type text, p_target_id text, p_data jsonb, p_canonical text[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_prev text;
  v_at timestamptz;
BEGIN
  IF array_length(p_canonical, 1) IS DISTINCT FROM 3 THEN
    RAISE EXCEPTION 'audit_append needs the canonical entry in 3 pieces, around at and seq' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM pg_advisory_xact_lock(x'636f756e746572'::bigint);
  SELECT e.seq, e.hash INTO v_seq, v_prev FROM audit_entries e ORDER BY e.seq DESC LIMIT 1;
  v_seq := coalesce(v_seq, 0) + 1;
  v_prev := coalesce(v_prev, 'sha256:' || repeat('0', 64));
  v_at := date_trunc('milliseconds', clock_timestamp());
  INSERT INTO audit_entries (seq, at, actor, action, target_type, target_id, data, prev_hash, hash)
  VALUES (v_seq, v_at, p_actor, p_action, p_target_type, p_target_id, p_data, v_prev,
    'sha256:' || encode(sha256(convert_to(
      v_prev || E'\n' || p_canonical[1] || to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        || p_canonical[2] || v_seq::text || p_canonical[3], 'UTF8')), 'hex'));
  RETURN v_seq;
END $$;

-- ── Approvals and grants ───────────────────────────────────────────────────────────────────────

-- The approval lifecycle holds whatever the application does: legal moves only, fixed subject, arguments only
-- ever erased, no deletes.
CREATE OR REPLACE FUNCTION approval_requests_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'approval requests are never deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF TG_OP = 'INSERT' THEN
    -- Born pending, or approved at once only when policy requires no approval.
    IF NOT (NEW.status = 'pending' OR (NEW.status = 'approved' AND NEW.required_approvals = 0)) THEN
      RAISE EXCEPTION 'a new approval request is pending (or approved when it needs no approval)' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF (NEW.id, NEW.request_ref, NEW.organization, NEW.principal, NEW.agent, NEW.server, NEW.tool_name,
      NEW.tool_annotations, NEW.annotations_trusted, NEW.args_digest, NEW.summary, NEW.resource_type, NEW.resource_id,
      NEW.required_approvals, NEW.expires_at, NEW.grant_ttl_seconds, NEW.requested_by_key_id, NEW.idempotency_key,
      NEW.request_hash, NEW.created_at, NEW.arguments_sent, NEW.tool_description)
     IS DISTINCT FROM
     (OLD.id, OLD.request_ref, OLD.organization, OLD.principal, OLD.agent, OLD.server, OLD.tool_name,
      OLD.tool_annotations, OLD.annotations_trusted, OLD.args_digest, OLD.summary, OLD.resource_type, OLD.resource_id,
      OLD.required_approvals, OLD.expires_at, OLD.grant_ttl_seconds, OLD.requested_by_key_id, OLD.idempotency_key,
      OLD.request_hash, OLD.created_at, OLD.arguments_sent, OLD.tool_description) THEN
    RAISE EXCEPTION 'what an approval request is about never changes' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.arguments_sealed IS NOT NULL AND NEW.arguments_sealed IS DISTINCT FROM OLD.arguments_sealed THEN
    RAISE EXCEPTION 'the arguments of an approval request are only ever erased' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status <> OLD.status AND NOT (
       (OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired', 'revoked'))
    OR (OLD.status = 'approved' AND NEW.status IN ('redeemed', 'revoked'))) THEN
    RAISE EXCEPTION 'an approval request cannot go from % to %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.status = 'approved' AND OLD.status = 'pending' AND
     (SELECT count(*) FROM approval_decisions d WHERE d.approval_id = NEW.id AND d.decision = 'approve') < NEW.required_approvals THEN
    RAISE EXCEPTION 'approval request % has fewer approvals than it requires', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

-- Every write to approval_requests is judged, so no code path can skip the lifecycle.
CREATE TRIGGER approval_requests_lifecycle BEFORE INSERT OR UPDATE OR DELETE ON approval_requests
  FOR EACH ROW EXECUTE FUNCTION approval_requests_lifecycle();

-- Erases a request's arguments in the very statement that makes it terminal, whichever code path
-- (a denial, the expiry sweep, a revocation, redeem_grants) wrote it.
CREATE OR REPLACE FUNCTION approval_requests_erase_arguments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.arguments_sealed := NULL;
  RETURN NEW;
END $$;

-- Only when the new status is terminal and something is left to erase.
CREATE TRIGGER approval_requests_erase_arguments BEFORE UPDATE ON approval_requests
  FOR EACH ROW WHEN (NEW.status IN ('denied', 'expired', 'revoked', 'redeemed') AND NEW.arguments_sealed IS NOT NULL)
  EXECUTE FUNCTION approval_requests_erase_arguments();

-- A decision only on a pending, unexpired request, never by the request's own principal, never altered.
CREATE OR REPLACE FUNCTION approval_decisions_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r approval_requests%ROWTYPE;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    RAISE EXCEPTION 'approval decisions are never changed or deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  SELECT * INTO r FROM approval_requests WHERE id = NEW.approval_id FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no approval request %', NEW.approval_id USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF NEW.reviewer_principal = r.principal
     OR EXISTS (SELECT 1 FROM users u WHERE u.id = NEW.reviewer_id AND u.principal_id = r.principal) THEN
    RAISE EXCEPTION 'the principal of approval request % cannot decide on it', r.id USING ERRCODE = 'check_violation';
  END IF;
  IF r.status <> 'pending' OR r.expires_at <= clock_timestamp() THEN
    RAISE EXCEPTION 'approval request % is not pending', r.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

-- Every write to approval_decisions is judged, so no code path can skip the guard.
CREATE TRIGGER approval_decisions_guard BEFORE INSERT OR UPDATE OR DELETE ON approval_decisions
  FOR EACH ROW EXECUTE FUNCTION approval_decisions_guard();

-- A grant only for an approved request, with its exact binding; redeemed at most once, unexpired and unrevoked.
CREATE OR REPLACE FUNCTION grants_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r approval_requests%ROWTYPE;
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'grants are never deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT * INTO r FROM approval_requests WHERE id = NEW.approval_id FOR SHARE;
    IF NOT FOUND OR r.status <> 'approved' THEN
      RAISE EXCEPTION 'a grant needs an approved request' USING ERRCODE = 'check_violation';
    END IF;
    IF (NEW.server, NEW.tool_name, NEW.args_digest) IS DISTINCT FROM (r.server, r.tool_name, r.args_digest) THEN
      RAISE EXCEPTION 'a grant carries exactly its request''s server, tool and argument digest' USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.redeemed_at IS NOT NULL OR NEW.revoked_at IS NOT NULL THEN
      RAISE EXCEPTION 'a grant starts unredeemed and unrevoked' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.redeemed_at IS NOT NULL THEN
    RAISE EXCEPTION 'grant % is already redeemed', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.revoked_at IS NOT NULL THEN
    RAISE EXCEPTION 'grant % is revoked', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF (NEW.id, NEW.approval_id, NEW.server, NEW.tool_name, NEW.args_digest, NEW.issued_at, NEW.expires_at)
     IS DISTINCT FROM (OLD.id, OLD.approval_id, OLD.server, OLD.tool_name, OLD.args_digest, OLD.issued_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'a grant''s binding and lifetime never change' USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.redeemed_at IS NOT NULL AND OLD.expires_at <= clock_timestamp() THEN
    RAISE EXCEPTION 'grant % has expired', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;

-- Every write to grants is judged, so no code path can skip the guard.
CREATE TRIGGER grants_guard BEFORE INSERT OR UPDATE OR DELETE ON grants
  FOR EACH ROW EXECUTE FUNCTION grants_guard();

-- Redeems a batch of grants in one statement: redemptions arriving together share one commit and audit lock.
CREATE OR REPLACE FUNCTION redeem_grants(p_items jsonb)
  RETURNS TABLE(idx integer, approval_id uuid, redeemed_at timestamptz) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_item jsonb;
  v_idx int;
  v_approval uuid;
  v_redeemed timestamptz;
  v_moved int;
  v_done int[] := '{}';
  v_approvals uuid[] := '{}';
  v_times timestamptz[] := '{}';
  v_parts text[];
BEGIN
  FOR v_idx, v_item IN
    SELECT (t.ord - 1)::int, t.item FROM jsonb_array_elements(p_items) WITH ORDINALITY AS t(item, ord)
    ORDER BY (t.item->>'grant')::uuid, t.ord
  LOOP
    IF jsonb_array_length(v_item->'canonical') IS DISTINCT FROM 4 THEN
      RAISE EXCEPTION 'redeem_grants needs each audit entry in 4 pieces, around at, seq and targetId' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE grants g SET redeemed_at = clock_timestamp(), redeemed_by_key_id = (v_item->>'key')::uuid
    WHERE g.id = (v_item->>'grant')::uuid AND g.redeemed_at IS NULL AND g.revoked_at IS NULL AND g.expires_at > clock_timestamp()
      AND g.server = v_item->>'server' AND g.tool_name = v_item->>'tool' AND g.args_digest = v_item->>'argsDigest'
      AND (v_item->>'organization' IS NULL
           OR EXISTS (SELECT 1 FROM approval_requests r WHERE r.id = g.approval_id AND r.organization = v_item->>'organization'))
    RETURNING g.approval_id, g.redeemed_at INTO v_approval, v_redeemed;
    CONTINUE WHEN NOT FOUND;
    UPDATE approval_requests r SET status = 'redeemed', version = r.version + 1 WHERE r.id = v_approval AND r.status = 'approved';
    GET DIAGNOSTICS v_moved = ROW_COUNT;
    IF v_moved <> 1 THEN
      RAISE EXCEPTION 'invariant: the redeemable grant % belongs to a request that is not approved', v_item->>'grant';
    END IF;
    v_done := v_done || v_idx;
    v_approvals := v_approvals || v_approval;
    v_times := v_times || v_redeemed;
  END LOOP;
  FOR i IN 1 .. coalesce(array_length(v_done, 1), 0) LOOP
    v_item := p_items->v_done[i];
    v_parts := ARRAY[v_item->'canonical'->>0, v_item->'canonical'->>1, v_item->'canonical'->>2, v_item->'canonical'->>3];
    PERFORM audit_append(v_item->>'actor', v_item->>'action', v_item->>'targetType', v_approvals[i]::text, (v_item->>'data')::jsonb,
      ARRAY[v_parts[1], v_parts[2], v_parts[3] || v_approvals[i]::text || v_parts[4]]);
    idx := v_done[i];
    approval_id := v_approvals[i];
    redeemed_at := v_times[i];
    RETURN NEXT;
  END LOOP;
END $$;

-- ── Webhooks (the outbox) ──────────────────────────────────────────────────────────────────────

-- Writes an approval's event and deliveries in the change's own transaction: notified exactly when it commits.
CREATE OR REPLACE FUNCTION webhook_enqueue(p_type text, p_approval uuid, p_extra jsonb DEFAULT '{}'::jsonb)
  RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
BEGIN
  INSERT INTO webhook_events (type, approval_id, data)
  SELECT p_type, r.id, jsonb_build_object(
      'approvalId', r.id, 'requestRef', r.request_ref, 'organization', r.organization, 'principal', r.principal,
      'server', r.server, 'tool', r.tool_name, 'annotationsTrusted', r.annotations_trusted, 'status', r.status,
      'requiredApprovals', r.required_approvals, 'expiresAt', r.expires_at) || coalesce(p_extra, '{}'::jsonb)
  FROM approval_requests r WHERE r.id = p_approval
  RETURNING id INTO v_event;
  IF v_event IS NULL THEN
    RAISE EXCEPTION 'webhook_enqueue: no approval request %', p_approval USING ERRCODE = 'foreign_key_violation';
  END IF;
  PERFORM pg_advisory_xact_lock_shared(x'776562686f6f6b73'::bigint);
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT v_event, e.id FROM webhook_endpoints e WHERE e.enabled AND p_type = ANY (e.events);
  RETURN v_event;
END $$;

-- An event about something other than an approval request (tool.changed): no approval, its data as
-- given (identifiers only), one delivery per enabled endpoint subscribed to its type.
CREATE OR REPLACE FUNCTION webhook_enqueue_data(p_type text, p_data jsonb)
  RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
  v_event uuid;
BEGIN
  INSERT INTO webhook_events (type, approval_id, data) VALUES (p_type, NULL, p_data) RETURNING id INTO v_event;
  PERFORM pg_advisory_xact_lock_shared(x'776562686f6f6b73'::bigint);
  INSERT INTO webhook_deliveries (event_id, endpoint_id)
  SELECT v_event, e.id FROM webhook_endpoints e WHERE e.enabled AND p_type = ANY (e.events);
  RETURN v_event;
END $$;

-- A redemption's event is written by the statement that redeems the grant: redeem_grants needs no outbox code.
CREATE OR REPLACE FUNCTION webhook_grant_redeemed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM webhook_enqueue('grant.redeemed', NEW.approval_id,
    jsonb_build_object('status', 'redeemed', 'redeemedAt', NEW.redeemed_at));
  RETURN NULL;
END $$;

-- Only as redeemed_at is first set, so that each redemption is announced once.
CREATE TRIGGER grants_webhook_redeemed AFTER UPDATE OF redeemed_at ON grants
  FOR EACH ROW WHEN (OLD.redeemed_at IS NULL AND NEW.redeemed_at IS NOT NULL)
  EXECUTE FUNCTION webhook_grant_redeemed();

-- Events say what was (or will be) sent: written once by webhook_enqueue, never rewritten.
CREATE OR REPLACE FUNCTION webhook_events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'webhook events are not updated' USING ERRCODE = 'check_violation';
END $$;

-- Refuses every UPDATE, so that a delivery sends what was enqueued.
CREATE TRIGGER webhook_events_no_update BEFORE UPDATE ON webhook_events
  FOR EACH ROW EXECUTE FUNCTION webhook_events_immutable();

-- Deliveries have no foreign keys (their locks weighed on every enqueue): this cascades endpoint deletes instead.
CREATE OR REPLACE FUNCTION webhook_endpoints_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(x'776562686f6f6b73'::bigint);
  DELETE FROM webhook_deliveries d USING gone g WHERE d.endpoint_id = g.id;
  RETURN NULL;
END $$;

-- Statement-level with a transition table: one cascade per DELETE, however many endpoints it removes.
CREATE TRIGGER webhook_endpoints_cascade AFTER DELETE ON webhook_endpoints
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_endpoints_deleted();

-- The same cascade for deleted (purged) events; an event's deliveries all come in its own transaction.
CREATE OR REPLACE FUNCTION webhook_events_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_deliveries d USING gone g WHERE d.event_id = g.id;
  RETURN NULL;
END $$;

-- Statement-level with a transition table: one cascade per DELETE, however many events it removes.
CREATE TRIGGER webhook_events_cascade AFTER DELETE ON webhook_events
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION webhook_events_deleted();

-- ── Outcome records: partitions ────────────────────────────────────────────────────────────────

-- The partitions of outcome_records and their bounds (NULL: the default one), for partitioning and retention.
CREATE OR REPLACE FUNCTION outcome_records_partitions()
  RETURNS TABLE(name text, lower_bound timestamptz, upper_bound timestamptz) LANGUAGE sql STABLE AS $$
  SELECT c.relname::text,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$FROM \('([^']*)'\)$re$)::timestamptz,
         substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$TO \('([^']*)'\)$re$)::timestamptz
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = 'outcome_records'::regclass
  ORDER BY 2 NULLS LAST
$$;

-- Creates partitions ahead of time (idempotent, never overlapping), taking their rows out of the default one.
CREATE OR REPLACE FUNCTION outcome_records_ensure_partitions(
  p_from timestamptz, p_upto timestamptz, p_unit text DEFAULT 'month'
) RETURNS SETOF text LANGUAGE plpgsql AS $$
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

-- ── Outcome records: one record per (API key, event id) ────────────────────────────────────────

-- A partitioned table's unique index must hold the partition key: the (key, event id) pair is claimed here instead.
CREATE OR REPLACE FUNCTION outcome_records_event_unique() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- BEFORE INSERT, so that every writer (COPY included) passes through the claim and a duplicate is skipped.
CREATE TRIGGER outcome_records_event_unique BEFORE INSERT ON outcome_records
  FOR EACH ROW EXECUTE FUNCTION outcome_records_event_unique();

-- A record whose received_at changes moves partition: its claim follows, so lookups and the sweep find it.
CREATE OR REPLACE FUNCTION outcome_records_event_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE outcome_event_ids SET received_at = NEW.received_at
  WHERE api_key_id = OLD.api_key_id AND event_id = OLD.event_id AND record_id = OLD.id;
  RETURN NEW;
END
$$;

-- Only when received_at actually changes, so that other updates write no claim.
CREATE TRIGGER outcome_records_event_moved BEFORE UPDATE OF received_at ON outcome_records
  FOR EACH ROW WHEN (OLD.received_at IS DISTINCT FROM NEW.received_at) EXECUTE FUNCTION outcome_records_event_moved();

-- ── Outcome counts (the overview and the tools inventory) ──────────────────────────────────────

-- Keeps the overview's counts as records change, appending rows so that concurrent ingest batches never wait.
CREATE OR REPLACE FUNCTION outcome_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Inserted records counted in, one aggregate per statement (transition table) rather than per row.
CREATE TRIGGER outcome_counts_insert AFTER INSERT ON outcome_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();

-- An update counted as its new rows minus its old ones: changing no counted column writes nothing.
CREATE TRIGGER outcome_counts_update AFTER UPDATE ON outcome_records
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();

-- Deleted records counted out, so that the overview never counts what is gone.
CREATE TRIGGER outcome_counts_delete AFTER DELETE ON outcome_records
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_track();

-- The same for the tools inventory's per-tool calls, failures and sightings, so it never groups every record.
CREATE OR REPLACE FUNCTION outcome_tool_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Inserted records counted in, one aggregate per statement rather than per row.
CREATE TRIGGER outcome_tool_counts_insert AFTER INSERT ON outcome_records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();

-- An update counted as new rows minus old ones, and written when it moves a group's latest sighting.
CREATE TRIGGER outcome_tool_counts_update AFTER UPDATE ON outcome_records
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();

-- Deleted records counted out, so that the inventory never counts what is gone.
CREATE TRIGGER outcome_tool_counts_delete AFTER DELETE ON outcome_records
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION outcome_tool_counts_track();

-- TRUNCATE fires no transition-table trigger: records emptied out leave no counts behind.
CREATE OR REPLACE FUNCTION outcome_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM outcome_counts;
  DELETE FROM outcome_tool_counts;
  RETURN NULL;
END
$$;

-- Statement-level: the only kind of trigger TRUNCATE fires.
CREATE TRIGGER outcome_counts_truncate AFTER TRUNCATE ON outcome_records
  FOR EACH STATEMENT EXECUTE FUNCTION outcome_counts_truncated();

-- Folds each group's appended rows into one (both tables) so readers sum few rows; safe beside writers.
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

-- ── Retention ──────────────────────────────────────────────────────────────────────────────────

-- Dropping a partition fires no count trigger: its groups leave both count tables before the DROP.
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
