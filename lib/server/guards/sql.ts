import 'server-only';
import { sql } from '../db/kysely';
import { guardCategories } from '@/lib/outcomes/schemas';

/** A record as the guards read it (lib/guards/decide.ts GuardRecord), and the console's clock. */
export type GuardHistoryRow = {
  id: string;
  request_ref: string;
  principal: string;
  server: string;
  tool_name: string;
  args_digest: string | null;
  idempotency_key: string | null;
  task_id: string | null;
  delivery: string;
  category: string;
  retry: string;
  read_only: boolean;
  resolution_by: 'record' | 'state_check' | null;
  resolution_verdict: 'happened' | 'did_not_happen' | null;
  received_at: Date;
  received_seq: string;
  now: Date;
};

export type GuardHistoryQuery = {
  organization: string;
  principal: string;
  server: string;
  tool: string;
  argsDigest: string;
  idempotencyKey: string | null;
  requestRef: string;
  /** The call budget: one row more than it is enough to know it is used up. */
  calls: number;
};

// How far back the per-call branches look: the newest attempts of one call decide its backoff and
// whether it may be retried; its unknowns are read separately so that many later attempts cannot
// hide one. A bound keeps the check one short statement however long an agent has been calling.
const SAME_CALL = 100;
const SAME_KEY = 50;
const COLS = sql.raw(
  'o.id, o.request_ref, o.principal, o.server, o.tool_name, o.args_digest, o.idempotency_key, o.task_id, ' +
    'o.delivery, o.category, o.retry, o.read_only, o.resolution_by, o.resolution_verdict, o.received_at, o.received_seq',
);
const GUARDS = sql.raw(guardCategories.map((c) => `'${c}'`).join(', '));
const PERMISSION = sql.raw(`'unauthenticated', 'forbidden', 'denied', 'denied_by_policy'`);

/**
 * One statement, each branch an index scan: the same call's newest attempts and its unknowns
 * (principal, server, tool_name, args_digest, received_at), the attempts under the same
 * idempotency key (organization, idempotency_key, args_digest), and the request reference's calls
 * of the server and its first permission refusal (request_ref, occurred_at). Guard refusals are
 * left out of the request's calls, so that many of them cannot crowd real calls out of the bound.
 * A row per branch at least carries `now`, the console's clock, also when there is no history.
 */
export const selectGuardHistory = (q: GuardHistoryQuery) => sql<GuardHistoryRow>`
  WITH same_call AS (
    (SELECT ${COLS} FROM outcome_records o
     WHERE o.principal = ${q.principal} AND o.server = ${q.server} AND o.tool_name = ${q.tool}
       AND o.args_digest = ${q.argsDigest} AND o.organization = ${q.organization}
     ORDER BY o.received_at DESC LIMIT ${SAME_CALL})
    UNION
    (SELECT ${COLS} FROM outcome_records o
     WHERE o.principal = ${q.principal} AND o.server = ${q.server} AND o.tool_name = ${q.tool}
       AND o.args_digest = ${q.argsDigest} AND o.organization = ${q.organization} AND o.delivery = 'unknown'
     ORDER BY o.received_at DESC LIMIT ${SAME_CALL})
  ), same_key AS (
    SELECT ${COLS} FROM outcome_records o
    WHERE ${q.idempotencyKey}::text IS NOT NULL
      AND o.organization = ${q.organization} AND o.idempotency_key = ${q.idempotencyKey}::text
      AND o.principal = ${q.principal} AND o.server = ${q.server} AND o.tool_name = ${q.tool}
    ORDER BY o.received_at DESC LIMIT ${SAME_KEY}
  ), request_calls AS (
    SELECT ${COLS} FROM outcome_records o
    WHERE o.request_ref = ${q.requestRef} AND o.organization = ${q.organization} AND o.server = ${q.server}
      AND NOT (o.delivery = 'never_sent' AND o.category IN (${GUARDS}))
    ORDER BY o.received_at DESC LIMIT ${q.calls + 1}::int
  ), request_refusal AS (
    SELECT ${COLS} FROM outcome_records o
    WHERE o.request_ref = ${q.requestRef} AND o.organization = ${q.organization}
      AND o.category IN (${PERMISSION})
    ORDER BY o.received_at, o.received_seq LIMIT 1
  ), history AS (
    SELECT * FROM same_call UNION SELECT * FROM same_key
    UNION SELECT * FROM request_calls UNION SELECT * FROM request_refusal
  )
  SELECT h.id, h.request_ref, h.principal, h.server, h.tool_name, h.args_digest, h.idempotency_key, h.task_id,
         h.delivery::text, h.category::text, h.retry::text, h.read_only, h.resolution_by::text AS resolution_by,
         h.resolution_verdict::text AS resolution_verdict, h.received_at, h.received_seq::text, n.now
  FROM (SELECT clock_timestamp() AS now) n LEFT JOIN history h ON true`;

/**
 * The first permission refusal of a request reference (the guards' last row): a write staged in it
 * is held for a person, even where policy needs no approval (lib/server/approvals/request.ts).
 */
export const selectPermissionRefusal = (requestRef: string, organization: string) => sql<{ id: string }>`
  SELECT o.id FROM outcome_records o
  WHERE o.request_ref = ${requestRef} AND o.organization = ${organization} AND o.category IN (${PERMISSION})
  ORDER BY o.received_at, o.received_seq LIMIT 1`;

/** One `call.refused` event (webhook_enqueue_data): identifiers only. */
export const enqueueCallRefused = (data: {
  category: string;
  server: string;
  tool: string;
  requestRef: string;
  recordId: string;
}) => sql<{ id: string }>`SELECT webhook_enqueue_data('call.refused', ${JSON.stringify(data)}::jsonb) AS id`;

/** The record stored under this key's eventId, if any: whether it is a guard's refusal, and what it said. */
export const selectStoredRefusal = (apiKeyId: string, eventId: string) => sql<{
  id: string;
  delivery: string;
  category: string;
  retry: string;
  earlier_record_id: string | null;
}>`
  SELECT o.id, o.delivery::text, o.category::text, o.retry::text, o.earlier_record_id
  FROM outcome_event_ids e JOIN outcome_records o ON o.id = e.record_id AND o.received_at = e.received_at
  WHERE e.api_key_id = ${apiKeyId}::uuid AND e.event_id = ${eventId}`;
