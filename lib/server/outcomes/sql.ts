import 'server-only';
import type { RawBuilder, Selectable } from 'kysely';
import { kysely, sql, type DB } from '../db/kysely';

type OutcomeRecord = DB['outcome_records'];

// ── Ingestion (the hot path: lib/server/outcomes/ingest.ts) ─────────────────────────────

/** Every column a posted record fills, with the SQL type json_to_recordset reads it as. */
const COLUMNS = {
  event_id: 'text',
  occurred_at: 'timestamptz',
  duration_ms: 'int4',
  request_ref: 'text',
  idempotency_key: 'text',
  attempt: 'int4',
  organization: 'text',
  principal: 'text',
  agent: 'text',
  server: 'text',
  server_version: 'text',
  protocol_version: 'text',
  tool_name: 'text',
  tool_annotations: 'jsonb',
  mcp_request_id: 'jsonb',
  session_hash: 'text',
  grant_id: 'text',
  args_digest: 'text',
  summary: 'text',
  task_id: 'text',
  observed: 'jsonb',
  boundary: 'outcome_boundary',
  delivery: 'outcome_delivery',
  category: 'outcome_category',
  retry: 'outcome_retry',
  read_only: 'bool',
  what_happened: 'text',
  next_step: 'text',
  classifier_version: 'int4',
  annotations_trusted: 'bool',
  content_hash: 'text',
  earlier_record_id: 'uuid',
} as const satisfies Record<
  Exclude<
    keyof OutcomeRecord,
    | 'id'
    | 'api_key_id'
    | 'received_at'
    | 'received_seq'
    | 'resolved_at'
    | 'resolution_by'
    | 'resolution_verdict'
    | 'resolved_by_record_id'
  >,
  string
>;

/** One row of json_to_recordset: its keys are the table's columns (DB), absent when NULL. */
export type IngestRow = { -readonly [K in keyof typeof COLUMNS]?: unknown } & {
  event_id: string;
  content_hash: string;
  /** position in the batch */ ord?: number;
};

const NAMES = sql.raw(Object.keys(COLUMNS).join(', '));
const TYPED = sql.raw(
  Object.entries(COLUMNS)
    .map(([column, type]) => `${column} ${type}`)
    .join(', '),
);

// Receipt order is batch order: sequence numbers are drawn in batch order (a volatile select
// list is evaluated after ORDER BY)... while rows are inserted sorted by eventId, so concurrent
// batches sharing event ids wait for each other's claims in the same order instead of
// deadlocking. The claim is the trigger's (migration 20261201192841_outcome_event_ids): a row
// whose (api_key_id, event_id) another record holds is skipped, as ON CONFLICT DO NOTHING would,
// after waiting for a concurrent insert of the same pair to commit or roll back.
// `locks` first: the operations' advisory locks (sql/resolution.ts), taken before any row is
// made (input reads their count), in the statement itself rather than a round trip of their own.
/** Inserts the rows not stored yet under this key, after taking these locks; answers those it inserted. */
export const insertOutcomeRows = (apiKeyId: string, rows: IngestRow[], locks: RawBuilder<unknown>) => sql<
  Pick<Selectable<OutcomeRecord>, 'id' | 'event_id'>
>`
  WITH locks AS MATERIALIZED (${locks}),
  input AS MATERIALIZED (
    SELECT r.*, nextval(pg_get_serial_sequence('outcome_records', 'received_seq')) AS received_seq
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(${TYPED}, ord int4)
    CROSS JOIN (SELECT count(*) FROM locks) AS taken
    ORDER BY ord
  )
  INSERT INTO outcome_records (api_key_id, ${NAMES}, received_seq)
  SELECT ${apiKeyId}::uuid, ${NAMES}, received_seq FROM input ORDER BY event_id
  RETURNING id, event_id`;

/** The stored records under these event ids: their content hash and classification. */
export const selectStoredOutcomes = (apiKeyId: string, eventIds: string[]) =>
  kysely
    .selectFrom('outcome_event_ids as e')
    .innerJoin('outcome_records as o', (j) =>
      j.onRef('o.id', '=', 'e.record_id').onRef('o.received_at', '=', 'e.received_at'),
    )
    .select([
      'o.id',
      'o.event_id',
      'o.content_hash',
      'o.boundary',
      'o.delivery',
      'o.category',
      'o.retry',
      'o.read_only as readOnly',
      'o.what_happened as whatHappened',
      'o.next_step as nextStep',
    ])
    .where('e.api_key_id', '=', apiKeyId)
    .where((eb) => eb('e.event_id', '=', eb.fn.any(eb.val(eventIds))));

/** Which of these servers are trusted. */
export const selectTrustedServers = (names: string[]) =>
  kysely
    .selectFrom('trusted_servers')
    .select('name')
    .where((eb) => eb('name', '=', eb.fn.any(eb.val(names))));

// ── The incident look-up (lib/server/incidents/records.ts listIncidentOutcomes) ─────────

/** A record as shown, under the field names Prisma gives the columns: never the hashes or the key. */
const VIEW_COLUMNS = [
  'id',
  'event_id as eventId',
  'occurred_at as occurredAt',
  'duration_ms as durationMs',
  'request_ref as requestRef',
  'idempotency_key as idempotencyKey',
  'attempt',
  'organization',
  'principal',
  'agent',
  'server',
  'server_version as serverVersion',
  'protocol_version as protocolVersion',
  'tool_name as toolName',
  'tool_annotations as toolAnnotations',
  'mcp_request_id as mcpRequestId',
  'grant_id as grantId',
  'args_digest as argsDigest',
  'summary',
  'observed',
  'annotations_trusted as annotationsTrusted',
  'received_at as receivedAt',
  'boundary',
  'delivery',
  'category',
  'retry',
  'read_only as readOnly',
  'what_happened as whatHappened',
  'next_step as nextStep',
  'received_seq as receivedSeq',
  'classifier_version as classifierVersion',
  'resolved_at as resolvedAt',
  'resolution_by as resolutionBy',
  'resolution_verdict as resolutionVerdict',
  'resolved_by_record_id as resolvedByRecordId',
  'earlier_record_id as earlierRecordId',
] as const;

/** Every record of some request references (of one organization, or any), oldest first, at most `max`. */
export const selectIncidentOutcomes = (refs: string[], organization: string | null, max: number) =>
  kysely
    .selectFrom('outcome_records')
    .leftJoin('outcome_state_checks as c', 'c.record_id', 'outcome_records.id')
    .select(VIEW_COLUMNS.map((c) => `outcome_records.${c}` as `outcome_records.${typeof c}`))
    .select(['c.note as checkNote', 'c.who as checkWho'])
    .where((eb) => eb('request_ref', '=', eb.fn.any(eb.val(refs))))
    .$if(organization !== null, (q) => q.where('outcome_records.organization', '=', organization!))
    .orderBy('occurred_at')
    .orderBy('received_seq')
    .limit(max);

/**
 * What findings read of each record (lib/incidents/types.ts IncidentRecord, and the policy's
 * annotationsTrusted), for the same records in the same order as selectIncidentOutcomes: no free
 * text, no observed JSON, no state check. The lists that count findings over hundreds of
 * incidents (the overview, the outcome list's badges, the incidents page) read thousands of
 * records; whole rows made that read most of the overview's time (bench:ui).
 */
export const selectFindingInputs = (refs: string[], organization: string | null, max: number) =>
  kysely
    .selectFrom('outcome_records')
    .select([
      'id',
      'occurred_at as occurredAt',
      'received_seq as receivedSeq',
      'request_ref as requestRef',
      'idempotency_key as idempotencyKey',
      'attempt',
      'organization',
      'principal',
      'agent',
      'server',
      'tool_name as toolName',
      'tool_annotations as toolAnnotations',
      'grant_id as grantId',
      'args_digest as argsDigest',
      'annotations_trusted as annotationsTrusted',
      'boundary',
      'delivery',
      'category',
      'retry',
      'read_only as readOnly',
      'what_happened as whatHappened',
      'next_step as nextStep',
    ])
    .where((eb) => eb('request_ref', '=', eb.fn.any(eb.val(refs))))
    .$if(organization !== null, (q) => q.where('organization', '=', organization!))
    .orderBy('occurred_at')
    .orderBy('received_seq')
    .limit(max);

// ── A task's records (lib/server/outcomes/read.ts listTaskRecords) ──────────────────────

/** The records of one MCP task in one organization, in the order they happened (index: organization, task_id). */
export const selectTaskRecords = (organization: string, taskId: string, max: number) =>
  kysely
    .selectFrom('outcome_records')
    .select([
      'id',
      'occurred_at as occurredAt',
      'observed',
      'delivery',
      'category',
      'read_only as readOnly',
      'classifier_version as classifierVersion',
    ])
    .where('organization', '=', organization)
    .where('task_id', '=', taskId)
    .orderBy('occurred_at')
    .orderBy('received_seq')
    .limit(max);

/** The records that settled unknowns (lib/server/outcomes/view.ts): who sent them. */
export const selectSettlers = (ids: string[]) =>
  kysely
    .selectFrom('outcome_records')
    .select(['id', 'agent', 'principal'])
    .where((eb) => eb('id', '=', eb.fn.any(eb.val(ids))));

// ── Search by event id (lib/server/incidents/search.ts, incidents/records.ts) ───────────

/**
 * The request references of the records with this event id, under any API key (of one
 * organization, or any), most recently active first, at most `max`. An event id is unique per
 * key, so outcome_event_ids is keyed (api_key_id, event_id) and nothing indexes event_id alone:
 * the keys are walked one index probe at a time (a loose index scan: a few keys, not a scan of
 * every claim), then each key is probed for the id, then its record by (id, received_at).
 */
export const selectEventIdRequestRefs = (eventId: string, organization: string | null, max: number) => sql<
  Pick<Selectable<OutcomeRecord>, 'request_ref'>
>`
  WITH RECURSIVE keys AS (
    (SELECT api_key_id FROM outcome_event_ids ORDER BY api_key_id LIMIT 1)
    UNION ALL
    SELECT (SELECT e.api_key_id FROM outcome_event_ids e WHERE e.api_key_id > k.api_key_id ORDER BY e.api_key_id LIMIT 1)
    FROM keys k WHERE k.api_key_id IS NOT NULL
  )
  SELECT o.request_ref FROM keys k
  JOIN outcome_event_ids e ON e.api_key_id = k.api_key_id AND e.event_id = ${eventId}
  JOIN outcome_records o ON o.id = e.record_id AND o.received_at = e.received_at
  WHERE (${organization}::text IS NULL OR o.organization = ${organization}::text)
  GROUP BY o.request_ref ORDER BY max(o.occurred_at) DESC LIMIT ${max}`;
