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

-- A redemption in one call (lib/server/grants.ts redeemGrant): the conditional update of the
-- grant (unredeemed, unrevoked, unexpired by the database clock, the same server, tool and
-- argument digest, and in the key's organization when it has one), the request's move to
-- redeemed and the audit entry, all or nothing. No row when the grant is not redeemable; the
-- triggers on grants and approval_requests still judge every change. The audit entry's pieces
-- come from the app as for audit_append, with a third hole for its target, the approval id.
CREATE FUNCTION redeem_grant(p_grant uuid, p_key uuid, p_organization text, p_server text, p_tool text, p_args_digest text,
  p_actor text, p_action text, p_target_type text, p_data jsonb, p_canonical text[])
RETURNS TABLE (approval_id uuid, redeemed_at timestamptz) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_approval uuid;
  v_redeemed timestamptz;
  v_moved int;
BEGIN
  IF array_length(p_canonical, 1) IS DISTINCT FROM 4 THEN
    RAISE EXCEPTION 'redeem_grant needs the canonical audit entry in 4 pieces, around at, seq and targetId' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  UPDATE grants g SET redeemed_at = clock_timestamp(), redeemed_by_key_id = p_key
  WHERE g.id = p_grant AND g.redeemed_at IS NULL AND g.revoked_at IS NULL AND g.expires_at > clock_timestamp()
    AND g.server = p_server AND g.tool_name = p_tool AND g.args_digest = p_args_digest
    AND (p_organization IS NULL OR EXISTS (SELECT 1 FROM approval_requests r WHERE r.id = g.approval_id AND r.organization = p_organization))
  RETURNING g.approval_id, g.redeemed_at INTO v_approval, v_redeemed;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE approval_requests r SET status = 'redeemed', version = r.version + 1 WHERE r.id = v_approval AND r.status = 'approved';
  GET DIAGNOSTICS v_moved = ROW_COUNT;
  IF v_moved <> 1 THEN
    RAISE EXCEPTION 'invariant: the redeemable grant % belongs to a request that is not approved', p_grant;
  END IF;
  PERFORM audit_append(p_actor, p_action, p_target_type, v_approval::text, p_data,
    ARRAY[p_canonical[1], p_canonical[2], p_canonical[3] || v_approval::text || p_canonical[4]]);
  approval_id := v_approval;
  redeemed_at := v_redeemed;
  RETURN NEXT;
END $$;
