-- Appending to the audit chain in one call: the chain's lock, its head and the new entry, with
-- its hash computed here, where the lock is, instead of three round trips from the app while
-- holding it. The hash is exactly lib/audit/chain.ts `auditHash`:
--   'sha256:' ‖ hex(SHA-256(prev_hash ‖ '\n' ‖ canonical JSON of the entry))
-- The app passes the canonical JSON in pieces (lib/audit/chain.ts `canonicalTemplate`, built
-- with the same canonicalJson); this function fills in only what it alone knows: `at`, as
-- Date#toISOString() writes it (UTC, milliseconds), and `seq`, in decimal. `at` is truncated to
-- milliseconds before it is stored, so the stored row re-hashes to the same value, and taken
-- from the database clock after the lock, so it never goes backwards along the chain.
-- The lock is the app's own (lib/server/audit.ts AUDIT_LOCK = 0x636f756e746572), so appends
-- made the old way by an instance still running the previous release serialize with these.
CREATE FUNCTION audit_append(p_actor text, p_action text, p_target_type text, p_target_id text, p_data jsonb, p_canonical text[])
RETURNS bigint LANGUAGE plpgsql AS $$
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

-- Redemptions in one statement (lib/server/grants.ts redeemGrant): a batch of one when the app is
-- idle, more when redemptions arrive faster than the database commits them, so that many share one
-- commit (one WAL flush under the chain's lock). For each item, in grant id order: the conditional
-- update of the grant (unredeemed, unrevoked, unexpired by the database clock, the same server,
-- tool and argument digest, and in the key's organization when it has one) and the request's move
-- to redeemed; then, the chain's lock last (after every row lock, as in every other transaction,
-- so batches and revocations never deadlock), the audit entry of each redeemed item. All or
-- nothing: a refusal by a trigger undoes the batch, and the app then redeems each item alone.
-- The triggers on grants and approval_requests still judge every change.
--   p_items: [{grant, key, organization, server, tool, argsDigest, actor, action, targetType,
--              data (canonical JSON text), canonical: the audit entry's 4 pieces around at, seq
--              and targetId (the approval id, filled in here)}]
-- Answers one row per redeemed item, by its index in p_items (from 0); none for an item whose
-- grant is not redeemable now.
CREATE FUNCTION redeem_grants(p_items jsonb)
RETURNS TABLE (idx int, approval_id uuid, redeemed_at timestamptz) LANGUAGE plpgsql AS $$
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
