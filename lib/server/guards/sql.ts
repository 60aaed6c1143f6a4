import 'server-only';
import { sql } from '../db/kysely';
import { WHOLE_SERVER } from '@/lib/approvals/policy';
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
};

/** What a guard decides on, read in one statement: the history rows, and on each row the facts below. */
export type GuardFactsRow = { [K in keyof GuardHistoryRow]: GuardHistoryRow[K] | null } & {
  /** The console's clock. */
  now: Date;
  trusted: boolean;
  /** The server's and the tool's policy rules, for their budgets. */
  rules: {
    toolName: string;
    failedAttemptsBudget: number | null;
    callBudget: number | null;
    backoffBaseMs: number | null;
  }[];
  /** The record already stored under this key's eventId, if any: a check asked again. */
  stored: { id: string; delivery: string; category: string; retry: string; earlier_record_id: string | null } | null;
};

export type GuardHistoryQuery = {
  apiKeyId: string;
  eventId: string;
  organization: string;
  principal: string;
  server: string;
  tool: string;
  argsDigest: string;
  idempotencyKey: string | null;
  requestRef: string;
  /** The call budget where no rule sets one: one row more than the budget is enough to know it is used up. */
  defaultCalls: number;
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
 * of the server, as many as its call budget and one more, and its first permission refusal
 * (request_ref, occurred_at). Guard refusals are left out of the request's calls, so that many of
 * them cannot crowd real calls out of the bound. Each row also carries the facts that do not
 * depend on it (the console's clock, whether the server is trusted, the rules that set budgets,
 * the record stored under the eventId), and there is one row at least, also with no history.
 * Its text is the same for every call: run prepared (preparedRows), since planning it over every
 * partition of outcome_records costs more than running it.
 */
export const selectGuardFacts = (q: GuardHistoryQuery) => sql<GuardFactsRow>`
  WITH rules AS (
    SELECT r.tool_name, r.failed_attempts_budget, r.call_budget, r.backoff_base_ms FROM policy_rules r
    WHERE r.server = ${q.server} AND r.tool_name IN (${q.tool}, ${WHOLE_SERVER})
  ), same_call AS (
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
    ORDER BY o.received_at DESC
    -- The tool's rule over the server's, as lib/guards/budgets.ts resolves them.
    LIMIT coalesce(
      (SELECT call_budget FROM rules WHERE tool_name = ${q.tool}),
      (SELECT call_budget FROM rules WHERE tool_name = ${WHOLE_SERVER}),
      ${q.defaultCalls}::int) + 1
  ), request_refusal AS (
    SELECT ${COLS} FROM outcome_records o
    WHERE o.request_ref = ${q.requestRef} AND o.organization = ${q.organization}
      AND o.category IN (${PERMISSION})
    ORDER BY o.received_at, o.received_seq LIMIT 1
  ), history AS (
    SELECT * FROM same_call UNION SELECT * FROM same_key
    UNION SELECT * FROM request_calls UNION SELECT * FROM request_refusal
  ), facts AS (
    SELECT clock_timestamp() AS now,
      EXISTS (SELECT 1 FROM trusted_servers t WHERE t.name = ${q.server}) AS trusted,
      (SELECT coalesce(json_agg(json_build_object('toolName', tool_name, 'failedAttemptsBudget', failed_attempts_budget,
         'callBudget', call_budget, 'backoffBaseMs', backoff_base_ms)), '[]'::json) FROM rules) AS rules,
      (SELECT json_build_object('id', o.id, 'delivery', o.delivery, 'category', o.category, 'retry', o.retry,
         'earlier_record_id', o.earlier_record_id)
       FROM outcome_event_ids e JOIN outcome_records o ON o.id = e.record_id AND o.received_at = e.received_at
       WHERE e.api_key_id = ${q.apiKeyId}::uuid AND e.event_id = ${q.eventId}) AS stored
  )
  SELECT h.id, h.request_ref, h.principal, h.server, h.tool_name, h.args_digest, h.idempotency_key, h.task_id,
         h.delivery::text, h.category::text, h.retry::text, h.read_only, h.resolution_by::text AS resolution_by,
         h.resolution_verdict::text AS resolution_verdict, h.received_at, h.received_seq::text,
         f.now, f.trusted, f.rules, f.stored
  FROM facts f LEFT JOIN history h ON true`;

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
