import 'server-only';
import type { Selectable } from 'kysely';
import { sql, type DB } from '../db/kysely';

// Approval requests and their grants: the conditional updates that settle them. Each runs inside
// the caller's Prisma transaction (lib/server/approvals/); every expiry is judged by the
// database's clock.

type Request = Selectable<DB['approval_requests']>;
type Grant = Selectable<DB['grants']>;

/** The database clock, as it moves (not the transaction's start). */
export const clockNow = () => sql<{ now: Date }>`SELECT clock_timestamp() AS now`;

/** The transaction's start by the database clock. */
export const transactionNow = () => sql<{ now: Date }>`SELECT now() AS now`;

/** Held until commit: one request per (key, Idempotency-Key) at a time; false when another holds it. */
export const tryIdempotencyLock = (lockClass: number, key: string) => sql<{ locked: boolean }>`
  SELECT pg_try_advisory_xact_lock(${lockClass}::int, hashtext(${key})) AS locked`;

/** The transaction's lock_timeout from now on: `ms` milliseconds, or null for the session's own. */
export const setLockTimeout = (ms: number | null) => sql<{ set: string }>`
  SELECT set_config('lock_timeout', coalesce(${ms === null ? null : `${ms}ms`}::text, reset_val), true) AS set
  FROM pg_settings WHERE name = 'lock_timeout'`;

/** The same lock as tryIdempotencyLock, waited for (up to the transaction's lock_timeout: 55P03 then). */
export const waitIdempotencyLock = (lockClass: number, key: string) => sql<{ locked: boolean }>`
  SELECT true AS locked FROM (SELECT pg_advisory_xact_lock(${lockClass}::int, hashtext(${key}))) AS l`;

/**
 * Takes one reviewer's turn: the version moves on if the request is pending, unexpired, at the
 * version the reviewer saw, not their own and not decided by them before.
 */
export const takeDecisionTurn = (id: string, version: number, principal: string, reviewerId: string) => sql<
  Pick<Request, 'required_approvals'>
>`
  UPDATE approval_requests r SET version = r.version + 1
  WHERE r.id = ${id}::uuid AND r.status = 'pending' AND r.version = ${version}::int
    AND r.expires_at > clock_timestamp() AND r.principal <> ${principal}
    AND NOT EXISTS (SELECT 1 FROM approval_decisions d WHERE d.approval_id = r.id AND d.reviewer_id = ${reviewerId}::uuid)
  RETURNING r.required_approvals`;

/**
 * After a reviewer's decision row is written: counts the approvals, settles the request (denied by
 * a deny, approved once the approvals suffice) and writes its webhook events (webhook_enqueue, the
 * outbox) — one statement, one round trip. `approval.decided` names the decision and its reviewer,
 * then `approval.approved` or `approval.denied` follows when it settled. webhook_enqueue reads the
 * request as it was before this statement, so each event is told the status it settled at.
 */
export const settleDecision = (id: string, decision: 'approve' | 'deny', reviewer: string) => sql<{
  approvals: number;
  status: 'pending' | 'approved' | 'denied';
}>`
  WITH counted AS (
    SELECT r.required_approvals,
      (SELECT count(*)::int FROM approval_decisions d WHERE d.approval_id = r.id AND d.decision = 'approve') AS approvals
    FROM approval_requests r WHERE r.id = ${id}::uuid
  ), settled AS (
    UPDATE approval_requests r SET status = CASE WHEN ${decision} = 'deny' THEN 'denied' ELSE 'approved' END::approval_status,
      decided_at = now()
    FROM counted c
    WHERE r.id = ${id}::uuid AND (${decision} = 'deny' OR c.approvals >= c.required_approvals)
    RETURNING r.status::text AS status
  ), outcome AS (
    SELECT c.approvals, coalesce((SELECT status FROM settled), 'pending') AS status FROM counted c
  ), events AS (
    SELECT 1 AS ord, 'approval.decided' AS type,
      jsonb_build_object('decision', ${decision}::text, 'reviewer', ${reviewer}::text, 'status', o.status)
        || CASE WHEN ${decision} = 'approve' THEN jsonb_build_object('approvals', o.approvals) ELSE '{}'::jsonb END AS extra
    FROM outcome o
    UNION ALL
    SELECT 2, 'approval.' || o.status, jsonb_build_object('status', o.status)
        || CASE WHEN o.status = 'approved' THEN jsonb_build_object('approvals', o.approvals) ELSE '{}'::jsonb END
    FROM outcome o WHERE o.status <> 'pending'
  )
  SELECT o.approvals, o.status,
    (SELECT count(webhook_enqueue(e.type, ${id}::uuid, e.extra) ORDER BY e.ord) FROM events e) AS events
  FROM outcome o`;

/** Issues the grant of a request just approved, its lifetime counted from now. */
export const insertGrant = (approvalId: string) => sql<Pick<Grant, 'id' | 'expires_at'>>`
  INSERT INTO grants (approval_id, server, tool_name, args_digest, expires_at)
  SELECT id, server, tool_name, args_digest, now() + make_interval(secs => grant_ttl_seconds)
  FROM approval_requests WHERE id = ${approvalId}::uuid
  RETURNING id, expires_at`;

/** Revokes the live grant of a request (unredeemed, unrevoked, unexpired), if it has one. */
export const revokeLiveGrant = (approvalId: string) => sql<Pick<Grant, 'id'> & { revoked_at: Date }>`
  UPDATE grants SET revoked_at = clock_timestamp()
  WHERE approval_id = ${approvalId}::uuid AND redeemed_at IS NULL AND revoked_at IS NULL AND expires_at > clock_timestamp()
  RETURNING id, revoked_at`;

/** Revokes an approved request whose grant was just revoked at `at`. */
export const revokeApprovedRequest = (id: string, at: Date, by: string, reason: string) => sql`
  UPDATE approval_requests SET status = 'revoked', version = version + 1, revoked_at = ${at}, revoked_by = ${by}, revoke_reason = ${reason}
  WHERE id = ${id}::uuid AND status = 'approved'`;

/** Revokes a pending, unexpired request. */
export const revokePendingRequest = (id: string, by: string, reason: string) => sql`
  UPDATE approval_requests SET status = 'revoked', version = version + 1, revoked_at = clock_timestamp(), revoked_by = ${by}, revoke_reason = ${reason}
  WHERE id = ${id}::uuid AND status = 'pending' AND expires_at > clock_timestamp()`;

/**
 * Withdraws a pending, unexpired request on behalf of the API key that staged it (the revoke
 * lifecycle: status `revoked`, the arguments erased by the same trigger). Another key's request
 * is never touched.
 */
export const withdrawPendingRequest = (id: string, keyId: string, by: string, reason: string) => sql`
  UPDATE approval_requests SET status = 'revoked', version = version + 1, revoked_at = clock_timestamp(), revoked_by = ${by}, revoke_reason = ${reason}
  WHERE id = ${id}::uuid AND requested_by_key_id = ${keyId}::uuid AND status = 'pending' AND expires_at > clock_timestamp()`;

/**
 * Erases the arguments of up to `batch` approved requests whose grant lapsed unused: nobody can
 * act on them any more. The request stays approved (what the reviewers decided).
 */
export const eraseLapsedArguments = (batch: number) => sql<Pick<Request, 'id'>>`
  UPDATE approval_requests SET arguments_sealed = NULL
  WHERE id IN (
    SELECT r.id FROM approval_requests r JOIN grants g ON g.approval_id = r.id
    WHERE r.status = 'approved' AND r.arguments_sealed IS NOT NULL
      AND g.redeemed_at IS NULL AND g.revoked_at IS NULL AND g.expires_at <= clock_timestamp()
    LIMIT ${batch}::int FOR UPDATE OF r SKIP LOCKED)
  AND status = 'approved'
  RETURNING id`;

/** Marks up to `batch` pending requests past their expiry as expired, oldest first, skipping locked ones. */
export const expireStale = (batch: number) => sql<Pick<Request, 'id' | 'expires_at'>>`
  UPDATE approval_requests SET status = 'expired', version = version + 1
  WHERE id IN (
    SELECT id FROM approval_requests WHERE status = 'pending' AND expires_at <= clock_timestamp()
    ORDER BY expires_at LIMIT ${batch}::int FOR UPDATE SKIP LOCKED)
  AND status = 'pending'
  RETURNING id, expires_at`;
