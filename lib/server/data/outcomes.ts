import 'server-only';
import { createHmac } from 'node:crypto';
import type { PoolClient } from 'pg';
import { db, pool } from './db';
import type { ApiClient } from './credentials';
import { Prisma } from '@/lib/generated/prisma/client';
import { can, type Viewer } from '@/lib/auth/permissions';
import { classifyRecord, CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import { outcomeContent } from '@/lib/outcomes/content';
import {
  encodeOutcomeCursor,
  isUuid,
  OUTCOME_PAGE_DEFAULT,
  OUTCOME_PAGE_MAX,
  type OutcomeQuery,
} from '@/lib/outcomes/query';
import type { Classification, Observed, Outcome, OutcomeBatch, ToolAnnotations } from '@/lib/outcomes/schemas';
import { maskText } from '@/lib/redaction/mask';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

// ── Keyed hashes ────────────────────────────────────────────────────────────────────────────
// Session ids and record contents are kept only as HMAC-SHA256, keyed with AUTH_SECRET (the one
// server secret every deployment has) behind a fixed label per use. Keyed, so a copy of the
// database cannot be brute-forced back to them: a summary's masked SSN has only 10^9 values.
// The price: rotating AUTH_SECRET changes both, so a replay of a record sent before the rotation
// reads as different content (422) and a session's records no longer link across it.
function keyedHash(label: 'outcome-session' | 'outcome-content', value: string): string {
  const secret = process.env.AUTH_SECRET;
  if (!secret) throw new Error('AUTH_SECRET is not set: outcome records cannot be hashed');
  return createHmac('sha256', `countersign:${label}:v1:${secret}`).update(value).digest('hex');
}

// ── Ingestion ───────────────────────────────────────────────────────────────────────────────

export type IngestedRecord = { eventId: string; id: string; classification: Classification };
export type IngestResponse = { accepted: number; duplicates: number; records: IngestedRecord[] };

// Free text is masked before it is written. Identifiers (eventId, requestRef, idempotencyKey,
// organization, principal, server, tool name, grantId, versions) are kept as sent: search,
// filters, findings and the approval rules compare them exactly, and masking would merge
// different ones (every e-mail principal into one "[masked:email]").
const mask = <T extends string | null | undefined>(s: T) => (s ? maskText(s).text : s) as T;

// One row of jsonb_to_recordset: column name → SQL type. The JSON keys of `toRow` are these names.
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
} as const;
type Row = { -readonly [K in keyof typeof COLUMNS]?: unknown } & {
  event_id: string;
  /** position in the batch */ ord?: number;
};

const names = Object.keys(COLUMNS).join(', ');
const typed = Object.entries(COLUMNS)
  .map(([column, type]) => `${column} ${type}`)
  .join(', ');

function toRow(r: Outcome, contentHash: string, c: Classification, trusted: boolean): Row {
  const annotations: ToolAnnotations | null | undefined = r.tool.annotations && {
    ...r.tool.annotations,
    title: mask(r.tool.annotations.title),
  };
  const result = r.observed.result && { ...r.observed.result, errorCategory: mask(r.observed.result.errorCategory) };
  const row: Row = {
    event_id: r.eventId,
    occurred_at: r.occurredAt,
    duration_ms: r.durationMs,
    request_ref: r.requestRef,
    idempotency_key: r.idempotencyKey,
    attempt: r.attempt,
    organization: r.organization,
    principal: r.principal,
    agent: mask(r.agent),
    server: r.server,
    server_version: r.serverVersion,
    protocol_version: r.protocolVersion,
    tool_name: r.tool.name,
    tool_annotations: annotations,
    mcp_request_id: typeof r.mcpRequestId === 'string' ? mask(r.mcpRequestId) : r.mcpRequestId,
    session_hash: r.sessionId ? keyedHash('outcome-session', r.sessionId) : null,
    grant_id: r.grantId,
    args_digest: r.argsDigest,
    summary: mask(r.summary),
    observed: { ...r.observed, result },
    boundary: c.boundary,
    delivery: c.delivery,
    category: c.category,
    retry: c.retry,
    read_only: c.readOnly,
    what_happened: c.whatHappened,
    next_step: c.nextStep,
    classifier_version: CLASSIFIER_VERSION,
    annotations_trusted: trusted,
    content_hash: contentHash,
  };
  // Absent, not JSON null: a jsonb column would otherwise hold the value `null`, not NULL.
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v != null)) as Row;
}

const classificationSelect = {
  boundary: true,
  delivery: true,
  category: true,
  retry: true,
  readOnly: true,
  whatHappened: true,
  nextStep: true,
} satisfies Prisma.OutcomeRecordSelect;

const toClassification = (
  r: Prisma.OutcomeRecordGetPayload<{ select: typeof classificationSelect }>,
): Classification => ({
  boundary: r.boundary,
  delivery: r.delivery,
  category: r.category,
  retry: r.retry,
  readOnly: r.readOnly,
  whatHappened: r.whatHappened,
  nextStep: r.nextStep,
});

const reused = (paths: string[]) =>
  fail(
    'idempotency_key_reused',
    `${paths[0]} was already sent with different content; nothing was stored.`,
    paths.map((path) => ({ path, message: 'already sent with different content' })),
  );

/**
 * Stores a batch whole or not at all (API.md, "Outcome records"), idempotent per API key and
 * eventId: the same content again is a duplicate answered with the stored record, other content
 * under a known eventId is 422 and stores nothing.
 */
export async function ingestOutcomes(client: ApiClient, batch: OutcomeBatch): Promise<Result<IngestResponse>> {
  if (client.kind !== 'apiKey' || !client.scopes.includes('outcomes:write')) return fail('forbidden');
  const { records } = batch;

  const keyOrg = client.organization;
  const foreign: FieldError[] =
    keyOrg === null
      ? []
      : records.flatMap((r, i) =>
          r.organization === keyOrg
            ? []
            : [
                {
                  path: `records.${i}.organization`,
                  message: `this API key may only write records of the organization "${keyOrg}"`,
                },
              ],
        );
  if (foreign.length)
    return fail('forbidden', `${foreign[0].path}: ${foreign[0].message}; nothing was stored.`, foreign);

  // The first occurrence of each eventId is stored; later ones must repeat it exactly.
  const hashes = records.map((r) => keyedHash('outcome-content', outcomeContent(r)));
  const firstAt = new Map<string, number>();
  const clashes: string[] = [];
  records.forEach((r, i) => {
    const first = firstAt.get(r.eventId);
    if (first === undefined) firstAt.set(r.eventId, i);
    else if (hashes[first] !== hashes[i]) clashes.push(`records.${i}.eventId`);
  });
  if (clashes.length) return reused(clashes);

  const unique = [...firstAt.values()];
  // The hot path runs on the pool directly (lib/server/data/db.ts): one connection, four short
  // statements, no ORM round trips. Everything else about records reads through Prisma.
  const conn = await pool().connect();
  let broken: Error | undefined;
  try {
    const trusted = await trustedAmong(
      conn,
      unique.map((i) => records[i].server),
    );
    const classified = new Map<string, Classification>();
    const rows = unique.map((i) => {
      const isTrusted = trusted.has(records[i].server);
      const c = classifyRecord(records[i], isTrusted);
      classified.set(records[i].eventId, c);
      return toRow(records[i], hashes[i], c, isTrusted);
    });
    rows.forEach((row, ord) => (row.ord = ord));

    const stored = await storeRows(conn, client.keyId, rows, classified);
    if (stored instanceof Set)
      return reused(unique.filter((i) => stored.has(records[i].eventId)).map((i) => `records.${i}.eventId`));

    let accepted = 0;
    const out = records.map((r, i) => {
      const s = stored.get(r.eventId)!;
      if (s.inserted && firstAt.get(r.eventId) === i) accepted++;
      return { eventId: r.eventId, id: s.id, classification: s.classification };
    });
    return ok({ accepted, duplicates: records.length - accepted, records: out });
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A connection that failed mid-transaction is discarded, never handed to the next request.
    conn.release(broken);
  }
}

async function trustedAmong(conn: PoolClient, servers: string[]): Promise<Set<string>> {
  const { rows } = await conn.query<{ name: string }>('SELECT name FROM trusted_servers WHERE name = ANY($1::text[])', [
    [...new Set(servers)],
  ]);
  return new Set(rows.map((r) => r.name));
}

// Receipt order is batch order: sequence numbers are drawn in batch order (a volatile select
// list is evaluated after ORDER BY)... while rows are inserted sorted by eventId, so concurrent
// batches sharing event ids wait for each other on the unique key in the same order instead of
// deadlocking.
const INSERT_ROWS = `
  WITH input AS MATERIALIZED (
    SELECT r.*, nextval(pg_get_serial_sequence('outcome_records', 'received_seq')) AS received_seq
    FROM json_to_recordset($2::json) AS r(${typed}, ord int4)
    ORDER BY ord
  )
  INSERT INTO outcome_records (api_key_id, ${names}, received_seq)
  SELECT $1::uuid, ${names}, received_seq FROM input ORDER BY event_id
  ON CONFLICT (api_key_id, event_id) DO NOTHING
  RETURNING id, event_id`;

const SELECT_EXISTING = `
  SELECT id, event_id, content_hash, boundary, delivery, category, retry,
         read_only AS "readOnly", what_happened AS "whatHappened", next_step AS "nextStep"
  FROM outcome_records WHERE api_key_id = $1::uuid AND event_id = ANY($2::text[])`;

type ExistingRow = Classification & { id: string; event_id: string; content_hash: string };

type Stored = Map<string, { id: string; inserted: boolean; classification: Classification }>;

/** Inserts all or nothing; returns the event ids stored before with other content (rolled back) or what is stored. */
async function storeRows(
  conn: PoolClient,
  apiKeyId: string,
  rows: Row[],
  classified: Map<string, Classification>,
): Promise<Stored | Set<string>> {
  // One row is one atomic statement with nothing to undo if it clashes: no transaction needed
  // (two round trips fewer for the commonest post). On any error the caller discards the
  // connection, which rolls a transaction back: no ROLLBACK queued behind a stuck statement.
  const transaction = rows.length > 1;
  if (transaction) await conn.query('BEGIN');
  const stored: Stored = new Map();
  let pending = rows;
  // A row that conflicted can be gone by the time it is read (the retention purge deleted it):
  // then it is simply inserted again, on the next round.
  for (let round = 1; pending.length; round++) {
    if (round > 3) throw new Error('ingest: conflicting rows kept disappearing; giving up');
    const inserted = await conn.query<{ id: string; event_id: string }>(INSERT_ROWS, [
      apiKeyId,
      JSON.stringify(pending),
    ]);
    for (const r of inserted.rows)
      stored.set(r.event_id, { id: r.id, inserted: true, classification: classified.get(r.event_id)! });
    const conflicting = pending.filter((r) => !stored.has(r.event_id));
    if (!conflicting.length) break;
    // Rows that were there already (read committed: this statement sees a concurrent commit):
    // a replay when the content matches, and answered as first stored.
    const existing = await conn.query<ExistingRow>(SELECT_EXISTING, [apiKeyId, conflicting.map((r) => r.event_id)]);
    const hashOf = new Map(conflicting.map((r) => [r.event_id, r.content_hash]));
    const clashing = new Set(
      existing.rows.filter((e) => e.content_hash !== hashOf.get(e.event_id)).map((e) => e.event_id),
    );
    if (clashing.size) {
      if (transaction) await conn.query('ROLLBACK');
      return clashing;
    }
    for (const e of existing.rows)
      stored.set(e.event_id, { id: e.id, inserted: false, classification: toClassification(e) });
    pending = conflicting.filter((r) => !stored.has(r.event_id));
  }
  if (transaction) await conn.query('COMMIT');
  return stored;
}

// ── Reading ─────────────────────────────────────────────────────────────────────────────────

/** A record as shown: what the caller sent (free text masked), its classification and id. */
export type OutcomeView = {
  id: string;
  eventId: string;
  occurredAt: Date;
  durationMs: number | null;
  requestRef: string;
  idempotencyKey: string | null;
  attempt: number | null;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  serverVersion: string | null;
  protocolVersion: string | null;
  tool: { name: string; annotations: ToolAnnotations | null };
  mcpRequestId: string | number | null;
  grantId: string | null;
  argsDigest: string | null;
  summary: string | null;
  observed: Observed;
  classification: Classification;
  /** Whether the tool's annotations were believed (its server was trusted) when classified. */
  annotationsTrusted: boolean;
  receivedAt: Date;
};

// Never the session hash, the content hash or the posting key.
const viewSelect = {
  id: true,
  eventId: true,
  occurredAt: true,
  durationMs: true,
  requestRef: true,
  idempotencyKey: true,
  attempt: true,
  organization: true,
  principal: true,
  agent: true,
  server: true,
  serverVersion: true,
  protocolVersion: true,
  toolName: true,
  toolAnnotations: true,
  mcpRequestId: true,
  grantId: true,
  argsDigest: true,
  summary: true,
  observed: true,
  annotationsTrusted: true,
  receivedAt: true,
  ...classificationSelect,
} satisfies Prisma.OutcomeRecordSelect;

function toView(r: Prisma.OutcomeRecordGetPayload<{ select: typeof viewSelect }>): OutcomeView {
  return {
    id: r.id,
    eventId: r.eventId,
    occurredAt: r.occurredAt,
    durationMs: r.durationMs,
    requestRef: r.requestRef,
    idempotencyKey: r.idempotencyKey,
    attempt: r.attempt,
    organization: r.organization,
    principal: r.principal,
    agent: r.agent,
    server: r.server,
    serverVersion: r.serverVersion,
    protocolVersion: r.protocolVersion,
    tool: { name: r.toolName, annotations: (r.toolAnnotations as ToolAnnotations | null) ?? null },
    mcpRequestId: (r.mcpRequestId as string | number | null) ?? null,
    grantId: r.grantId,
    argsDigest: r.argsDigest,
    summary: r.summary,
    observed: r.observed as Observed,
    classification: toClassification(r),
    annotationsTrusted: r.annotationsTrusted,
    receivedAt: r.receivedAt,
  };
}

/** An API client (scope outcomes:read), or a person allowed `outcomes.read`. */
export type OutcomeReader = ApiClient | Viewer;

/** Which organization's records a reader may see (null: every one), or null when none at all. */
function readableOrganization(reader: OutcomeReader): { organization: string | null } | null {
  if (!('kind' in reader)) return can(reader, 'outcomes.read') ? { organization: null } : null;
  if (reader.kind === 'user') return can(reader.viewer, 'outcomes.read') ? { organization: null } : null;
  if (!reader.scopes.includes('outcomes:read')) return null;
  return { organization: reader.organization };
}

// What the reader may see, as a Prisma filter: null when nothing; an organization-limited key only its own.
function readScope(reader: OutcomeReader): Prisma.OutcomeRecordWhereInput | null {
  const scope = readableOrganization(reader);
  if (!scope) return null;
  return scope.organization === null ? {} : { organization: scope.organization };
}

export type OutcomePage = { items: OutcomeView[]; nextCursor: string | null };

/** Newest first (occurredAt, then id), a page at a time. */
export async function listOutcomes(
  reader: OutcomeReader,
  query: Partial<OutcomeQuery> = {},
): Promise<Result<OutcomePage>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  const limit = Math.min(Math.max(query.limit ?? OUTCOME_PAGE_DEFAULT, 1), OUTCOME_PAGE_MAX);
  const { cursor } = query;
  const where: Prisma.OutcomeRecordWhereInput = {
    AND: [
      scope,
      {
        requestRef: query.requestRef,
        idempotencyKey: query.idempotencyKey,
        grantId: query.grantId,
        delivery: query.delivery,
        category: query.category,
        boundary: query.boundary,
        retry: query.retry,
        readOnly: query.readOnly,
        toolName: query.tool,
        server: query.server,
        organization: query.organization,
        principal: query.principal,
        occurredAt: { gte: query.from, lt: query.to },
      },
      cursor
        ? { OR: [{ occurredAt: { lt: cursor.occurredAt } }, { occurredAt: cursor.occurredAt, id: { lt: cursor.id } }] }
        : {},
    ],
  };
  const rows = await db.outcomeRecord.findMany({
    where,
    orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    select: viewSelect,
  });
  const items = rows.slice(0, limit).map(toView);
  const last = items.at(-1);
  const nextCursor =
    rows.length > limit && last ? encodeOutcomeCursor({ occurredAt: last.occurredAt, id: last.id }) : null;
  return ok({ items, nextCursor });
}

/** One record; another organization's record is as absent as one that never existed. */
export async function getOutcome(reader: OutcomeReader, id: string): Promise<Result<OutcomeView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const row = await db.outcomeRecord.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  return row ? ok(toView(row)) : fail('not_found');
}

// The view's columns under the names Prisma gives them, for the reads that run on the pool.
const VIEW_COLUMNS = Object.keys(viewSelect)
  .map((field) => {
    const column = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    return column === field ? field : `${column} AS "${field}"`;
  })
  .join(', ');

const INCIDENT_RECORDS = `
  SELECT ${VIEW_COLUMNS}, received_seq AS "receivedSeq" FROM outcome_records
  WHERE request_ref = ANY($1::text[]) AND ($2::text IS NULL OR organization = $2::text)
  ORDER BY occurred_at, received_seq
  LIMIT $3::int`;

/**
 * Every record of some request references, oldest first, with its receipt order (for "later").
 * On the pool: the incident page, its API and the list's findings all start here.
 */
export async function listIncidentOutcomes(
  reader: OutcomeReader,
  requestRef: string | string[],
  max = 5_000,
): Promise<Result<(OutcomeView & { seq: number })[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  const refs = typeof requestRef === 'string' ? [requestRef] : requestRef;
  type Raw = Prisma.OutcomeRecordGetPayload<{ select: typeof viewSelect }> & { receivedSeq: string };
  const { rows } = await pool().query<Raw>(INCIDENT_RECORDS, [refs, scope.organization, max]);
  return ok(rows.map(({ receivedSeq, ...r }) => ({ ...toView(r), seq: Number(receivedSeq) })));
}

/** The request reference a support person's search term points at: a reference, key, event or grant id. */
export async function findOutcomeRequestRef(reader: OutcomeReader, term: string): Promise<string | null> {
  const scope = readScope(reader);
  if (!scope) return null;
  // One indexed lookup at a time, most likely first: an OR across columns would scan the table.
  const fields = ['requestRef', 'idempotencyKey', 'grantId', 'eventId'] as const;
  for (const field of fields) {
    const hit = await db.outcomeRecord.findFirst({
      where: { AND: [scope, { [field]: term }] },
      select: { requestRef: true },
    });
    if (hit) return hit.requestRef;
  }
  return null;
}
