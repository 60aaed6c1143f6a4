import 'server-only';
import { replicaSafe } from '../db/replica';
import { db } from '../db/db';
import { rows as run } from '../db/kysely';
import {
  selectEventIdRequestRefs,
  selectFindingInputs,
  selectIncidentOutcomes,
  selectSettlers,
  selectTaskRecords,
} from './sql';
import type { IncidentRecord } from '@/lib/incidents/types';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { organizationOf, type Actor } from '@/lib/auth/actor';
import {
  encodeOutcomeCursor,
  isUuid,
  OUTCOME_PAGE_DEFAULT,
  OUTCOME_PAGE_MAX,
  type OutcomeQuery,
} from '@/lib/outcomes/query';
import type { Category, Classification, Delivery, Observed, TaskStatus, ToolAnnotations } from '@/lib/outcomes/schemas';
import { resolvedNextStep, type Resolution } from '@/lib/outcomes/resolution';
import { keysetPage, keysetQuery, pageSize } from '@/lib/pagination/keyset';
import { fail, ok, type Result } from '@/lib/result';
import { classificationSelect, toClassification } from './rows';

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
  /** The classifier version that derived `classification` (lib/outcomes/classify.ts CLASSIFIER_VERSION). */
  classifierVersion: number;
  /** What settled this unknown, or null (docs/design.md "Resolving an unknown"). */
  resolution: Resolution | null;
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
  classifierVersion: true,
  resolvedAt: true,
  resolutionBy: true,
  resolutionVerdict: true,
  resolvedByRecordId: true,
  ...classificationSelect,
} satisfies Prisma.OutcomeRecordSelect;

// A row of viewSelect, from Prisma or from sql/outcomes.ts (the same fields; JSON columns as read).
type ViewRow = Omit<
  Prisma.OutcomeRecordGetPayload<{ select: typeof viewSelect }>,
  'toolAnnotations' | 'mcpRequestId' | 'observed'
> & {
  toolAnnotations: unknown;
  mcpRequestId: unknown;
  observed: unknown;
  /** The state check that resolved it, if one did (stateChecksOf). */
  stateCheck?: { note: string; who: string } | null;
};

/** Who settled what: the settling records' agents (else principals), by id. */
type Settlers = Map<string, string>;

async function settlersOf(rows: Pick<ViewRow, 'resolvedByRecordId'>[]): Promise<Settlers> {
  const ids = [...new Set(rows.flatMap((r) => (r.resolvedByRecordId ? [r.resolvedByRecordId] : [])))];
  if (!ids.length) return new Map();
  const found = await run(selectSettlers(ids));
  return new Map(found.map((s) => [s.id, s.agent ?? s.principal]));
}

/**
 * The rows with the state checks that resolved them. Looked up by record id: outcome_records is
 * partitioned, so nothing may hold a foreign key to one record.
 */
async function withStateChecks<T extends Pick<ViewRow, 'id' | 'resolutionBy'>>(
  rows: T[],
): Promise<(T & { stateCheck: { note: string; who: string } | null })[]> {
  const checked = rows.flatMap((r) => (r.resolutionBy === 'state_check' ? [r.id] : []));
  const checks = checked.length
    ? await db.outcomeStateCheck.findMany({
        where: { recordId: { in: checked } },
        select: { recordId: true, note: true, who: true },
      })
    : [];
  const byRecord = new Map(checks.map((c) => [c.recordId, { note: c.note, who: c.who }]));
  return rows.map((r) => ({ ...r, stateCheck: byRecord.get(r.id) ?? null }));
}

function toResolution(r: ViewRow, settlers: Settlers): Resolution | null {
  if (!r.resolvedAt || !r.resolutionBy || !r.resolutionVerdict) return null;
  if (r.resolutionBy === 'record') {
    const who = r.resolvedByRecordId ? settlers.get(r.resolvedByRecordId) : undefined;
    return {
      by: 'record',
      verdict: r.resolutionVerdict,
      recordId: r.resolvedByRecordId ?? undefined,
      at: r.resolvedAt,
      ...(who ? { who } : {}),
    };
  }
  return {
    by: 'state_check',
    verdict: r.resolutionVerdict,
    at: r.resolvedAt,
    ...(r.stateCheck ? { who: r.stateCheck.who, note: r.stateCheck.note } : {}),
  };
}

function toView(r: ViewRow, settlers: Settlers = new Map()): OutcomeView {
  const resolution = toResolution(r, settlers);
  const classification = toClassification(r);
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
    // A settled record's next step says what settled it, never "retry".
    classification: resolution ? { ...classification, nextStep: resolvedNextStep(resolution) } : classification,
    annotationsTrusted: r.annotationsTrusted,
    receivedAt: r.receivedAt,
    classifierVersion: r.classifierVersion,
    resolution,
  };
}

/** Which organization's records a reader may see (null: every one), or null when none at all. */
function readableOrganization(reader: Actor): { organization: string | null } | null {
  return authorize(reader, 'outcomes.read') ? { organization: organizationOf(reader) } : null;
}

// What the reader may see, as a Prisma filter: null when nothing; an organization-limited key only its own.
function readScope(reader: Actor): Prisma.OutcomeRecordWhereInput | null {
  const scope = readableOrganization(reader);
  if (!scope) return null;
  return scope.organization === null ? {} : { organization: scope.organization };
}

export type OutcomePage = { items: OutcomeView[]; nextCursor: string | null };

/** Newest first (occurredAt, then id; `order: 'oldest'` reverses both), a page at a time. */
export const listOutcomes = replicaSafe(async function listOutcomes(
  reader: Actor,
  query: Partial<OutcomeQuery> = {},
): Promise<Result<OutcomePage>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  const limit = pageSize(query.limit, OUTCOME_PAGE_DEFAULT, OUTCOME_PAGE_MAX);
  const { cursor } = query;
  const page = keysetQuery(
    'occurredAt',
    query.order === 'oldest' ? 'asc' : 'desc',
    cursor && { at: cursor.occurredAt, id: cursor.id },
    limit,
  );
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
      query.resolution === undefined
        ? {}
        : { delivery: 'unknown', resolvedAt: query.resolution === 'resolved' ? { not: null } : null },
      page.where,
    ],
  };
  const rows = await withStateChecks(
    await db.outcomeRecord.findMany({
      where,
      orderBy: page.orderBy,
      take: page.take,
      select: viewSelect,
    }),
  );
  const settlers = await settlersOf(rows);
  return ok(
    keysetPage(
      rows,
      limit,
      (last) => encodeOutcomeCursor({ occurredAt: last.occurredAt, id: last.id }),
      (r) => toView(r, settlers),
    ),
  );
});

/** One record; another organization's record is as absent as one that never existed. */
export const getOutcome = replicaSafe(async function getOutcome(
  reader: Actor,
  id: string,
): Promise<Result<OutcomeView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const found = await db.outcomeRecord.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  if (!found) return fail('not_found');
  const [row] = await withStateChecks([found]);
  return ok(toView(row, await settlersOf([row])));
});

/**
 * One record for whoever just changed it (the state check's answer: an outcomes:write key may
 * not read the list, but gets back the record it resolved), within its organization (null: any).
 */
export async function getOutcomeForWriter(id: string, organization: string | null): Promise<OutcomeView | null> {
  const found = await db.outcomeRecord.findFirst({
    where: { id, ...(organization === null ? {} : { organization }) },
    select: viewSelect,
  });
  if (!found) return null;
  const [row] = await withStateChecks([found]);
  return toView(row, await settlersOf([row]));
}

/**
 * Every record of some request references, oldest first, with its receipt order (for "later").
 * On the pool: the incident page, its API and the list's findings all start here.
 */
export const listIncidentOutcomes = replicaSafe(async function listIncidentOutcomes(
  reader: Actor,
  requestRef: string | string[],
  max: number = 5_000,
): Promise<Result<(OutcomeView & { seq: number })[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  const refs = typeof requestRef === 'string' ? [requestRef] : requestRef;
  const rows = await run(selectIncidentOutcomes(refs, scope.organization, max));
  const settlers = await settlersOf(rows);
  return ok(
    rows.map(({ receivedSeq, checkNote, checkWho, ...r }) => ({
      ...toView({ ...r, stateCheck: checkWho === null ? null : { note: checkNote!, who: checkWho } }, settlers),
      seq: Number(receivedSeq),
    })),
  );
});

/** A record as findings read it (selectFindingInputs): an IncidentRecord, and whether its annotations were believed. */
export type FindingInput = IncidentRecord &
  Pick<OutcomeView, 'grantId' | 'annotationsTrusted' | 'agent'> & {
    tool: { name: string; annotations: ToolAnnotations | null };
  };

/**
 * The records of some request references as findings read them: the same records, order and cap
 * as listIncidentOutcomes, without what only the incident page shows. On the pool, like it.
 */
export const listFindingInputs = replicaSafe(async function listFindingInputs(
  reader: Actor,
  refs: string[],
  max: number,
): Promise<Result<FindingInput[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  if (!refs.length) return ok([]);
  const rows = await run(selectFindingInputs(refs, scope.organization, max));
  return ok(
    rows.map((r) => ({
      id: r.id,
      occurredAt: r.occurredAt,
      seq: Number(r.receivedSeq),
      requestRef: r.requestRef,
      idempotencyKey: r.idempotencyKey,
      attempt: r.attempt,
      organization: r.organization,
      principal: r.principal,
      agent: r.agent,
      server: r.server,
      tool: { name: r.toolName, annotations: (r.toolAnnotations as ToolAnnotations | null) ?? null },
      grantId: r.grantId,
      argsDigest: r.argsDigest,
      annotationsTrusted: r.annotationsTrusted,
      classification: toClassification(r),
    })),
  );
});

/** The request reference a support person's search term points at: a reference, key, event or grant id. */
export const findOutcomeRequestRef = replicaSafe(async function findOutcomeRequestRef(
  reader: Actor,
  term: string,
): Promise<string | null> {
  const scope = readScope(reader);
  if (!scope) return null;
  // One indexed lookup at a time, most likely first: an OR across columns would scan the table.
  const fields = ['requestRef', 'idempotencyKey', 'grantId'] as const;
  for (const field of fields) {
    const hit = await db.outcomeRecord.findFirst({
      where: { AND: [scope, { [field]: term }] },
      select: { requestRef: true },
    });
    if (hit) return hit.requestRef;
  }
  // Event ids through their claims (nothing indexes outcome_records.event_id alone).
  const [byEvent] = await run(selectEventIdRequestRefs(term, organizationOf(reader), 1));
  return byEvent?.request_ref ?? null;
});

/** One record of an MCP task, as its history shows it. */
export type TaskRecordView = {
  id: string;
  occurredAt: Date;
  status: TaskStatus | null;
  expired: boolean;
  delivery: Delivery;
  category: Category;
  readOnly: boolean;
  classifierVersion: number;
};

/**
 * Every record of one MCP task (same organization, same `observed.task.id`), oldest first: the
 * task's status history. The last one is its current status. Another organization's task ids
 * are not looked at, even by a reader who may see every organization.
 */
export const listTaskRecords = replicaSafe(async function listTaskRecords(
  reader: Actor,
  organization: string,
  taskId: string,
  max: number = 200,
): Promise<Result<TaskRecordView[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  if (scope.organization !== null && scope.organization !== organization) return ok([]);
  const rows = await run(selectTaskRecords(organization, taskId, max));
  return ok(
    rows.map((r) => {
      const task = (r.observed as Observed | null)?.task;
      return {
        id: r.id,
        occurredAt: r.occurredAt,
        status: task?.status ?? null,
        expired: task?.expired === true,
        delivery: r.delivery,
        category: r.category,
        readOnly: r.readOnly,
        classifierVersion: r.classifierVersion,
      };
    }),
  );
});
