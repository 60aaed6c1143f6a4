import 'server-only';
import { db } from '../db';
import { rows as run } from '../sql/kysely';
import { selectIncidentOutcomes } from '../sql/outcomes';
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
import type { Classification, Observed, ToolAnnotations } from '@/lib/outcomes/schemas';
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

// A row of viewSelect, from Prisma or from sql/outcomes.ts (the same fields; JSON columns as read).
type ViewRow = Omit<
  Prisma.OutcomeRecordGetPayload<{ select: typeof viewSelect }>,
  'toolAnnotations' | 'mcpRequestId' | 'observed'
> & { toolAnnotations: unknown; mcpRequestId: unknown; observed: unknown };

function toView(r: ViewRow): OutcomeView {
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
export async function listOutcomes(reader: Actor, query: Partial<OutcomeQuery> = {}): Promise<Result<OutcomePage>> {
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
      page.where,
    ],
  };
  const rows = await db.outcomeRecord.findMany({
    where,
    orderBy: page.orderBy,
    take: page.take,
    select: viewSelect,
  });
  return ok(
    keysetPage(rows, limit, (last) => encodeOutcomeCursor({ occurredAt: last.occurredAt, id: last.id }), toView),
  );
}

/** One record; another organization's record is as absent as one that never existed. */
export async function getOutcome(reader: Actor, id: string): Promise<Result<OutcomeView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const row = await db.outcomeRecord.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  return row ? ok(toView(row)) : fail('not_found');
}

/**
 * Every record of some request references, oldest first, with its receipt order (for "later").
 * On the pool: the incident page, its API and the list's findings all start here.
 */
export async function listIncidentOutcomes(
  reader: Actor,
  requestRef: string | string[],
  max = 5_000,
): Promise<Result<(OutcomeView & { seq: number })[]>> {
  const scope = readableOrganization(reader);
  if (!scope) return fail('forbidden');
  const refs = typeof requestRef === 'string' ? [requestRef] : requestRef;
  const rows = await run(selectIncidentOutcomes(refs, scope.organization, max));
  return ok(rows.map(({ receivedSeq, ...r }) => ({ ...toView(r), seq: Number(receivedSeq) })));
}

/** The request reference a support person's search term points at: a reference, key, event or grant id. */
export async function findOutcomeRequestRef(reader: Actor, term: string): Promise<string | null> {
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
